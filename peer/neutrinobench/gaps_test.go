package neutrinobench

import (
	"context"
	"fmt"
	"maps"
	"net"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
)

// frameEvent is one message a traced connection carried: its command,
// whether it was written (else read), and when its last byte went
// through the connection's Write or came out of its Read.
type frameEvent struct {
	at    time.Time
	cmd   string
	wrote bool
}

// traceConn records the frames of a connection as they are written and
// read (see frameEvent).
type traceConn struct {
	net.Conn
	mu     sync.Mutex
	events []frameEvent
	in     frameCursor
	out    frameCursor
}

// feed advances c over b and returns the commands of the frames that
// ended in it.
func (c *frameCursor) feed(b []byte) []string {
	var ended []string
	c.walk(b, func(cmd string, _ int, end bool) {
		if end {
			ended = append(ended, cmd)
		}
	})
	return ended
}

func (t *traceConn) Read(b []byte) (int, error) {
	n, err := t.Conn.Read(b)
	t.note(&t.in, b[:n], false)
	return n, err
}

func (t *traceConn) Write(b []byte) (int, error) {
	n, err := t.Conn.Write(b)
	t.note(&t.out, b[:n], true)
	return n, err
}

func (t *traceConn) note(c *frameCursor, b []byte, wrote bool) {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, cmd := range c.feed(b) {
		t.events = append(t.events, frameEvent{at: now, cmd: cmd, wrote: wrote})
	}
}

// filterPhase is how a connection's filter requests went, from its
// frames.
type filterPhase struct {
	requests int           // getcfilters writes after an answer (runs of messages written together count once)
	filters  int           // cfilter messages read
	span     time.Duration // from the first getcfilters written to the last cfilter read
	// client is, summed over the requests after the first, the time from
	// the last message read of the answer before (its last filter or its
	// barrier's pong) to the request's getcfilters: the client's
	// turnaround, during which the node has nothing asked of it.
	client time.Duration
	// node is, summed over the requests after the first, the time from
	// the request's getcfilters to its first filter read: the node's
	// turnaround, its lookup of the filters included.
	node time.Duration
}

// phase reads the connection's filter requests off its frames.
func (t *traceConn) phase() filterPhase {
	t.mu.Lock()
	defer t.mu.Unlock()
	var (
		ph                     filterPhase
		first, lastIn, written time.Time
		waiting                bool // a getcfilters was written and no filter read since
	)
	for _, e := range t.events {
		switch {
		case e.wrote && e.cmd == wire.CmdGetCFilters:
			if waiting {
				continue // the same request's next message
			}
			if first.IsZero() {
				first = e.at
			} else if !lastIn.IsZero() {
				ph.client += e.at.Sub(lastIn)
			}
			ph.requests++
			written, waiting = e.at, true
		case !e.wrote && e.cmd == wire.CmdCFilter:
			if waiting && ph.requests > 1 {
				ph.node += e.at.Sub(written)
			}
			waiting = false
			ph.filters++
			lastIn = e.at
			ph.span = e.at.Sub(first)
		case !e.wrote && e.cmd == wire.CmdPong && !lastIn.IsZero() && !waiting:
			lastIn = e.at
		}
	}
	return ph
}

// exchange names a request's command and its answer's.
type exchange struct{ ask, answer string }

// timedExchanges are the exchanges of a scan, in the order it makes them:
// the block headers, the filter headers (checkpoints, then the headers
// between them), the filters and the matched blocks.
var timedExchanges = []exchange{
	{wire.CmdGetHeaders, wire.CmdHeaders}, {wire.CmdGetCFCheckpt, wire.CmdCFCheckpt},
	{wire.CmdGetCFHeaders, wire.CmdCFHeaders}, {wire.CmdGetCFilters, wire.CmdCFilter}, {wire.CmdGetData, wire.CmdBlock},
}

// exchangeSpan is a run of one kind of exchange on a connection: from
// its first request written to the last answer read before a request of
// another kind, counted from a start.
type exchangeSpan struct {
	exchange
	from, to time.Duration
}

// timeline returns the runs of timedExchanges the connection carried, in
// order, counted from start (an exchange asked again after another kind
// starts a run of its own; a run never answered is left out): where a
// scan's wall time goes, phase by phase.
func (t *traceConn) timeline(start time.Time) []exchangeSpan {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []exchangeSpan
	cur := -1 // the exchange of the open run, an index into timedExchanges
	var from, to time.Time
	closeRun := func() {
		if cur >= 0 && !to.IsZero() {
			out = append(out, exchangeSpan{timedExchanges[cur], from.Sub(start), to.Sub(start)})
		}
	}
	for _, e := range t.events {
		for i, x := range timedExchanges {
			switch {
			case e.wrote && e.cmd == x.ask && i != cur:
				closeRun()
				cur, from, to = i, e.at, time.Time{}
			case !e.wrote && e.cmd == x.answer && i == cur:
				to = e.at
			}
		}
	}
	closeRun()
	return out
}

// TestFilterGaps measures how much of a scan's wall time a connection
// carrying one request at a time costs. Against the benchmark's nodes
// (SPVFILTER_BENCH_NODES, or nodes it starts), each round reads every
// filter of the chain from the first node five ways and scans it with
// neutrino, in an order that rotates from round to round:
//
//   - raw, pipelined: every getcfilters written at once, the answers'
//     frames counted and skipped (rawConn), the floor of what the node
//     serves;
//   - raw, spvfilter's model: two getcfilters and a ping a request, the
//     next request written when the pong came, the client doing nothing
//     else; the same with a second request in flight (written when
//     the first is, each next one when the oldest's pong came); and
//     one getcfilters a request, one at a time;
//   - spvfilter's whole scan of 1 watched script, its connections traced
//     (traceConn): its wall time, its filter phase's span, and the
//     connection's turnarounds between requests, and when its exchanges
//     ran, counted from the scan's start (timeline: the headers, the
//     filter headers, the filters, the blocks, run by run), with the
//     node's CPU time in each run (cpuTrace, to the 10 ms tick /proc
//     counts in; the sampling's own reads of /proc count in the scan's
//     client CPU) and the medians of those by exchange;
//   - neutrino's scan of the same script against the first node
//     (scanNeutrino), whose wall time over the pipelined raw read of the
//     same round is the ceiling on the ratio neutrino over spvfilter: a
//     client that cost nothing and waited for nothing but the node's
//     filters would reach it, no client can pass it.
//
// It runs only when SPVFILTER_BENCH_GAPS is set to the number of rounds;
// SPVFILTER_BENCH_GAPS_WAYS (a regular expression over the ways' names)
// narrows it:
//
//	SPVFILTER_BENCH_BLOCKS=20000 SPVFILTER_BENCH_NODES=127.0.0.1:PORT SPVFILTER_BENCH_GAPS=9 go test -run TestFilterGaps -v
//	SPVFILTER_BENCH_GAPS_WAYS='^raw 2' SPVFILTER_BENCH_GAPS=30 ... go test -run TestFilterGaps -v
//
// For the scan, spans are filters' (the first getcfilters written to the
// last filter read, on the slowest connection); for the raw reads, their
// wall time.
func TestFilterGaps(t *testing.T) {
	rounds, err := strconv.Atoi(os.Getenv("SPVFILTER_BENCH_GAPS"))
	if err != nil || rounds < 1 {
		t.Skip("measurement: set SPVFILTER_BENCH_GAPS to the number of rounds to run it")
	}
	c, nodes, pids := benchNodes(t)
	addrs, params := Addrs(nodes), nodes[0].Params
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	hashes := servedHashes(ctx, t, c, addrs[0], params)
	watch, want := WatchScripts(1), c.Expected(1)
	var nodePhases phaseCPU
	// Each way returns its line and the figures its medians are of:
	// the wall time, and the filters' time (its span, for the scan).
	raw := func(perRequest, inFlight int) func() (string, [2]time.Duration, error) {
		return func() (string, [2]time.Duration, error) {
			rc, err := dialRaw(ctx, addrs[0], params)
			if err != nil {
				return "", [2]time.Duration{}, err
			}
			defer rc.conn.Close()
			m := startMeter(pids[:min(1, len(pids))])
			run, err := rc.readFilters(hashes, perRequest, inFlight)
			cost := m.stop()
			if err != nil {
				return "", [2]time.Duration{}, err
			}
			return fmt.Sprintf("%.3f s, gaps %.1f ms, node cpu %.2f s", run.wall.Seconds(), ms(run.gaps), cost.NodeCPU.Seconds()),
				[2]time.Duration{run.wall, run.wall}, nil
		}
	}
	scan := func() (string, [2]time.Duration, error) {
		var mu sync.Mutex
		var conns []*traceConn
		wrap := func(c net.Conn) net.Conn {
			tc := &traceConn{Conn: c}
			mu.Lock()
			conns = append(conns, tc)
			mu.Unlock()
			return tc
		}
		m := startMeter(pids)
		trace := startCPUTrace(pids, 2*time.Millisecond)
		start := time.Now()
		st, err := scanSpvfilterWrapped(ctx, addrs, params, watch, 1, -1, wrap)
		trace.stop()
		cost := m.stop()
		if err != nil {
			return "", [2]time.Duration{}, err
		}
		st.Release()
		if err := checkFound("spvfilter", st, want); err != nil {
			return "", [2]time.Duration{}, err
		}
		var parts []string
		var span time.Duration
		byAsk := map[string]time.Duration{}
		for i, tc := range conns {
			ph := tc.phase()
			span = max(span, ph.span)
			var spans []string
			for _, x := range tc.timeline(start) {
				node := trace.between(start.Add(x.from), start.Add(x.to))
				byAsk[x.ask] += node
				spans = append(spans, fmt.Sprintf("%s %.3f-%.3f (node cpu %.0f ms)", x.ask, x.from.Seconds(), x.to.Seconds(), ms(node)))
			}
			parts = append(parts, fmt.Sprintf("conn %d: %d requests, %d filters in %.3f s, client turnarounds %.1f ms, node turnarounds %.1f ms; from the start, s: %s",
				i, ph.requests, ph.filters, ph.span.Seconds(), ms(ph.client), ms(ph.node), strings.Join(spans, ", ")))
		}
		nodePhases.add(byAsk, cost.NodeCPU)
		return fmt.Sprintf("%.3f s (cpu %.2f s, node cpu %.2f s; %s); %s", cost.Wall.Seconds(), cost.CPU.Seconds(), cost.NodeCPU.Seconds(),
				nodePhases.last(), strings.Join(parts, "; ")),
			[2]time.Duration{cost.Wall, span}, nil
	}
	anchor := func() (string, [2]time.Duration, error) {
		cost, _, err := scanOnce(client{"neutrino", scanNeutrino}, addrs[:1], params, pids, watch, want, func() {}, func() {})
		if err != nil {
			return "", [2]time.Duration{}, err
		}
		return fmt.Sprintf("%.3f s (cpu %.2f s, node cpu %.2f s)", cost.Wall.Seconds(), cost.CPU.Seconds(), cost.NodeCPU.Seconds()),
			[2]time.Duration{cost.Wall, cost.Wall}, nil
	}
	type way struct {
		name string
		run  func() (string, [2]time.Duration, error)
	}
	ways := []way{
		{"raw pipelined", raw(0, 1)},
		{"raw 2 a request", raw(2, 1)},
		{"raw 2 a request, 2 in flight", raw(2, 2)},
		{"raw 1 a request", raw(1, 1)},
		{"spvfilter scan", scan},
		{"neutrino scan", anchor},
	}
	ways = pickWays(t, "SPVFILTER_BENCH_GAPS_WAYS", ways, func(w way) string { return w.name })
	// A warm-up of each, neither timed nor printed.
	for _, w := range ways {
		if _, _, err := w.run(); err != nil {
			t.Fatalf("%s: %v", w.name, err)
		}
	}
	walls, spans := map[string][]float64{}, map[string][]float64{}
	for r := 0; r < rounds; r++ {
		order := slices.Clone(ways)
		for i := 0; i < r%len(ways); i++ {
			order = append(order[1:], order[0])
		}
		fmt.Printf("round %d (load %s)\n", r+1, loadAverage())
		for _, w := range order {
			line, fig, err := w.run()
			if err != nil {
				t.Fatalf("round %d, %s: %v", r+1, w.name, err)
			}
			fmt.Printf("  %s: %s\n", w.name, line)
			walls[w.name] = append(walls[w.name], fig[0].Seconds())
			spans[w.name] = append(spans[w.name], fig[1].Seconds())
		}
	}
	// Each way's median, and its median ratio, round by round, to the
	// first way picked (the pipelined read, unless left out) and to
	// spvfilter's request model read raw.
	fmt.Printf("medians of %d rounds (ratios: the way's wall over the other's in the same round, median):\n", rounds)
	for _, w := range ways {
		line := fmt.Sprintf("  %s: wall %.3f s, filters %.3f s", w.name, medianOf(walls[w.name]), medianOf(spans[w.name]))
		for _, base := range slices.Compact([]string{ways[0].name, "raw 2 a request"}) {
			if b := spans[base]; base != w.name && len(b) == rounds {
				r := make([]float64, rounds)
				for i := range r {
					r[i] = spans[w.name][i] / b[i]
				}
				line += fmt.Sprintf(", %.2fx %s", medianOf(r), base)
			}
		}
		fmt.Println(line)
	}
	if nodePhases.rounds() > 0 {
		fmt.Printf("  spvfilter scan, the node's cpu by exchange, medians of %d scans: %s\n", nodePhases.rounds(), nodePhases.medians())
	}
	if a, f := walls["neutrino scan"], spans["raw pipelined"]; len(a) == rounds && len(f) == rounds {
		r := make([]float64, rounds)
		for i := range r {
			r[i] = a[i] / f[i]
		}
		slices.Sort(r)
		fmt.Printf("  the ceiling on the ratio, neutrino's scan over the raw pipelined read in the same round: %.2fx (%.2f-%.2f)\n",
			medianOf(r), r[0], r[len(r)-1])
	}
}

// phaseCPU gathers, scan by scan, the node's CPU time by the exchange
// whose runs it was spent in (see cpuTrace.between), and what fell
// outside them.
type phaseCPU struct {
	scans []map[string]time.Duration
}

// outside names the node's CPU time of a scan outside its exchanges' runs.
const outside = "outside"

// add records a scan's node CPU by exchange, and its total.
func (p *phaseCPU) add(byAsk map[string]time.Duration, total time.Duration) {
	m := maps.Clone(byAsk)
	in := time.Duration(0)
	for _, d := range byAsk {
		in += d
	}
	m[outside] = total - in
	p.scans = append(p.scans, m)
}

func (p *phaseCPU) rounds() int { return len(p.scans) }

// order lists the exchanges as a scan makes them, then what fell outside.
func (p *phaseCPU) order() []string {
	var out []string
	for _, x := range timedExchanges {
		out = append(out, x.ask)
	}
	return append(out, outside)
}

// last describes the last scan's node CPU by exchange.
func (p *phaseCPU) last() string {
	var parts []string
	for _, k := range p.order() {
		if d, ok := p.scans[len(p.scans)-1][k]; ok {
			parts = append(parts, fmt.Sprintf("%s %.0f ms", k, ms(d)))
		}
	}
	return "node cpu by exchange: " + strings.Join(parts, ", ")
}

// medians describes the median node CPU of each exchange over the scans.
func (p *phaseCPU) medians() string {
	var parts []string
	for _, k := range p.order() {
		var xs []float64
		for _, s := range p.scans {
			xs = append(xs, ms(s[k]))
		}
		parts = append(parts, fmt.Sprintf("%s %.0f ms", k, medianOf(xs)))
	}
	return strings.Join(parts, ", ")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// pickWays keeps the ways whose name matches the regular expression the
// environment variable env holds, all of them when it is unset, and fails
// t when it is malformed or keeps none.
func pickWays[W any](t *testing.T, env string, ways []W, name func(W) string) []W {
	t.Helper()
	pick := os.Getenv(env)
	if pick == "" {
		return ways
	}
	re, err := regexp.Compile(pick)
	if err != nil {
		t.Fatalf("%s=%q: %v", env, pick, err)
	}
	ways = slices.DeleteFunc(ways, func(w W) bool { return !re.MatchString(name(w)) })
	if len(ways) == 0 {
		t.Fatalf("%s=%q picks none of the ways", env, pick)
	}
	return ways
}
