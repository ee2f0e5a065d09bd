//go:build linux

package neutrinobench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/pprof"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// The follow benchmark (see the package documentation) is not a timed
// test: it reports the figures and checks only what the followers report.
//
//	SPVFILTER_LONG=1 go test -run TestFollowBenchmark -v -timeout 120m
//
// SPVFILTER_BENCH_BLOCKS sets the blocks mined a round (2,000),
// SPVFILTER_BENCH_PEERS the nodes (8), SPVFILTER_BENCH_ROUNDS the rounds
// (3); SPVFILTER_FOLLOW_BATCH blocks (10) are mined every
// SPVFILTER_FOLLOW_INTERVAL (1s). Both followers follow the same blocks
// at once, started in turns; SPVFILTER_FOLLOW_APART=1 gives each its own
// blocks instead, one follower after the other. SPVFILTER_FOLLOW_PROFILE
// names a directory for diagnostics of each follow: CPU and heap
// profiles, the followers' logs and reports, the blocks' submission times
// and the nodes' byte counters every second.
const (
	longEnv          = "SPVFILTER_LONG"
	followChildEnv   = "SPVFILTER_FOLLOW_CHILD"
	followProfileEnv = "SPVFILTER_FOLLOW_PROFILE"
	// The lines a following process prints when it has reported the
	// block at Start, and when it has written its report.
	readyLine = "neutrinobench follow: ready"
	doneLine  = "neutrinobench follow: done"
)

// followStartSpec is the generated chain below the followed blocks in the
// benchmark: short, with filters as full as the blocks mined after it.
var followStartSpec = ChainSpec{Blocks: 200, Elements: 500, Watched: 1, PaymentsPerScript: 1}

// TestFollow follows 20 blocks mined in batches on two nodes with both
// followers at once: each must report every block, in order, and exactly
// the transactions paying and spending the watched scripts.
func TestFollow(t *testing.T) {
	c := testChain(t)
	nodes := startNodes(t, c, 2)
	plan := followPlan{Blocks: 20, Batch: 5, Interval: 250 * time.Millisecond, Watched: 2, PayEvery: 2, SpendAfter: 2}
	env := newFollowEnv(t, nodes, c.Spec.Elements, plan, 2*time.Minute)
	mr, results := env.session(t, []string{"spvfilter", "neutrino"}, "quick")
	if len(mr.Planted) < plan.Blocks/plan.PayEvery {
		t.Fatalf("%d planted transactions in %d blocks: the plan pays every %d blocks", len(mr.Planted), plan.Blocks, plan.PayEvery)
	}
	for _, r := range results {
		if r.sentFollow == 0 || r.cpu == 0 || r.maxRSS == 0 {
			t.Errorf("%s: %d bytes sent by the nodes while following, %v CPU, %d bytes peak RSS: a figure is missing",
				r.rep.Follower, r.sentFollow, r.cpu, r.maxRSS)
		}
		if r.conns != len(nodes) {
			t.Errorf("%s: connected to %d of %d nodes", r.rep.Follower, r.conns, len(nodes))
		}
		// The nodes' count and the follower's own measure the same
		// bytes, but for connections closed meanwhile, which only the
		// follower's count keeps: it is never below the nodes'.
		if own := r.rep.OwnReceived; own > 0 && own < r.sentTotal*9/10 {
			t.Errorf("%s: the nodes sent %d bytes, it received %d", r.rep.Follower, r.sentTotal, own)
		}
	}
	if results[1].rep.OwnReceived == 0 {
		t.Errorf("neutrino counted no bytes received")
	}
	t.Log("\n" + followTable([]followRound{{round: 1, mr: mr, results: results}}) + "\n" + commandTable([]followRound{{round: 1, mr: mr, results: results}}))
}

// TestFollowBenchmark is the long measurement; see the comment at the
// top of this file.
func TestFollowBenchmark(t *testing.T) {
	if os.Getenv(longEnv) != "1" {
		t.Skipf("the follow benchmark is opt-in: %s=1 go test -run TestFollowBenchmark -v -timeout 120m "+
			"(SPVFILTER_BENCH_BLOCKS: blocks a round, default 2000; SPVFILTER_BENCH_PEERS: nodes, default 8; "+
			"SPVFILTER_BENCH_ROUNDS: rounds, default 3; SPVFILTER_FOLLOW_BATCH, SPVFILTER_FOLLOW_INTERVAL: "+
			"blocks mined at a time and how often, default 10 and 1s; SPVFILTER_FOLLOW_APART=1: one follower at a time)", longEnv)
	}
	plan := followPlan{Blocks: peertest.EnvCount(t, "SPVFILTER_BENCH_BLOCKS", 2000), Batch: peertest.EnvCount(t, "SPVFILTER_FOLLOW_BATCH", 10),
		Interval: time.Second, Watched: 4, SpendAfter: 3}
	if s := os.Getenv("SPVFILTER_FOLLOW_INTERVAL"); s != "" {
		d, err := time.ParseDuration(s)
		if err != nil {
			t.Fatalf("SPVFILTER_FOLLOW_INTERVAL=%q: %v", s, err)
		}
		plan.Interval = d
	}
	plan.PayEvery = max(2, plan.Blocks/50)
	peers, rounds := peertest.EnvCount(t, "SPVFILTER_BENCH_PEERS", 8), peertest.EnvCount(t, "SPVFILTER_BENCH_ROUNDS", 3)
	apart := os.Getenv("SPVFILTER_FOLLOW_APART") == "1"

	start := time.Now()
	c, err := CachedChain(followStartSpec)
	if err != nil {
		t.Fatal(err)
	}
	nodes := startNodes(t, c, peers)
	pace := time.Duration(plan.Blocks/plan.Batch) * plan.Interval
	env := newFollowEnv(t, nodes, c.Spec.Elements, plan, 15*time.Minute+3*pace)
	t.Logf("%d nodes on a %d-block chain in %v; %d rounds of %d blocks (%d every %v, %d filter elements a block), followers %s",
		peers, c.Spec.Blocks+1, time.Since(start).Round(time.Second), rounds, plan.Blocks, plan.Batch, plan.Interval,
		c.Spec.Elements, map[bool]string{true: "apart", false: "together"}[apart])
	var all []followRound
	for r := 0; r < rounds; r++ {
		names := []string{"spvfilter", "neutrino"}
		if r%2 == 1 {
			slices.Reverse(names)
		}
		sessions := [][]string{names}
		if apart {
			sessions = [][]string{names[:1], names[1:]}
		}
		for _, s := range sessions {
			mr, results := env.session(t, s, fmt.Sprintf("round%d", r+1))
			all = append(all, followRound{round: r + 1, mr: mr, results: results})
			t.Logf("round %d, %s: done", r+1, strings.Join(s, " and "))
		}
	}
	t.Log("\n" + followTable(all) + "\n" + commandTable(all) + "\n" + roundCommandTable(all))
}

// followEnv is the nodes and the miner the sessions of a test share.
type followEnv struct {
	nodes      []*peertest.Node
	miner      *miner
	plan       followPlan
	limit      time.Duration // bounds each follower's process
	profileDir string
}

func newFollowEnv(t *testing.T, nodes []*peertest.Node, elements int, plan followPlan, limit time.Duration) *followEnv {
	t.Helper()
	m, err := newMiner(nodes[0], elements)
	if err != nil {
		t.Fatal(err)
	}
	return &followEnv{nodes: nodes, miner: m, plan: plan, limit: limit, profileDir: os.Getenv(followProfileEnv)}
}

// followResult is what one follower reported and cost in a session.
type followResult struct {
	rep followReport
	// cpu and maxRSS are the whole process's (getrusage at its exit):
	// start, sync and follow.
	cpu    time.Duration
	maxRSS uint64
	// sentFollow and sentTotal are the bytes the nodes sent to the
	// follower while it followed and since it connected (their
	// getpeerinfo); conns is the number of its connections at the end.
	sentFollow, sentTotal uint64
	conns                 int
	// nudges counts the blocks mined after the round before the
	// follower reported its last block (see awaitDone).
	nudges int
}

// followRound is one session's blocks and followers.
type followRound struct {
	round   int
	mr      *minedRound
	results []*followResult
}

// session starts a process for each follower named, waits until each has
// reported the tip, mines the plan's blocks, waits until each has
// reported the last, and checks what each reported.
func (e *followEnv) session(t *testing.T, names []string, tag string) (*minedRound, []*followResult) {
	t.Helper()
	start := e.miner.height
	final := start + int32(e.plan.Blocks)
	children := make([]*followChild, len(names))
	for i, name := range names {
		req := followRequest{Follower: name, Addrs: Addrs(e.nodes), Watched: e.plan.Watched, Start: start, Final: final,
			Out: filepath.Join(t.TempDir(), "report.json"), Limit: e.limit, ProfileDir: e.profileDir, Tag: tag}
		children[i] = startFollowChild(t, req)
	}
	for _, ch := range children {
		if err := ch.await(ch.ready, "ready", e.limit); err != nil {
			t.Fatal(err)
		}
	}
	sent0, _, err := nodeBytes(e.nodes)
	if err != nil {
		t.Fatal(err)
	}
	stopSampling := e.sampleBytes(t, tag)
	mr, err := e.miner.round(e.plan)
	stopSampling()
	if err != nil {
		t.Fatal(err)
	}
	if e.profileDir != "" {
		mined := struct {
			Start     int32
			Hashes    []chainhash.Hash
			Submitted []time.Time
		}{mr.Start, mr.Hashes, mr.Submitted}
		if err := writeJSON(filepath.Join(e.profileDir, tag+"-mined.json"), mined); err != nil {
			t.Fatal(err)
		}
	}
	nudges := make([]int, len(children))
	for i, ch := range children {
		if nudges[i], err = e.awaitDone(ch); err != nil {
			t.Fatal(err)
		}
	}
	sent1, conns, err := nodeBytes(e.nodes)
	if err != nil {
		t.Fatal(err)
	}
	var results []*followResult
	for i, ch := range children {
		r, err := ch.finish()
		if err != nil {
			t.Fatal(err)
		}
		r.nudges = nudges[i]
		r.sentFollow, r.sentTotal, r.conns = sent1[ch.req.Follower]-sent0[ch.req.Follower], sent1[ch.req.Follower], conns[ch.req.Follower]
		if err := checkFollow(mr, r.rep); err != nil {
			t.Errorf("%s %s: %v\nnotes: %v", tag, ch.req.Follower, err, r.rep.Notes)
		}
		results = append(results, r)
	}
	return mr, results
}

// nudgeAfter is how long a follower may take to report the round's last
// block before it is nudged with another block.
const nudgeAfter = 15 * time.Second

// awaitDone waits until the follower has reported the round's last block.
// One that has not after nudgeAfter gets another block mined, beyond the
// round, every nudgeAfter, as a real chain would bring it (neutrino
// sometimes stops one block short until the next is announced); it
// returns how many it needed. The recorder keeps nothing above the
// round's last block.
func (e *followEnv) awaitDone(ch *followChild) (nudges int, err error) {
	deadline := time.Now().Add(e.limit)
	for {
		err := ch.await(ch.done, "done", min(nudgeAfter, time.Until(deadline)))
		if err == nil || !errors.Is(err, errNotYet) || time.Now().After(deadline) {
			return nudges, err
		}
		if _, err := e.miner.mine(nil, nil); err != nil {
			return nudges, err
		}
		nudges++
	}
}

// bytesSample is what the nodes had sent to each follower at a moment.
type bytesSample struct {
	At   time.Time
	Sent map[string]uint64
}

// sampleBytes records, every second until the returned function is
// called, what the nodes have sent to each follower, into the profile
// directory, if there is one: how the traffic grows with the height.
func (e *followEnv) sampleBytes(t *testing.T, tag string) (stop func()) {
	if e.profileDir == "" {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	var samples []bytesSample
	go func() {
		defer close(done)
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			if sent, _, err := nodeBytes(e.nodes); err == nil {
				samples = append(samples, bytesSample{At: time.Now(), Sent: sent})
			}
			select {
			case <-quit:
				return
			case <-tick.C:
			}
		}
	}()
	return func() {
		close(quit)
		<-done
		if err := writeJSON(filepath.Join(e.profileDir, tag+"-bytes.json"), samples); err != nil {
			t.Error(err)
		}
	}
}

// writeJSON writes v to the file path as JSON.
func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

// checkFollow checks that a follower reported the blocks Start..Final of
// the round in order, each once, none disconnected, and exactly the
// planted transactions, each at its height.
func checkFollow(mr *minedRound, rep followReport) error {
	if rep.Err != "" {
		return fmt.Errorf("stopped: %s", rep.Err)
	}
	var problems []string
	if len(rep.Disconnected) > 0 {
		problems = append(problems, fmt.Sprintf("blocks reported disconnected at %v", rep.Disconnected))
	}
	want := int(mr.Final-mr.Start) + 1
	if len(rep.Blocks) != want {
		problems = append(problems, fmt.Sprintf("%d blocks reported, want %d (%d..%d)", len(rep.Blocks), want, mr.Start, mr.Final))
	}
	for i, b := range rep.Blocks {
		h := mr.Start + int32(i)
		if b.Height != h || h > mr.Final {
			problems = append(problems, fmt.Sprintf("block %d reported at height %d, want %d of %d..%d", i, b.Height, h, mr.Start, mr.Final))
			break
		}
		if h > mr.Start && b.Hash != mr.Hashes[h-mr.Start-1] {
			problems = append(problems, fmt.Sprintf("block %v reported at height %d, mined %v", b.Hash, h, mr.Hashes[h-mr.Start-1]))
			break
		}
	}
	got := make(map[chainhash.Hash]int32)
	for _, m := range rep.Matches {
		if _, dup := got[m.Txid]; dup {
			problems = append(problems, fmt.Sprintf("transaction %v reported twice", m.Txid))
		}
		got[m.Txid] = m.Height
		if h, ok := mr.Planted[m.Txid]; !ok || h != m.Height {
			problems = append(problems, fmt.Sprintf("transaction %v reported at height %d, planted at %d (%v)", m.Txid, m.Height, h, ok))
		}
	}
	for txid, h := range mr.Planted {
		if _, ok := got[txid]; !ok {
			problems = append(problems, fmt.Sprintf("transaction %v planted at height %d not reported", txid, h))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return nil
}

// nodeBytes returns, for each follower, the bytes the nodes have sent to
// its connections and the number of them, from the nodes' getpeerinfo.
// The followers are told apart by their user agents.
func nodeBytes(nodes []*peertest.Node) (sent map[string]uint64, conns map[string]int, err error) {
	sent, conns = make(map[string]uint64), make(map[string]int)
	for _, n := range nodes {
		infos, err := n.RPC().GetPeerInfo()
		if err != nil {
			return nil, nil, fmt.Errorf("getpeerinfo of %s: %w", n.P2PAddr, err)
		}
		for _, p := range infos {
			name := ""
			switch {
			case strings.Contains(p.SubVer, peer.UserAgent):
				name = "spvfilter"
			case strings.Contains(p.SubVer, "neutrino"):
				name = "neutrino"
			default:
				continue
			}
			sent[name] += p.BytesSent
			conns[name]++
		}
	}
	return sent, conns, nil
}

// followChild is a process running TestFollowChild for one follower.
type followChild struct {
	req         followRequest
	cmd         *exec.Cmd
	stdin       io.WriteCloser
	ready, done chan struct{}
	exited      chan struct{} // closed when its output ends

	mu  sync.Mutex
	out bytes.Buffer
}

// startFollowChild starts a process following as req asks; it is killed
// when the test ends if it has not exited.
func startFollowChild(t *testing.T, req followRequest) *followChild {
	t.Helper()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	c := &followChild{req: req, ready: make(chan struct{}), done: make(chan struct{}), exited: make(chan struct{})}
	c.cmd = exec.Command(os.Args[0], "-test.run=^TestFollowChild$", "-test.v", "-test.timeout="+(req.Limit+time.Minute).String())
	c.cmd.Env = append(os.Environ(), followChildEnv+"="+string(b))
	c.cmd.Stderr = c
	if c.stdin, err = c.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := c.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-c.exited:
		default:
			c.cmd.Process.Kill()
		}
	})
	go func() {
		defer close(c.exited)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			c.Write([]byte(line + "\n"))
			switch line {
			case readyLine:
				close(c.ready)
			case doneLine:
				close(c.done)
			}
		}
	}()
	return c
}

// Write keeps the process's output.
func (c *followChild) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.Write(b)
}

func (c *followChild) output() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.out.String()
}

// await waits for the process to print the line that closes ch.
func (c *followChild) await(ch <-chan struct{}, what string, within time.Duration) error {
	select {
	case <-ch:
		return nil
	case <-c.exited:
		c.cmd.Wait()
		return fmt.Errorf("%s: the process ended before it was %s:\n%s", c.req.Follower, what, c.output())
	case <-time.After(within):
		return fmt.Errorf("%s: %w %s within %v:\n%s", c.req.Follower, errNotYet, what, within, c.output())
	}
}

// errNotYet: a following process did not get as far as awaited in time.
var errNotYet = errors.New("not")

// finish lets the process end and returns its report and what it used.
func (c *followChild) finish() (*followResult, error) {
	c.stdin.Close()
	<-c.exited
	if err := c.cmd.Wait(); err != nil {
		return nil, fmt.Errorf("%s: %v\n%s", c.req.Follower, err, c.output())
	}
	r := &followResult{}
	b, err := os.ReadFile(c.req.Out)
	if err == nil {
		err = json.Unmarshal(b, &r.rep)
	}
	if err != nil {
		return nil, fmt.Errorf("%s report: %w", c.req.Follower, err)
	}
	ru, ok := c.cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		return nil, fmt.Errorf("%s: no resource usage", c.req.Follower)
	}
	r.cpu = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	r.maxRSS = uint64(ru.Maxrss) * 1024 // kilobytes on Linux
	return r, nil
}

// TestFollowChild is the following process of the follow tests; it does
// nothing in a test run of its own.
func TestFollowChild(t *testing.T) {
	raw := os.Getenv(followChildEnv)
	if raw == "" {
		t.Skip("the following process of TestFollow and TestFollowBenchmark, run by them")
	}
	var req followRequest
	if err := json.Unmarshal([]byte(raw), &req); err != nil {
		t.Fatalf("%s: %v", followChildEnv, err)
	}
	rep, stop := runFollower(req)
	defer stop()
	err := writeJSON(req.Out, rep)
	if err == nil && req.ProfileDir != "" {
		err = writeJSON(profilePath(req, "report.json"), rep)
	}
	if err != nil {
		t.Fatal(err)
	}
	fmt.Println(doneLine)
	// The parent reads the nodes' counters, then closes stdin; the
	// follower keeps its connections until then.
	io.Copy(io.Discard, os.Stdin)
}

// runFollower runs the follower req names until it has reported the block
// at Final, and returns its report and what stops the follower. It prints
// readyLine once the follower has reported the block at Start, when the
// measured follow begins.
func runFollower(req followRequest) (followReport, func()) {
	ctx, cancel := context.WithTimeout(context.Background(), req.Limit)
	rec := newRecorder(req)
	stop := cancel
	fail := func(err error) (followReport, func()) {
		rep := rec.report()
		rep.Err = err.Error()
		return rep, stop
	}
	start, err := followerNamed(req.Follower)
	if err != nil {
		return fail(err)
	}
	f, err := start(ctx, req, &chaincfg.RegressionNetParams, rec)
	if err != nil {
		return fail(err)
	}
	stop = func() {
		f.stop()
		cancel()
	}
	select {
	case <-rec.ready:
	case err := <-f.errc:
		return fail(err)
	case <-ctx.Done():
		return fail(fmt.Errorf("waiting for block %d: %w", req.Start, ctx.Err()))
	}
	stopProfile := startProfile(req)
	m := startMeterEvery(nil, followHeapSampling)
	atReady, byCommandAtReady := f.received(), f.byCommand()
	fmt.Println(readyLine)
	var ferr error
	select {
	case <-rec.done:
	case ferr = <-f.errc:
	case <-ctx.Done():
		ferr = fmt.Errorf("waiting for block %d: %w", req.Final, ctx.Err())
	}
	cost := m.stop()
	stopProfile()
	rep := rec.report()
	if ferr != nil {
		rep.Err = ferr.Error()
	}
	rep.Cost, rep.RSSAtReady = cost, m.rss0
	rep.OwnReceived, rep.OwnReceivedAtReady = f.received(), atReady
	rep.ByCommand, rep.ByCommandAtReady = f.byCommand(), byCommandAtReady
	rep.Notes = f.notes()
	return rep, stop
}

// followHeapSampling is how often a follower's Go heap is sampled: a
// follow lasts minutes, and sampling every millisecond cost about 4% of
// its CPU time.
const followHeapSampling = 10 * time.Millisecond

// startProfile starts a CPU profile of the follow if req asks for
// profiles, and returns what ends it and writes a heap profile.
func startProfile(req followRequest) (stop func()) {
	if req.ProfileDir == "" {
		return func() {}
	}
	cpu, err := os.Create(profilePath(req, "cpu.pprof"))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(cpu); err != nil {
		fmt.Fprintln(os.Stderr, err)
	}
	return func() {
		pprof.StopCPUProfile()
		cpu.Close()
		if heap, err := os.Create(profilePath(req, "heap.pprof")); err == nil {
			pprof.WriteHeapProfile(heap)
			heap.Close()
		}
	}
}

// followFigures are one follower's figures in one session.
type followFigures struct {
	wall, lag          time.Duration // first block mined to last reported; last mined to last reported
	p50, p90, maxLat   time.Duration // from a block's submission to its report
	cpu, cpuAll        time.Duration // while following; the whole process
	rss, rssAll, heap  uint64        // peak while following; the whole process; peak Go heap growth while following
	recv, recvAll      uint64        // bytes received while following; since connecting
	blocks, matchCount int
}

func figures(mr *minedRound, r *followResult) followFigures {
	f := followFigures{cpu: r.rep.Cost.CPU, cpuAll: r.cpu, rss: r.rep.RSSAtReady + r.rep.Cost.PeakRSS, rssAll: r.maxRSS,
		heap: r.rep.Cost.PeakHeap, recv: r.sentFollow, recvAll: r.sentTotal, matchCount: len(r.rep.Matches)}
	if own := r.rep.OwnReceived; own > 0 {
		// The follower's own count keeps the bytes of connections that
		// closed while it followed; the nodes' does not.
		f.recv, f.recvAll = own-r.rep.OwnReceivedAtReady, own
	}
	var lat []time.Duration
	seen := make(map[int32]bool)
	var last time.Time
	for _, b := range r.rep.Blocks {
		i := int(b.Height - mr.Start - 1)
		if i < 0 || i >= len(mr.Submitted) || seen[b.Height] {
			continue
		}
		seen[b.Height] = true
		lat = append(lat, b.At.Sub(mr.Submitted[i]))
		if b.At.After(last) {
			last = b.At
		}
	}
	f.blocks = len(lat)
	if len(lat) > 0 && len(mr.Submitted) > 0 {
		slices.Sort(lat)
		f.p50, f.p90, f.maxLat = lat[len(lat)/2], lat[len(lat)*9/10], lat[len(lat)-1]
		f.wall, f.lag = last.Sub(mr.Submitted[0]), last.Sub(mr.Submitted[len(mr.Submitted)-1])
	}
	return f
}

const mib = 1 << 20

// followTable prints each follower's figures in each round (nudges: the
// blocks mined after the round before it reported the last, see
// awaitDone), then the
// medians over the rounds with their range, and the ratios
// spvfilter/neutrino of the medians with the range of the rounds'
// ratios.
func followTable(rounds []followRound) string {
	var b strings.Builder
	fmt.Fprintln(&b, "| round | follower | blocks | matches | nudges | wall s | lag s | latency p50/p90/max ms | CPU s follow (process) | peak RSS MiB follow (process) | peak heap MiB | received MB follow (total) |")
	fmt.Fprintln(&b, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	byName := make(map[string][]followFigures)
	var names []string
	for _, r := range rounds {
		for _, res := range r.results {
			f := figures(r.mr, res)
			name := res.rep.Follower
			if _, ok := byName[name]; !ok {
				names = append(names, name)
			}
			byName[name] = append(byName[name], f)
			fmt.Fprintf(&b, "| %d | %s | %d | %d | %d | %.1f | %.2f | %d/%d/%d | %.2f (%.2f) | %.1f (%.1f) | %.1f | %.2f (%.2f) |\n",
				r.round, name, f.blocks, f.matchCount, res.nudges, f.wall.Seconds(), f.lag.Seconds(),
				f.p50.Milliseconds(), f.p90.Milliseconds(), f.maxLat.Milliseconds(),
				f.cpu.Seconds(), f.cpuAll.Seconds(), float64(f.rss)/mib, float64(f.rssAll)/mib,
				float64(f.heap)/mib, float64(f.recv)/1e6, float64(f.recvAll)/1e6)
		}
	}
	slices.Sort(names)
	slices.Reverse(names) // spvfilter, then neutrino
	metrics := []struct {
		name string
		get  func(followFigures) float64
	}{
		{"wall s", func(f followFigures) float64 { return f.wall.Seconds() }},
		{"lag s", func(f followFigures) float64 { return f.lag.Seconds() }},
		{"latency p50 ms", func(f followFigures) float64 { return float64(f.p50.Milliseconds()) }},
		{"latency p90 ms", func(f followFigures) float64 { return float64(f.p90.Milliseconds()) }},
		{"latency max ms", func(f followFigures) float64 { return float64(f.maxLat.Milliseconds()) }},
		{"CPU s while following", func(f followFigures) float64 { return f.cpu.Seconds() }},
		{"CPU s, whole process", func(f followFigures) float64 { return f.cpuAll.Seconds() }},
		{"peak RSS MiB while following", func(f followFigures) float64 { return float64(f.rss) / mib }},
		{"peak RSS MiB, whole process", func(f followFigures) float64 { return float64(f.rssAll) / mib }},
		{"peak heap growth MiB while following", func(f followFigures) float64 { return float64(f.heap) / mib }},
		{"received MB while following", func(f followFigures) float64 { return float64(f.recv) / 1e6 }},
		{"received MB since connecting", func(f followFigures) float64 { return float64(f.recvAll) / 1e6 }},
	}
	fmt.Fprintf(&b, "\nmedians over %d round(s) [min–max]\n\n| figure |", len(byName[names[0]]))
	for _, n := range names {
		fmt.Fprintf(&b, " %s |", n)
	}
	ratio := len(names) == 2
	if ratio {
		fmt.Fprintf(&b, " %s/%s [min–max of rounds] |", names[0], names[1])
	}
	fmt.Fprintln(&b)
	fmt.Fprintln(&b, "|---|"+strings.Repeat("---|", len(names)+map[bool]int{true: 1}[ratio]))
	for _, m := range metrics {
		fmt.Fprintf(&b, "| %s |", m.name)
		meds := make([]float64, len(names))
		for i, n := range names {
			v := values(byName[n], m.get)
			meds[i] = medianOf(v)
			fmt.Fprintf(&b, " %.2f [%.2f–%.2f] |", meds[i], slices.Min(v), slices.Max(v))
		}
		if ratio {
			a, z := byName[names[0]], byName[names[1]]
			var rs []float64
			for i := range min(len(a), len(z)) {
				rs = append(rs, m.get(a[i])/m.get(z[i]))
			}
			fmt.Fprintf(&b, " %.2f [%.2f–%.2f] |", meds[0]/meds[1], slices.Min(rs), slices.Max(rs))
		}
		fmt.Fprintln(&b)
	}
	return b.String()
}

func values(fs []followFigures, get func(followFigures) float64) []float64 {
	v := make([]float64, len(fs))
	for i, f := range fs {
		v[i] = get(f)
	}
	return v
}

// commandTable prints what each follower received while following, per
// block mined, by message command: medians over the rounds, and the
// difference spvfilter − neutrino of the medians.
func commandTable(rounds []followRound) string {
	perBlock := make(map[string]map[string][]float64) // follower, command
	cmds := map[string]bool{}
	for _, r := range rounds {
		blocks := float64(r.mr.Final - r.mr.Start)
		for _, res := range r.results {
			name := res.rep.Follower
			if perBlock[name] == nil {
				perBlock[name] = make(map[string][]float64)
			}
			for cmd, n := range res.rep.ByCommand {
				cmds[cmd] = true
				perBlock[name][cmd] = append(perBlock[name][cmd], float64(n-res.rep.ByCommandAtReady[cmd])/blocks)
			}
		}
	}
	names := []string{"spvfilter", "neutrino"}
	sorted := slices.Sorted(maps.Keys(cmds))
	var b strings.Builder
	fmt.Fprintf(&b, "bytes received while following, per block mined, by message (medians over %d round(s))\n\n", len(rounds))
	fmt.Fprintln(&b, "| message | spvfilter | neutrino | spvfilter − neutrino |")
	fmt.Fprintln(&b, "|---|---|---|---|")
	var sum [2]float64
	for _, cmd := range sorted {
		var med [2]float64
		for i, n := range names {
			if v := perBlock[n][cmd]; len(v) > 0 {
				med[i] = medianOf(v)
			}
			sum[i] += med[i]
		}
		fmt.Fprintf(&b, "| %s | %.1f | %.1f | %+.1f |\n", cmd, med[0], med[1], med[0]-med[1])
	}
	fmt.Fprintf(&b, "| all | %.1f | %.1f | %+.1f |\n", sum[0], sum[1], sum[0]-sum[1])
	return b.String()
}

// roundCommandTable prints, for each round, spvfilter's bytes received
// while following over neutrino's, and what each received per block
// mined by message command: where a round's extra bytes went.
func roundCommandTable(rounds []followRound) string {
	cmds := map[string]bool{}
	for _, r := range rounds {
		for _, res := range r.results {
			for cmd, n := range res.rep.ByCommand {
				if n > res.rep.ByCommandAtReady[cmd] {
					cmds[cmd] = true
				}
			}
		}
	}
	sorted := slices.Sorted(maps.Keys(cmds))
	var b strings.Builder
	fmt.Fprintln(&b, "bytes received while following, per block mined, by message and round (spvfilter/neutrino)")
	fmt.Fprintln(&b)
	fmt.Fprintf(&b, "| round | spvfilter/neutrino | %s |\n", strings.Join(sorted, " | "))
	fmt.Fprintln(&b, "|---|---|"+strings.Repeat("---|", len(sorted)))
	for _, r := range rounds {
		byName := make(map[string]*followResult)
		for _, res := range r.results {
			byName[res.rep.Follower] = res
		}
		s, n := byName["spvfilter"], byName["neutrino"]
		if s == nil || n == nil {
			continue
		}
		blocks := float64(r.mr.Final - r.mr.Start)
		fmt.Fprintf(&b, "| %d | %.3f |", r.round, float64(figures(r.mr, s).recv)/float64(figures(r.mr, n).recv))
		for _, cmd := range sorted {
			fmt.Fprintf(&b, " %.0f/%.0f |", float64(s.rep.ByCommand[cmd]-s.rep.ByCommandAtReady[cmd])/blocks,
				float64(n.rep.ByCommand[cmd]-n.rep.ByCommandAtReady[cmd])/blocks)
		}
		fmt.Fprintln(&b)
	}
	return b.String()
}
