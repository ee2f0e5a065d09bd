package bip37

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/btcsuite/btcd/wire"
)

// bitcoinjFilters returns n filters the size bitcoinj sends for a fresh
// wallet: sized by Core's rule for 632 elements at 1e-5 (1,893 bytes, 15
// hash functions), each holding 632 random 20-byte elements under its own
// tweak, so about half the bits are set.
func bitcoinjFilters(n int) []*Filter {
	r := rand.New(rand.NewPCG(uint64(n), 1893))
	fs := make([]*Filter, n)
	for i := range fs {
		fs[i] = NewFilter(632, 1e-5, r.Uint32(), wire.BloomUpdateNone)
		for j := 0; j < 632; j++ {
			fs[i].Add(randBytes(r, 20))
		}
	}
	return fs
}

// BenchmarkFilterTests measures candidate-filter tests per second: batches
// of PreparedBatch random 20-byte candidates, each tested against every one
// of n bitcoinj-sized filters, on every processor (RunParallel). A test is
// one Contains question, "may this candidate be in this filter?": it stops
// at the first unset bit, so for a candidate not in a filter about half the
// tests end after the first hash function and on average two are computed.
// .../prepared prepares each candidate once and runs ContainsBatch per
// filter; .../contains is the plain loop over Filter.Contains on the same
// inputs. Both report tests/s and the matches they saw, which must agree.
func BenchmarkFilterTests(b *testing.B) {
	for _, n := range []int{1, 10, 100, 1000, 10000} {
		fs := bitcoinjFilters(n)
		tests := float64(PreparedBatch * n)
		b.Run(fmt.Sprintf("filters=%d/prepared", n), func(b *testing.B) {
			b.ReportAllocs()
			var seeds, hits, cpu atomic.Uint64
			b.RunParallel(func(pb *testing.PB) {
				defer parallelCPU(&cpu)()
				elems := benchElems(seeds.Add(1), PreparedBatch)
				ps := make([]Prepared, len(elems))
				matched := make([]int32, 0, len(ps))
				var h uint64
				for pb.Next() {
					for j, e := range elems {
						ps[j].Set(e)
					}
					for _, f := range fs {
						matched = f.ContainsBatch(ps, matched[:0])
						h += uint64(len(matched))
					}
				}
				hits.Add(h)
			})
			reportTests(b, tests, cpu.Load())
			b.ReportMetric(float64(hits.Load())/float64(b.N), "matches/op")
		})
		b.Run(fmt.Sprintf("filters=%d/contains", n), func(b *testing.B) {
			b.ReportAllocs()
			var seeds, hits, cpu atomic.Uint64
			b.RunParallel(func(pb *testing.PB) {
				defer parallelCPU(&cpu)()
				elems := benchElems(seeds.Add(1), PreparedBatch)
				var h uint64
				for pb.Next() {
					for _, e := range elems {
						for _, f := range fs {
							if f.Contains(e) {
								h++
							}
						}
					}
				}
				hits.Add(h)
			})
			reportTests(b, tests, cpu.Load())
			b.ReportMetric(float64(hits.Load())/float64(b.N), "matches/op")
		})
	}
}

// parallelCPU starts measuring the CPU time of one RunParallel goroutine;
// the function it returns adds it to total.
func parallelCPU(total *atomic.Uint64) func() {
	runtime.LockOSThread()
	start, ok := threadCPUTime()
	return func() {
		end, ok2 := threadCPUTime()
		runtime.UnlockOSThread()
		if ok && ok2 {
			total.Add(uint64(end - start))
		}
	}
}

// reportTests reports tests/s of wall time and, since other work on a
// shared machine takes processors away, cpu-tests/s: tests per second of
// CPU time of the benchmarking threads, times GOMAXPROCS, which is what
// the processors would do if the benchmark had them to itself.
func reportTests(b *testing.B, testsPerOp float64, cpuNanos uint64) {
	b.ReportMetric(testsPerOp*float64(b.N)/b.Elapsed().Seconds(), "tests/s")
	if cpuNanos > 0 {
		b.ReportMetric(testsPerOp*float64(b.N)/(float64(cpuNanos)/1e9)*float64(runtime.GOMAXPROCS(0)), "cpu-tests/s")
	}
}
