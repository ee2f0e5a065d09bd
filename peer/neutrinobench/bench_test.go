package neutrinobench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// benchSpec returns the benchmark chain and the number of nodes serving
// it: DefaultSpec and one node, with the height from
// SPVFILTER_BENCH_BLOCKS (20000 for the full figure) and the number of
// nodes from SPVFILTER_BENCH_PEERS when they are set.
func benchSpec() (spec ChainSpec, peers int, err error) {
	spec, peers = DefaultSpec, 1
	for _, v := range []struct {
		env string
		to  *int
	}{{"SPVFILTER_BENCH_BLOCKS", &spec.Blocks}, {"SPVFILTER_BENCH_PEERS", &peers}} {
		if s := os.Getenv(v.env); s != "" {
			if *v.to, err = strconv.Atoi(s); err != nil {
				return spec, peers, fmt.Errorf("%s=%q: %w", v.env, s, err)
			}
		}
	}
	return spec, peers, nil
}

// benchEnv is the chain and node the benchmarks share across -count runs:
// replaying a long chain into a node takes a while. TestMain stops the
// node.
var benchEnv struct {
	once  sync.Once
	chain *Chain
	nodes []*peertest.Node
	err   error
}

func benchNodes(b *testing.B) (*Chain, []*peertest.Node) {
	benchEnv.once.Do(func() {
		start := time.Now()
		spec, peers, err := benchSpec()
		if err != nil {
			benchEnv.err = err
			return
		}
		if benchEnv.chain, benchEnv.err = CachedChain(spec); benchEnv.err != nil {
			return
		}
		benchEnv.nodes, benchEnv.err = StartNodes(benchEnv.chain, peers)
		fmt.Fprintf(os.Stderr, "chain of %d blocks (%d filter elements a block) served by %d node(s) in %v\n",
			spec.Blocks, spec.Elements, peers, time.Since(start).Round(time.Millisecond))
	})
	if benchEnv.err != nil {
		b.Fatal(benchEnv.err)
	}
	return benchEnv.chain, benchEnv.nodes
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, n := range benchEnv.nodes {
		n.Stop()
	}
	os.Exit(code)
}

// BenchmarkScan scans the whole benchmark chain, served by the same btcd
// node(s), with spvfilter and with neutrino (GetCFilter and GetBlock, and
// neutrino-rescan: its Rescan), for 1 and for 100 watched scripts. An operation is a light-client session until its results are
// in hand: connect, sync block and filter headers, fetch and match every
// filter, fetch the matching blocks (closing the connections is not
// timed). Every operation must find exactly the planted transactions.
//
// Besides ns/op it reports cpu-s/op (the process's user and system CPU
// time, getrusage), node-cpu-s/op (the nodes' CPU time, serving the
// client), recv-MB/op (bytes read from the nodes), peak-heap-MB
// and peak-rss-MB (the largest growth of the Go heap in use and of the
// peak resident set size over any operation of the run; see Cost), and
// prints a line of ratios neutrino/spvfilter of the medians.
func BenchmarkScan(b *testing.B) {
	c, nodes := benchNodes(b)
	spec := c.Spec
	addrs, params := Addrs(nodes), nodes[0].Params
	var pids []int
	for _, n := range nodes {
		if pid, ok := pidWithArg("--datadir=" + filepath.Join(n.DataDir, "data")); ok {
			pids = append(pids, pid)
		}
	}
	for _, w := range []int{1, 100} {
		watch, want := WatchScripts(w), c.Expected(w)
		costs := map[string][]Cost{}
		b.Run(fmt.Sprintf("W%d", w), func(b *testing.B) {
			for _, cl := range []struct {
				name string
				scan scanFunc
			}{{"spvfilter", scanSpvfilter}, {"neutrino", scanNeutrino}, {"neutrino-rescan", scanNeutrinoRescan}} {
				b.Run(cl.name, func(b *testing.B) {
					var total Cost
					var recv uint64
					for i := 0; i < b.N; i++ {
						b.StopTimer()
						m := startMeter(pids)
						b.StartTimer()
						st, err := cl.scan(context.Background(), addrs, params, watch, 1, -1)
						b.StopTimer()
						cost := m.stop()
						if errors.Is(err, errOnePeer) {
							b.Skip(err)
						}
						if err != nil {
							b.Fatal(err)
						}
						st.Release()
						if missing, extra := diff(want, st.Matched); len(missing)+len(extra) > 0 {
							b.Fatalf("%s: missing %v, unexpected %v", cl.name, missing, extra)
						}
						b.StartTimer()
						costs[cl.name] = append(costs[cl.name], cost)
						total.CPU += cost.CPU
						total.NodeCPU += cost.NodeCPU
						total.PeakHeap = max(total.PeakHeap, cost.PeakHeap)
						total.PeakRSS = max(total.PeakRSS, cost.PeakRSS)
						recv += st.BytesReceived
					}
					n := float64(b.N)
					b.ReportMetric(total.CPU.Seconds()/n, "cpu-s/op")
					if len(pids) == len(nodes) {
						b.ReportMetric(total.NodeCPU.Seconds()/n, "node-cpu-s/op")
					}
					b.ReportMetric(float64(recv)/n/1e6, "recv-MB/op")
					b.ReportMetric(float64(total.PeakHeap)/1e6, "peak-heap-MB")
					if total.PeakRSS > 0 {
						b.ReportMetric(float64(total.PeakRSS)/1e6, "peak-rss-MB")
					}
				})
			}
		})
		for _, anchor := range []string{"neutrino", "neutrino-rescan"} {
			ours, theirs := costs["spvfilter"], costs[anchor]
			if len(ours) == 0 || len(theirs) == 0 {
				continue
			}
			ratio := func(f func(Cost) float64) float64 { return median(theirs, f) / median(ours, f) }
			fmt.Printf("ratio W%d %s/spvfilter, medians of %d and %d runs over %d blocks: wall %.2fx, cpu %.2fx, peak heap %.2fx, peak rss %.2fx\n",
				w, anchor, len(theirs), len(ours), spec.Blocks,
				ratio(func(c Cost) float64 { return c.Wall.Seconds() }),
				ratio(func(c Cost) float64 { return c.CPU.Seconds() }),
				ratio(func(c Cost) float64 { return float64(c.PeakHeap) }),
				ratio(func(c Cost) float64 { return float64(c.PeakRSS) }))
		}
	}
}

// median returns the median of f over costs.
func median(costs []Cost, f func(Cost) float64) float64 {
	v := make([]float64, len(costs))
	for i, c := range costs {
		v[i] = f(c)
	}
	sort.Float64s(v)
	if n := len(v); n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[len(v)/2]
}
