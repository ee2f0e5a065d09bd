package store

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/chain"
)

func TestRoundTrip(t *testing.T) {
	dir := t.TempDir()
	want := mineChain(5000, 0)
	s := openTest(t, dir, DefaultOptions())
	if s.Height() != 0 {
		t.Fatalf("new store at height %d", s.Height())
	}
	for start := 1; start < len(want); start += 700 {
		if err := s.AppendHeaders(want[start:min(start+700, len(want))]); err != nil {
			t.Fatal(err)
		}
	}
	checkPrefix(t, s, want, 5000)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir, DefaultOptions())
	defer s.Close()
	checkPrefix(t, s, want, 5000)
	if r := s.Recovered(); len(r) != 0 {
		t.Fatalf("clean store reports %q", r)
	}
	// Reads far from the tip go to the file, past the cache.
	for _, h := range []int32{0, 1, 77, 4095, 4096, 4999, 5000} {
		hdr, err := s.Header(h)
		if err != nil || hdr.BlockHash() != want[h].BlockHash() {
			t.Fatalf("Header(%d) = %v, %v", h, hdr.BlockHash(), err)
		}
		if got, ok := s.HeightOf(want[h].BlockHash()); !ok || got != h {
			t.Fatalf("HeightOf(block %d) = %d, %v", h, got, ok)
		}
	}
	if _, ok := s.HeightOf(chainhash.Hash{1}); ok {
		t.Fatal("HeightOf found a block the store does not hold")
	}
	for _, h := range []int32{-1, 5001} {
		if _, err := s.Hash(h); err == nil {
			t.Fatalf("Hash(%d) outside the chain: no error", h)
		}
	}
	if got := filepath.Join(dir, "regtest"); s.Dir() != got {
		t.Fatalf("Dir() = %s, want %s", s.Dir(), got)
	}
}

func TestAppendRejects(t *testing.T) {
	good := mineChain(10, 0)
	noPoW := good[3]
	setNonce(&noPoW, false)
	tests := []struct {
		name    string
		headers []wire.BlockHeader
	}{
		{"not linked to the tip", good[2:4]},
		{"gap inside the batch", []wire.BlockHeader{good[1], good[3]}},
		{"no proof of work", []wire.BlockHeader{good[1], good[2], noPoW}},
		{"target above the limit", []wire.BlockHeader{func() wire.BlockHeader { h := good[1]; h.Bits = 0x2100ffff; return h }()}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := openTest(t, t.TempDir(), Options{NoSync: true})
			defer s.Close()
			if err := s.AppendHeaders(tt.headers); !errors.Is(err, ErrBadHeader) {
				t.Fatalf("error %v, want ErrBadHeader", err)
			}
			if s.Height() != 0 {
				t.Fatalf("a rejected batch left the store at height %d", s.Height())
			}
		})
	}
}

func TestSaveChainReorg(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{NoSync: true})
	defer s.Close()
	old := mineChain(300, 0)
	fork, err := s.SaveChain(sliceChain(old))
	if err != nil || fork != 0 {
		t.Fatalf("first SaveChain = %d, %v", fork, err)
	}
	if err := s.AppendFilterHeaders(0, fakeFilterHeaders(291)); err != nil {
		t.Fatal(err)
	}
	// A branch from height 250 with more blocks.
	branch := extendChain(slices.Clone(old[:251]), 80, 1)
	fork, err = s.SaveChain(sliceChain(branch))
	if err != nil || fork != 250 {
		t.Fatalf("SaveChain of the branch = %d, %v; want fork 250", fork, err)
	}
	checkPrefix(t, s, branch, 330)
	if got := s.FilterHeaderTip(); got != 250 {
		t.Fatalf("filter headers reach %d after a fork at 250", got)
	}
	if _, ok := s.HeightOf(old[251].BlockHash()); ok {
		t.Fatal("a disconnected block is still found")
	}
	// Saving the same chain again changes nothing.
	if fork, err := s.SaveChain(sliceChain(branch)); err != nil || fork != 330 {
		t.Fatalf("SaveChain of the stored chain = %d, %v", fork, err)
	}
	// A shorter chain (a rollback) truncates.
	if fork, err := s.SaveChain(sliceChain(branch[:100])); err != nil || fork != 99 || s.Height() != 99 {
		t.Fatalf("SaveChain of a prefix = %d, %v, height %d", fork, err, s.Height())
	}
	if err := s.Truncate(120); err == nil {
		t.Fatal("Truncate above the tip: no error")
	}
	other := mineChain(3, 9)
	other[0].Nonce++
	if _, err := s.SaveChain(sliceChain(other)); !errors.Is(err, ErrWrongNetwork) {
		t.Fatalf("SaveChain of another genesis: %v", err)
	}
}

// corrupt describes damage done to a closed store's files.
type corrupt struct {
	name      string
	damage    func(t *testing.T, dir string)
	minHeight int32 // the store keeps at least this
	maxHeight int32 // and at most this
}

func flipByte(file string, fromEnd int64) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		path := filepath.Join(dir, "regtest", file)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		b[int64(len(b))-fromEnd] ^= 0x10
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func resize(file string, delta int64) func(t *testing.T, dir string) {
	return func(t *testing.T, dir string) {
		path := filepath.Join(dir, "regtest", file)
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, fi.Size()+delta); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCorruptTailIsCut(t *testing.T) {
	const n = 200
	want := mineChain(n, 0)
	tests := []corrupt{
		{"flipped byte in the last header's nonce", flipByte(HeadersFile, 1), n - 1, n - 1},
		{"flipped byte in the last header's link", flipByte(HeadersFile, 70), n - 1, n - 1},
		{"flipped byte ten headers down", flipByte(HeadersFile, 10*HeaderSize+3), n - 11, n - 11},
		{"flipped byte in the last checksum", flipByte(HeadersFile+".sum", 2), n - 1, n - 1},
		{"torn last header", resize(HeadersFile, -7), n - 1, n - 1},
		{"torn last checksum", resize(HeadersFile+".sum", -1), n - 1, n - 1},
		{"zeros after the last header", resize(HeadersFile, 3*HeaderSize), n, n},
		{"checksums missing for the last five", resize(HeadersFile+".sum", -5*sumSize), n - 5, n - 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, dir, Options{NoSync: true})
			if err := s.AppendHeaders(want[1:]); err != nil {
				t.Fatal(err)
			}
			s.Close()
			tt.damage(t, dir)
			s = openTest(t, dir, Options{NoSync: true})
			defer s.Close()
			checkPrefix(t, s, want, tt.minHeight)
			if s.Height() > tt.maxHeight {
				t.Fatalf("height %d, want at most %d", s.Height(), tt.maxHeight)
			}
			if len(s.Recovered()) == 0 {
				t.Fatal("a cut store reports nothing in Recovered")
			}
			// What was cut is written again.
			if err := s.AppendHeaders(want[s.Height()+1:]); err != nil {
				t.Fatalf("appending after the cut: %v", err)
			}
			checkPrefix(t, s, want, n)
		})
	}
}

func TestCorruptFilterHeadersAreCut(t *testing.T) {
	const n = 150
	fhs := fakeFilterHeaders(n + 1)
	tests := []corrupt{
		{"flipped byte in the last filter header", flipByte(FilterHeadersFile, 5), n - 1, n - 1},
		{"flipped byte 30 filter headers down", flipByte(FilterHeadersFile, 30*FilterHeaderSize+1), n - 31, n - 31},
		{"torn last filter header", resize(FilterHeadersFile, -31), n - 1, n - 1},
		{"block headers cut below the filter headers", resize(HeadersFile, -20*HeaderSize), n - 20, n - 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openTest(t, dir, Options{NoSync: true})
			if _, err := s.SaveChain(sliceChain(mineChain(n, 0))); err != nil {
				t.Fatal(err)
			}
			if err := s.AppendFilterHeaders(0, fhs); err != nil {
				t.Fatal(err)
			}
			s.Close()
			tt.damage(t, dir)
			s = openTest(t, dir, Options{NoSync: true})
			defer s.Close()
			tip := s.FilterHeaderTip()
			if tip < tt.minHeight || tip > tt.maxHeight {
				t.Fatalf("filter headers reach %d, want %d..%d", tip, tt.minHeight, tt.maxHeight)
			}
			got, err := s.FilterHeaders(0, tip)
			if err != nil || !slices.Equal(got, fhs[:tip+1]) {
				t.Fatalf("filter headers after the cut differ from those written (%v)", err)
			}
			if len(s.Recovered()) == 0 {
				t.Fatal("a cut store reports nothing in Recovered")
			}
		})
	}
}

func TestLock(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, DefaultOptions())
	if _, err := Open(dir, regtest); !errors.Is(err, ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
	s.Close()
	s.Close() // harmless
	if err := s.AppendHeaders(mineChain(1, 0)[1:]); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after Close: %v", err)
	}
	s = openTest(t, dir, DefaultOptions())
	s.Close()
}

func TestWrongNetwork(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{})
	s.Close()
	meta := filepath.Join(dir, "regtest", metaFile)
	b, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(meta, []byte(strings.Replace(string(b), "network regtest", "network mainnet", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenWith(dir, regtest, Options{}); !errors.Is(err, ErrWrongNetwork) {
		t.Fatalf("Open of a store with another network's identity: %v", err)
	}
	// The failed Open released its lock.
	os.Remove(meta)
	s = openTest(t, dir, Options{})
	s.Close()
}

func TestFilterHeaders(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{NoSync: true})
	defer s.Close()
	if start, hs, err := s.LastFilterHeaders(100); err != nil || len(hs) != 0 || start != 0 {
		t.Fatalf("LastFilterHeaders of an empty store = %d, %d headers, %v", start, len(hs), err)
	}
	if _, err := s.SaveChain(sliceChain(mineChain(300, 0))); err != nil {
		t.Fatal(err)
	}
	fhs := fakeFilterHeaders(301)
	if err := s.AppendFilterHeaders(1, fhs[1:10]); err == nil {
		t.Fatal("filter headers not following the tip: no error")
	}
	if err := s.AppendFilterHeaders(0, fhs[:150]); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendFilterHeaders(150, append(slices.Clone(fhs[150:]), chainhash.Hash{})); err == nil {
		t.Fatal("a filter header above the block headers: no error")
	}
	tests := []struct {
		n         int
		wantStart int32
		wantLen   int
	}{
		{100, 50, 100},
		{500, 50, KeepFilterHeaders},
		{7, 143, 7},
		{0, 150, 0},
	}
	for _, tt := range tests {
		start, hs, err := s.LastFilterHeaders(tt.n)
		if err != nil || start != tt.wantStart || len(hs) != tt.wantLen || !slices.Equal(hs, fhs[start:start+int32(len(hs))]) {
			t.Fatalf("LastFilterHeaders(%d) = %d, %d headers, %v; want %d, %d", tt.n, start, len(hs), err, tt.wantStart, tt.wantLen)
		}
	}
	for _, h := range []int32{0, 1, 149} {
		if err := s.CheckFilter(h, fakeFilter(int(h))); err != nil {
			t.Fatalf("CheckFilter(%d) of the right filter: %v", h, err)
		}
		if err := s.CheckFilter(h, fakeFilter(int(h)+1)); !errors.Is(err, ErrFilterMismatch) {
			t.Fatalf("CheckFilter(%d) of a wrong filter: %v", h, err)
		}
	}
	if err := s.CheckFilter(150, fakeFilter(150)); err == nil || errors.Is(err, ErrFilterMismatch) {
		t.Fatalf("CheckFilter above the filter headers: %v", err)
	}
	// Filter hashes chain on the stored filter headers.
	var hashes []chainhash.Hash
	for h := 150; h <= 300; h++ {
		hashes = append(hashes, chainhash.DoubleHashH(fakeFilter(h)))
	}
	if err := s.AppendFilterHashes(151, hashes[1:]); err == nil {
		t.Fatal("filter hashes not following the tip: no error")
	}
	if err := s.AppendFilterHashes(150, hashes); err != nil {
		t.Fatal(err)
	}
	if got, err := s.FilterHeaders(150, 300); err != nil || !slices.Equal(got, fhs[150:]) {
		t.Fatalf("filter headers from filter hashes differ (%v)", err)
	}
}

func TestSaveChainFromChain(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{NoSync: true})
	c := chain.New(regtest)
	old := mineChain(100, 0)
	extendWith := func(hs []wire.BlockHeader) chain.Update {
		t.Helper()
		ptrs := make([]*wire.BlockHeader, len(hs))
		for i := range hs {
			ptrs[i] = &hs[i]
		}
		up, err := c.Extend(ptrs)
		if err != nil {
			t.Fatal(err)
		}
		return up
	}
	extendWith(old[1:])
	if _, err := s.SaveChain(c); err != nil {
		t.Fatal(err)
	}
	branch := extendChain(slices.Clone(old[:81]), 30, 1)
	if up := extendWith(branch[81:]); !up.Reorganized() || up.Fork != 80 {
		t.Fatalf("the test branch did not reorganize the chain at 80: %+v", up)
	}
	if fork, err := s.SaveChain(c); err != nil || fork != 80 {
		t.Fatalf("SaveChain after the reorganization = %d, %v", fork, err)
	}
	s.Close()
	_, resumed := resume(t, dir)
	if resumed.Height() != 110 || resumed.Hash(110) != c.Hash(110) {
		t.Fatalf("resumed chain at %d %v, want 110 %v", resumed.Height(), resumed.Hash(resumed.Height()), c.Hash(110))
	}
}

func TestChainFromStore(t *testing.T) {
	s := openTest(t, t.TempDir(), Options{NoSync: true})
	defer s.Close()
	want := mineChain(500, 0)
	if _, err := s.SaveChain(sliceChain(want)); err != nil {
		t.Fatal(err)
	}
	c, err := s.Chain()
	if err != nil {
		t.Fatal(err)
	}
	if c.Height() != 500 || c.Hash(500) != want[500].BlockHash() {
		t.Fatalf("chain at %d %v", c.Height(), c.Hash(c.Height()))
	}
	// A header that passes the store's checks (link, its own target) but
	// not the chain's: bits harder than regtest's fixed difficulty.
	s2 := openTest(t, t.TempDir(), Options{NoSync: true})
	defer s2.Close()
	bad := slices.Clone(want[:400])
	bad[300].Bits = 0x1f7fffff // harder than regtest's fixed bits
	setNonce(&bad[300], true)
	bad = extendChain(bad[:301], 50, 2)
	if _, err := s2.SaveChain(sliceChain(bad)); err != nil {
		t.Fatal(err)
	}
	c, err = s2.Chain()
	if err != nil {
		t.Fatal(err)
	}
	if c.Height() != 299 || s2.Height() != 299 || len(s2.Recovered()) != 1 {
		t.Fatalf("chain at %d, store at %d, recovered %q; want both cut to 299", c.Height(), s2.Height(), s2.Recovered())
	}
}

// TestMemoryBounded checks that an open store's heap does not grow with
// the chain by more than the four bytes a header HeightOf needs (plus
// slack for the slice's spare capacity) over its fixed header cache, and
// that the chain backed by it adds no more than a fixed 2 MB: its window
// of at most 2×chain.WindowHeaders headers and hashes, their index, and
// the spare capacity a batch of 2,000 adds.
func TestMemoryBounded(t *testing.T) {
	const n = 100000
	dir := t.TempDir()
	s := openTest(t, dir, Options{NoSync: true})
	if _, err := s.SaveChain(sliceChain(mineChain(n, 0))); err != nil {
		t.Fatal(err)
	}
	s.Close()
	before := heapInUse()
	s = openTest(t, dir, Options{NoSync: true})
	defer s.Close()
	opened := heapInUse()
	grown := int64(opened) - int64(before)
	fixed := int64(headerCacheSlots * unsafe.Sizeof(cachedHeader{}))
	if limit := fixed + 6*n + 64<<10; grown > limit {
		t.Fatalf("an open store of %d headers holds %d bytes of heap, want at most %d (%d fixed)", n, grown, limit, fixed)
	}
	t.Logf("store of %d headers: %d bytes of heap, %.1f a header (%d fixed)", n, grown, float64(grown)/n, fixed)
	c, err := s.Chain()
	if err != nil || c.Height() != n {
		t.Fatalf("chain at %d: %v", c.Height(), err)
	}
	chainHeap := int64(heapInUse()) - int64(opened)
	runtime.KeepAlive(c)
	if limit := int64(2 << 20); chainHeap > limit {
		t.Fatalf("the chain of a store of %d headers holds %d bytes of heap, want at most %d", n, chainHeap, limit)
	}
	t.Logf("its chain: %d bytes more; both %.1f a header", chainHeap, float64(grown+chainHeap)/n)
}

// TestConcurrentReads reads hashes, headers and filters from several
// goroutines while another appends, as a client's filter downloads do
// (run with -race).
func TestConcurrentReads(t *testing.T) {
	want := mineChain(6000, 0)
	s := openTest(t, t.TempDir(), Options{NoSync: true, FilterCacheBytes: 1 << 20})
	defer s.Close()
	if err := s.AppendHeaders(want[1:5001]); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 5)
	for g := 0; g < 4; g++ {
		go func() {
			for i := 0; i < 3000; i++ {
				h := int32((i*7919 + g*31) % 5001)
				hash, err := s.Hash(h)
				if err == nil && hash != want[h].BlockHash() {
					err = errors.New("wrong hash")
				}
				if err == nil {
					_, _, err = s.Filter(hash)
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	go func() {
		var err error
		for h := 5001; h < len(want) && err == nil; h += 100 {
			err = s.AppendHeaders(want[h : h+100])
			if err == nil {
				err = s.PutFilter(want[h].BlockHash(), fakeFilter(h))
			}
		}
		errs <- err
	}()
	for i := 0; i < 5; i++ {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	checkPrefix(t, s, want, 6000)
}

func TestTruncateFilterHeaders(t *testing.T) {
	st := openTest(t, t.TempDir(), DefaultOptions())
	hs := mineChain(30, 0)
	if err := st.AppendHeaders(hs[1:]); err != nil {
		t.Fatal(err)
	}
	if err := st.AppendFilterHeaders(0, fakeFilterHeaders(31)); err != nil {
		t.Fatal(err)
	}
	if err := st.TruncateFilterHeaders(9); err != nil || st.FilterHeaderTip() != 9 || st.Height() != 30 {
		t.Fatalf("after truncating to 9: %v, filter header tip %d, height %d", err, st.FilterHeaderTip(), st.Height())
	}
	if err := st.TruncateFilterHeaders(-1); err != nil || st.FilterHeaderTip() != -1 {
		t.Fatalf("after truncating all: %v, tip %d", err, st.FilterHeaderTip())
	}
	if err := st.TruncateFilterHeaders(-2); err == nil {
		t.Fatal("height -2 accepted")
	}
}
