package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// The filter cache files of the damage tests: cacheFilters filters of
// varied sizes (some spanning several pages) put into a cache that holds
// about two thirds of them, so that the file has a branch page, leaves
// with overflow pages and a freelist.
const (
	cacheFilters = 300
	cacheLimit   = 420 << 10
)

// cacheFilter is the filter of block cacheHash(i) in the damage tests.
func cacheFilter(i int) []byte {
	f := make([]byte, 40+(i*577)%4000)
	binary.LittleEndian.PutUint32(f, uint32(i))
	for j := 4; j < len(f); j++ {
		f[j] = byte(i + j)
	}
	return f
}

func cacheHash(i int) chainhash.Hash { return blockHash(i) }

// filterBatch returns the block hashes from..to-1 and their filters.
func filterBatch(from, to int, filter func(int) []byte) ([]chainhash.Hash, [][]byte) {
	var hs []chainhash.Hash
	var fs [][]byte
	for i := from; i < to; i++ {
		hs = append(hs, blockHash(i))
		fs = append(fs, filter(i))
	}
	return hs, fs
}

func cacheOptions() Options { return Options{FilterCacheBytes: cacheLimit, NoSync: true} }

// cachePath is the filter cache file of the store in dir.
func cachePath(dir string) string { return filepath.Join(dir, "regtest", FiltersDir, filterCacheFile) }

// buildCache fills the filter cache of a new store in dir and returns
// which filters it holds.
func buildCache(t testing.TB, dir string) map[int]bool {
	t.Helper()
	s := openTest(t, dir, cacheOptions())
	defer s.Close()
	for i := 0; i < cacheFilters; i += 10 {
		hs, fs := filterBatch(i, i+10, cacheFilter)
		if err := s.PutFilters(hs, fs); err != nil {
			t.Fatal(err)
		}
	}
	held := map[int]bool{}
	for i := 0; i < cacheFilters; i++ {
		if f, ok, err := s.Filter(cacheHash(i)); err != nil || ok && !bytes.Equal(f, cacheFilter(i)) {
			t.Fatalf("filter %d: %v", i, err)
		} else if ok {
			held[i] = true
		}
	}
	if len(held) < cacheFilters/2 || len(held) == cacheFilters {
		t.Fatalf("the cache holds %d of %d filters", len(held), cacheFilters)
	}
	return held
}

// boltPages locates the structures of a sound bbolt file, for tests that
// damage them.
type boltPages struct {
	pageSize int
	meta     int    // the meta page in use
	freelist uint64 // its freelist page
	branches []uint64
	leaves   []uint64 // of the chunks bucket, or the index's
}

func locate(t testing.TB, b []byte, branched bool) boltPages {
	t.Helper()
	ps := int(native.Uint32(b[boltPageHeaderSize+8:]))
	meta := func(i int) []byte { return b[i*ps+boltPageHeaderSize:] }
	l := boltPages{pageSize: ps}
	if native.Uint64(meta(1)[48:]) > native.Uint64(meta(0)[48:]) {
		l.meta = 1
	}
	l.freelist = native.Uint64(meta(l.meta)[32:])
	page := func(id uint64) []byte { return b[int(id)*ps:] }
	// The root bucket is one leaf holding the three buckets. The tree
	// located is the chunks bucket's or, if that has no branch page (a
	// few large chunks), the index's.
	root := page(native.Uint64(meta(l.meta)[16:]))
	rootOf := func(name []byte) uint64 {
		for i := 0; i < int(native.Uint16(root[10:])); i++ {
			e := root[boltPageHeaderSize+i*boltElementSize:]
			k := e[native.Uint32(e[4:]):][:native.Uint32(e[8:])]
			if string(k) == string(name) {
				return native.Uint64(e[native.Uint32(e[4:])+native.Uint32(e[8:]):])
			}
		}
		return 0
	}
	var tree boltPages
	var walk func(id uint64)
	walk = func(id uint64) {
		p := page(id)
		switch native.Uint16(p[8:]) {
		case boltBranchPage:
			tree.branches = append(tree.branches, id)
			for i := 0; i < int(native.Uint16(p[10:])); i++ {
				walk(native.Uint64(p[boltPageHeaderSize+i*boltElementSize+8:]))
			}
		case boltLeafPage:
			tree.leaves = append(tree.leaves, id)
		}
	}
	for _, name := range [][]byte{chunksBucket, indexBucket} {
		tree = boltPages{}
		if id := rootOf(name); id != 0 {
			walk(id) // else inline
		}
		if len(tree.branches) > 0 && len(tree.leaves) >= 2 {
			break
		}
	}
	l.branches, l.leaves = tree.branches, tree.leaves
	if branched && (len(l.branches) == 0 || len(l.leaves) < 2) {
		t.Fatalf("unexpected layout: neither the chunks nor the index bucket is branched (%d branches, %d leaves)", len(l.branches), len(l.leaves))
	}
	return l
}

// editFile applies edit to the file at path.
func editFile(t testing.TB, path string, edit func(b []byte) []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, edit(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

// resealMeta recomputes the checksum of the meta page i of b, as one who
// damages the file on purpose would.
func resealMeta(b []byte, ps, i int) {
	m := b[i*ps+boltPageHeaderSize:]
	h := fnv.New64a()
	h.Write(m[:boltMetaSize-8])
	native.PutUint64(m[boltMetaSize-8:], h.Sum64())
}

// The outcomes of a damaged cache file.
const (
	wantKept   = "kept"      // passes the checks; used as it is
	wantAside  = "set aside" // renamed aside; a new cache started
	wantOff    = "off"       // the cache is off for this run
	wantEither = "either"    // kept or set aside, depending on the bytes hit
)

// cacheDamage is damage done to the filter cache file of a closed store.
type cacheDamage struct {
	name   string
	damage func(t testing.TB, path string, l boltPages)
	want   string
}

// edit is a cacheDamage function that edits the file's bytes.
func edit(f func(b []byte, l boltPages) []byte) func(t testing.TB, path string, l boltPages) {
	return func(t testing.TB, path string, l boltPages) {
		editFile(t, path, func(b []byte) []byte { return f(b, l) })
	}
}

// metaField sets a field of meta page which (-1: the one in use, -2:
// the other) at offset off to v (width bytes), resealing its checksum if
// reseal is set, else flipping the field's low byte instead.
func metaField(which, off, width int, v uint64, reseal bool) func(t testing.TB, path string, l boltPages) {
	return edit(func(b []byte, l boltPages) []byte {
		i := l.meta
		if which == -2 {
			i = 1 - l.meta
		}
		at := i*l.pageSize + boltPageHeaderSize + off
		if !reseal {
			b[at] ^= 0x41
			return b
		}
		switch width {
		case 4:
			native.PutUint32(b[at:], uint32(v))
		case 8:
			native.PutUint64(b[at:], v)
		}
		resealMeta(b, l.pageSize, i)
		return b
	})
}

// pageField sets the field at off of the page pick chooses.
func pageField(pick func(l boltPages) uint64, off, width int, v func(l boltPages) uint64) func(t testing.TB, path string, l boltPages) {
	return edit(func(b []byte, l boltPages) []byte {
		at := int(pick(l))*l.pageSize + off
		switch width {
		case 2:
			native.PutUint16(b[at:], uint16(v(l)))
		case 4:
			native.PutUint32(b[at:], uint32(v(l)))
		case 8:
			native.PutUint64(b[at:], v(l))
		}
		return b
	})
}

func freelistPage(l boltPages) uint64 { return l.freelist }
func branchPage(l boltPages) uint64   { return l.branches[0] }
func leafPage(l boltPages) uint64     { return l.leaves[len(l.leaves)/2] }
func value(v uint64) func(boltPages) uint64 {
	return func(boltPages) uint64 { return v }
}

// flips flips n random bytes of the file, from a fixed seed.
func flips(seed uint64, n int) func(t testing.TB, path string, l boltPages) {
	return edit(func(b []byte, _ boltPages) []byte {
		rng := rand.New(rand.NewPCG(seed, 7))
		for range n {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		return b
	})
}

func truncateTo(size func(n int64, l boltPages) int64) func(t testing.TB, path string, l boltPages) {
	return func(t testing.TB, path string, l boltPages) {
		fi, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(path, size(fi.Size(), l)); err != nil {
			t.Fatal(err)
		}
	}
}

func cacheDamages() []cacheDamage {
	const (
		offMagic    = 0
		offVersion  = 4
		offPageSize = 8
		offFlags    = 12
		offRoot     = 16
		offFreelist = 32
		offPgid     = 40
		offTxid     = 48
		offChecksum = 56
		// Page header fields, and the fields of a page's first element.
		offCount    = 10
		offOverflow = 12
		offElem     = boltPageHeaderSize
	)
	tests := []cacheDamage{
		{"truncated to half", truncateTo(func(n int64, _ boltPages) int64 { return n / 2 }), wantAside},
		{"truncated to half a page less", truncateTo(func(n int64, l boltPages) int64 { return n - int64(l.pageSize)/2 }), wantAside},
		{"truncated to one page", truncateTo(func(_ int64, l boltPages) int64 { return int64(l.pageSize) }), wantAside},
		{"truncated to zero", truncateTo(func(int64, boltPages) int64 { return 0 }), wantAside},
		{"grown by a page of zeros", truncateTo(func(n int64, l boltPages) int64 { return n + int64(l.pageSize) }), wantKept},
		{"freelist count 0xffff, huge first id", edit(func(b []byte, l boltPages) []byte {
			at := int(l.freelist) * l.pageSize
			native.PutUint16(b[at+offCount:], 0xffff)
			native.PutUint64(b[at+boltPageHeaderSize:], 1<<40)
			return b
		}), wantAside},
		{"freelist count 60000", pageField(freelistPage, offCount, 2, value(60000)), wantAside},
		{"freelist count 0", pageField(freelistPage, offCount, 2, value(0)), wantAside},
		{"freelist id beyond the file", pageField(freelistPage, offElem, 8, value(1<<30)), wantAside},
		{"freelist id of a leaf in use", pageField(freelistPage, offElem, 8, leafPage), wantAside},
		{"freelist page made a leaf", pageField(freelistPage, 8, 2, value(boltLeafPage)), wantAside},
		{"leaf count 0xffff", pageField(leafPage, offCount, 2, value(0xffff)), wantAside},
		{"leaf element position huge", pageField(leafPage, offElem+4, 4, value(0xfffffff0)), wantAside},
		{"leaf element value size huge", pageField(leafPage, offElem+12, 4, value(0x7ffffff0)), wantAside},
		{"leaf overflow huge", pageField(leafPage, offOverflow, 4, value(0xffffff)), wantAside},
		{"leaf says it is another page", pageField(leafPage, 0, 8, value(3)), wantAside},
		{"leaf made a branch", pageField(leafPage, 8, 2, value(boltBranchPage)), wantAside},
		{"branch count 0xffff", pageField(branchPage, offCount, 2, value(0xffff)), wantAside},
		{"branch child is itself", pageField(branchPage, offElem+8, 8, branchPage), wantAside},
		{"branch child is a meta page", pageField(branchPage, offElem+8, 8, value(0)), wantAside},
		{"branch child beyond the file", pageField(branchPage, offElem+8, 8, value(1<<40)), wantAside},
		{"branch child is another leaf", pageField(branchPage, offElem+8, 8, func(l boltPages) uint64 { return l.leaves[1] }), wantAside},
		{"branch key position huge", pageField(branchPage, offElem, 4, value(0xffffff00)), wantAside},
		{"garbage", edit(func(b []byte, _ boltPages) []byte {
			rng := rand.New(rand.NewPCG(1, 2))
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			return b
		}), wantAside},
		{"garbage behind sound meta pages", edit(func(b []byte, l boltPages) []byte {
			rng := rand.New(rand.NewPCG(3, 4))
			for i := 2 * l.pageSize; i < len(b); i++ {
				b[i] = byte(rng.Uint32())
			}
			return b
		}), wantAside},
		{"a directory", func(t testing.TB, path string, _ boltPages) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(path, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
		}, wantAside},
		{"the filters directory a file", func(t testing.TB, path string, _ boltPages) {
			dir := filepath.Dir(path)
			if err := os.RemoveAll(dir); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dir, []byte("x"), 0o644); err != nil {
				t.Fatal(err)
			}
		}, wantOff},
	}
	fields := []struct {
		name  string
		off   int
		width int
		bad   uint64 // a bad value, sealed with a valid checksum
	}{
		{"magic", offMagic, 4, 0xdeadbeef},
		{"version", offVersion, 4, 3},
		{"page size", offPageSize, 4, 8192},
		{"flags", offFlags, 4, 0},
		{"root", offRoot, 8, 1 << 40},
		{"freelist", offFreelist, 8, 1 << 40},
		{"high-water mark", offPgid, 8, 1 << 40},
		{"txid", offTxid, 8, 0},
		{"checksum", offChecksum, 8, 0},
	}
	for _, f := range fields {
		for _, which := range []int{-1, -2} {
			m := "in use"
			if which == -2 {
				m = "other"
			}
			tests = append(tests, cacheDamage{fmt.Sprintf("meta %s %s flipped", m, f.name), metaField(which, f.off, f.width, 0, false), wantAside})
			if f.off == offChecksum {
				continue
			}
			want := wantAside
			switch f.off {
			case offFlags:
				want = wantKept // bbolt does not use the flags
			case offTxid:
				want = wantEither // the older meta page, if sound, is used
			}
			tests = append(tests, cacheDamage{fmt.Sprintf("meta %s %s sealed", m, f.name), metaField(which, f.off, f.width, f.bad, true), want})
		}
	}
	tests = append(tests,
		cacheDamage{"meta root the freelist, sealed", edit(func(b []byte, l boltPages) []byte {
			native.PutUint64(b[l.meta*l.pageSize+boltPageHeaderSize+offRoot:], l.freelist)
			resealMeta(b, l.pageSize, l.meta)
			return b
		}), wantAside},
		cacheDamage{"meta high-water mark 4, sealed", metaField(-1, offPgid, 8, 4, true), wantAside},
	)
	for seed := uint64(1); seed <= 16; seed++ {
		tests = append(tests, cacheDamage{fmt.Sprintf("30 random bytes, seed %d", seed), flips(seed, 30), wantEither})
	}
	return tests
}

func TestFilterCacheDamage(t *testing.T) {
	template := t.TempDir()
	held := buildCache(t, template)
	good, err := os.ReadFile(cachePath(template))
	if err != nil {
		t.Fatal(err)
	}
	if err := checkBolt(bytes.NewReader(good), int64(len(good)), true); err != nil {
		t.Fatalf("the sound file fails the check: %v", err)
	}
	layout := locate(t, good, true)
	for _, tt := range cacheDamages() {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := cachePath(dir)
			// A store with the template's cache (and nothing else).
			openTest(t, dir, Options{NoSync: true}).Close()
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, good, 0o644); err != nil {
				t.Fatal(err)
			}
			tt.damage(t, path, layout)
			s := openTest(t, dir, cacheOptions())
			got := outcome(t, s, dir)
			if tt.want != wantEither && got != tt.want || tt.want == wantEither && got == wantOff {
				t.Fatalf("outcome %q, want %q; notes %q", got, tt.want, s.Recovered())
			}
			t.Logf("%s: %q", got, s.Recovered())
			useDamaged(t, s, held, tt.want == wantKept, got != wantOff)
			s.Close()

			// The next life finds a sound cache, holding what was put.
			s = openTest(t, dir, cacheOptions())
			defer s.Close()
			if got != wantOff {
				if r := s.Recovered(); len(r) != 0 {
					t.Fatalf("the cache started afresh is damaged on reopening: %q", r)
				}
				for i := cacheFilters; i < cacheFilters+20; i++ {
					if f, ok, err := s.Filter(cacheHash(i)); err != nil || !ok || !bytes.Equal(f, cacheFilter(i)) {
						t.Fatalf("filter %d put before reopening: found %v, %v", i, ok, err)
					}
				}
			}
		})
	}
}

// outcome says what the store made of its damaged cache, checking the
// notes that say so.
func outcome(t *testing.T, s *Store, dir string) string {
	t.Helper()
	notes := strings.Join(s.Recovered(), "\n")
	aside, _ := filepath.Glob(cachePath(dir) + ".damaged-*")
	switch {
	case strings.Contains(notes, "off for this run"):
		return wantOff
	case len(aside) == 1 && strings.Contains(notes, "set aside as "+filepath.Base(aside[0])):
		return wantAside
	case len(aside) == 0 && !strings.Contains(notes, filterCacheFile):
		return wantKept
	}
	t.Fatalf("set aside %q, notes %q", aside, notes)
	return ""
}

// useDamaged looks up and puts filters in a store whose cache was
// damaged: every filter found must be the one put; if the damage left the
// entries intact, every filter the cache held must be found. Filters put
// must be found afterwards, unless the cache is off.
func useDamaged(t *testing.T, s *Store, held map[int]bool, intact, cacheOn bool) {
	t.Helper()
	for i := 0; i < cacheFilters; i++ {
		f, ok, err := s.Filter(cacheHash(i))
		switch {
		case err != nil:
			t.Fatalf("filter %d: %v", i, err)
		case ok && !bytes.Equal(f, cacheFilter(i)):
			t.Fatalf("filter %d: wrong filter %x", i, f)
		case intact && held[i] && !ok:
			t.Fatalf("filter %d: lost", i)
		}
	}
	hs, fs := filterBatch(cacheFilters, cacheFilters+20, cacheFilter)
	if err := s.PutFilters(hs, fs); err != nil {
		t.Fatal(err)
	}
	for i := range hs {
		f, ok, err := s.Filter(hs[i])
		if err != nil || ok != cacheOn || ok && !bytes.Equal(f, fs[i]) {
			t.Fatalf("filter %d just put: found %v, %v", cacheFilters+i, ok, err)
		}
	}
	if size, n, err := s.FilterCacheSize(); err != nil || size > cacheLimit || n > cacheFilters+20 {
		t.Fatalf("cache size %d bytes, %d filters, %v", size, n, err)
	}
}

// TestFilterCacheCleanRecord checks when the store checks its cache in
// depth: after a clean close it makes the quick checks only, unless the
// file changed since; while open, or after a crash, there is no record of
// a clean close.
func TestFilterCacheCleanRecord(t *testing.T) {
	dir := t.TempDir()
	buildCache(t, dir)
	path := cachePath(dir)
	deepOnOpen := func(want bool) {
		t.Helper()
		s := openTest(t, dir, cacheOptions())
		defer s.Close()
		if s.filters.deep != want {
			t.Fatalf("checked in depth: %v, want %v", s.filters.deep, want)
		}
		if _, err := os.Stat(path + cleanSuffix); !os.IsNotExist(err) {
			t.Fatalf("a record of a clean close while the cache is open: %v", err)
		}
	}
	deepOnOpen(false)

	// A record that does not match the file.
	if err := os.WriteFile(path+cleanSuffix, []byte("size 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deepOnOpen(true)

	// The process died with the store open: no record. (Closing the
	// cache, then losing the record, frees the file for the next open.)
	s := openTest(t, dir, cacheOptions())
	s.filters.close()
	if err := os.Remove(path + cleanSuffix); err != nil {
		t.Fatal(err)
	}
	s.Close()
	deepOnOpen(true)
	deepOnOpen(false)

	// Damage done to a file closed cleanly is found.
	pageField(leafPage, 10, 2, value(0xffff))(t, path, locate(t, mustRead(t, path), true))
	s = openTest(t, dir, cacheOptions())
	defer s.Close()
	if got := outcome(t, s, dir); got != wantAside || !s.filters.deep {
		t.Fatalf("damage after a clean close: outcome %q, checked in depth %v", got, s.filters.deep)
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestFilterCacheDamagedWhileOpen truncates the cache file under an open
// store, so that bbolt faults (SIGBUS) reading its map of the file: the
// call that meets the fault returns ErrFilterCacheDamaged, the file is
// set aside with a note, and the cache is off for the rest of the run:
// lookups find nothing, puts keep nothing, without errors.
func TestFilterCacheDamagedWhileOpen(t *testing.T) {
	lookup := func(s *Store) error {
		_, _, err := s.Filter(cacheHash(cacheFilters - 1))
		return err
	}
	tests := []struct {
		name  string
		first func(s *Store) error
	}{
		{"lookup", lookup},
		{"put", func(s *Store) error { return s.PutFilter(cacheHash(1000), cacheFilter(1000)) }},
		{"size", func(s *Store) error { _, _, err := s.FilterCacheSize(); return err }},
		{"concurrent lookups and puts", func(s *Store) error {
			errs := make(chan error, 4)
			for g := 0; g < 4; g++ {
				go func() {
					var first error
					for i := 0; i < cacheFilters; i++ {
						var err error
						if g%2 == 0 {
							_, _, err = s.Filter(cacheHash(i))
						} else {
							err = s.PutFilter(cacheHash(2000+i), cacheFilter(i))
						}
						if err != nil && first == nil {
							first = err
						}
					}
					errs <- first
				}()
			}
			var first error
			for g := 0; g < 4; g++ {
				if err := <-errs; err != nil {
					if !errors.Is(err, ErrFilterCacheDamaged) {
						return err
					}
					first = err
				}
			}
			return first
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			buildCache(t, dir)
			s := openTest(t, dir, cacheOptions())
			defer s.Close()
			if err := os.Truncate(cachePath(dir), 4096); err != nil {
				t.Fatal(err)
			}
			if err := tt.first(s); !errors.Is(err, ErrFilterCacheDamaged) {
				t.Fatalf("first use of the damaged cache: %v, want ErrFilterCacheDamaged", err)
			}
			notes := s.Recovered()
			aside, _ := filepath.Glob(cachePath(dir) + ".damaged-*")
			if len(notes) != 1 || len(aside) != 1 || !strings.Contains(notes[0], "damaged while in use") ||
				!strings.Contains(notes[0], "set aside as "+filepath.Base(aside[0])) || !strings.Contains(notes[0], "off for this run") {
				t.Fatalf("notes %q, set aside %q", notes, aside)
			}
			// Off: nothing found or kept, no errors.
			if err := s.PutFilter(cacheHash(1001), cacheFilter(1001)); err != nil {
				t.Fatal(err)
			}
			for _, i := range []int{0, cacheFilters - 1, 1001} {
				if _, ok, err := s.Filter(cacheHash(i)); ok || err != nil {
					t.Fatalf("filter %d with the cache off: found %v, %v", i, ok, err)
				}
			}
			if size, n, err := s.FilterCacheSize(); size != 0 || n != 0 || err != nil {
				t.Fatalf("size with the cache off: %d, %d, %v", size, n, err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, _, err := s.Filter(cacheHash(0)); !errors.Is(err, ErrClosed) {
				t.Fatalf("Filter after Close: %v", err)
			}
			// The next life starts a new cache.
			s = openTest(t, dir, cacheOptions())
			if r := s.Recovered(); len(r) != 0 {
				t.Fatalf("notes after a new cache was started: %q", r)
			}
			if err := s.PutFilter(cacheHash(1002), cacheFilter(1002)); err != nil {
				t.Fatal(err)
			}
			if f, ok, err := s.Filter(cacheHash(1002)); !ok || err != nil || !bytes.Equal(f, cacheFilter(1002)) {
				t.Fatalf("filter in the new cache: %v, %v", ok, err)
			}
		})
	}
}
