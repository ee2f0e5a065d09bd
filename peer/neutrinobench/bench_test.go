package neutrinobench

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// benchSpec returns the benchmark chain: DefaultSpec, with the height
// from SPVFILTER_BENCH_BLOCKS when it is set (20000 for the full figure).
func benchSpec(b *testing.B) ChainSpec {
	spec := DefaultSpec
	if v := os.Getenv("SPVFILTER_BENCH_BLOCKS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			b.Fatalf("SPVFILTER_BENCH_BLOCKS=%q: %v", v, err)
		}
		spec.Blocks = n
	}
	return spec
}

// BenchmarkScan scans the whole benchmark chain, served by one btcd node,
// with spvfilter and with neutrino, for 1 and for 100 watched scripts. An
// operation is a whole light-client session: connect, sync block and
// filter headers, fetch and match every filter, fetch the matching blocks.
// Every operation must find exactly the planted transactions.
//
// Besides ns/op it reports cpu-s/op (the process's user and system CPU
// time), recv-MB/op (bytes read from the node) and peak-heap-MB/op (the
// high-water mark of the Go heap in use during the operation, above what
// was in use before it), and prints a line of ratios neutrino/spvfilter.
func BenchmarkScan(b *testing.B) {
	spec := benchSpec(b)
	start := time.Now()
	c, err := CachedChain(spec)
	if err != nil {
		b.Fatal(err)
	}
	nodes := startNodes(b, c, 1)
	b.Logf("chain of %d blocks (%d filter elements a block) ready in %v", spec.Blocks, spec.Elements, time.Since(start).Round(time.Millisecond))
	addrs, params := Addrs(nodes), nodes[0].Params
	for _, w := range []int{1, 100} {
		watch, want := WatchScripts(w), c.Expected(w)
		costs := map[string]Cost{}
		b.Run(fmt.Sprintf("W%d", w), func(b *testing.B) {
			for _, cl := range []struct {
				name string
				scan scanFunc
			}{{"spvfilter", scanSpvfilter}, {"neutrino", scanNeutrino}} {
				b.Run(cl.name, func(b *testing.B) {
					var total Cost
					var recv uint64
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						runtime.GC()
						b.StartTimer()
						var st *ScanStats
						cost, err := measure(func() (err error) {
							st, err = cl.scan(context.Background(), addrs, params, watch, 1, -1)
							return err
						})
						if err != nil {
							b.Fatal(err)
						}
						if missing, extra := diff(want, st.Matched); len(missing)+len(extra) > 0 {
							b.Fatalf("%s: missing %v, unexpected %v", cl.name, missing, extra)
						}
						total.Wall += cost.Wall
						total.CPU += cost.CPU
						total.PeakHeap = max(total.PeakHeap, cost.PeakHeap)
						recv += st.BytesReceived
					}
					n := float64(b.N)
					b.ReportMetric(total.CPU.Seconds()/n, "cpu-s/op")
					b.ReportMetric(float64(recv)/n/1e6, "recv-MB/op")
					b.ReportMetric(float64(total.PeakHeap)/1e6, "peak-heap-MB/op")
					costs[cl.name] = Cost{Wall: total.Wall / time.Duration(b.N), CPU: total.CPU / time.Duration(b.N), PeakHeap: total.PeakHeap}
				})
			}
		})
		ours, theirs := costs["spvfilter"], costs["neutrino"]
		if ours.Wall > 0 && theirs.Wall > 0 {
			fmt.Printf("ratio W%d neutrino/spvfilter: wall %.2fx, cpu %.2fx, peak heap %.2fx (%d blocks)\n", w,
				theirs.Wall.Seconds()/ours.Wall.Seconds(), theirs.CPU.Seconds()/ours.CPU.Seconds(),
				float64(theirs.PeakHeap)/float64(max(ours.PeakHeap, 1)), spec.Blocks)
		}
	}
}
