package simulate

import (
	"bytes"
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

	"github.com/spvfilter/spvfilter/privacy/universe"
)

// Streams of the random generator: each part of a simulation draws from
// its own, so that changing one option leaves the other parts as they were.
const (
	streamWallets uint64 = iota + 0x51a0
	streamSessions
	streamNoise
	streamSchedule
	streamChain
	streamFetch
)

// params is the network the addresses are encoded for.
var params = &chaincfg.MainNetParams

// Scenario is a simulation: its labels, and what its files are written
// from, in memory bounded by the wallets, the sessions and the chain's
// candidates.
type Scenario struct {
	Labels *Labels

	opts     Options
	spec     regimeSpec
	wallets  []*walletSim
	sessions []*sessionSpec
	fetch    *fetchSim
	chain    *chainBuilder
	events   map[int32][]chainEvent
	// universe and index are the files package universe's writers made
	// from the chain's blocks.
	universe, index []byte
}

// walletKey is one key of a BIP 37 wallet and, once it is used, its
// script on the chain.
type walletKey struct {
	pub, hash []byte
	script    uint32
	used      bool
	receive   bool // of the receive chain, and one the wallet uses
	owner     *walletSim
}

// addressUse is the first appearance of a wallet's address on the chain.
type addressUse struct {
	key    *walletKey
	name   string
	height int32
}

// walletSim is a BIP 37 wallet: its keys, what it paid, and its use of
// the chain.
type walletSim struct {
	label    Wallet
	index    int
	segwit   bool
	keys     []*walletKey // the receive chain, lookahead included
	internal []*walletKey // the change chain, as used
	size     int          // receive addresses it uses
	watched  []*walletKey // the payees' keys it paid (and watches)
	uses     []addressUse // its addresses in the order of first use
	group    int          // its client's group (shared-client), else its own index
}

// sessionSpec is what a BIP 37 session's records are rebuilt from.
type sessionSpec struct {
	label          Session
	tweak          uint32
	loaded, added  [][]byte
	randSeed       uint64 // noise and tiny sessions' random elements
	randElems      int
	walletSessions []*walletSim
}

// eventKind names what happens at a height of the chain.
type eventKind int

const (
	evReceive     eventKind = iota // a BIP 37 wallet is paid on addresses
	evSpend                        // a BIP 37 wallet spends a coin
	evPayment                      // a BIP 157 wallet is paid by a payer
	evWalletSpend                  // a BIP 157 wallet spends a coin
	evPayerSpend                   // a payer spends its last change
)

// chainEvent is one transaction of a wallet, made at its height after
// the block's own transactions.
type chainEvent struct {
	kind    eventKind
	wallet  int
	payer   int
	last    bool  // the payer's last payment to the wallet
	batch   int   // BIP 157 scripts one payment pays
	keys    []int // the receive keys a BIP 37 payment pays
	coin    coin
	payment int
}

// Generate simulates what the options describe (see the package
// documentation). It fails with ErrBadOptions for options out of range.
func Generate(o Options) (*Scenario, error) { return generateWith(o, nil) }

// generateWith is Generate, handing every block of the chain to onBlock too
// (nil: none).
func generateWith(o Options, onBlock blockSink) (*Scenario, error) {
	if err := o.validate(); err != nil {
		return nil, err
	}
	s := &Scenario{opts: o, spec: o.Regime.spec(), events: map[int32][]chainEvent{},
		Labels: &Labels{Format: LabelsFormat, Version: LabelsVersion, Options: o,
			Wallets: []Wallet{}, Payments: []Payment{}, Sessions: []Session{}}}
	s.makeWallets()
	s.makePayments()
	s.scheduleWallets()
	if o.Fetch.Wallets+o.Fetch.Noise > 0 {
		s.fetch = newFetchSim(s)
		s.fetch.schedule()
	}
	if err := s.buildChain(onBlock); err != nil {
		return nil, err
	}
	for _, w := range s.wallets {
		for _, u := range w.uses {
			w.label.Addresses = append(w.label.Addresses, u.name)
		}
		s.Labels.Wallets = append(s.Labels.Wallets, w.label)
	}
	s.makeSessions()
	if s.fetch != nil {
		s.fetch.makeLabels()
		s.Labels.Fetch = s.fetch.labels
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

// paretoInt draws from r by a Pareto law of index 1, cut to r: P(X > x)
// falls as 1/x, so that a few draws are far larger than the rest.
func paretoInt(rng *rand.Rand, r IntRange) int {
	if r.Min >= r.Max {
		return r.Min
	}
	lo, hi := float64(r.Min), float64(r.Max)+1
	u := rng.Float64()
	// The inverse of the distribution cut to [lo, hi).
	x := lo / (1 - u*(1-lo/hi))
	return min(r.Max, max(r.Min, int(x)))
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

// deriveKey is private key j of wallet i of the seed (SHA-256 of the
// three) and its public key.
func deriveKey(seed uint64, i int, j uint64) *walletKey {
	var buf [24]byte
	binary.LittleEndian.PutUint64(buf[:], seed)
	binary.LittleEndian.PutUint64(buf[8:], uint64(i))
	binary.LittleEndian.PutUint64(buf[16:], j)
	priv := sha256.Sum256(buf[:])
	_, pub := btcec.PrivKeyFromBytes(priv[:])
	pk := pub.SerializeCompressed()
	return &walletKey{pub: pk, hash: btcutil.Hash160(pk)}
}

// internalKeys number a wallet's change keys apart from its receive keys.
const internalKeys = 1 << 32

// makeWallets draws every BIP 37 wallet's size, rate and keys: private
// key j of wallet i is SHA-256 of the seed, i and j; the lookahead keys
// beyond those it will use are random (they never reach the chain).
func (s *Scenario) makeWallets() {
	o := s.opts
	rng := newRand(o.Seed, streamWallets)
	for i := range o.Wallets {
		n := logUniformInt(rng, o.Addresses)
		if s.spec.paretoSizes {
			n = paretoInt(rng, o.Addresses)
		}
		w := &walletSim{index: i, size: n, group: i, segwit: rng.IntN(2) == 1,
			label: Wallet{ID: walletID("w", i, o.Wallets), FPRate: logUniform(rng, o.FPRate), Addresses: []string{}}}
		for j := range n {
			k := deriveKey(o.Seed, i, uint64(j))
			k.receive, k.owner = true, w
			w.keys = append(w.keys, k)
		}
		for range s.spec.lookahead {
			k := &walletKey{pub: make([]byte, 33), owner: w}
			fillRandom(rng, k.pub)
			k.pub[0] = 2 | k.pub[0]&1
			k.hash = btcutil.Hash160(k.pub)
			w.keys = append(w.keys, k)
		}
		s.wallets = append(s.wallets, w)
	}
	if s.spec.sharedClient {
		for i := 0; i < len(s.wallets); {
			size := 2 + rng.IntN(2)
			for j := i; j < min(i+size, len(s.wallets)); j++ {
				s.wallets[j].group = i
			}
			i += size
		}
	}
}

// makePayments makes a share of the wallets pay others some of their
// addresses, which the payer's filters then hold too: 1 to 3 addresses
// of one payee, or in the payments regime 1 to 20 of each of up to three,
// every address of a small payee.
func (s *Scenario) makePayments() {
	o := s.opts
	if o.Wallets < 2 {
		return
	}
	rng := newRand(o.Seed, streamWallets+0x100)
	for i := range o.Wallets {
		if rng.Float64() >= o.PayFraction {
			continue
		}
		paid := map[int]bool{}
		for range 1 + rng.IntN(s.spec.payeesMax) {
			j := rng.IntN(o.Wallets - 1)
			if j >= i {
				j++
			}
			if paid[j] {
				continue
			}
			paid[j] = true
			payee := s.wallets[j]
			k := min(1+rng.IntN(s.spec.payMax), payee.size)
			if payee.size <= s.spec.smallPayee {
				k = payee.size
			}
			picked := rng.Perm(payee.size)[:k]
			slices.Sort(picked)
			p := Payment{Payer: s.wallets[i].label.ID, Payee: payee.label.ID}
			for _, x := range picked {
				key := payee.keys[x]
				p.Addresses = append(p.Addresses, addressOf(key.hash, payee.segwit))
				s.wallets[i].watched = append(s.wallets[i].watched, key)
			}
			s.Labels.Payments = append(s.Labels.Payments, p)
		}
	}
}

// at schedules an event at height h.
func (s *Scenario) at(h int32, e chainEvent) { s.events[h] = append(s.events[h], e) }

// scheduleWallets draws when each BIP 37 wallet is paid: its addresses
// first at sorted random heights from its birth (in bursts of one
// transaction in a clustered chain), then, with reuse, addresses it used
// before again.
func (s *Scenario) scheduleWallets() {
	o := s.opts
	rng := newRand(o.Seed, streamSchedule)
	blocks := o.Chain.Blocks
	for i, w := range s.wallets {
		birth := int32(rng.IntN(blocks / 2))
		first := make([]int32, w.size)
		for j := range first {
			first[j] = birth + int32(rng.IntN(blocks-int(birth)))
		}
		slices.Sort(first)
		for j := 0; j < w.size; {
			n := 1
			if s.spec.clustered {
				n = 1 + int(math.Floor(-math.Log1p(-rng.Float64())*2))
			}
			n = min(n, w.size-j)
			keys := make([]int, n)
			for x := range keys {
				keys[x] = j + x
			}
			s.at(first[j], chainEvent{kind: evReceive, wallet: i, keys: keys})
			j += n
		}
		if s.spec.reuse > 0 {
			extra := int(math.Round(float64(w.size) * s.spec.reuse / (1 - s.spec.reuse)))
			for range extra {
				j := rng.IntN(w.size)
				h := first[j] + int32(rng.IntN(blocks-int(first[j])))
				s.at(h, chainEvent{kind: evReceive, wallet: i, keys: []int{j}})
			}
		}
	}
}

// buildChain makes every block, its background and then its wallets'
// transactions, and extracts the universe and the index from them with
// package universe's writers.
func (s *Scenario) buildChain(onBlock blockSink) error {
	var ubuf bytes.Buffer
	uw := universe.NewWriter(&ubuf, params)
	uw.Comment(fmt.Sprintf("simulated universe: the candidates of a chain of %d blocks (spvfilter privacy simulate, seed %d, regime %s)",
		s.opts.Chain.Blocks, s.opts.Seed, s.opts.Regime))
	ix := universe.NewIndexWriter("", 0)
	defer ix.Close()
	uw.SetIndex(ix)
	sink := uw.AddBlock
	if onBlock != nil {
		sink = func(h int32, blk *wire.MsgBlock) error {
			if err := onBlock(h, blk); err != nil {
				return err
			}
			return uw.AddBlock(h, blk)
		}
	}
	b := newChainBuilder(newRand(s.opts.Seed, streamChain), s.opts.Chain.TxsPerBlock, s.spec.clustered, sink)
	b.trackAll = s.spec.covered
	s.chain = b
	for h := range int32(s.opts.Chain.Blocks) {
		b.startBlock(h)
		for i := 0; i < len(s.events[h]); i++ { // events may add events at h
			s.run(s.events[h][i])
		}
		delete(s.events, h)
		b.endBlock()
	}
	if b.err != nil {
		return fmt.Errorf("simulate: universe: %w", b.err)
	}
	if err := uw.Flush(); err != nil {
		return fmt.Errorf("simulate: universe: %w", err)
	}
	st := uw.Stats()
	s.universe = ubuf.Bytes()
	s.Labels.UniverseSize = st.Lines - st.Listed
	var ibuf bytes.Buffer
	if _, err := ix.WriteTo(&ibuf, &universe.IndexHeader{Network: params.Name, First: 0, Hashes: b.hashes}); err != nil {
		return fmt.Errorf("simulate: index: %w", err)
	}
	s.index = ibuf.Bytes()
	return nil
}

// run makes the transaction of an event.
func (s *Scenario) run(e chainEvent) {
	switch e.kind {
	case evReceive:
		s.receive(e)
	case evSpend:
		s.spend(e)
	default:
		s.fetch.run(e)
	}
}

// useKey returns the script of a wallet's key, recording its first use.
func (s *Scenario) useKey(w *walletSim, k *walletKey) uint32 {
	if !k.used {
		k.used = true
		k.script = s.chain.newScript(k.pub, w.segwit)
		w.uses = append(w.uses, addressUse{key: k, name: s.chain.scripts[k.script].name, height: s.chain.h})
	}
	return k.script
}

// receive is a payment to a BIP 37 wallet's addresses from a background
// output, with the payer's change beside it; each coin it receives is
// spent later with the regime's probability.
func (s *Scenario) receive(e chainEvent) {
	w, b := s.wallets[e.wallet], s.chain
	var outs []uint32
	for _, j := range e.keys {
		outs = append(outs, s.useKey(w, w.keys[j]))
	}
	outs = append(outs, b.otherScript())
	coins := b.tx(b.funding(), outs)
	b.pool = append(b.pool, coins[len(coins)-1])
	for _, c := range coins[:len(coins)-1] {
		s.maybeSpend(e.wallet, c)
	}
}

// maybeSpend schedules the spend of a wallet's coin at a later height,
// with the regime's probability.
func (s *Scenario) maybeSpend(wallet int, c coin) {
	b := s.chain
	if b.rng.Float64() >= s.spec.spendShare {
		return
	}
	if at, ok := s.later(b.rng, b.h); ok {
		s.at(at, chainEvent{kind: evSpend, wallet: wallet, coin: c})
	}
}

// later returns a random height after h, or false at the tip.
func (s *Scenario) later(rng *rand.Rand, h int32) (int32, bool) {
	tip := int32(s.opts.Chain.Blocks - 1)
	if h >= tip {
		return 0, false
	}
	return h + 1 + int32(rng.IntN(int(tip-h))), true
}

// spend is a BIP 37 wallet paying someone from one of its coins, which
// shows its key; with change, the rest goes to a new address of its
// internal chain, spent later in turn with the regime's probability.
func (s *Scenario) spend(e chainEvent) {
	w, b := s.wallets[e.wallet], s.chain
	outs := []uint32{b.otherScript()}
	if s.spec.change {
		k := deriveKey(s.opts.Seed, e.wallet, internalKeys+uint64(len(w.internal)))
		k.owner = w
		w.internal = append(w.internal, k)
		outs = append(outs, s.useKey(w, k))
	}
	coins := b.tx([]coin{e.coin}, outs)
	b.pool = append(b.pool, coins[0])
	if s.spec.change {
		s.maybeSpend(e.wallet, coins[1])
	}
}

// makeSessions draws every BIP 37 session, shuffles them and names them
// in their order in the capture.
func (s *Scenario) makeSessions() {
	o := s.opts
	rng := newRand(o.Seed, streamSessions)
	tip := int32(o.Chain.Blocks - 1)
	for _, w := range s.wallets {
		for _, h := range s.sessionHeights(rng, w, uniformInt(rng, o.Sessions), tip) {
			members := []*walletSim{w}
			if s.spec.sharedClient && rng.IntN(3) == 0 {
				members = s.groupOf(w)
			}
			s.sessions = append(s.sessions, s.walletSession(rng, members, h))
		}
	}
	nrng := newRand(o.Seed, streamNoise)
	for range o.Noise {
		n := logUniformInt(nrng, o.Addresses) * o.ElementsPerAddress
		s.sessions = append(s.sessions, &sessionSpec{tweak: nrng.Uint32(), randSeed: nrng.Uint64(), randElems: n,
			label: Session{Kind: KindNoise, FPRate: logUniform(nrng, o.FPRate), SizedFor: n + o.ExtraElements, Elements: n, Holds: []string{}}})
	}
	for i := range o.Degenerate {
		kind := []SessionKind{KindEmpty, KindFull, KindTiny}[i%3]
		sp := &sessionSpec{tweak: nrng.Uint32(), randSeed: nrng.Uint64(), label: Session{Kind: kind, Holds: []string{}}}
		if kind == KindTiny {
			sp.randElems = 8
			sp.label.Elements = 8
		}
		s.sessions = append(s.sessions, sp)
	}
	rng.Shuffle(len(s.sessions), func(i, j int) { s.sessions[i], s.sessions[j] = s.sessions[j], s.sessions[i] })
	ports := map[string]int{}
	for i, sp := range s.sessions {
		sp.label.ID = fmt.Sprintf("sim%d-%d", o.Seed, i+1)
		host := fmt.Sprintf("127.0.%d.%d", i/250%250, i%250+1)
		if len(sp.walletSessions) > 0 && s.spec.sharedClient {
			g := sp.walletSessions[0].group
			host = fmt.Sprintf("127.2.%d.%d", g/250%250, g%250+1)
		}
		ports[host]++
		sp.label.Client = fmt.Sprintf("%s:%d", host, 10000+rng.IntN(50000))
		f := s.filter(sp)
		sp.label.FilterBytes, sp.label.HashFuncs = f.Size(), int(f.HashFuncs())
		s.Labels.Sessions = append(s.Labels.Sessions, sp.label)
	}
}

// groupOf returns the wallets behind w's client address, w first.
func (s *Scenario) groupOf(w *walletSim) []*walletSim {
	out := []*walletSim{w}
	for _, x := range s.wallets {
		if x != w && x.group == w.group {
			out = append(out, x)
		}
	}
	return out
}

// sessionHeights draws the heights of a wallet's sessions, in order: the
// last at the tip (it knows all the wallet's addresses), each earlier
// one where the wallet had used at least half its receive addresses.
func (s *Scenario) sessionHeights(rng *rand.Rand, w *walletSim, n int, tip int32) []int32 {
	receive := []int32{}
	for _, u := range w.uses {
		if u.key.receive {
			receive = append(receive, u.height)
		}
	}
	out := make([]int32, n)
	for i, p := range sessionPrefixes(rng, len(receive), n) {
		out[i] = tip
		if p > 0 && p < len(receive) {
			out[i] = receive[p-1]
		}
	}
	return out
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

// walletSession is a session of the wallets members at height h: its
// filter holds the addresses they used by then (with shrink, a random
// part of them; with a lookahead, the next keys too), their payees'
// addresses, and the newest of them may come by filteradd.
func (s *Scenario) walletSession(rng *rand.Rand, members []*walletSim, h int32) *sessionSpec {
	o := s.opts
	w := members[0]
	sp := &sessionSpec{tweak: rng.Uint32(), walletSessions: members,
		label: Session{Kind: KindWallet, Wallet: w.label.ID, FPRate: w.label.FPRate, Holds: []string{}, Height: h}}
	if len(members) > 1 {
		for _, m := range members {
			sp.label.Wallets = append(sp.label.Wallets, m.label.ID)
		}
	}
	var held []*walletKey
	inUniverse := map[*walletKey]string{}
	keep := 1.0
	if s.spec.shrink {
		keep = 0.3 + 0.7*rng.Float64()
	}
	for _, m := range members {
		used := 0
		for _, u := range m.uses {
			inUniverse[u.key] = u.name
			if u.height > h {
				continue
			}
			if u.key.receive {
				used++
			}
			if keep < 1 && rng.Float64() >= keep {
				continue
			}
			held = append(held, u.key)
		}
		held = append(held, m.keys[used:min(len(m.keys), used+s.spec.lookahead)]...)
	}
	if len(held) == 0 && len(members[0].uses) > 0 {
		held = append(held, members[0].uses[0].key)
	}
	added := 0
	if len(held) >= 2 && rng.Float64() < o.FilterAddFraction {
		added = 1 + rng.IntN(max(1, len(held)/5))
	}
	for i, k := range held {
		if name, ok := inUniverse[k]; ok && k.used {
			sp.label.Holds = append(sp.label.Holds, name)
		}
		elems := s.keyElements(k)
		if i < len(held)-added {
			sp.loaded = append(sp.loaded, elems...)
			sp.label.Loaded++
		} else {
			sp.added = append(sp.added, elems...)
			sp.label.Added++
		}
	}
	seen := map[string]bool{}
	for _, m := range members {
		for _, k := range m.watched {
			name := addressOf(k.hash, k.owner.segwit)
			if seen[name] {
				continue
			}
			seen[name] = true
			sp.label.Holds = append(sp.label.Holds, name)
			sp.loaded = append(sp.loaded, k.hash)
		}
	}
	sp.label.SizedFor = len(sp.loaded) + o.ExtraElements
	sp.label.Elements = len(sp.loaded) + len(sp.added)
	return sp
}

// keyElements are the elements a wallet inserts for one key: the public
// key (with two elements per address) and its hash.
func (s *Scenario) keyElements(k *walletKey) [][]byte {
	if s.opts.ElementsPerAddress == 2 {
		return [][]byte{k.pub, k.hash}
	}
	return [][]byte{k.hash}
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
