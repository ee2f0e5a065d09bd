package simulate

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// Streams of the random generator: each part of a simulation draws from
// its own, so that changing one option leaves the other parts as they were.
const (
	streamWallets uint64 = iota + 0x51a0
	streamSessions
	streamNoise
	streamUniverse
	streamChain
)

// params is the network the addresses are encoded for.
var params = &chaincfg.MainNetParams

// Scenario is a simulation: its labels, and what its files are written
// from. The files are produced on demand by its Write methods, in memory
// bounded by the wallets and sessions (the universe is streamed).
type Scenario struct {
	Labels *Labels

	opts     Options
	wallets  []*walletKeys
	sessions []*sessionSpec
	// positions places the wallets' addresses among the universe's
	// lines; the other lines are drawn as they are written.
	positions map[int]string
	chain     *chainSim
}

// walletKeys are a wallet's keys, in the order of its addresses.
type walletKeys struct {
	pubKeys, hashes [][]byte
	watched         [][]byte // hashes of the payees' addresses it paid
}

// sessionSpec is what a session's records are rebuilt from.
type sessionSpec struct {
	label  Session
	wallet *walletKeys // nil for every kind but KindWallet
	tweak  uint32
	// random elements of noise and tiny sessions, drawn from this seed
	randSeed  uint64
	randElems int
}

// Generate simulates what the options describe (see the package
// documentation). It fails with ErrBadOptions for options out of range.
func Generate(o Options) (*Scenario, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	s := &Scenario{opts: o, Labels: &Labels{Format: LabelsFormat, Version: LabelsVersion, Options: o,
		Wallets: []Wallet{}, Payments: []Payment{}, Sessions: []Session{}}}
	s.makeWallets()
	s.makePayments()
	s.makeSessions()
	s.placeAddresses()
	if o.Fetch.Blocks > 0 {
		c, err := simulateChain(o.Seed, o.Fetch)
		if err != nil {
			return nil, err
		}
		s.chain = c
		s.Labels.Fetch = c.labels
	}
	s.Labels.Files = s.files()
	if err := s.Labels.check(); err != nil {
		return nil, fmt.Errorf("simulate: inconsistent labels: %w", err)
	}
	return s, nil
}

// newRand returns the generator of one stream of the seed.
func newRand(seed, stream uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, stream)) }

// uniformInt draws uniformly from r.
func uniformInt(rng *rand.Rand, r IntRange) int { return r.Min + rng.IntN(r.Max-r.Min+1) }

// logUniformInt draws from r with a uniform logarithm: as many wallets of
// 5 to 50 addresses as of 50 to 500.
func logUniformInt(rng *rand.Rand, r IntRange) int {
	if r.Min >= r.Max {
		return r.Min
	}
	lo, hi := math.Log(float64(r.Min)), math.Log(float64(r.Max)+1)
	return min(r.Max, max(r.Min, int(math.Exp(lo+rng.Float64()*(hi-lo)))))
}

// logUniform draws from r with a uniform logarithm.
func logUniform(rng *rand.Rand, r FloatRange) float64 {
	lo, hi := math.Log(r.Min), math.Log(r.Max)
	return min(r.Max, max(r.Min, math.Exp(lo+rng.Float64()*(hi-lo))))
}

// walletID names wallet i of n, so that the names sort in order.
func walletID(prefix string, i, n int) string {
	return fmt.Sprintf("%s%0*d", prefix, len(strconv.Itoa(n)), i+1)
}

// addressOf encodes a 20-byte hash as a P2PKH or a P2WPKH address.
func addressOf(hash []byte, segwit bool) string {
	var a btcutil.Address
	var err error
	if segwit {
		a, err = btcutil.NewAddressWitnessPubKeyHash(hash, params)
	} else {
		a, err = btcutil.NewAddressPubKeyHash(hash, params)
	}
	if err != nil {
		panic(err) // a 20-byte hash always makes an address
	}
	return a.EncodeAddress()
}

// makeWallets derives every wallet's keys: private key j of wallet i is
// SHA-256 of the seed, i and j.
func (s *Scenario) makeWallets() {
	o := s.opts
	rng := newRand(o.Seed, streamWallets)
	for i := range o.Wallets {
		n := logUniformInt(rng, o.Addresses)
		w := Wallet{ID: walletID("w", i, o.Wallets), FPRate: logUniform(rng, o.FPRate), Addresses: make([]string, n)}
		segwit := rng.IntN(2) == 1
		keys := &walletKeys{}
		var buf [24]byte
		binary.LittleEndian.PutUint64(buf[:], o.Seed)
		binary.LittleEndian.PutUint64(buf[8:], uint64(i))
		for j := range n {
			binary.LittleEndian.PutUint64(buf[16:], uint64(j))
			priv := sha256.Sum256(buf[:])
			_, pub := btcec.PrivKeyFromBytes(priv[:])
			pk := pub.SerializeCompressed()
			h := btcutil.Hash160(pk)
			keys.pubKeys = append(keys.pubKeys, pk)
			keys.hashes = append(keys.hashes, h)
			w.Addresses[j] = addressOf(h, segwit)
		}
		s.wallets = append(s.wallets, keys)
		s.Labels.Wallets = append(s.Labels.Wallets, w)
	}
}

// makePayments makes a share of the wallets pay another wallet 1 to 3 of
// its addresses, which the payer's filters then hold too.
func (s *Scenario) makePayments() {
	o := s.opts
	rng := newRand(o.Seed, streamWallets+0x100)
	for i := range o.Wallets {
		if rng.Float64() >= o.PayFraction {
			continue
		}
		j := rng.IntN(o.Wallets - 1)
		if j >= i {
			j++
		}
		payee := &s.Labels.Wallets[j]
		picked := rng.Perm(len(payee.Addresses))[:min(1+rng.IntN(3), len(payee.Addresses))]
		slices.Sort(picked)
		p := Payment{Payer: s.Labels.Wallets[i].ID, Payee: payee.ID}
		for _, k := range picked {
			p.Addresses = append(p.Addresses, payee.Addresses[k])
			s.wallets[i].watched = append(s.wallets[i].watched, s.wallets[j].hashes[k])
		}
		s.Labels.Payments = append(s.Labels.Payments, p)
	}
}

// makeSessions draws every session, shuffles them and names them in
// their order in the capture.
func (s *Scenario) makeSessions() {
	o := s.opts
	rng := newRand(o.Seed, streamSessions)
	for i, keys := range s.wallets {
		w := &s.Labels.Wallets[i]
		for _, prefix := range sessionPrefixes(rng, len(w.Addresses), uniformInt(rng, o.Sessions)) {
			added := 0
			if prefix >= 2 && rng.Float64() < o.FilterAddFraction {
				added = 1 + rng.IntN(max(1, prefix/5))
			}
			sp := &sessionSpec{wallet: keys, tweak: rng.Uint32(), label: Session{
				Kind: KindWallet, Wallet: w.ID, Loaded: prefix - added, Added: added, FPRate: w.FPRate,
				SizedFor: o.ElementsPerAddress*(prefix-added) + len(keys.watched) + o.ExtraElements,
				Elements: o.ElementsPerAddress*prefix + len(keys.watched)}}
			s.sessions = append(s.sessions, sp)
		}
	}
	nrng := newRand(o.Seed, streamNoise)
	for range o.Noise {
		n := logUniformInt(nrng, o.Addresses) * o.ElementsPerAddress
		s.sessions = append(s.sessions, &sessionSpec{tweak: nrng.Uint32(), randSeed: nrng.Uint64(), randElems: n,
			label: Session{Kind: KindNoise, FPRate: logUniform(nrng, o.FPRate), SizedFor: n + o.ExtraElements, Elements: n}})
	}
	for i := range o.Degenerate {
		kind := []SessionKind{KindEmpty, KindFull, KindTiny}[i%3]
		sp := &sessionSpec{tweak: nrng.Uint32(), randSeed: nrng.Uint64(), label: Session{Kind: kind}}
		if kind == KindTiny {
			sp.randElems = 8
			sp.label.Elements = 8
		}
		s.sessions = append(s.sessions, sp)
	}
	rng.Shuffle(len(s.sessions), func(i, j int) { s.sessions[i], s.sessions[j] = s.sessions[j], s.sessions[i] })
	for i, sp := range s.sessions {
		sp.label.ID = fmt.Sprintf("sim%d-%d", o.Seed, i+1)
		sp.label.Client = fmt.Sprintf("127.0.%d.%d:%d", i/250%250, i%250+1, 10000+rng.IntN(50000))
		f := s.filter(sp)
		sp.label.FilterBytes, sp.label.HashFuncs = f.Size(), int(f.HashFuncs())
		s.Labels.Sessions = append(s.Labels.Sessions, sp.label)
	}
}

// sessionPrefixes returns how many of a wallet's n addresses each of its
// sessions knows, in time order: the last knows all, the earlier ones at
// least half, never fewer than the one before.
func sessionPrefixes(rng *rand.Rand, n, sessions int) []int {
	out := make([]int, sessions)
	half := (n + 1) / 2
	for i := range out[:sessions-1] {
		out[i] = half + rng.IntN(n-half+1)
	}
	out[sessions-1] = n
	slices.Sort(out)
	return out
}

// filter builds the session's filterload, before any filteradd.
func (s *Scenario) filter(sp *sessionSpec) *bip37.Filter {
	var f *bip37.Filter
	var err error
	switch sp.label.Kind {
	case KindEmpty:
		f, err = bip37.NewFilterFromParams(nil, 0, sp.tweak, wire.BloomUpdateNone)
	case KindFull:
		f, err = bip37.NewFilterFromParams([]byte{0xff}, 3, sp.tweak, wire.BloomUpdateNone)
	case KindTiny:
		f, err = bip37.NewFilterFromParams(make([]byte, 2), 1, sp.tweak, wire.BloomUpdateNone)
	default:
		size, k := s.opts.Sizing.Size(uint32(sp.label.SizedFor), sp.label.FPRate)
		f, err = bip37.NewFilterFromParams(make([]byte, size), k, sp.tweak, wire.BloomUpdateP2PubkeyOnly)
	}
	if err != nil {
		panic(err) // sizes and hash counts are within the limits by construction
	}
	for _, e := range s.loadedElements(sp) {
		f.Add(e)
	}
	return f
}

// loadedElements are what the session's filterload holds.
func (s *Scenario) loadedElements(sp *sessionSpec) [][]byte {
	if sp.wallet == nil {
		return randomElements(sp.randSeed, sp.randElems, s.opts.ElementsPerAddress)
	}
	out := s.addressElements(sp.wallet, 0, sp.label.Loaded)
	return append(out, sp.wallet.watched...)
}

// addedElements are what the session sends by filteradd.
func (s *Scenario) addedElements(sp *sessionSpec) [][]byte {
	if sp.wallet == nil {
		return nil
	}
	return s.addressElements(sp.wallet, sp.label.Loaded, sp.label.Loaded+sp.label.Added)
}

// addressElements are the elements a wallet inserts for its addresses
// from..to-1: the public key (with two elements per address) and its
// hash.
func (s *Scenario) addressElements(w *walletKeys, from, to int) [][]byte {
	var out [][]byte
	for j := from; j < to; j++ {
		if s.opts.ElementsPerAddress == 2 {
			out = append(out, w.pubKeys[j])
		}
		out = append(out, w.hashes[j])
	}
	return out
}

// randomElements draws n elements of no candidate: with two elements per
// address, alternately a key-like 33-byte string and a 20-byte hash.
func randomElements(seed uint64, n, perAddress int) [][]byte {
	rng := newRand(seed, streamNoise+1)
	out := make([][]byte, n)
	for i := range out {
		size := 20
		if perAddress == 2 && i%2 == 0 {
			size = 33
		}
		b := make([]byte, size)
		fillRandom(rng, b)
		if size == 33 {
			b[0] = 2 | b[0]&1
		}
		out[i] = b
	}
	return out
}

// fillRandom fills b from rng.
func fillRandom(rng *rand.Rand, b []byte) {
	for i := 0; i < len(b); i += 8 {
		var x [8]byte
		binary.LittleEndian.PutUint64(x[:], rng.Uint64())
		copy(b[i:], x[:])
	}
}

// placeAddresses picks the universe lines of the wallets' addresses.
func (s *Scenario) placeAddresses() {
	rng := newRand(s.opts.Seed, streamUniverse)
	total := s.opts.UniverseSize
	for _, w := range s.Labels.Wallets {
		total += len(w.Addresses)
	}
	s.positions = make(map[int]string, total-s.opts.UniverseSize)
	for _, w := range s.Labels.Wallets {
		for _, a := range w.Addresses {
			i := rng.IntN(total)
			for s.positions[i] != "" {
				i = rng.IntN(total)
			}
			s.positions[i] = a
		}
	}
	s.Labels.UniverseSize = total
}
