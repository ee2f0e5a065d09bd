package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// eventLog collects a rescan's events.
type eventLog struct {
	mu     sync.Mutex
	events []Event
	signal chan struct{}
	// ended says how the rescan's Run returned, once it did (see end).
	ended string
}

func newEventLog() *eventLog { return &eventLog{signal: make(chan struct{}, 1)} }

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	l.events = append(l.events, e)
	l.mu.Unlock()
	select {
	case l.signal <- struct{}{}:
	default:
	}
}

// end records that the rescan's Run returned err, for a wait that fails
// to name.
func (l *eventLog) end(err error) {
	l.mu.Lock()
	l.ended = fmt.Sprintf("the rescan ended: %v", err)
	l.mu.Unlock()
	select {
	case l.signal <- struct{}{}:
	default:
	}
}

// snapshot returns a copy of the events so far.
func (l *eventLog) snapshot() []Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.events)
}

// waitFor waits until cond holds over the events so far.
func (l *eventLog) waitFor(t *testing.T, what string, cond func([]Event) bool) {
	t.Helper()
	l.waitForWithin(t, what, cond, 30*time.Second)
}

// waitForWithin is waitFor, waiting up to limit.
func (l *eventLog) waitForWithin(t *testing.T, what string, cond func([]Event) bool, limit time.Duration) {
	t.Helper()
	deadline := time.After(limit)
	for {
		l.mu.Lock()
		ok := cond(l.events)
		l.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-l.signal:
		case <-deadline:
			l.mu.Lock()
			ended := l.ended
			l.mu.Unlock()
			if ended == "" {
				ended = "the rescan runs on"
			}
			t.Fatalf("no %s within %v; events: %v; %s", what, limit, l.summary(), ended)
		}
	}
}

func (l *eventLog) summary() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		if e.Kind == EventConnected && e.Height%50 != 0 {
			continue
		}
		out = append(out, fmt.Sprintf("%v@%d", e.Kind, e.Height))
	}
	return out
}

func matched(events []Event, txid chainhash.Hash) []Event {
	var out []Event
	for _, e := range events {
		if e.Kind == EventMatch && e.Match.Txid == txid {
			out = append(out, e)
		}
	}
	return out
}

// checkOrder checks the rules of the event stream: connected blocks come
// in height order, each once, except after disconnections, which come
// from the highest block down and undo exactly the blocks last connected,
// and after rewinds (a block connected again at or below the last one,
// the same block); a match comes just before its block's connection. It
// returns the heights rewound to.
func checkOrder(t *testing.T, events []Event) (rewinds []int32) {
	t.Helper()
	var chain []chainhash.Hash // connected, by height from the first
	first := int32(-1)
	for i, e := range events {
		switch e.Kind {
		case EventConnected:
			if first < 0 {
				first = e.Height
			}
			want := first + int32(len(chain))
			if e.Height < want && e.Height >= first && chain[e.Height-first] == e.BlockHash {
				rewinds = append(rewinds, e.Height)
				chain = chain[:e.Height-first]
				want = e.Height
			}
			if e.Height != want {
				t.Fatalf("event %d: block %d connected, expected %d", i, e.Height, want)
			}
			chain = append(chain, e.BlockHash)
		case EventDisconnected:
			top := first + int32(len(chain)) - 1
			if len(chain) == 0 || e.Height != top || chain[len(chain)-1] != e.BlockHash {
				t.Fatalf("event %d: block %d disconnected, the last connected is %d", i, e.Height, top)
			}
			chain = chain[:len(chain)-1]
		case EventMatch:
			if i+1 >= len(events) {
				t.Fatalf("event %d: a match is the last event", i)
			}
			next := events[i+1]
			if (next.Kind != EventConnected && next.Kind != EventMatch) || next.Height != e.Height {
				t.Fatalf("event %d: match at height %d followed by %v at %d", i, e.Height, next.Kind, next.Height)
			}
		}
	}
	return rewinds
}

// TestRescanFollows runs a following rescan while the node mines blocks
// paying and spending a watched key, an item is added mid-way, and the
// chain reorganizes; every event arrives once and in order.
func TestRescanFollows(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice, carol, bob := peertest.NewKey("alice"), peertest.NewKey("carol"), peertest.NewKey("bob")
	c := connectTo(t, node, 5*time.Second)
	log := newEventLog()
	r := c.NewRescan(RescanOptions{Watch: []WatchItem{ScriptItem(alice.PkScript())}, From: 100, Follow: true,
		PollInterval: 100 * time.Millisecond, BatchBlocks: 7, OnEvent: log.add})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	log.waitFor(t, "tip at 110", func(es []Event) bool {
		return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventTip && e.Height == 110 })
	})

	// New blocks: alice is paid, then spends.
	pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 111
	spend := node.Spend(t, []peertest.Output{peertest.OutputOf(pay, 0, alice)}, wire.NewTxOut(30_000_000-peertest.Fee, bob.PkScript()))
	node.Confirm(t, spend) // 112
	log.waitFor(t, "the spend", func(es []Event) bool { return len(matched(es, spend.TxHash())) == 1 })

	// carol joins the watch list; her earlier payment is found on a
	// rewind.
	early := node.SpendCoinbase(t, wire.NewTxOut(20_000_000, carol.PkScript()))
	node.Confirm(t, early) // 113
	log.waitFor(t, "block 113", func(es []Event) bool {
		return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventConnected && e.Height == 113 })
	})
	r.Update([]WatchItem{ScriptItem(carol.PkScript())}, 113)
	log.waitFor(t, "carol's payment", func(es []Event) bool {
		m := matched(es, early.TxHash())
		return len(m) == 1 && slices.Equal(m[0].Match.WatchItems, []int{1})
	})

	// A reorganization replaces 112 and 113 (the spend and carol's
	// payment go back to the mempool and into the new blocks).
	hash112, _ := node.RPC().GetBlockHash(112)
	if err := node.RPC().InvalidateBlock(hash112); err != nil {
		t.Fatal(err)
	}
	node.Generate(t, 3) // 112', 113', 114'
	log.waitFor(t, "the new tip", func(es []Event) bool {
		return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventTip && e.Height == 114 })
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}

	events := log.snapshot()
	// The rewind to 113 reports 113 disconnected before it is connected
	// again; the reorganization, 113 and 112.
	if rw := checkOrder(t, events); len(rw) != 0 {
		t.Errorf("rewinds %v without disconnections", rw)
	}
	var disc []int32
	for _, e := range events {
		if e.Kind == EventDisconnected {
			disc = append(disc, e.Height)
		}
	}
	if !slices.Equal(disc, []int32{113, 113, 112}) {
		t.Errorf("disconnected %v, want 113 (the rewind), then 113, 112", disc)
	}
	// The spend: found at 112, disconnected, found again in the new 112.
	if m := matched(events, spend.TxHash()); len(m) != 2 || m[0].BlockHash == m[1].BlockHash {
		t.Errorf("the spend was matched %d times (want twice: before and after the reorganization)", len(m))
	}
	if m := matched(events, pay.TxHash()); len(m) != 1 || m[0].Height != 111 {
		t.Errorf("the payment: %+v", m)
	}
	for _, st := range c.Peers() {
		if st.Banned || st.Reason != "" {
			t.Errorf("peer blamed: %+v", st)
		}
	}
}

// TestRescanResumes: a rescan stopped by an error can be resumed from its
// Height, and the two together report each block once.
func TestRescanResumes(t *testing.T) {
	needFixture(t)
	c := connect(t, 0)
	log := newEventLog()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopAt := int32(600)
	r := c.NewRescan(RescanOptions{Watch: items(fx.watch), To: -1, BatchBlocks: 100, OnEvent: func(e Event) {
		log.add(e)
		if e.Kind == EventConnected && e.Height == stopAt {
			cancel()
		}
	}})
	if err := r.Run(ctx); err == nil {
		t.Fatal("a cancelled rescan returned no error")
	}
	resume := r.Height()
	if resume < stopAt+1 {
		t.Fatalf("resume at %d, after reporting %d", resume, stopAt)
	}
	r2 := c.NewRescan(RescanOptions{Watch: items(fx.watch), From: resume, To: -1, OnEvent: log.add})
	if err := r2.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	events := log.events
	log.mu.Unlock()
	if rw := checkOrder(t, events); len(rw) != 0 {
		t.Errorf("rewinds %v in a resumed rescan", rw)
	}
	got := map[chainhash.Hash]bool{}
	for _, e := range events {
		if e.Kind == EventMatch && !e.Match.FalsePositive {
			got[e.Match.Txid] = true
		}
	}
	// Everything but what needs history from before the resume height
	// (carol's spend is found by the revealed key anyway).
	for id := range fx.want {
		if !got[id] {
			t.Errorf("transaction %v (height %d) not reported", id, fx.height[id])
		}
	}
	if last := events[len(events)-1]; last.Kind != EventTip || last.Height != c.Chain().Height() {
		t.Errorf("last event %v at %d", last.Kind, last.Height)
	}
}

// TestRescanStartTime: a rescan from a wallet's birthday skips the blocks
// before it, and finds what comes after.
func TestRescanStartTime(t *testing.T) {
	needFixture(t)
	c := connect(t, 0)
	h := fx.height[fx.fundCarol.TxHash()]
	hdr := c.Chain().Header(h)
	birthday := hdr.Timestamp.Add(2*time.Hour + time.Second)
	var first int32 = -1
	got := map[chainhash.Hash]bool{}
	r := c.NewRescan(RescanOptions{Watch: items(fx.watch), StartTime: birthday, To: -1, OnEvent: func(e Event) {
		if e.Kind == EventConnected && first < 0 {
			first = e.Height
		}
		if e.Kind == EventMatch {
			got[e.Match.Txid] = true
		}
	}})
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if first <= 0 || c.Chain().MedianTime(first).Before(birthday.Add(-2*time.Hour)) || !c.Chain().MedianTime(first-1).Before(birthday.Add(-2*time.Hour)) {
		t.Fatalf("first block %d for birthday %v", first, birthday)
	}
	if !got[fx.late.TxHash()] || got[fx.fundAlice.TxHash()] {
		t.Fatalf("matches %v: want the late payment, not the early one", got)
	}
}

// TestRescanFollowsSpendTypes: while a rescan follows the tip, alice is
// paid on P2WPKH, P2TR and P2PK outputs, spends each in a block of its
// own, and the block of the P2TR spend is reorganized away and mined
// again: every payment and spend is reported (the taproot spend once per
// block it was in), each once per block, in order.
func TestRescanFollowsSpendTypes(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 500) // segwit and taproot active
	alice, bob := peertest.NewKey("alice"), peertest.NewKey("bob")
	scripts := [][]byte{alice.P2WPKHScript(), alice.P2TRScript(), alice.P2PKScript()}
	c := connectTo(t, node, 5*time.Second)
	log := newEventLog()
	r := c.NewRescan(RescanOptions{Watch: items(scripts), From: 495, Follow: true, PollInterval: 100 * time.Millisecond, OnEvent: log.add})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	tipAt := func(h int32) func([]Event) bool {
		return func(es []Event) bool {
			return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventTip && e.Height == h })
		}
	}
	log.waitFor(t, "tip 500", tipAt(500))
	var outs []*wire.TxOut
	for _, s := range scripts {
		outs = append(outs, wire.NewTxOut(10_000_000, s))
	}
	fund := node.SpendCoinbase(t, outs...)
	node.Confirm(t, fund) // 501
	var spends []*wire.MsgTx
	for i := range scripts {
		sp := node.Spend(t, []peertest.Output{peertest.OutputOf(fund, uint32(i), alice)}, wire.NewTxOut(10_000_000-peertest.Fee, bob.PkScript()))
		node.Confirm(t, sp) // 502, 503, 504
		spends = append(spends, sp)
	}
	log.waitFor(t, "tip 504", tipAt(504))
	hash503, _ := node.RPC().GetBlockHash(503)
	if err := node.RPC().InvalidateBlock(hash503); err != nil {
		t.Fatal(err)
	}
	node.Generate(t, 3) // 503', 504', 505': the two spends mined again
	log.waitFor(t, "tip 505", tipAt(505))
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	events := log.snapshot()
	checkOrder(t, events)
	want := map[chainhash.Hash]int{fund.TxHash(): 1, spends[0].TxHash(): 1, spends[1].TxHash(): 2, spends[2].TxHash(): 2}
	for id, n := range want {
		if m := matched(events, id); len(m) != n {
			t.Errorf("%v matched %d times, want %d", id, len(m), n)
		}
	}
	if m := matched(events, spends[1].TxHash()); len(m) == 2 && !slices.Equal(m[0].Match.WatchItems, []int{1}) {
		t.Errorf("the taproot spend is attributed to %v, want [1]", m[0].Match.WatchItems)
	}
	var disc []int32
	for _, e := range events {
		if e.Kind == EventDisconnected {
			disc = append(disc, e.Height)
		}
	}
	if !slices.Equal(disc, []int32{504, 503}) {
		t.Errorf("disconnected %v, want 504, 503", disc)
	}
}

// TestFollowWaitsForItsPeerBack: a following rescan on a started client
// with one peer, whose node goes down while it serves the filter of a new
// block (its connection ends, and dials are refused for two seconds). The
// scan fails with no peer left; the rescan waits for the service to dial
// the peer again and reports the block once it is back, rather than
// ending as if the peer were gone for good.
func TestFollowWaitsForItsPeerBack(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	proxy := newFilterDrop(t, node)
	c := connectTo(t, node, 5*time.Second, proxy.Addr)
	startService(t, c)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	proxy.mineDown(t, node) // 111
	proxy.Pause(t, 2*time.Second)
	log.waitFor(t, "block 111 once the peer is back", tipAt(111))
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestFollowWaitForPeerNamesIt: as in TestFollowWaitsForItsPeerBack, the
// one peer's node goes down while it serves a new block's filter, but
// stays down. The rescan waits for it (the service dials it again), with
// a warning naming the peer once the wait outlasts the timeout; stopped
// while it waits, Run returns an error naming what it waited for and the
// peer, rather than nil as if it had followed to the end.
func TestFollowWaitForPeerNamesIt(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	proxy := newFilterDrop(t, node)
	const timeout = 2 * time.Second
	c := connectTo(t, node, timeout, proxy.Addr)
	startService(t, c)
	log := newEventLog()
	r := c.NewRescan(RescanOptions{Watch: items([][]byte{peertest.NewKey("alice").PkScript()}), From: 100, Follow: true,
		PollInterval: 100 * time.Millisecond, OnEvent: log.add})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	log.waitFor(t, "the tip at 110", tipAt(110))
	proxy.mineDown(t, node) // 111
	paused := make(chan struct{})
	go func() {
		defer close(paused)
		proxy.Pause(t, 12*time.Second)
	}()
	defer func() { <-paused }()
	named := func() bool {
		return hasKind(r.Warnings(), WarningWaiting, proxy.Addr)
	}
	start := time.Now()
	for end := start.Add(10 * time.Second); !named() && time.Now().Before(end); {
		time.Sleep(50 * time.Millisecond)
	}
	if !named() {
		t.Errorf("no warning names the peer waited for 10 s after it went down: %q", r.Warnings())
	}
	t.Logf("warned %v after the peer went down: %q", time.Since(start), r.Warnings())
	cancel()
	err := <-done
	t.Logf("Run: %v", err)
	if !errors.Is(err, ErrNoPeers) || !strings.Contains(fmt.Sprint(err), proxy.Addr) || !strings.Contains(fmt.Sprint(err), "111") {
		t.Errorf("Run stopped while it waited for its peer returned %v, want an ErrNoPeers naming the peer and height 111", err)
	}
	if h := r.Height(); h != 111 {
		t.Errorf("Height %d after Run, want 111 (block 111 not reported)", h)
	}
}

// filterDrop is a proxy to a node that, once armed, ends its connection
// in place of the next filter it would pass on, as a node that goes down
// with its answer.
type filterDrop struct {
	*peertest.Liar
	armed atomic.Bool
	down  chan struct{}
}

func newFilterDrop(t *testing.T, node *peertest.Node) *filterDrop {
	d := &filterDrop{down: make(chan struct{}, 1)}
	d.Liar = peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgCFilter); ok && d.armed.CompareAndSwap(true, false) {
			d.down <- struct{}{}
			time.Sleep(200 * time.Millisecond) // the node goes down with its answer
			return nil, true
		}
		return []wire.Message{m}, false
	})
	return d
}

// mineDown arms d, mines a block on node and returns once d went down in
// place of a filter.
func (d *filterDrop) mineDown(t *testing.T, node *peertest.Node) {
	t.Helper()
	d.armed.Store(true)
	node.Generate(t, 1)
	select {
	case <-d.down:
	case <-time.After(30 * time.Second):
		t.Fatal("the filter of the new block was never asked for")
	}
}
