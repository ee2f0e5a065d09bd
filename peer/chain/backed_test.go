package chain

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// memStore is a Store in memory, with writes that can be made to fail.
type memStore struct {
	mu         sync.Mutex
	headers    []wire.BlockHeader
	hashes     []chainhash.Hash
	failAppend bool
	failReads  bool
	reads      int // headers read
}

func newMemStore(params *chaincfg.Params) *memStore {
	return storeOf(params.GenesisBlock.Header)
}

func storeOf(hs ...wire.BlockHeader) *memStore {
	s := &memStore{}
	for _, h := range hs {
		s.headers = append(s.headers, h)
		s.hashes = append(s.hashes, h.BlockHash())
	}
	return s
}

var errInjected = errors.New("injected failure")

func (s *memStore) Height() int32 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return int32(len(s.headers)) - 1
}

func (s *memStore) Header(h int32) (wire.BlockHeader, error) {
	hs, err := s.ReadHeaders(h, h)
	if err != nil {
		return wire.BlockHeader{}, err
	}
	return hs[0], nil
}

func (s *memStore) Hash(h int32) (chainhash.Hash, error) {
	hdr, err := s.Header(h)
	return hdr.BlockHash(), err
}

func (s *memStore) HeightOf(hash chainhash.Hash) (int32, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for h := len(s.hashes) - 1; h >= 0; h-- {
		if s.hashes[h] == hash {
			return int32(h), true
		}
	}
	return 0, false
}

func (s *memStore) ReadHeaders(from, to int32) ([]wire.BlockHeader, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failReads {
		return nil, errInjected
	}
	if from < 0 || to < from || int(to) >= len(s.headers) {
		return nil, fmt.Errorf("headers %d..%d outside 0..%d", from, to, len(s.headers)-1)
	}
	s.reads += int(to - from + 1)
	return slices.Clone(s.headers[from : to+1]), nil
}

func (s *memStore) AppendHeaders(hs []wire.BlockHeader) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failAppend {
		return errInjected
	}
	for _, h := range hs {
		s.headers = append(s.headers, h)
		s.hashes = append(s.hashes, h.BlockHash())
	}
	return nil
}

func (s *memStore) Truncate(h int32) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.headers = s.headers[:h+1]
	s.hashes = s.hashes[:h+1]
	return nil
}

// testWindow is the window of the backed chains under test: small, so
// that a few hundred headers cross it many times.
const testWindow = 25

// diffParams are the networks of the differential test, each with a
// retarget every 10 blocks and an easy limit: mainnet's rules, testnet3's
// minimum-difficulty exception, and testnet4's BIP 94 on top.
func diffParams() map[string]*chaincfg.Params {
	mainLike := retargetParams()
	minDiff := retargetParams()
	minDiff.ReduceMinDifficulty = true
	minDiff.MinDiffReductionTime = 2 * time.Minute
	bip94 := retargetParams()
	bip94.ReduceMinDifficulty = true
	bip94.MinDiffReductionTime = 2 * time.Minute
	bip94.Net = TestNet4Net
	return map[string]*chaincfg.Params{"mainnet-rules": mainLike, "min-difficulty": minDiff, "bip94": bip94}
}

// branchMaker mines random branches, some of them invalid, off the paths
// (genesis to tip) it made before.
type branchMaker struct {
	t      *testing.T
	params *chaincfg.Params
	rng    *rand.Rand
	now    time.Time
	paths  [][]wire.BlockHeader
}

// next returns the next input for Extend and, when it is valid, the path
// it makes.
func (m *branchMaker) next(current []wire.BlockHeader) []*wire.BlockHeader {
	base := current
	if m.rng.IntN(3) == 0 {
		base = m.paths[m.rng.IntN(len(m.paths))]
	}
	// Fork at the tip, or anywhere in the last 60 blocks: often below
	// the window.
	fork := len(base) - 1
	if m.rng.IntN(4) != 0 {
		fork = max(0, fork-m.rng.IntN(61))
	}
	scratch, err := Load(m.params, slices.Clone(base[:fork+1]))
	if err != nil {
		m.t.Fatal(err)
	}
	scratch.Now = func() time.Time { return m.now }
	n := 1 + m.rng.IntN(40)
	if m.rng.IntN(5) == 0 {
		n = 40 + m.rng.IntN(60) // long enough to win from far below the window
	}
	bad := -1
	if m.rng.IntN(8) == 0 {
		bad = m.rng.IntN(n)
	}
	var out []*wire.BlockHeader
	prev := scratch.Header(scratch.Height())
	prevHash := scratch.Hash(scratch.Height())
	for i := 0; i < n; i++ {
		spacing := time.Duration(10+m.rng.IntN(170)) * time.Second
		if m.rng.IntN(6) == 0 {
			spacing = 5 * time.Minute // beyond the minimum-difficulty delay
		}
		ts := prev.Timestamp.Add(spacing)
		bits := prev.Bits
		if bad < 0 || i < bad {
			bits = scratch.requiredBits(scratch.Height()+1, ts)
		}
		h := &wire.BlockHeader{Version: 4, PrevBlock: prevHash, Timestamp: ts, Bits: bits, Nonce: m.rng.Uint32()}
		if i == bad {
			switch m.rng.IntN(3) {
			case 0:
				h.Bits = 0x2000ffff // a valid target, not the required one
				if h.Bits == scratch.requiredBits(scratch.Height()+1, ts) {
					h.Bits = 0x200fffff
				}
			case 1:
				h.Timestamp = scratch.medianTime(scratch.Height())
			case 2:
				h.PrevBlock = chainhash.Hash{byte(m.rng.Uint32())}
			}
		}
		mineNonce(h)
		out = append(out, h)
		if bad < 0 || i < bad {
			if err := extend(scratch, []*wire.BlockHeader{h}); err != nil {
				m.t.Fatalf("the test's own header at %d: %v", scratch.Height()+1, err)
			}
		}
		prev, prevHash = *h, h.BlockHash()
	}
	if bad < 0 {
		m.paths = append(m.paths, append(slices.Clone(base[:fork+1]), derefs(out)...))
	}
	// Now and then resend a few known headers first, or leave out the
	// first header so that the rest do not connect.
	switch r := m.rng.IntN(10); {
	case r == 0 && len(out) > 1:
		out = out[1:]
	case r < 3:
		for k := 0; k < 3 && fork > 0; k++ {
			out = append([]*wire.BlockHeader{ptr(base[fork])}, out...)
			fork--
		}
	}
	return out
}

func derefs(hs []*wire.BlockHeader) []wire.BlockHeader {
	out := make([]wire.BlockHeader, len(hs))
	for i, h := range hs {
		out[i] = *h
	}
	return out
}

// mineNonce counts h's nonce up to one that meets its target.
func mineNonce(h *wire.BlockHeader) {
	target := blockchain.CompactToBig(h.Bits)
	for {
		hash := h.BlockHash()
		if blockchain.HashToBig(&hash).Cmp(target) <= 0 {
			return
		}
		h.Nonce++
	}
}

// TestBackedMatchesMemory is a differential test: random inputs to Extend
// (branches forking up to 60 blocks down, well below the window, some
// with a bad header, some resending known headers, some not connecting)
// given to a chain in memory and to a backed one give the same updates,
// the same errors and the same chains, and the store holds the chain.
func TestBackedMatchesMemory(t *testing.T) {
	for name, params := range diffParams() {
		t.Run(name, func(t *testing.T) {
			now := params.GenesisBlock.Header.Timestamp.Add(1000 * 24 * time.Hour)
			clock := func() time.Time { return now }
			ref := New(params)
			ref.Now = clock
			st := newMemStore(params)
			got, err := backed(params, st, testWindow)
			if err != nil {
				t.Fatal(err)
			}
			got.Now = clock
			m := &branchMaker{t: t, params: params, rng: rand.New(rand.NewPCG(1, uint64(len(name)))), now: now,
				paths: [][]wire.BlockHeader{{params.GenesisBlock.Header}}}
			counts := map[string]int{}
			for step := 0; step < 400; step++ {
				in := m.next(refHeaders(ref))
				base := got.base
				wantUp, wantErr := ref.Extend(in)
				gotUp, gotErr := got.Extend(in)
				if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) || !reflect.DeepEqual(wantUp, gotUp) {
					t.Fatalf("step %d: memory %+v, %v; backed %+v, %v", step, wantUp, wantErr, gotUp, gotErr)
				}
				counts[outcome(wantUp, wantErr, base)]++
				sameChain(t, step, ref, got, st, m.rng)
			}
			t.Logf("outcomes %v, tip %d, %d headers read from the store", counts, ref.Height(), st.reads)
			for _, o := range []string{"extended", "reorganized", "ErrLessWork", "ErrBadHeader", "ErrNotConnected", "reorg-below-window"} {
				if counts[o] == 0 {
					t.Errorf("no step ended %s", o)
				}
			}
			// A chain loaded from the store is the same chain again.
			again, err := backed(params, st, testWindow)
			if err != nil {
				t.Fatal(err)
			}
			sameChain(t, -1, ref, again, st, m.rng)
		})
	}
}

// outcome names what an Extend did to a chain whose memory started at
// base, for the test's coverage counts.
func outcome(up Update, err error, base int32) string {
	for _, e := range []error{ErrLessWork, ErrBadHeader, ErrNotConnected, ErrBelowCheckpoint} {
		if errors.Is(err, e) {
			return errName(e)
		}
	}
	switch {
	case up.Reorganized() && up.Fork < base:
		return "reorg-below-window"
	case up.Reorganized():
		return "reorganized"
	case up.Connected > 0:
		return "extended"
	}
	return "unchanged"
}

func errName(e error) string {
	switch e {
	case ErrLessWork:
		return "ErrLessWork"
	case ErrBadHeader:
		return "ErrBadHeader"
	case ErrNotConnected:
		return "ErrNotConnected"
	}
	return "ErrBelowCheckpoint"
}

// refHeaders returns the headers of a chain in memory.
func refHeaders(c *Chain) []wire.BlockHeader { return c.headers }

// sameChain checks that got answers every query as want does and that st
// holds it.
func sameChain(t *testing.T, step int, want, got *Chain, st *memStore, rng *rand.Rand) {
	t.Helper()
	if want.Height() != got.Height() || st.Height() != got.Height() {
		t.Fatalf("step %d: heights %d (memory), %d (backed), %d (store)", step, want.Height(), got.Height(), st.Height())
	}
	// Every height now and then, else the top and a sample.
	from := int32(0)
	if step%25 != 0 {
		from = max(0, want.Height()-3*testWindow)
		for i := 0; i < 20; i++ {
			h := rng.Int32N(want.Height() + 1)
			if want.Hash(h) != got.Hash(h) || want.Header(h) != got.Header(h) {
				t.Fatalf("step %d: height %d differs", step, h)
			}
		}
	}
	for h := from; h <= want.Height(); h++ {
		if want.Hash(h) != got.Hash(h) || want.Header(h) != got.Header(h) {
			t.Fatalf("step %d: height %d differs", step, h)
		}
		if s, _ := st.Hash(h); s != want.Hash(h) {
			t.Fatalf("step %d: the store's header %d is not the chain's", step, h)
		}
	}
	for i := 0; i < 5; i++ {
		h := rng.Int32N(want.Height() + 1)
		if g, ok := got.HeightOf(want.Hash(h)); !ok || g != h {
			t.Fatalf("step %d: HeightOf(hash at %d) = %d, %v", step, h, g, ok)
		}
		from := rng.Int32N(want.Height()+2) - 1
		to := rng.Int32N(want.Height() + 3)
		if w, g := want.WorkBetween(from, to), got.WorkBetween(from, to); w.Cmp(g) != 0 {
			t.Fatalf("step %d: WorkBetween(%d, %d) = %v, want %v", step, from, to, g, w)
		}
		// Below the window too, these read the store.
		if w, g := want.MedianTime(h), got.MedianTime(h); !w.Equal(g) {
			t.Fatalf("step %d: MedianTime(%d) = %v, want %v", step, h, g, w)
		}
		if !reflect.DeepEqual(want.LocatorAt(h), got.LocatorAt(h)) {
			t.Fatalf("step %d: locators at %d differ", step, h)
		}
		lo := max(0, h-3*testWindow)
		w, werr := want.Hashes(lo, h)
		g, gerr := got.Hashes(lo, h)
		if werr != nil || gerr != nil || !slices.Equal(w, g) {
			t.Fatalf("step %d: Hashes(%d, %d) differ (%v, %v)", step, lo, h, werr, gerr)
		}
	}
	if _, ok := got.HeightOf(chainhash.Hash{9}); ok {
		t.Fatalf("step %d: an unknown hash was found", step)
	}
	if !reflect.DeepEqual(want.Locator(), got.Locator()) {
		t.Fatalf("step %d: locators differ", step)
	}
	if got.Height() >= 2*testWindow && len(got.headers) > 2*testWindow {
		t.Fatalf("step %d: the backed chain holds %d headers in memory, want at most %d", step, len(got.headers), 2*testWindow)
	}
	if err := got.Err(); err != nil {
		t.Fatalf("step %d: %v", step, err)
	}
}

// backedChain returns a chain in memory of n mined headers and a backed
// chain of the same headers over a memStore.
func backedChain(t *testing.T, params *chaincfg.Params, n int) (*Chain, *Chain, *memStore) {
	t.Helper()
	ref := New(params)
	grow(t, ref, n, time.Minute)
	st := newMemStore(params)
	if err := st.AppendHeaders(ref.headers[1:]); err != nil {
		t.Fatal(err)
	}
	c, err := backed(params, st, testWindow)
	if err != nil {
		t.Fatal(err)
	}
	return ref, c, st
}

// TestBackedStoreFailures: a store that cannot be written leaves the
// chain as the store holds it, one that cannot be read is reported by
// Err and stops Extend, and one changed by something else is noticed.
func TestBackedStoreFailures(t *testing.T) {
	params := &chaincfg.RegressionNetParams
	t.Run("append", func(t *testing.T) {
		_, c, st := backedChain(t, params, 100)
		st.failAppend = true
		up, err := c.Extend(grow(t, New(params), 0, 0))
		if err != nil || up.Connected != 0 {
			t.Fatalf("no headers: %+v, %v", up, err)
		}
		h := mine(t, c, params.PowLimitBits, time.Minute)
		up, err = c.Extend([]*wire.BlockHeader{h})
		if !errors.Is(err, ErrStorage) || !errors.Is(err, errInjected) || up.Connected != 0 || c.Height() != 100 {
			t.Fatalf("append to a failing store: %+v, %v, height %d", up, err, c.Height())
		}
		if _, ok := c.HeightOf(h.BlockHash()); ok {
			t.Fatal("a header the store did not take is indexed")
		}
		st.failAppend = false
		if err := extend(c, []*wire.BlockHeader{h}); err != nil || c.Height() != 101 || st.Height() != 101 {
			t.Fatalf("once the store works: %v, height %d, stored %d", err, c.Height(), st.Height())
		}
	})
	t.Run("reorganization", func(t *testing.T) {
		ref, c, st := backedChain(t, params, 100)
		fork, err := Load(params, slices.Clone(ref.headers[:61]))
		if err != nil {
			t.Fatal(err)
		}
		branch := grow(t, fork, 50, 2*time.Minute)
		st.failAppend = true
		up, err := c.Extend(branch)
		if !errors.Is(err, ErrStorage) || up.Fork != 60 || len(up.Disconnected) != 40 || up.Connected != 0 {
			t.Fatalf("branch into a failing store: %+v, %v", up, err)
		}
		if c.Height() != 60 || st.Height() != 60 || c.Hash(60) != ref.Hash(60) {
			t.Fatalf("chain at %d, store at %d, want both at the fork 60", c.Height(), st.Height())
		}
		st.failAppend = false
		if err := extend(c, branch); err != nil || c.Height() != 110 || c.Hash(110) != branch[49].BlockHash() {
			t.Fatalf("the branch again: %v, height %d", err, c.Height())
		}
	})
	t.Run("read", func(t *testing.T) {
		ref, c, st := backedChain(t, params, 100)
		if c.Hash(10) != ref.Hash(10) || c.Err() != nil {
			t.Fatal("reading below the window")
		}
		st.failReads = true
		if hash := c.Hash(10); hash != (chainhash.Hash{}) {
			t.Fatalf("a hash the store cannot read: %v", hash)
		}
		if err := c.Err(); !errors.Is(err, ErrStorage) || !errors.Is(err, errInjected) {
			t.Fatalf("Err = %v", err)
		}
		st.failReads = false
		h := mine(t, c, params.PowLimitBits, time.Minute)
		if err := extend(c, []*wire.BlockHeader{h}); !errors.Is(err, ErrStorage) || c.Height() != 100 {
			t.Fatalf("Extend after a failed read: %v, height %d", err, c.Height())
		}
	})
	t.Run("changed", func(t *testing.T) {
		_, c, st := backedChain(t, params, 100)
		if err := st.Truncate(99); err != nil {
			t.Fatal(err)
		}
		h := mine(t, c, params.PowLimitBits, time.Minute)
		if err := extend(c, []*wire.BlockHeader{h}); !errors.Is(err, ErrStorage) || c.Height() != 100 {
			t.Fatalf("Extend over a store changed beneath it: %v, height %d", err, c.Height())
		}
	})
}

// TestBackedLoad: Backed checks every stored header with Load's rules
// and cuts the store below the first that fails.
func TestBackedLoad(t *testing.T) {
	params := retargetParams()
	ref := New(params)
	grow(t, ref, 0, 0)
	for i := 0; i < 100; i++ {
		ts := ref.Header(ref.Height()).Timestamp.Add(30 * time.Second)
		if err := extend(ref, []*wire.BlockHeader{mine(t, ref, ref.requiredBits(ref.Height()+1, ts), 30*time.Second)}); err != nil {
			t.Fatal(err)
		}
	}
	st := storeOf(ref.headers...)
	c, err := backed(params, st, testWindow)
	if err != nil || c.Height() != 100 || c.Hash(100) != ref.Hash(100) || len(c.headers) > 2*testWindow {
		t.Fatalf("load: %v, height %d, %d in memory", err, c.Height(), len(c.headers))
	}
	// Height 70 with its parent's bits where the retarget demands
	// others; the headers above link to it.
	bad := slices.Clone(ref.headers[:71])
	bad[70].Bits = bad[69].Bits
	if bad[70].Bits == ref.headers[70].Bits {
		t.Fatal("the test chain did not retarget at 70")
	}
	mineNonce(&bad[70])
	for i := 71; i <= 80; i++ {
		h := wire.BlockHeader{Version: 4, PrevBlock: bad[i-1].BlockHash(), Timestamp: bad[i-1].Timestamp.Add(time.Minute), Bits: bad[70].Bits}
		mineNonce(&h)
		bad = append(bad, h)
	}
	st = storeOf(bad...)
	c, err = backed(params, st, testWindow)
	if !errors.Is(err, ErrBadHeader) || c == nil || c.Height() != 69 || st.Height() != 69 || c.Hash(69) != ref.Hash(69) {
		t.Fatalf("bad header at 70: %v, chain %v, store at %d", err, c, st.Height())
	}
	if err := extend(c, ref.headersFrom(70)); err != nil || c.Height() != 100 {
		t.Fatalf("extending the cut chain: %v", err)
	}
	st = newMemStore(&chaincfg.MainNetParams)
	if c, err := backed(params, st, testWindow); !errors.Is(err, ErrBadHeader) || c != nil {
		t.Fatalf("another network's store: %v, %v", c, err)
	}
	if c, err := backed(params, storeOf(), testWindow); !errors.Is(err, ErrBadHeader) || c != nil {
		t.Fatalf("an empty store: %v, %v", c, err)
	}
}

// headersFrom returns pointers to c's headers from height on.
func (c *Chain) headersFrom(height int32) []*wire.BlockHeader {
	var out []*wire.BlockHeader
	for h := height; h <= c.Height(); h++ {
		out = append(out, ptr(c.Header(h)))
	}
	return out
}
