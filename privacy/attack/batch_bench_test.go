package attack

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/model"
)

// BenchmarkAnalyzeSessions measures candidate-filter tests per second of
// AnalyzeGroups on n sessions of one bitcoinj-sized filter each (632
// elements at 1e-5: 1,893 bytes, 15 hash functions, about half the bits
// set; one wallet's keys under a new tweak per session) over a universe of
// random HASH160 lines in hex, sized so that each operation makes about
// 10^8 tests (10^4 to 10^6 lines). A test is one Contains question of
// one candidate and one filter; it stops at the first unset bit, so for a
// candidate outside the filter it computes two hash functions on average.
// .../spvfilter is AnalyzeGroups as it is (batched, prepared elements);
// .../contains the same analysis testing each candidate against each
// filter with Filter.Contains. Both run on every processor and report
// tests/s of wall time, cpu-tests/s (tests per second of the process's CPU
// time, times GOMAXPROCS: the rate with the processors to itself) and
// allocations per candidate.
func BenchmarkAnalyzeSessions(b *testing.B) {
	w := model.NewWallet(8, 316)
	for _, n := range []int{1, 10, 100, 1000, 10000} {
		groups := make([][]*bip37.Filter, n)
		for i := range groups {
			groups[i] = []*bip37.Filter{w.Filter(1e-5, 0, uint32(i)*0x9e3779b9)}
		}
		lines := min(max(100_000_000/n, 10_000), 1_000_000)
		data := benchUniverse(lines)
		tests := float64(n) * float64(lines)
		for _, batched := range []bool{true, false} {
			name := "spvfilter"
			if !batched {
				name = "contains"
			}
			b.Run(fmt.Sprintf("filters=%d/%s", n, name), func(b *testing.B) {
				batchCandidates = batched
				defer func() { batchCandidates = true }()
				var ms runtime.MemStats
				runtime.ReadMemStats(&ms)
				mallocs := ms.Mallocs
				cpu := processCPU()
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					reps, err := AnalyzeGroups(groups, bytes.NewReader(data), AnalyzeOptions{})
					if err != nil || reps[0].UniverseSize != uint64(lines) {
						b.Fatal(err)
					}
				}
				b.StopTimer()
				cpu = processCPU() - cpu
				runtime.ReadMemStats(&ms)
				b.ReportMetric(tests*float64(b.N)/b.Elapsed().Seconds(), "tests/s")
				if cpu > 0 {
					b.ReportMetric(tests*float64(b.N)/cpu.Seconds()*float64(runtime.GOMAXPROCS(0)), "cpu-tests/s")
				}
				b.ReportMetric(float64(ms.Mallocs-mallocs)/float64(b.N)/float64(lines), "allocs/candidate")
			})
		}
	}
}
