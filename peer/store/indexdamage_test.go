package store

import (
	"bytes"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	bolt "go.etcd.io/bbolt"
)

// TestFilterCacheIndexDamage damages the line of filter 1 in the index,
// or its chunk, of a cache holding filters 0..3 in one chunk: a line
// pointing past the chunk's end, at another block's sound record, into a
// chunk that is missing or with a length of its own, and the chunk cut in
// the middle of a record. Filter 1 is then absent, never another's filter
// nor an error, and the damage is noted and no longer counted; the
// filters the damage spared are found; filter 1 can be cached again, and
// the recorded size never goes below what is held.
func TestFilterCacheIndexDamage(t *testing.T) {
	const n = 4
	tests := []struct {
		name   string
		damage func(index, chunks *bolt.Bucket, l loc) error
		spared []int
	}{
		{"offset past the chunk's end", func(index, _ *bolt.Bucket, l loc) error {
			h := blockHash(1)
			return index.Put(h[:], loc{l.seq, 1 << 30}.encode())
		}, []int{0, 2, 3}},
		{"offset of another block's record", func(index, _ *bolt.Bucket, l loc) error {
			h, other := blockHash(1), blockHash(2)
			ol, _ := decodeLoc(index.Get(other[:]))
			return index.Put(h[:], ol.encode())
		}, []int{0, 2, 3}},
		{"chunk missing", func(index, _ *bolt.Bucket, l loc) error {
			h := blockHash(1)
			return index.Put(h[:], loc{l.seq + 100, l.off}.encode())
		}, []int{0, 2, 3}},
		{"line of another length", func(index, _ *bolt.Bucket, l loc) error {
			h := blockHash(1)
			return index.Put(h[:], []byte{1, 2, 3})
		}, []int{0, 2, 3}},
		{"chunk cut inside the record", func(_, chunks *bolt.Bucket, l loc) error {
			b := chunks.Bucket(seqKey(l.seq))
			v := bytes.Clone(b.Get(chunkKey))
			return b.Put(chunkKey, v[:l.off+recordHeaderSize+3])
		}, []int{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := Options{FilterCacheBytes: 1 << 20, NoSync: true}
			s := openTest(t, dir, opts)
			hs := make([]chainhash.Hash, n)
			fs := make([][]byte, n)
			for i := range hs {
				hs[i], fs[i] = blockHash(i), fakeFilter(i)
			}
			if err := s.PutFilters(hs, fs); err != nil {
				t.Fatal(err)
			}
			s.Close()
			db, err := bolt.Open(filepath.Join(dir, "regtest", FiltersDir, filterCacheFile), 0o644, nil)
			if err != nil {
				t.Fatal(err)
			}
			err = db.Update(func(tx *bolt.Tx) error {
				index := tx.Bucket(indexBucket)
				l, ok := decodeLoc(index.Get(hs[1][:]))
				if !ok {
					return errors.New("filter 1 not in the index")
				}
				return tt.damage(index, tx.Bucket(chunksBucket), l)
			})
			db.Close()
			if err != nil {
				t.Fatal(err)
			}

			s = openTest(t, dir, opts)
			defer s.Close()
			for i := range hs {
				f, ok, err := s.Filter(hs[i])
				switch {
				case err != nil:
					t.Fatalf("filter %d: %v", i, err)
				case ok && !bytes.Equal(f, fs[i]):
					t.Fatalf("filter %d: another filter returned: %x", i, f)
				case i == 1 && ok:
					t.Fatalf("filter 1 found after its damage")
				case i != 1 && !ok && slices.Contains(tt.spared, i):
					t.Fatalf("filter %d, spared by the damage, lost", i)
				}
			}
			if notes := s.Recovered(); len(notes) == 0 {
				t.Errorf("the damage left no note")
			}
			if _, count, err := s.FilterCacheSize(); err != nil || count > n-1 {
				t.Errorf("%d filters counted after the damage was found, %v; at most %d are held", count, err, n-1)
			}
			if err := s.PutFilter(hs[1], fs[1]); err != nil {
				t.Fatal(err)
			}
			if f, ok, err := s.Filter(hs[1]); err != nil || !ok || !bytes.Equal(f, fs[1]) {
				t.Fatalf("filter 1 cached again: found %v, %v", ok, err)
			}
			size, count, err := s.FilterCacheSize()
			held := int64(0)
			for i := range hs {
				if _, ok, _ := s.Filter(hs[i]); ok {
					held += int64(len(fs[i])) + entryOverhead
				}
			}
			if err != nil || size < held {
				t.Fatalf("size %d (%d filters), %v; the filters found take %d", size, count, err, held)
			}
			t.Logf("size %d, %d filters", size, count)
		})
	}
}
