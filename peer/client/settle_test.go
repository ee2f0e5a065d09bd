package client

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSettleWaitsForQuiet: the service's wait after a wake-up lasts
// announceQuiet without another, is extended by each other wake-up, and
// ends at announceSettle however many come. A stream whose ticker a
// loaded machine starved (two wake-ups announceQuiet apart or more, as in
// one full-suite run where the wait rightly ended at 666 ms) does not
// test the extension: such a run is tried again, up to settleTries times.
func TestSettleWaitsForQuiet(t *testing.T) {
	for _, tc := range []struct {
		name     string
		every    time.Duration // wake-ups this often while it waits; 0: none
		min, max time.Duration
	}{
		{"quiet", 0, announceQuiet, announceSettle},
		{"a stream", announceQuiet / 3, announceSettle, announceSettle + 2*time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for try := 1; ; try++ {
				took, gap := settleOnce(tc.every)
				if gap >= announceQuiet {
					if try == settleTries {
						t.Fatalf("the wake-ups stopped for %v or more (longest gap %v) in each of %d tries: the extension was not tested", announceQuiet, gap, try)
					}
					t.Logf("try %d: the wake-ups stopped for %v (the machine starved the ticker); trying again", try, gap)
					continue
				}
				if took < tc.min || took > tc.max {
					t.Errorf("settle took %v, want %v to %v (wake-ups at most %v apart)", took, tc.min, tc.max, gap)
				}
				return
			}
		})
	}
}

// settleTries is how many times TestSettleWaitsForQuiet runs a case
// whose wake-ups a loaded machine starved.
const settleTries = 5

// settleOnce runs a service's settle with a wake-up every period (none
// for 0) and returns how long it took and the longest time it went
// without a wake-up (from its start to the last wake-up before it
// ended), 0 for no wake-ups.
func settleOnce(every time.Duration) (took, gap time.Duration) {
	var s service
	s.init()
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var wakes []time.Time
	done := make(chan struct{})
	start := time.Now()
	if every > 0 {
		go func() {
			defer close(done)
			tick := time.NewTicker(every)
			defer tick.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
					mu.Lock()
					wakes = append(wakes, time.Now())
					mu.Unlock()
					s.wakeUp()
				}
			}
		}()
	} else {
		close(done)
	}
	s.settle(ctx)
	end := time.Now()
	cancel()
	<-done
	if every == 0 {
		return end.Sub(start), 0
	}
	last := start
	for _, w := range wakes {
		if w.After(end) {
			break
		}
		gap = max(gap, w.Sub(last))
		last = w
	}
	// The time since the last wake-up counts only where settle ended
	// before its deadline: then it ended for want of one.
	if end.Sub(start) < announceSettle {
		gap = max(gap, end.Sub(last))
	}
	return end.Sub(start), gap
}

// TestBurstOfBlocksCostsOneWordAPeer: a service following the tip through
// three peers (one node behind three proxies, which announce each block
// at once) sees ten blocks mined in a row, 50 ms apart. Every peer is still compared
// on them (each sends filter headers, and each is compared), but the
// blocks are verified together once the announcements settle: each peer
// sends a few filter-header answers for the ten blocks, not one or more
// a block.
func TestBurstOfBlocksCostsOneWordAPeer(t *testing.T) {
	needFixture(t)
	node := peertest.CopyChain(t, fx.node, peertest.WithArgs("--nobanning"))
	var counts [3]headerBytes
	addrs := make([]string, len(counts))
	for i := range counts {
		addrs[i] = peertest.NewLiar(t, node.P2PAddr, node.Params.Net, counts[i].lie).Addr
	}
	c := connectWith(t, Config{Peers: addrs, Params: node.Params, Timeout: 5 * time.Second})
	startService(t, c)
	tip := fx.tip
	log, stop := follow(t, c, tip-5, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip", tipAt(tip))
	time.Sleep(2 * announceSettle) // what the tip cost is counted apart
	for i := range counts {
		counts[i].reset()
	}
	const blocks = 10
	start := time.Now()
	for range blocks {
		node.Generate(t, 1)
		time.Sleep(50 * time.Millisecond)
	}
	mined := time.Since(start)
	log.waitFor(t, "the new blocks", tipAt(tip+blocks))
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// One verification a settled burst: mining the ten blocks may take
	// longer than announceSettle on a loaded machine, a verification
	// then for each announceSettle it took, and one more for the
	// blocks a peer announced after the others (its word, once).
	want := 2 + int(mined/announceSettle)
	for i := range counts {
		n, hashes, headers, checkpoints := counts[i].reset()
		t.Logf("peer %d: %d cfheaders of %d hashes, %d bytes, %d cfcheckpt for %d blocks mined in %v",
			i, headers, hashes, n, checkpoints, blocks, mined.Round(time.Millisecond))
		switch {
		case headers == 0:
			t.Errorf("peer %d sent no filter headers: the new blocks were not compared with it", i)
		case headers > want:
			t.Errorf("peer %d sent %d filter-header answers for %d blocks mined in %v, want %d at most", i, headers, blocks, mined.Round(time.Millisecond), want)
		}
	}
	for _, p := range c.Peers() {
		if !p.Compared || p.Banned {
			t.Errorf("peer %s: compared %v, banned %v: every honest peer is compared", p.Address, p.Compared, p.Banned)
		}
	}
}

// heldInvs is a peer's link that holds back the node's announcements
// while hold is set, and sends them with the next one after.
type heldInvs struct {
	mu   sync.Mutex
	hold bool
	held []wire.Message
}

func (h *heldInvs) set(hold bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.hold = hold
}

func (h *heldInvs) lie(m wire.Message) ([]wire.Message, bool) {
	if _, ok := m.(*wire.MsgInv); !ok {
		return []wire.Message{m}, false
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.hold {
		h.held = append(h.held, m)
		return nil, false
	}
	out := append(h.held, m)
	h.held = nil
	return out, false
}

// TestLateClaimerAheadIsComparedOnTheNewBlock: two colluders forge the
// filter of block 111, which pays alice, and announce it at once; the
// honest peer's announcement of 111 comes only with that of block 112
// (a slower link). Block 111 is verified with the colluders alone; when
// the honest peer claims it late, it holds block 112 too, whose filter
// header commits to 111's: its late claim is not asked apart, it is
// compared on block 112 with the others (its first filter-header
// request after is for block 112), its word differs from the colluders'
// chain, the block proves them false, and the payment their filter hid
// is reported, the block rechecked.
func TestLateClaimerAheadIsComparedOnTheNewBlock(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice := peertest.NewKey("alice")
	colluders := forgingColluders(t, node, alice.PkScript())
	var link heldInvs
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, link.lie, peertest.AlsoSees(wire.CmdInv))
	c := connectWith(t, Config{Peers: []string{colluders[0], colluders[1], honest.Addr}, Params: node.Params, Timeout: 5 * time.Second})
	startService(t, c)
	log, stop := follow(t, c, 100, alice.PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	link.set(true)
	pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 111
	log.waitFor(t, "block 111", tipAt(111))
	asked := len(honest.Requests())
	link.set(false)
	block112 := node.Generate(t, 1)[0]
	log.waitFor(t, "block 111 rechecked", func(es []Event) bool {
		return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventRechecked && e.Height == 111 })
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, m := range honest.Requests()[asked:] {
		if req, ok := m.(*wire.MsgGetCFHeaders); ok {
			if req.StopHash != *block112 {
				h, _ := c.Chain().HeightOf(req.StopHash)
				t.Errorf("the honest peer was first asked for filter headers up to block %d, want 112 (its late claim of 111 compared on the new block)", h)
			}
			break
		}
	}
	if ms := matched(log.snapshot(), pay.TxHash()); len(ms) != 1 {
		t.Errorf("the payment hidden by the forged filter was reported %d times, want once; events %q", len(ms), log.summary())
	}
	for _, st := range c.Peers() {
		if slices.Contains(colluders, st.Address) != st.Banned {
			t.Errorf("peer %s (colluder: %v): banned %v, reason %q", st.Address, slices.Contains(colluders, st.Address), st.Banned, st.Reason)
		}
	}
	t.Logf("events: %q", log.summary())
}

// forgingColluders starts two proxies in front of node that forge the
// filter of every block from height 111 on that pays script, and returns
// their addresses.
func forgingColluders(t *testing.T, node *peertest.Node, script []byte) []string {
	t.Helper()
	var out []string
	for range 2 {
		lie := peertest.Forge(t, node, 111, paysTo(script), peertest.EmptyFilter)
		out = append(out, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, lie).Addr)
	}
	return out
}

// colluders is a client whose only peers were two colluders while it
// verified the filter headers up to below, joined by an honest peer since
// (see colludersThenHonest).
type colluders struct {
	c      *Client
	addrs  []string // the colluders'
	honest string
}

// colludersThenHonest starts two proxies in front of node that forge the
// filter of block h (peertest.EmptyFilter) and every filter header after
// it, each answer passed through wrap when set (given the forger's); a
// client of cfg (its Params and Timeout set if zero) with them alone
// verifies the filter headers 0..below; node then mines more blocks, and
// an honest proxy in front of node joins, with the headers synced.
func colludersThenHonest(t *testing.T, node *peertest.Node, cfg Config, h, below int32, more int, wrap func(peertest.LieFunc) peertest.LieFunc) colluders {
	t.Helper()
	var out colluders
	for range 2 {
		lie := peertest.Forge(t, node, h, func(height int32, _ *wire.MsgBlock) bool { return height == h }, peertest.EmptyFilter)
		if wrap != nil {
			lie = wrap(lie)
		}
		out.addrs = append(out.addrs, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, lie).Addr)
	}
	cfg.Peers = out.addrs
	if cfg.Params == nil {
		cfg.Params = node.Params
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 5 * time.Second
	}
	out.c = connectWith(t, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := out.c.verifyFilterHeaders(ctx, 0, below); err != nil {
		t.Fatal(err)
	}
	if more > 0 {
		node.Generate(t, more)
	}
	out.honest = peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr
	if err := out.c.AddPeer(ctx, out.honest, true); err != nil {
		t.Fatal(err)
	}
	if _, err := out.c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	return out
}
