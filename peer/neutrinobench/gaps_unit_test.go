package neutrinobench

import (
	"bytes"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// TestFrameCursor feeds a stream of messages in chunks of several sizes,
// which split frame headers and payloads anywhere: each message's
// command comes out once, in order, in the chunk that holds its last
// byte, and an empty payload ends its frame with its header.
func TestFrameCursor(t *testing.T) {
	var stream bytes.Buffer
	msgs := []wire.Message{wire.NewMsgPing(7), &wire.MsgVerAck{},
		wire.NewMsgGetCFilters(wire.GCSFilterRegular, 1, &chainhash.Hash{2}),
		wire.NewMsgCFilter(wire.GCSFilterRegular, &chainhash.Hash{3}, []byte{1, 2, 3}), wire.NewMsgPong(7)}
	var want []string
	for _, m := range msgs {
		if err := wire.WriteMessage(&stream, m, wire.ProtocolVersion, wire.SimNet); err != nil {
			t.Fatal(err)
		}
		want = append(want, m.Command())
	}
	for _, chunk := range []int{1, 5, 23, 24, 25, 60, 4096} {
		var c frameCursor
		var got []string
		for b := stream.Bytes(); len(b) > 0; b = b[min(chunk, len(b)):] {
			got = append(got, c.feed(b[:min(chunk, len(b))])...)
		}
		if !slices.Equal(got, want) {
			t.Errorf("chunks of %d: %v, want %v", chunk, got, want)
		}
	}
}

// TestTracePhase reads a connection's filter requests off frames timed by
// hand: runs of getcfilters written together count as one request, the
// client's turnaround runs from the answer's last message read (its
// pong, or its last filter) to the next getcfilters, the node's from
// there to the next filter, and what comes before the first request
// counts for nothing.
func TestTracePhase(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := func(ms int, cmd string) frameEvent { return frameEvent{at: at(ms), cmd: cmd, wrote: true} }
	r := func(ms int, cmd string) frameEvent { return frameEvent{at: at(ms), cmd: cmd} }
	tests := []struct {
		name   string
		events []frameEvent
		want   filterPhase
	}{{
		name: "one request",
		events: []frameEvent{r(0, wire.CmdHeaders), w(10, wire.CmdGetCFilters), w(10, wire.CmdGetCFilters), w(10, wire.CmdPing),
			r(30, wire.CmdCFilter), r(40, wire.CmdCFilter), r(41, wire.CmdPong)},
		want: filterPhase{requests: 1, filters: 2, span: 30 * time.Millisecond},
	}, {
		name: "three requests, pongs and a request answered with its last filter",
		events: []frameEvent{
			w(0, wire.CmdGetCFilters), w(0, wire.CmdPing), r(20, wire.CmdCFilter), r(25, wire.CmdCFilter), r(26, wire.CmdPong),
			w(29, wire.CmdGetCFilters), w(29, wire.CmdGetCFilters), w(29, wire.CmdPing), r(40, wire.CmdCFilter), r(50, wire.CmdCFilter),
			w(52, wire.CmdGetCFilters), r(60, wire.CmdPong), r(70, wire.CmdCFilter), r(71, wire.CmdPong),
		},
		// Client: 26→29 and 50→52; node: 29→40 and 52→70.
		want: filterPhase{requests: 3, filters: 5, span: 70 * time.Millisecond, client: 5 * time.Millisecond, node: 29 * time.Millisecond},
	}, {
		name:   "no filters",
		events: []frameEvent{w(0, wire.CmdGetHeaders), r(5, wire.CmdHeaders), r(6, wire.CmdPong)},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := &traceConn{events: tt.events}
			if got := tc.phase(); got != tt.want {
				t.Errorf("%+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestTimeline reads the runs of exchanges off frames timed by hand:
// each from its first request written to its last answer read before a
// request of another kind, counted from the start given; a run never
// answered is left out, an exchange asked again after another is a run of
// its own, and other messages between change nothing.
func TestTimeline(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	w := func(ms int, cmd string) frameEvent { return frameEvent{at: at(ms), cmd: cmd, wrote: true} }
	r := func(ms int, cmd string) frameEvent { return frameEvent{at: at(ms), cmd: cmd} }
	tc := &traceConn{events: []frameEvent{
		w(5, wire.CmdGetHeaders), r(20, wire.CmdHeaders), w(21, wire.CmdGetHeaders), r(30, wire.CmdHeaders),
		w(31, wire.CmdGetCFCheckpt), w(31, wire.CmdPing), r(40, wire.CmdPong),
		w(50, wire.CmdGetCFilters), r(60, wire.CmdCFilter), w(61, wire.CmdPing), w(62, wire.CmdGetCFilters), r(90, wire.CmdCFilter),
		r(95, wire.CmdPong), w(100, wire.CmdGetData), r(120, wire.CmdBlock), w(121, wire.CmdGetHeaders), r(125, wire.CmdHeaders),
	}}
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	want := []exchangeSpan{
		{exchange{wire.CmdGetHeaders, wire.CmdHeaders}, ms(4), ms(29)},
		{exchange{wire.CmdGetCFilters, wire.CmdCFilter}, ms(49), ms(89)},
		{exchange{wire.CmdGetData, wire.CmdBlock}, ms(99), ms(119)},
		{exchange{wire.CmdGetHeaders, wire.CmdHeaders}, ms(120), ms(124)},
	}
	if got := tc.timeline(at(1)); !slices.Equal(got, want) {
		t.Errorf("timeline %v, want %v", got, want)
	}
}

// TestCPUTraceBetween reads the CPU time spent between two moments off
// samples set by hand: a moment takes the last sample at or before it
// (the first before them all), so a span between samples counts the
// ticks its bracketing samples saw.
func TestCPUTraceBetween(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tr := &cpuTrace{samples: []cpuSample{{at(0), 0}, {at(10), 10 * time.Millisecond}, {at(20), 10 * time.Millisecond},
		{at(30), 40 * time.Millisecond}, {at(40), 50 * time.Millisecond}}}
	tests := []struct {
		name     string
		from, to int
		want     time.Duration
	}{
		{"all", 0, 40, 50 * time.Millisecond},
		{"before the first", -5, 10, 10 * time.Millisecond},
		{"after the last", 35, 90, 10 * time.Millisecond},
		{"on samples", 20, 30, 30 * time.Millisecond},
		{"between samples", 12, 19, 0},
		{"across one", 15, 25, 0},
		{"across two", 15, 35, 30 * time.Millisecond},
	}
	for _, tt := range tests {
		if got := tr.between(at(tt.from), at(tt.to)); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// TestPhaseCPU gathers the node's CPU by exchange over scans: what the
// exchanges' runs do not hold is counted outside, and each exchange's
// median is over the scans, a scan without it counting 0.
func TestPhaseCPU(t *testing.T) {
	var p phaseCPU
	d := func(ms int) time.Duration { return time.Duration(ms) * time.Millisecond }
	p.add(map[string]time.Duration{wire.CmdGetHeaders: d(10), wire.CmdGetCFilters: d(500)}, d(600))
	p.add(map[string]time.Duration{wire.CmdGetHeaders: d(30), wire.CmdGetCFilters: d(700), wire.CmdGetData: d(20)}, d(760))
	p.add(map[string]time.Duration{wire.CmdGetHeaders: d(20), wire.CmdGetCFilters: d(600)}, d(640))
	if got, want := p.rounds(), 3; got != want {
		t.Fatalf("%d scans, want %d", got, want)
	}
	if got, want := p.medians(), "getheaders 20 ms, getcfcheckpt 0 ms, getcfheaders 0 ms, getcfilters 600 ms, getdata 0 ms, outside 20 ms"; got != want {
		t.Errorf("medians %q, want %q", got, want)
	}
	if got, want := p.last(), "node cpu by exchange: getheaders 20 ms, getcfilters 600 ms, outside 20 ms"; got != want {
		t.Errorf("last %q, want %q", got, want)
	}
}
