package store

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/chain"
)

// ptrs returns pointers to hs, as Extend takes them.
func ptrs(hs []wire.BlockHeader) []*wire.BlockHeader {
	out := make([]*wire.BlockHeader, len(hs))
	for i := range hs {
		out[i] = &hs[i]
	}
	return out
}

// extendBoth gives the same headers to a chain in memory and to the
// store's chain, in batches of 2,000 as peers send them, and fails the test
// unless both answer alike.
func extendBoth(t *testing.T, mem, backed *chain.Chain, hs []wire.BlockHeader) (chain.Update, error) {
	t.Helper()
	return extendBothBy(t, mem, backed, hs, 2000)
}

// extendBothBy is extendBoth in batches of size.
func extendBothBy(t *testing.T, mem, backed *chain.Chain, hs []wire.BlockHeader, size int) (chain.Update, error) {
	t.Helper()
	var up chain.Update
	var err error
	for start := 0; start < len(hs) || start == 0; start += size {
		batch := ptrs(hs[start:min(start+size, len(hs))])
		wantUp, wantErr := mem.Extend(batch)
		up, err = backed.Extend(batch)
		if fmt.Sprint(wantErr) != fmt.Sprint(err) || !reflect.DeepEqual(wantUp, up) {
			t.Fatalf("memory %+v, %v; backed %+v, %v", wantUp, wantErr, up, err)
		}
		if err != nil {
			break
		}
	}
	return up, err
}

// sameAsStored checks that the store and its chain hold exactly mem's
// headers.
func sameAsStored(t *testing.T, s *Store, mem, backed *chain.Chain) {
	t.Helper()
	if s.Height() != mem.Height() || backed.Height() != mem.Height() {
		t.Fatalf("store at %d, backed chain at %d, chain in memory at %d", s.Height(), backed.Height(), mem.Height())
	}
	stored, err := s.ReadHeaders(0, s.Height())
	if err != nil {
		t.Fatal(err)
	}
	for h := range stored {
		hash := mem.Hash(int32(h))
		if stored[h].BlockHash() != hash || backed.Hash(int32(h)) != hash {
			t.Fatalf("height %d differs", h)
		}
	}
	if !reflect.DeepEqual(backed.Locator(), mem.Locator()) || backed.Err() != nil {
		t.Fatalf("locators differ or the store failed: %v", backed.Err())
	}
}

// TestBackedChainAcrossWindow runs a chain backed by a real store beside
// one in memory through extensions, a branch with less work forking far
// below the window, the same branch with more work (a reorganization that
// disconnects more blocks than the chain keeps in memory), a shallow
// reorganization, a bad branch and an orphan, then reopens the store.
func TestBackedChainAcrossWindow(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{NoSync: true})
	backed, err := s.Chain()
	if err != nil {
		t.Fatal(err)
	}
	mem := chain.New(regtest)
	main := mineChain(6000, 0)
	if _, err := extendBoth(t, mem, backed, main[1:]); err != nil {
		t.Fatal(err)
	}
	sameAsStored(t, s, mem, backed)

	// Fork at 1500: 4,500 blocks below the tip, more than the window.
	const fork = 1500
	deep := extendChain(slices.Clone(main[:fork+1]), 4600, 1)
	if _, err := extendBoth(t, mem, backed, deep[fork+1:fork+1+2000]); !errors.Is(err, chain.ErrLessWork) {
		t.Fatalf("a shorter deep branch: %v", err)
	}
	// All of it in one call, so that it wins.
	up, err := extendBothBy(t, mem, backed, deep[fork+1:], len(deep))
	if err != nil {
		t.Fatalf("deep reorganization: %v", err)
	}
	if up.Fork != fork || len(up.Disconnected) != 6000-fork || up.Disconnected[0] != main[fork+1].BlockHash() || up.Connected != 4600 {
		t.Fatalf("deep reorganization: fork %d, %d disconnected, %d connected", up.Fork, len(up.Disconnected), up.Connected)
	}
	if _, ok := backed.HeightOf(main[fork+1].BlockHash()); ok {
		t.Fatal("a disconnected block is still found")
	}
	if h, ok := backed.HeightOf(deep[fork+1].BlockHash()); !ok || h != fork+1 {
		t.Fatalf("HeightOf the branch's first block = %d, %v", h, ok)
	}
	sameAsStored(t, s, mem, backed)

	// A shallow reorganization, then a branch forking below the window
	// whose last header is bad, then an orphan.
	tip := int(backed.Height())
	shallow := extendChain(slices.Clone(deep[:tip-4]), 10, 2)
	if up, err := extendBoth(t, mem, backed, shallow[tip-4:]); err != nil || up.Fork != int32(tip-5) {
		t.Fatalf("shallow reorganization: %+v, %v", up, err)
	}
	bad := extendChain(slices.Clone(shallow[:tip-4500]), 4600, 3)
	bad[len(bad)-1].Bits = 0x1d00ffff
	if _, err := extendBothBy(t, mem, backed, bad[tip-4500:], len(bad)); !errors.Is(err, chain.ErrBadHeader) {
		t.Fatalf("a branch with a bad last header: %v", err)
	}
	orphan := extendChain(slices.Clone(shallow), 2, 4)[len(shallow)+1:]
	if _, err := extendBoth(t, mem, backed, orphan); !errors.Is(err, chain.ErrNotConnected) {
		t.Fatalf("an orphan: %v", err)
	}
	sameAsStored(t, s, mem, backed)

	// SaveChain of the store's own chain writes nothing.
	if fork, err := s.SaveChain(backed); err != nil || fork != backed.Height() {
		t.Fatalf("SaveChain of the store's chain: %d, %v", fork, err)
	}
	// Something else writing the store is noticed.
	if err := s.Truncate(backed.Height() - 1); err != nil {
		t.Fatal(err)
	}
	if _, err := backed.Extend(ptrs(orphan[:1])); !errors.Is(err, chain.ErrStorage) {
		t.Fatalf("Extend after the store was truncated beneath it: %v", err)
	}
	if _, err := s.SaveChain(mem); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s, resumed := resume(t, dir)
	sameAsStored(t, s, mem, resumed)
	next := extendChain(slices.Clone(shallow), 3, 5)[len(shallow):]
	if _, err := extendBoth(t, mem, resumed, next); err != nil {
		t.Fatal(err)
	}
	sameAsStored(t, s, mem, resumed)
}

// resume reopens the store in dir and its chain; the store is closed when
// the test ends.
func resume(t *testing.T, dir string) (*Store, *chain.Chain) {
	t.Helper()
	s := openTest(t, dir, Options{NoSync: true})
	t.Cleanup(func() { s.Close() })
	c, err := s.Chain()
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// TestBackedChainClosedStore: a chain whose store was closed reports
// reads below its window as failed and changes nothing.
func TestBackedChainClosedStore(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{NoSync: true})
	c, err := s.Chain()
	if err != nil {
		t.Fatal(err)
	}
	hs := mineChain(5000, 0)
	if _, err := c.Extend(ptrs(hs[1:])); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if hash := c.Hash(10); hash != (chainhash.Hash{}) || !errors.Is(c.Err(), chain.ErrStorage) {
		t.Fatalf("Hash below the window of a closed store: %v, %v", hash, c.Err())
	}
	if c.Hash(4999) != hs[4999].BlockHash() {
		t.Fatal("the window was lost")
	}
	more := extendChain(slices.Clone(hs), 1, 0)[5001:]
	if _, err := c.Extend(ptrs(more)); !errors.Is(err, chain.ErrStorage) || c.Height() != 5000 {
		t.Fatalf("Extend over a closed store: %v", err)
	}
	if _, err := s.Chain(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Chain of a closed store: %v", err)
	}
}

// TestBackedChainConcurrentReads reads hashes and headers of a backed
// chain, below its window and in it, from several goroutines, as a
// client's filter downloads do (run with -race).
func TestBackedChainConcurrentReads(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{NoSync: true})
	defer s.Close()
	c, err := s.Chain()
	if err != nil {
		t.Fatal(err)
	}
	want := mineChain(12000, 0)
	if _, err := c.Extend(ptrs(want[1:])); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 2000; i++ {
				h := int32((i*7919 + g*31) % len(want))
				if c.Hash(h) != want[h].BlockHash() || c.Header(h) != want[h] {
					errs <- fmt.Errorf("height %d differs", h)
					return
				}
				if got, ok := c.HeightOf(want[h].BlockHash()); !ok || got != h {
					errs <- fmt.Errorf("HeightOf(hash at %d) = %d, %v", h, got, ok)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if c.Err() != nil {
		t.Fatal(c.Err())
	}
}
