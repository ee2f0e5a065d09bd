package client

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestFeedStopWaitsNoBackoff: a scan (no filter cache) over an honest
// peer and a slow one (its first filter 2 s late) whose earlier hang-ups
// put its next dial 8 s off before the user dialled it again. The honest
// peer serves the filters; the slow peer's request, in flight at the
// end, is abandoned, dropping its connection, and the feed's stop
// readies its peers for the verification: with Pool.Redial it waited for
// the slow peer's backoff; with Pool.RedialDue it was refused at once,
// and the verification left it out (not cross-checked). The pool now
// clears a next dial once a connection is made: the stop dials the slow
// peer again at once, the scan finds every payment, and neither peer is
// charged.
func TestFeedStopWaitsNoBackoff(t *testing.T) {
	needFixture(t)
	liar, lr := startModeRelay(t, fx.node.P2PAddr, "block")
	var readied atomic.Int32 // the feed's peers readied at its stop
	log := seenLog{testLog{t, time.Now()}, "after a filter request the scan abandoned", &readied}
	c := connectWith(t, Config{Peers: []string{fx.node.P2PAddr, liar}, Params: fx.node.Params, Timeout: 10 * time.Second, FilterCacheBytes: -1, Log: log})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	next := int32(1)
	pushBackoff(ctx, t, c, liar, lr, 5, &next)
	m := clientMember(t, c, liar)
	before := c.pool.Conn(m)
	lr.cmd.Store("cfilter")
	lr.mode.Store(relaySlow)
	start := time.Now()
	res, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: fx.tip})
	took := time.Since(start)
	t.Logf("the scan took %v", took.Round(time.Millisecond))
	unharmedAt(t, c, fx.node.P2PAddr)
	if err != nil {
		t.Fatalf("the scan: %v", err)
	}
	checkMatches(t, res, fx.want)
	if lr.mode.Load() != relayPlain || readied.Load() == 0 {
		t.Fatal("the slow peer was not asked for filters, or not readied at the feed's stop: the path was not reached")
	}
	if p := c.pool.Conn(m); p == before || p.Err() != nil || !c.pool.Status(m).Live {
		t.Errorf("the slow peer, whose connection this client dropped, was not dialled again: %+v", c.pool.Status(m))
	}
	if took > 4*time.Second {
		t.Errorf("the scan took %v: it waited for the backoff of the slow peer", took)
	}
}
