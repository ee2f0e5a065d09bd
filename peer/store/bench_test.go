package store

import (
	"encoding/binary"
	"flag"
	"fmt"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/chain"
	bolt "go.etcd.io/bbolt"
)

// benchHeadersFlag sets the size of the chain the benchmarks store:
// 100,000 by default, -store.headers=900000 for a mainnet-sized one.
var benchHeadersFlag = flag.Int("store.headers", 100000, "headers in the benchmarks' chain")

func benchHeaders() int { return *benchHeadersFlag }

var (
	benchChainOnce sync.Once
	benchChain     []wire.BlockHeader
)

// benchStoreDir returns a directory holding a store of a regtest chain of
// benchHeaders() headers with real (regtest) proof of work.
func benchStoreDir(b *testing.B) string {
	b.Helper()
	benchChainOnce.Do(func() { benchChain = mineChain(*benchHeadersFlag, 0) })
	dir := b.TempDir()
	s := openTest(b, dir, Options{NoSync: true})
	if _, err := s.SaveChain(sliceChain(benchChain)); err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// benchClock is a clock after the last header of any benchmark chain:
// regtest headers ten minutes apart from 2011 reach the present near
// height 830,000.
func benchClock() time.Time { return time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC) }

// heapInUse returns the live heap after a full collection.
func heapInUse() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkLoad100k opens a store of 100,000 headers (or -store.headers), checking every
// record's checksum, link and proof of work (store); then builds from it
// the chain the client uses, backed by the store (store+backed), or the
// chain that holds every header in memory, from all headers read at once
// (store+memory); each reports the live heap it needs per header, the
// store's included. chain.Load and chain.Extend build the chain in memory
// from headers already in memory, with Load's rules and with all of them.
func BenchmarkLoad100k(b *testing.B) {
	dir := benchStoreDir(b)
	b.Run("store", func(b *testing.B) {
		var perHeader float64
		for b.Loop() {
			before := heapInUse()
			s := openTest(b, dir, Options{NoSync: true})
			perHeader = float64(heapInUse()-before) / float64(benchHeaders())
			runtime.KeepAlive(s)
			s.Close()
		}
		b.ReportMetric(perHeader, "heapB/header")
	})
	chains := []struct {
		name  string
		build func(*Store) (*chain.Chain, error)
	}{
		{"store+backed", (*Store).Chain},
		{"store+memory", func(s *Store) (*chain.Chain, error) {
			headers, err := s.ReadHeaders(0, s.Height())
			if err != nil {
				return nil, err
			}
			return chain.Load(regtest, headers)
		}},
	}
	for _, bc := range chains {
		b.Run(bc.name, func(b *testing.B) {
			var perHeader float64
			for b.Loop() {
				before := heapInUse()
				s := openTest(b, dir, Options{NoSync: true})
				c, err := bc.build(s)
				if err != nil || int(c.Height()) != benchHeaders() {
					b.Fatalf("chain at %d: %v", c.Height(), err)
				}
				perHeader = float64(heapInUse()-before) / float64(benchHeaders())
				runtime.KeepAlive(c)
				s.Close()
			}
			b.ReportMetric(perHeader, "heapB/header")
		})
	}
	b.Run("chain.Load", func(b *testing.B) {
		// The same from headers already in memory.
		for b.Loop() {
			if _, err := chain.Load(regtest, benchChain); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("chain.Extend", func(b *testing.B) {
		// Building the same chain header by header with every rule, as a
		// client without a store does after downloading them.
		ptrs := make([]*wire.BlockHeader, len(benchChain)-1)
		for i := range ptrs {
			ptrs[i] = &benchChain[i+1]
		}
		for b.Loop() {
			c := chain.New(regtest)
			c.Now = benchClock
			for start := 0; start < len(ptrs); start += 2000 {
				if _, err := c.Extend(ptrs[start:min(start+2000, len(ptrs))]); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// BenchmarkSync appends the benchmark chain to an empty store through its
// chain in batches of 2,000, as a header sync from the genesis block
// does, with fsync (each batch on disk before Extend returns), against
// the same headers given to a chain in memory and saved with SaveChain
// once at the end, as a client without a backed chain would.
func BenchmarkSync(b *testing.B) {
	benchChainOnce.Do(func() { benchChain = mineChain(*benchHeadersFlag, 0) })
	ptrs := make([]*wire.BlockHeader, len(benchChain)-1)
	for i := range ptrs {
		ptrs[i] = &benchChain[i+1]
	}
	for _, backed := range []bool{true, false} {
		name := "backed"
		if !backed {
			name = "memory+SaveChain"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				s := openTest(b, b.TempDir(), Options{})
				b.StartTimer()
				c := chain.New(regtest)
				if backed {
					var err error
					if c, err = s.Chain(); err != nil {
						b.Fatal(err)
					}
				}
				c.Now = benchClock
				for start := 0; start < len(ptrs); start += 2000 {
					if _, err := c.Extend(ptrs[start:min(start+2000, len(ptrs))]); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := s.SaveChain(c); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				s.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ptrs)), "ns/header")
		})
	}
}

// BenchmarkAppend measures appending headers in batches of 1 and 2000,
// with and without fsync: the cost of the durability AppendHeaders gives
// by default.
func BenchmarkAppend(b *testing.B) {
	benchChainOnce.Do(func() { benchChain = mineChain(*benchHeadersFlag, 0) })
	for _, batch := range []int{1, 2000} {
		for _, noSync := range []bool{false, true} {
			name := fmt.Sprintf("batch=%d/sync", batch)
			if noSync {
				name = fmt.Sprintf("batch=%d/nosync", batch)
			}
			b.Run(name, func(b *testing.B) {
				s := openTest(b, b.TempDir(), Options{NoSync: noSync})
				defer s.Close()
				next := 1
				for b.Loop() {
					if next+batch > len(benchChain) {
						b.StopTimer()
						if err := s.Truncate(0); err != nil {
							b.Fatal(err)
						}
						next = 1
						b.StartTimer()
					}
					if err := s.AppendHeaders(benchChain[next : next+batch]); err != nil {
						b.Fatal(err)
					}
					next += batch
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/header")
			})
		}
	}
}

// BenchmarkHash reads block hashes at random heights of a 100,000-header
// store, most of them outside the cache.
func BenchmarkHash(b *testing.B) {
	s := openTest(b, benchStoreDir(b), Options{NoSync: true})
	defer s.Close()
	h := int32(0)
	for b.Loop() {
		h = (h + 7919) % int32(benchHeaders())
		if _, err := s.Hash(h); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPutFilters caches 1,000 filters of 400 bytes (a typical
// mainnet basic filter is a few hundred bytes to a few kilobytes) one per
// call and all in one call, with bbolt syncing.
func BenchmarkPutFilters(b *testing.B) {
	const n = 1000
	hashes := make([]chainhash.Hash, n)
	filters := make([][]byte, n)
	for i := range hashes {
		hashes[i] = blockHash(i)
		filters[i] = make([]byte, 400)
		filters[i][0] = byte(i)
	}
	for _, batched := range []bool{false, true} {
		name := "each"
		if batched {
			name = "batch"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				s := openTest(b, b.TempDir(), DefaultOptions())
				b.StartTimer()
				if batched {
					if err := s.PutFilters(hashes, filters); err != nil {
						b.Fatal(err)
					}
				} else {
					for i := range hashes {
						if err := s.PutFilter(hashes[i], filters[i]); err != nil {
							b.Fatal(err)
						}
					}
				}
				b.StopTimer()
				s.Close()
				b.StartTimer()
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/filter")
		})
	}
}

// BenchmarkFillFilterCache fills an empty cache of the default size, with
// bbolt syncing, as a scan over a new 20,000-block chain does: batches of
// 1,000 filters (one getcfilters answer) of 1,300 bytes (a block of 500
// filter elements), each filter seen once, then closes it. CPU is the
// process's user and system time (on Linux), per filter.
func BenchmarkFillFilterCache(b *testing.B) {
	const blocks, batch, size = 20_000, 1_000, 1_300
	filter := func(i int) []byte {
		f := make([]byte, size)
		for j := 0; j+4 <= size; j += 4 {
			binary.LittleEndian.PutUint32(f[j:], uint32(i*7919+j*104729))
		}
		return f
	}
	var hs [][]chainhash.Hash
	var fs [][][]byte
	for i := 0; i < blocks; i += batch {
		h, f := filterBatch(i, i+batch, filter)
		hs, fs = append(hs, h), append(fs, f)
	}
	var cpu time.Duration
	for b.Loop() {
		b.StopTimer()
		s := openTest(b, b.TempDir(), DefaultOptions())
		b.StartTimer()
		before := cpuTime()
		for i := range hs {
			if err := s.PutFilters(hs[i], fs[i]); err != nil {
				b.Fatal(err)
			}
		}
		s.Close()
		cpu += cpuTime() - before
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*blocks), "ns/filter")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*blocks), "cpu-ns/filter")
}

// BenchmarkCheckFilterCache measures what checking a full filter cache of
// the default size costs on opening: a cache filled past its cap of
// DefaultFilterCacheBytes with filters of 20,000 bytes (about a mainnet
// block's basic filter), so that it has evicted and holds a freelist.
// checkBolt is the check the store runs on every open; TxCheck is bbolt's
// own consistency check; open is bbolt opening the file, for scale. Each
// runs with the file in the page cache (warm) and, where the system lets
// it drop the file's pages (posix_fadvise), read from the disk (cold).
func BenchmarkCheckFilterCache(b *testing.B) {
	dir := b.TempDir()
	s := openTest(b, dir, Options{FilterCacheBytes: DefaultFilterCacheBytes, NoSync: true})
	const filterSize = 20000
	n := int(DefaultFilterCacheBytes/(filterSize+entryOverhead)) * 11 / 10
	filter := func(i int) []byte {
		return binary.LittleEndian.AppendUint32(make([]byte, filterSize-4), uint32(i))
	}
	for i := 0; i < n; i += 100 {
		hs, fs := filterBatch(i, i+100, filter)
		if err := s.PutFilters(hs, fs); err != nil {
			b.Fatal(err)
		}
	}
	size, count, err := s.FilterCacheSize()
	if err != nil {
		b.Fatal(err)
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	path := cachePath(dir)
	fi, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("cache: %d filters, %d MiB logical, a file of %d MiB", count, size>>20, fi.Size()>>20)
	runs := []struct {
		name string
		run  func() error
	}{
		{"checkBolt", func() error { return checkFile(path, true) }},
		{"checkBolt-quick", func() error { return checkFile(path, false) }},
		{"TxCheck", func() error { return txCheck(path) }},
		{"open", func() error {
			db, err := bolt.Open(path, 0o644, nil)
			if err != nil {
				return err
			}
			return db.Close()
		}},
	}
	for _, r := range runs {
		for _, cold := range []bool{false, true} {
			name := r.name + "/warm"
			if cold {
				name = r.name + "/cold"
			}
			b.Run(name, func(b *testing.B) {
				for b.Loop() {
					if cold {
						b.StopTimer()
						if err := dropCache(path); err != nil {
							b.Skipf("cannot drop the file from the page cache: %v", err)
						}
						b.StartTimer()
					}
					if err := r.run(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
