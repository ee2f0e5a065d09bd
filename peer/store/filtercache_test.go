package store

import (
	"bytes"
	"errors"
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
		b := tx.Bucket(filtersBucket)
		k := blockHash(1)
		v := bytes.Clone(b.Get(k[:]))
		v[len(v)-1] ^= 1
		return b.Put(k[:], v)
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

func TestDecodeEntry(t *testing.T) {
	good := encodeEntry(7, fakeFilter(3))
	tests := []struct {
		name  string
		value []byte
		ok    bool
	}{
		{"whole", good, true},
		{"empty filter", encodeEntry(1, nil), true},
		{"short", good[:entryHeaderSize-1], false},
		{"filter cut", good[:len(good)-1], false},
		{"hash flipped", func() []byte { v := bytes.Clone(good); v[9] ^= 4; return v }(), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := decodeEntry(tt.value)
			if tt.ok != (err == nil) {
				t.Fatalf("decodeEntry: %v, want ok %v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, errBadEntry) {
				t.Fatalf("error %v does not wrap errBadEntry", err)
			}
			if tt.ok && e.seq != 7 && len(e.filter) > 0 {
				t.Fatalf("seq %d, want 7", e.seq)
			}
		})
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
