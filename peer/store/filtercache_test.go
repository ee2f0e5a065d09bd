package store

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	bolt "go.etcd.io/bbolt"
)

// blockHash is a stand-in block hash for filter cache tests.
func blockHash(i int) chainhash.Hash { return chainhash.DoubleHashH(fakeFilter(i + 1000000)) }

func TestFilterCache(t *testing.T) {
	dir := t.TempDir()
	filterCost := int64(len(fakeFilter(0))) + entryOverhead
	opts := Options{FilterCacheBytes: 10 * filterCost, NoSync: true}
	s := openTest(t, dir, opts)
	for i := 0; i < 25; i++ {
		if err := s.PutFilter(blockHash(i), fakeFilter(i)); err != nil {
			t.Fatal(err)
		}
	}
	// Putting one again changes nothing.
	if err := s.PutFilter(blockHash(24), fakeFilter(24)); err != nil {
		t.Fatal(err)
	}
	size, count, err := s.FilterCacheSize()
	if err != nil || size != 10*filterCost || count != 10 {
		t.Fatalf("cache size %d bytes, %d filters, %v; want %d, 10", size, count, err, 10*filterCost)
	}
	s.Close()

	// The last ten put survive a restart; the first fifteen are evicted.
	s = openTest(t, dir, opts)
	for i := 0; i < 25; i++ {
		f, ok, err := s.Filter(blockHash(i))
		if err != nil {
			t.Fatal(err)
		}
		if want := i >= 15; ok != want || ok && !bytes.Equal(f, fakeFilter(i)) {
			t.Fatalf("filter %d: found %v (%x), want found %v", i, ok, f, want)
		}
	}
	s.Close()

	// A smaller cap evicts on open, oldest first.
	opts.FilterCacheBytes = 4 * filterCost
	s = openTest(t, dir, opts)
	for i := 15; i < 25; i++ {
		if _, ok, _ := s.Filter(blockHash(i)); ok != (i >= 21) {
			t.Fatalf("filter %d after shrinking the cap: found %v", i, ok)
		}
	}
	// A filter larger than the whole cache is not kept.
	if err := s.PutFilter(blockHash(99), make([]byte, 5*filterCost)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Filter(blockHash(99)); ok {
		t.Fatal("a filter larger than the cap was cached")
	}
	s.Close()

	// No cache: nothing kept, nothing found, the file left alone.
	s = openTest(t, dir, Options{NoSync: true})
	if err := s.PutFilter(blockHash(50), fakeFilter(50)); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Filter(blockHash(21)); ok || err != nil {
		t.Fatalf("a store without a cache found a filter (%v)", err)
	}
	s.Close()
	s = openTest(t, dir, opts)
	defer s.Close()
	if _, ok, _ := s.Filter(blockHash(21)); !ok {
		t.Fatal("opening without a cache removed the cache")
	}
}

func TestFilterCacheDropsDamagedEntry(t *testing.T) {
	dir := t.TempDir()
	opts := Options{FilterCacheBytes: 1 << 20, NoSync: true}
	s := openTest(t, dir, opts)
	for i := 0; i < 3; i++ {
		if err := s.PutFilter(blockHash(i), fakeFilter(i)); err != nil {
			t.Fatal(err)
		}
	}
	before, _, _ := s.FilterCacheSize()
	s.Close()

	// Flip one bit of entry 1's filter, as a failing disk might.
	db, err := bolt.Open(filepath.Join(dir, "regtest", FiltersDir, filterCacheFile), 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		h := blockHash(1)
		l, ok := decodeLoc(tx.Bucket(indexBucket).Get(h[:]))
		if !ok {
			return errors.New("filter 1 not in the index")
		}
		b := tx.Bucket(chunksBucket).Bucket(seqKey(l.seq))
		v := bytes.Clone(b.Get(chunkKey))
		_, end, err := parseRecord(v, l.off)
		if err != nil {
			return err
		}
		v[end-1] ^= 1
		return b.Put(chunkKey, v)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}

	s = openTest(t, dir, opts)
	defer s.Close()
	if f, ok, err := s.Filter(blockHash(1)); ok || err != nil {
		t.Fatalf("damaged entry returned: %x, %v", f, err)
	}
	if r := s.Recovered(); len(r) != 1 || !strings.Contains(r[0], "damaged") {
		t.Fatalf("Recovered = %q, want the dropped entry", r)
	}
	after, count, _ := s.FilterCacheSize()
	if count != 2 || after != before-(int64(len(fakeFilter(1)))+entryOverhead) {
		t.Fatalf("after the drop: %d filters, %d bytes (was %d)", count, after, before)
	}
	for _, i := range []int{0, 2} {
		if f, ok, _ := s.Filter(blockHash(i)); !ok || !bytes.Equal(f, fakeFilter(i)) {
			t.Fatalf("undamaged filter %d lost", i)
		}
	}
	// It can be cached again.
	if err := s.PutFilter(blockHash(1), fakeFilter(1)); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := s.Filter(blockHash(1)); !ok {
		t.Fatal("filter not cached again after the drop")
	}
}

func TestDecodeRecord(t *testing.T) {
	block := blockHash(7)
	good := appendRecord(nil, &block, fakeFilter(3))
	flip := func(i int) []byte { v := bytes.Clone(good); v[i] ^= 4; return v }
	tests := []struct {
		name  string
		chunk []byte
		ok    bool
	}{
		{"whole", good, true},
		{"empty filter", appendRecord(nil, &block, nil), true},
		{"short", good[:recordHeaderSize-1], false},
		{"filter cut", good[:len(good)-1], false},
		{"length grown", flip(3), false},
		{"block flipped", flip(9), false},
		{"checksum flipped", flip(4 + chainhash.HashSize + 1), false},
		{"filter flipped", flip(recordHeaderSize + 2), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := decodeRecord(tt.chunk, 0)
			if tt.ok != (err == nil) {
				t.Fatalf("decodeRecord: %v, want ok %v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, errBadEntry) {
				t.Fatalf("error %v does not wrap errBadEntry", err)
			}
			if tt.ok && e.block != block {
				t.Fatalf("block %v, want %v", e.block, block)
			}
		})
	}
	// The second record of a chunk, and an offset past its end.
	other := blockHash(8)
	chunk := appendRecord(bytes.Clone(good), &other, fakeFilter(4))
	if e, err := decodeRecord(chunk, uint32(len(good))); err != nil || e.block != other || !bytes.Equal(e.filter, fakeFilter(4)) {
		t.Errorf("second record: %v, %v", e.block, err)
	}
	if _, err := decodeRecord(chunk, uint32(len(chunk))+5); !errors.Is(err, errBadEntry) {
		t.Errorf("offset past the chunk: %v", err)
	}
}

func TestPutFiltersBatch(t *testing.T) {
	filterCost := int64(len(fakeFilter(0))) + entryOverhead
	s := openTest(t, t.TempDir(), Options{FilterCacheBytes: 10 * filterCost, NoSync: true})
	defer s.Close()
	var hashes []chainhash.Hash
	var filters [][]byte
	for i := 0; i < 25; i++ {
		hashes = append(hashes, blockHash(i))
		filters = append(filters, fakeFilter(i))
	}
	if err := s.PutFilters(hashes, filters[:24]); err == nil {
		t.Fatal("PutFilters with unequal lengths: no error")
	}
	if err := s.PutFilters(hashes, filters); err != nil {
		t.Fatal(err)
	}
	for i := range hashes {
		if _, ok, _ := s.Filter(hashes[i]); ok != (i >= 15) {
			t.Fatalf("filter %d after a batch over the cap: found %v", i, ok)
		}
	}
	if size, count, _ := s.FilterCacheSize(); size != 10*filterCost || count != 10 {
		t.Fatalf("cache holds %d bytes in %d filters after a batch over the cap", size, count)
	}
}

// TestFilterCacheOldLayout: a cache file of the earlier layout (filters by
// block hash, their eviction order, the size in meta) is emptied on open,
// its buckets dropped, and the cache works in the new layout.
func TestFilterCacheOldLayout(t *testing.T) {
	dir := t.TempDir()
	s := openTest(t, dir, Options{NoSync: true}) // makes the directory
	s.Close()
	path := cachePath(dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o644, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		filters, err := tx.CreateBucket([]byte("filters"))
		if err != nil {
			return err
		}
		order, err := tx.CreateBucket([]byte("order"))
		if err != nil {
			return err
		}
		meta, err := tx.CreateBucket(metaBucket)
		if err != nil {
			return err
		}
		h := blockHash(1)
		if err := filters.Put(h[:], append(make([]byte, 40), fakeFilter(1)...)); err != nil {
			return err
		}
		if err := order.Put([]byte{0, 0, 0, 0, 0, 0, 0, 1}, h[:]); err != nil {
			return err
		}
		return meta.Put(sizeKey, []byte{0, 0, 0, 0, 0, 0, 1, 0})
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	s = openTest(t, dir, Options{FilterCacheBytes: 1 << 20, NoSync: true})
	if size, n, err := s.FilterCacheSize(); size != 0 || n != 0 || err != nil {
		t.Errorf("the old cache counts %d bytes, %d filters (%v) in the new layout", size, n, err)
	}
	if _, ok, _ := s.Filter(blockHash(1)); ok {
		t.Error("a filter of the old layout was found")
	}
	if err := s.PutFilter(blockHash(2), fakeFilter(2)); err != nil {
		t.Fatal(err)
	}
	if f, ok, _ := s.Filter(blockHash(2)); !ok || !bytes.Equal(f, fakeFilter(2)) {
		t.Error("the cache does not keep filters after dropping the old layout")
	}
	s.Close()
	db, err = bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_ = db.View(func(tx *bolt.Tx) error {
		for _, name := range oldBuckets {
			if tx.Bucket(name) != nil {
				t.Errorf("bucket %s of the old layout kept", name)
			}
		}
		return nil
	})
}

// TestFilterCacheIndexAfterCrash: the index lines of new chunks are kept
// in memory until the cache closes; a copy of the file taken before that
// (as a crash leaves it) still finds every filter, by its chunk, and a
// filter dropped before the copy stays dropped.
func TestFilterCacheIndexAfterCrash(t *testing.T) {
	opts := Options{FilterCacheBytes: 1 << 20, NoSync: true}
	dir, crashed := t.TempDir(), t.TempDir()
	openTest(t, crashed, opts).Close() // the directory of the copy
	s := openTest(t, dir, opts)
	defer s.Close()
	hs, fs := filterBatch(0, 20, fakeFilter)
	if err := s.PutFilters(hs[:10], fs[:10]); err != nil {
		t.Fatal(err)
	}
	if err := s.DropFilter(hs[3]); err != nil { // writes the index
		t.Fatal(err)
	}
	if err := s.PutFilters(hs[10:], fs[10:]); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(cachePath(dir))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cachePath(crashed), data, 0o644); err != nil {
		t.Fatal(err)
	}
	c := openTest(t, crashed, opts)
	defer c.Close()
	for i := range hs {
		f, ok, err := c.Filter(hs[i])
		if want := i != 3; ok != want || err != nil || ok && !bytes.Equal(f, fs[i]) {
			t.Errorf("filter %d after the crash: found %v (%v), want found %v", i, ok, err, want)
		}
	}
	if size, n, err := c.FilterCacheSize(); n != 19 || size != 19*(int64(len(fs[0]))+entryOverhead) || err != nil {
		t.Errorf("after the crash: %d filters, %d bytes (%v)", n, size, err)
	}
}
