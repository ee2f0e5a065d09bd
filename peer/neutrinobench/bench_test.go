package neutrinobench

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
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
	pids  []int // of the nodes, when they can be found
	err   error
	// external is set when the nodes are another process's (see
	// benchNodesEnv): they are left running.
	external bool
}

// benchNodesEnv names the comma-separated addresses of nodes serving the
// benchmark chain already, started by TestServe in another process, so
// that runs of different builds share them and skip the chain's replay:
//
//	SPVFILTER_BENCH_SERVE=30m SPVFILTER_BENCH_BLOCKS=20000 go test -run TestServe -v &
//	SPVFILTER_BENCH_NODES=127.0.0.1:PORT SPVFILTER_BENCH_BLOCKS=20000 go test -run '^$' -bench Scan
const benchNodesEnv = "SPVFILTER_BENCH_NODES"

// servedNodes returns the nodes at the comma-separated addrs, serving
// the benchmark chain on regtest.
func servedNodes(addrs string) []*peertest.Node {
	var nodes []*peertest.Node
	for _, a := range strings.Split(addrs, ",") {
		nodes = append(nodes, &peertest.Node{P2PAddr: strings.TrimSpace(a), Params: &chaincfg.RegressionNetParams})
	}
	return nodes
}

// TestServe starts the benchmark's nodes and keeps them serving for
// SPVFILTER_BENCH_SERVE (a duration) or until interrupted (SIGINT,
// SIGTERM), printing their addresses for benchNodesEnv; TestMain stops
// them. It runs only when SPVFILTER_BENCH_SERVE is set.
func TestServe(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("SPVFILTER_BENCH_SERVE"))
	if err != nil {
		t.Skip("measurement: set SPVFILTER_BENCH_SERVE to how long the nodes serve")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	_, nodes, _ := benchNodes(t)
	fmt.Printf("%s=%s\n", benchNodesEnv, strings.Join(Addrs(nodes), ","))
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func benchNodes(tb testing.TB) (*Chain, []*peertest.Node, []int) {
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
		if addrs := os.Getenv(benchNodesEnv); addrs != "" {
			benchEnv.nodes, benchEnv.external = servedNodes(addrs), true
		} else if benchEnv.nodes, benchEnv.err = StartNodesWith(benchEnv.chain, peers, nodeProfileArgs()); benchEnv.err != nil {
			return
		}
		for _, n := range benchEnv.nodes {
			if pid, ok := pidWithArg("--listen=" + n.P2PAddr); ok {
				benchEnv.pids = append(benchEnv.pids, pid)
			}
		}
		if len(benchEnv.pids) != len(benchEnv.nodes) {
			benchEnv.pids = nil // a partial sum would mislead
		}
		fmt.Fprintf(os.Stderr, "chain of %d blocks (%d filter elements a block) served by %d node(s) in %v\n",
			spec.Blocks, spec.Elements, peers, time.Since(start).Round(time.Millisecond))
	})
	if benchEnv.err != nil {
		tb.Fatal(benchEnv.err)
	}
	return benchEnv.chain, benchEnv.nodes, benchEnv.pids
}

// client is one of the scans compared.
type client struct {
	name string
	scan scanFunc
}

// clients are the scans compared: spvfilter first, the anchors after it.
var clients = []client{{"spvfilter", scanSpvfilter}, {"neutrino", scanNeutrino}, {"neutrino-rescan", scanNeutrinoRescan}}

// prototypes are scans TestCompare measures only when
// SPVFILTER_BENCH_CLIENTS names them: spvfilter's client with two and
// three connections to each node (scanSpvfilterConns). They come after
// spvfilter and before the anchors in its table, the first client picked
// being the one the others are compared with.
var prototypes = []client{{"spvfilter-2conns", scanSpvfilterConns(2)}, {"spvfilter-3conns", scanSpvfilterConns(3)}}

// scanOnce runs one measured scan of the whole chain with cl, checks that it
// found exactly want, and releases it. pause and resume bracket what is not
// the scan (a benchmark's StopTimer and StartTimer).
func scanOnce(cl client, addrs []string, params *chaincfg.Params, pids []int, watch [][]byte, want map[chainhash.Hash]bool,
	pause, resume func()) (Cost, *ScanStats, error) {
	pause()
	defer resume()
	stopProfile, err := startScanProfile(cl.name)
	if err != nil {
		return Cost{}, nil, err
	}
	m := startMeter(pids)
	resume()
	st, err := cl.scan(context.Background(), addrs, params, watch, 1, -1)
	pause()
	cost := m.stop()
	stopProfile()
	if err != nil {
		return cost, nil, err
	}
	st.Release()
	if err := checkFound(cl.name, st, want); err != nil {
		return cost, nil, err
	}
	return cost, st, nil
}

// checkFound says what a scan by name missed of want or found beyond it.
func checkFound(name string, st *ScanStats, want map[chainhash.Hash]bool) error {
	if missing, extra := diff(want, st.Matched); len(missing)+len(extra) > 0 {
		return fmt.Errorf("%s: missing %v, unexpected %v", name, missing, extra)
	}
	return nil
}

// scanProfileEnv names a directory that receives a CPU profile of each
// measured scan, name-N.pprof; go tool pprof merges those given together.
const scanProfileEnv = "SPVFILTER_BENCH_PROFILE"

// scanProfiles counts the profiles written by client name.
var scanProfiles = map[string]int{}

// startScanProfile starts a CPU profile of a scan by the client name when
// scanProfileEnv asks for one, and returns what ends it.
func startScanProfile(name string) (stop func(), err error) {
	dir := os.Getenv(scanProfileEnv)
	if dir == "" {
		return func() {}, nil
	}
	scanProfiles[name]++
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("%s-%d.pprof", name, scanProfiles[name])))
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// nodeProfileEnv names a directory that receives a CPU profile of each
// node the benchmarks start, node-N.pprof, covering the node's whole
// life (the chain's replay too), written when the node stops; the
// serving of each request shows under btcd's handler of its message
// (OnGetCFilters, OnGetCFHeaders, OnGetCFCheckpt, OnGetHeaders,
// OnGetData).
const nodeProfileEnv = "SPVFILTER_BENCH_NODE_PROFILE"

// nodeProfileArgs returns the btcd flags that write node i's CPU
// profile where nodeProfileEnv asks, or nil.
func nodeProfileArgs() func(i int) []string {
	dir := os.Getenv(nodeProfileEnv)
	if dir == "" {
		return nil
	}
	return func(i int) []string {
		return []string{"--cpuprofile=" + filepath.Join(dir, fmt.Sprintf("node-%d.pprof", i))}
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	if !benchEnv.external {
		for _, n := range benchEnv.nodes {
			n.Stop()
		}
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
//
// The clients are measured alike: the order in which they run is
// shuffled once per process (and printed), and before the first measured
// scan each client the -bench pattern selects has one warm-up scan
// (warmUp), outside the timer and the figures, so that the process's heap
// has grown for all of them before any is measured. A ratio is best taken
// in each of several processes, each with a count of 2 or more.
func BenchmarkScan(b *testing.B) {
	c, nodes, pids := benchNodes(b)
	addrs, params := Addrs(nodes), nodes[0].Params
	order := scanOrder()
	for _, w := range []int{1, 100} {
		watch, want := WatchScripts(w), c.Expected(w)
		costs := map[string][]Cost{}
		b.Run(fmt.Sprintf("W%d", w), func(b *testing.B) {
			for _, cl := range order {
				if benchSelected(b.Name() + "/" + cl.name) {
					if err := warmUp(cl, addrs, params, watch, want); err != nil {
						b.Fatal(err)
					}
				}
			}
			for _, cl := range order {
				b.Run(cl.name, func(b *testing.B) {
					b.StopTimer() // a warm-up the pattern's reading missed
					if err := warmUp(cl, addrs, params, watch, want); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
					var total Cost
					var recv uint64
					for i := 0; i < b.N; i++ {
						cost, st, err := scanOnce(cl, addrs, params, pids, watch, want, b.StopTimer, b.StartTimer)
						if err != nil {
							b.Fatal(err)
						}
						costs[cl.name] = append(costs[cl.name], cost)
						total.CPU += cost.CPU
						total.NodeCPU += cost.NodeCPU
						total.PeakHeap = max(total.PeakHeap, cost.PeakHeap)
						total.PeakRSS = max(total.PeakRSS, cost.PeakRSS)
						recv += st.BytesReceived
					}
					n := float64(b.N)
					b.ReportMetric(total.CPU.Seconds()/n, "cpu-s/op")
					if pids != nil {
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
		for _, anchor := range clients[1:] {
			ours, theirs := costs[clients[0].name], costs[anchor.name]
			if len(ours) == 0 || len(theirs) == 0 {
				continue
			}
			fmt.Printf("ratio W%d %s/spvfilter, medians of %d and %d runs over %d blocks: %s\n",
				w, anchor.name, len(theirs), len(ours), c.Spec.Blocks, ratios(theirs, ours))
		}
	}
}

// ratios describes the medians of theirs over the medians of ours.
func ratios(theirs, ours []Cost) string {
	r := func(f func(Cost) float64) float64 { return median(theirs, f) / median(ours, f) }
	return fmt.Sprintf("wall %.2fx, cpu %.2fx, node cpu %.2fx, peak heap %.2fx, peak rss %.2fx",
		r(func(c Cost) float64 { return c.Wall.Seconds() }),
		r(func(c Cost) float64 { return c.CPU.Seconds() }),
		r(func(c Cost) float64 { return c.NodeCPU.Seconds() }),
		r(func(c Cost) float64 { return float64(c.PeakHeap) }),
		r(func(c Cost) float64 { return float64(c.PeakRSS) }))
}

// TestCompare measures the clients of BenchmarkScan in interleaved rounds,
// so that the load of a shared machine falls on all of them alike, after
// one warm-up scan of each (warmUp), and prints each round's wall times
// and ratios, the load average before it, and a table of medians and
// ratios. The order of the clients alternates from round to round
// (spvfilter, neutrino, neutrino-rescan, then the reverse), so that none
// always follows another's garbage or the nodes' caches. It runs only
// when SPVFILTER_BENCH_ROUNDS is set; SPVFILTER_BENCH_CLIENTS (a regular
// expression) picks the clients, SPVFILTER_BENCH_WATCH (comma-separated
// counts, "1,100" by default) the watch lists:
//
//	SPVFILTER_BENCH_ROUNDS=5 SPVFILTER_BENCH_BLOCKS=20000 go test -run TestCompare -v -timeout 60m
//	SPVFILTER_BENCH_ROUNDS=9 SPVFILTER_BENCH_CLIENTS='^(spvfilter|neutrino)$' SPVFILTER_BENCH_WATCH=1 ... go test -run TestCompare -v
func TestCompare(t *testing.T) {
	rounds, err := strconv.Atoi(os.Getenv("SPVFILTER_BENCH_ROUNDS"))
	if err != nil || rounds < 1 {
		t.Skip("measurement: set SPVFILTER_BENCH_ROUNDS to the number of rounds to run it")
	}
	picked, watches, err := compareSelection()
	if err != nil {
		t.Fatal(err)
	}
	c, nodes, pids := benchNodes(t)
	addrs, params := Addrs(nodes), nodes[0].Params
	noop := func() {}
	var out strings.Builder
	fmt.Fprintf(&out, "%d blocks, %d node(s), medians of %d rounds\n\n", c.Spec.Blocks, len(nodes), rounds)
	fmt.Fprintf(&out, "| watched | client | wall s | cpu s | node cpu s | peak heap MB | peak rss MB | received MB | vs %s |\n", picked[0].name)
	fmt.Fprintf(&out, "|---|---|---|---|---|---|---|---|---|\n")
	for _, w := range watches {
		watch, want := WatchScripts(w), c.Expected(w)
		costs := map[string][]Cost{}
		recv := map[string]uint64{}
		byCmd := map[string]map[string]uint64{}
		for _, cl := range picked {
			if err := warmUp(cl, addrs, params, watch, want); err != nil {
				t.Fatalf("W%d: %v", w, err)
			}
		}
		for r := 0; r < rounds; r++ {
			order := slices.Clone(picked)
			if r%2 == 1 {
				slices.Reverse(order)
			}
			line := fmt.Sprintf("W%d round %d (load %s):", w, r+1, loadAverage())
			for _, cl := range order {
				cost, st, err := scanOnce(cl, addrs, params, pids, watch, want, noop, noop)
				if err != nil {
					t.Fatalf("W%d round %d: %v", w, r+1, err)
				}
				costs[cl.name] = append(costs[cl.name], cost)
				recv[cl.name], byCmd[cl.name] = st.BytesReceived, st.ByCommand
				line += fmt.Sprintf(" %s %.3f s (node cpu %.2f s)", cl.name, cost.Wall.Seconds(), cost.NodeCPU.Seconds())
			}
			for _, cl := range picked[1:] {
				line += fmt.Sprintf(", %s/%s %.2fx", cl.name, picked[0].name,
					costs[cl.name][r].Wall.Seconds()/costs[picked[0].name][r].Wall.Seconds())
			}
			fmt.Println(line)
		}
		for _, cl := range picked {
			fmt.Printf("W%d %s, bytes read by message in its last round: %s\n", w, cl.name, commandBytes(byCmd[cl.name]))
		}
		for _, cl := range picked {
			cs := costs[cl.name]
			vs := "–"
			if ours := costs[picked[0].name]; cl.name != picked[0].name {
				vs = ratios(cs, ours) + ", wall per round " + spread(cs, ours)
			}
			fmt.Fprintf(&out, "| %d | %s | %.3f | %.3f | %.3f | %.1f | %.1f | %.2f | %s |\n", w, cl.name,
				median(cs, func(c Cost) float64 { return c.Wall.Seconds() }),
				median(cs, func(c Cost) float64 { return c.CPU.Seconds() }),
				median(cs, func(c Cost) float64 { return c.NodeCPU.Seconds() }),
				median(cs, func(c Cost) float64 { return float64(c.PeakHeap) / 1e6 }),
				median(cs, func(c Cost) float64 { return float64(c.PeakRSS) / 1e6 }),
				float64(recv[cl.name])/1e6, vs)
		}
	}
	fmt.Print(out.String())
}

// compareSelection returns the clients and the watch-list sizes
// TestCompare measures, as SPVFILTER_BENCH_CLIENTS and
// SPVFILTER_BENCH_WATCH pick them.
func compareSelection() ([]client, []int, error) {
	picked := clients
	if s := os.Getenv("SPVFILTER_BENCH_CLIENTS"); s != "" {
		re, err := regexp.Compile(s)
		if err != nil {
			return nil, nil, fmt.Errorf("SPVFILTER_BENCH_CLIENTS=%q: %w", s, err)
		}
		all := slices.Concat(clients[:1], prototypes, clients[1:])
		picked = slices.DeleteFunc(all, func(cl client) bool { return !re.MatchString(cl.name) })
		if len(picked) == 0 {
			return nil, nil, fmt.Errorf("SPVFILTER_BENCH_CLIENTS=%q picks none of the clients", s)
		}
	}
	watches := []int{1, 100}
	if s := os.Getenv("SPVFILTER_BENCH_WATCH"); s != "" {
		watches = nil
		for _, f := range strings.Split(s, ",") {
			w, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || w < 1 {
				return nil, nil, fmt.Errorf("SPVFILTER_BENCH_WATCH=%q: a comma-separated list of counts of watched scripts", s)
			}
			watches = append(watches, w)
		}
	}
	return picked, watches, nil
}

// spread describes the wall-time ratios of theirs over ours, round by
// round: their median, least and greatest.
func spread(theirs, ours []Cost) string {
	r := make([]float64, min(len(theirs), len(ours)))
	for i := range r {
		r[i] = theirs[i].Wall.Seconds() / ours[i].Wall.Seconds()
	}
	slices.Sort(r)
	return fmt.Sprintf("%.2fx (%.2f–%.2f)", medianOf(r), r[0], r[len(r)-1])
}

// commandBytes lists the bytes of by, by command, largest first.
func commandBytes(by map[string]uint64) string {
	cmds := slices.Collect(maps.Keys(by))
	slices.SortFunc(cmds, func(a, b string) int { return cmp.Compare(by[b], by[a]) })
	var parts []string
	for _, c := range cmds {
		parts = append(parts, fmt.Sprintf("%s %d", c, by[c]))
	}
	return strings.Join(parts, ", ")
}

// loadAverage returns the system's load averages (/proc/loadavg), or "?"
// where the system does not tell.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

// median returns the median of f over costs.
func median(costs []Cost, f func(Cost) float64) float64 {
	v := make([]float64, len(costs))
	for i, c := range costs {
		v[i] = f(c)
	}
	return medianOf(v)
}

// medianOf returns the median of v.
func medianOf(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if n := len(s); n%2 == 0 {
		return (s[n/2-1] + s[n/2]) / 2
	}
	return s[len(s)/2]
}
