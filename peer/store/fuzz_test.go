package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	bolt "go.etcd.io/bbolt"
)

// encodeLog returns the data and sum files of a record log holding recs.
func encodeLog(recs [][]byte) (data, sums []byte) {
	for i, r := range recs {
		data = append(data, r...)
		sums = binary.LittleEndian.AppendUint32(sums, recordSum(int64(i), r))
	}
	return data, sums
}

func FuzzScanRecords(f *testing.F) {
	var recs [][]byte
	for _, h := range mineChain(3, 0) {
		rec := make([]byte, HeaderSize)
		encodeHeader(rec, &h)
		recs = append(recs, rec)
	}
	data, sums := encodeLog(recs)
	f.Add(data, sums)
	f.Add(data[:len(data)-5], sums)
	f.Add(data, sums[:len(sums)-1])
	flipped := bytes.Clone(data)
	flipped[100] ^= 1
	f.Add(flipped, sums)
	f.Add([]byte{}, []byte{})
	f.Add(append(bytes.Clone(data), make([]byte, HeaderSize)...), sums)
	f.Fuzz(func(t *testing.T, data, sums []byte) {
		n, err := scanRecords(bytes.NewReader(data), bytes.NewReader(sums), HeaderSize, func(i int64, rec []byte) error {
			// Every record that passes its checksum decodes, and
			// encodes back to the same bytes.
			h := decodeHeader(rec)
			var again [HeaderSize]byte
			encodeHeader(again[:], &h)
			if !bytes.Equal(again[:], rec) {
				t.Fatalf("record %d: decoding and encoding changed it", i)
			}
			return nil
		})
		if n*HeaderSize > int64(len(data)) || n*sumSize > int64(len(sums)) {
			t.Fatalf("%d records accepted from %d data and %d checksum bytes", n, len(data), len(sums))
		}
		for i := int64(0); i < n; i++ {
			rec := data[i*HeaderSize : (i+1)*HeaderSize]
			if recordSum(i, rec) != binary.LittleEndian.Uint32(sums[i*sumSize:]) {
				t.Fatalf("record %d accepted with a wrong checksum", i)
			}
		}
		clean := int64(len(data)) == n*HeaderSize && int64(len(sums)) == n*sumSize
		if (err == nil) != clean {
			t.Fatalf("error %v for %d records of %d data and %d checksum bytes", err, n, len(data), len(sums))
		}
		if err != nil && !errors.Is(err, errBadRecord) {
			t.Fatalf("error %v does not wrap errBadRecord", err)
		}
	})
}

// FuzzDecodeRecord reads the fuzzer's bytes as a chunk, record after
// record: what is accepted must be the encoding of what it decodes to.
func FuzzDecodeRecord(f *testing.F) {
	one, zero := blockHash(1), chainhash.Hash{}
	f.Add(appendRecord(nil, &one, fakeFilter(1)))
	f.Add(appendRecord(appendRecord(nil, &zero, nil), &one, fakeFilter(2)))
	f.Add([]byte{1, 2, 3})
	f.Add(appendRecord(nil, &one, make([]byte, 1000))[:500])
	f.Fuzz(func(t *testing.T, v []byte) {
		for off := uint32(0); int(off) < len(v); {
			e, err := decodeRecord(v, off)
			if err != nil {
				if !errors.Is(err, errBadEntry) {
					t.Fatalf("error %v does not wrap errBadEntry", err)
				}
				return
			}
			_, next, err := parseRecord(v, off)
			if err != nil || !bytes.Equal(appendRecord(nil, &e.block, e.filter), v[off:next]) {
				t.Fatalf("accepted record at %d does not encode back to itself (%v)", off, err)
			}
			off = next
		}
	})
}

// FuzzOpenHeaders opens a header file holding the fuzzer's bytes, with
// checksums that match them, so that what decides is the header checks:
// the genesis block first, each header linking to the one before and
// meeting its own target. What the store keeps must pass them all.
func FuzzOpenHeaders(f *testing.F) {
	var good []byte
	for _, h := range mineChain(4, 0) {
		rec := make([]byte, HeaderSize)
		encodeHeader(rec, &h)
		good = append(good, rec...)
	}
	f.Add(good)
	f.Add(good[:3*HeaderSize+10])
	broken := bytes.Clone(good)
	broken[2*HeaderSize+5] ^= 1 // the link of header 2
	f.Add(broken)
	f.Add(good[HeaderSize:])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		var recs [][]byte
		for i := 0; i+HeaderSize <= len(data); i += HeaderSize {
			recs = append(recs, data[i:i+HeaderSize])
		}
		_, sums := encodeLog(recs)
		dir := t.TempDir()
		path := dir + "/" + HeadersFile
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+".sum", sums, 0o644); err != nil {
			t.Fatal(err)
		}
		hl, _, err := openHeaderLog(path, regtest, false, int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		defer hl.log.close()
		kept := int(hl.height()) + 1
		if kept > 1 && kept > len(recs) {
			t.Fatalf("%d headers kept of %d", kept, len(recs))
		}
		genesis := regtest.GenesisBlock.Header.BlockHash()
		prev := chainhash.Hash{}
		for h := 0; h < kept; h++ {
			slot, err := hl.lookup(int32(h))
			if err != nil {
				t.Fatal(err)
			}
			hdr := decodeHeader(slot.rec[:])
			if h == 0 && slot.hash != genesis || h > 0 && hdr.PrevBlock != prev {
				t.Fatalf("kept header %d does not belong to the chain", h)
			}
			if h < len(recs) && !bytes.Equal(slot.rec[:], recs[h]) && !(h == 0 && kept == 1) {
				t.Fatalf("kept header %d differs from the file", h)
			}
			prev = slot.hash
		}
	})
}

// fuzzCacheFilter is the filter of block blockHash(i) in FuzzFilterCache:
// sizes from 0 to 900 bytes, so that a few dozen fill several pages.
func fuzzCacheFilter(i int) []byte {
	f := make([]byte, (i*131)%900)
	for j := range f {
		f[j] = byte(i ^ j)
	}
	return f
}

// fuzzCacheFilters is how many filters the seed files hold, at most; the
// fuzz body puts fuzzCacheFilters more.
const fuzzCacheFilters = 60

// smallCache returns the file of a filter cache holding the filters
// 0..n-1 (those of them its cap of limit bytes keeps).
func smallCache(t testing.TB, n int, limit int64) []byte {
	t.Helper()
	dir := t.TempDir()
	s := openTest(t, dir, Options{FilterCacheBytes: limit, NoSync: true})
	for i := 0; i < n; i++ {
		if err := s.PutFilter(blockHash(i), fuzzCacheFilter(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(cachePath(dir))
	if err != nil {
		t.Fatal(err)
	}
	// bbolt grows the file ahead of its high-water mark: cut the
	// unused pages, for a smaller input.
	l := locate(t, b, false)
	pgid := native.Uint64(b[l.meta*l.pageSize+boltPageHeaderSize+40:])
	return b[:pgid*uint64(l.pageSize)]
}

// txCheck runs bbolt's own consistency check on the file at path.
func txCheck(path string) error {
	db, err := bolt.Open(path, 0o644, &bolt.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	return db.View(func(tx *bolt.Tx) error {
		var errs []error
		for err := range tx.Check() {
			errs = append(errs, err)
		}
		return errors.Join(errs...)
	})
}

// FuzzFilterCache opens a store whose filter cache file holds the
// fuzzer's bytes (mutations of small sound caches), looks up and puts
// filters. It must never crash; every filter found must be one that was
// put (its hash one of theirs); filters put must be found again. If the
// file passes checkBolt, the store must use it without a fault, and the
// file must still pass both checkBolt and bbolt's Tx.Check after the
// store's writes.
func FuzzFilterCache(f *testing.F) {
	sound := [][]byte{
		smallCache(f, 0, 1<<20),
		smallCache(f, 12, 1<<20),
		smallCache(f, fuzzCacheFilters, 1<<20),
		smallCache(f, fuzzCacheFilters, 12<<10), // with evictions: free pages
	}
	for _, b := range sound {
		f.Add(b)
	}
	// Some of the damage cases, done to the largest.
	l := locate(f, sound[2], true)
	for _, d := range cacheDamages() {
		if !strings.HasPrefix(d.name, "meta in use") && !strings.HasPrefix(d.name, "branch") && !strings.HasPrefix(d.name, "leaf") && !strings.HasPrefix(d.name, "freelist") {
			continue
		}
		path := filepath.Join(f.TempDir(), "cache.db")
		if err := os.WriteFile(path, sound[2], 0o644); err != nil {
			f.Fatal(err)
		}
		d.damage(f, path, l)
		b, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	known := map[chainhash.Hash]bool{}
	for i := 0; i < 2*fuzzCacheFilters; i++ {
		known[chainhash.DoubleHashH(fuzzCacheFilter(i))] = true
	}
	// One store for all runs, made once: a new store syncs its files.
	dir := f.TempDir()
	openTest(f, dir, Options{NoSync: true}).Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := cachePath(dir)
		if err := os.RemoveAll(filepath.Dir(path)); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		sound := checkBolt(bytes.NewReader(data), int64(len(data)), true) == nil
		s := openTest(t, dir, Options{FilterCacheBytes: 64 << 10, NoSync: true})
		defer s.Close()
		for i := 0; i < fuzzCacheFilters; i++ {
			filter, ok, err := s.Filter(blockHash(i))
			switch {
			case err != nil && (sound || !errors.Is(err, ErrFilterCacheDamaged)):
				t.Fatalf("filter %d of a file that passed the check: %v", i, err)
			case ok && !known[chainhash.DoubleHashH(filter)]:
				t.Fatalf("filter %d: %x was never put", i, filter)
			}
		}
		hs, fs := filterBatch(fuzzCacheFilters, 2*fuzzCacheFilters, fuzzCacheFilter)
		if err := s.PutFilters(hs, fs); err != nil {
			t.Fatalf("putting filters: %v", err)
		}
		for i := range hs {
			filter, ok, err := s.Filter(hs[i])
			if err != nil || !ok || !bytes.Equal(filter, fs[i]) {
				// The last ones put are kept; the cache holds 64 KiB.
				if i >= len(hs)-10 {
					t.Fatalf("filter %d just put: found %v, %v", fuzzCacheFilters+i, ok, err)
				}
			}
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		// Kept or started afresh, the file is sound after the writes.
		after, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := checkBolt(bytes.NewReader(after), int64(len(after)), true); err != nil {
			t.Fatalf("the cache fails the check after the store's writes (was sound: %v): %v; notes %q", sound, err, s.Recovered())
		}
		if err := txCheck(path); err != nil {
			t.Fatalf("bbolt's Tx.Check finds the cache damaged after the store's writes (was sound: %v): %v", sound, err)
		}
	})
}
