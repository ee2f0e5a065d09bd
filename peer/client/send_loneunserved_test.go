package client

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendLoneCoreUnservedWatch: one Core-like peer (no verdict of its
// own), whose announcement connection drops the getdata that checks
// the node's announcement (peertest.WatchWithholds): the node takes the
// transaction and announces it there, and never hears the check. The
// check fails askWait after its getdata was written, which tells
// nothing of the node's acceptance, and nothing else can tell within
// the timeout (Core serves its mempool by getdata only to a peer it
// announced to). The send fails, the peer counted for nothing (its
// announcement unserved, not a lie: nobody banned), once the check
// failed, not at the timeout: before, the turn asked the node's mempool
// until the timeout, and 4 sends with a 6 s timeout took 6.04 s in the
// median, 6.05 s at the longest; now 2.06 s and 2.12 s (the
// announcement at once, then askWait, 2 s), with the same verdict.
func TestSendLoneCoreUnservedWatch(t *testing.T) {
	const n, timeout = 4, 6 * time.Second
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--trickleinterval=50ms"))
	node.Generate(t, 100+n)
	core := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net)
	proxy := peertest.NewWatchProxy(t, core.Addr, node.Params.Net, peertest.WatchWithholds, nil)
	c := connectTo(t, node, timeout, proxy.Addr)
	var times []time.Duration
	for i := range n {
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
		start := time.Now()
		res, err := c.SendTransaction(context.Background(), tx)
		elapsed := time.Since(start)
		times = append(times, elapsed)
		t.Logf("send %d: after %v: %v; failed %v", i, elapsed.Round(time.Millisecond), err, res.Failed)
		if err == nil || errors.Is(err, peer.ErrRejected) || len(res.Accepted) != 0 || res.Propagated() {
			t.Fatalf("send %d: error %v, result %+v: want no peer taking it, none refusing it", i, err, res)
		}
		var ue *UnservedAnnounceError
		if !errors.As(res.Failed[proxy.Addr], &ue) || ue.Within != c.askWait() {
			t.Errorf("send %d: failure %v: want its announcement not served within %v", i, res.Failed[proxy.Addr], c.askWait())
		}
		if _, banned := c.pool.IsBanned(proxy.Addr); banned {
			t.Fatalf("send %d: %s banned for its silence (bans %+v)", i, proxy.Addr, c.Bans())
		}
		if !node.InMempool(t, tx.TxHash()) {
			t.Fatalf("send %d: the node did not take the transaction", i)
		}
		// The node announces at once (btcd's 50 ms trickle), the check
		// fails askWait after; a second's slack for a loaded machine.
		if elapsed > c.askWait()+time.Second {
			t.Errorf("send %d took %v: the unserved check held the turn beyond askWait %v (timeout %v)", i, elapsed.Round(time.Millisecond), c.askWait(), timeout)
		}
	}
	slices.Sort(times)
	t.Logf("%d sends, timeout %v, askWait %v: median %v, longest %v", n, timeout, c.askWait(), times[n/2].Round(time.Millisecond), times[n-1].Round(time.Millisecond))
}
