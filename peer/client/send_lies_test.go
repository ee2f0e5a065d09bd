package client

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendCoreLikeLiesLate: a node calling itself Bitcoin Core keeps the
// transaction from the node behind it and announces it falsely, serving
// another transaction, 8 s after its watch opened: after a 3 s timeout,
// on Core's timing. The node's announcement is awaited past the timeout
// (see coreAnnounceWait), so the lie is caught, named and banned: before,
// the send ended at the timeout, closing the watch, and named the liar
// as a node that never asked for the transaction, unbanned.
func TestSendCoreLikeLiesLate(t *testing.T) {
	const timeout, lieAt = 3 * time.Second, 8 * time.Second
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	other := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("bob").P2WPKHScript()))
	tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	liar := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net, peertest.CoreLikeAnnouncesFalsely(other), peertest.CoreLikeTicks(lieAt))
	c := connectTo(t, node, timeout, liar.Addr)
	start := time.Now()
	res, err := c.SendTransaction(context.Background(), tx)
	elapsed := time.Since(start)
	t.Logf("%v after %v", err, elapsed.Round(time.Millisecond))
	var fe *peer.FalseAnnounceError
	if err == nil || !errors.As(res.Failed[liar.Addr], &fe) || fe.Served == nil || *fe.Served != other.TxHash() || len(res.Accepted) != 0 {
		t.Fatalf("error %v, result %+v: want the false announcement named", err, res)
	}
	if _, banned := c.pool.IsBanned(liar.Addr); !banned {
		t.Errorf("the liar is not banned")
	}
	if elapsed < lieAt-time.Second || elapsed > lieAt+timeout {
		t.Errorf("took %v: want the send ended by the lie, at %v", elapsed, lieAt)
	}
}

// TestSendCollusionRestsOnOnePeer: two addresses of one party (a
// Core-like echo and a plain relay to it) take the transaction given to
// either and announce it on the other, serving it: no node ever sees it,
// yet the second counts as holding it without being given it, which is
// what proves propagation. The result must say that it rests on that one
// peer's word (SeenAlone; before, nothing said so).
func TestSendCollusionRestsOnOnePeer(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	echo := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net, peertest.CoreLikeEchoes())
	twin := peertest.NewLiar(t, echo.Addr, node.Params.Net, nil)
	c := connectTo(t, node, 5*time.Second, echo.Addr, twin.Addr)
	res, err := c.SendTransaction(context.Background(), tx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("given %v, accepted %v, seen %v, warnings %q", res.Given, res.Accepted, res.Seen, res.Warnings)
	if node.InMempool(t, tx.TxHash()) {
		t.Fatal("the node behind the echo holds the transaction: the test needs it kept away")
	}
	if !res.Propagated() || len(res.Seen) != 1 {
		t.Fatalf("result %+v: want propagation faked by the colluders", res)
	}
	if w := res.SeenAlone; w == nil || w.Seen != res.Seen[0] || !slices.Equal(w.Given, res.Given) ||
		!strings.Contains(w.String(), "rests on one peer's word") {
		t.Errorf("SeenAlone %v: want propagation said to rest on %s's word alone, %v given it", w, res.Seen[0], res.Given)
	}

}

// TestSendCoreLikeWatchFloods: a node calling itself Bitcoin Core that
// refuses the transaction without a word and floods its watch with
// announcements buys no wait for them: the flood ends the watch, the
// send ends at the timeout, not coreAnnounceWait, with the node not
// confirmed, banned for the flood and the flood named; its watch is said
// to be lost to the flood (NotConfirmedError.WatchLost), not awaited
// (before, Watched said its announcement was awaited there).
func TestSendCoreLikeWatchFloods(t *testing.T) {
	const timeout = 3 * time.Second
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	spent := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	if _, err := node.RPC().SendRawTransaction(spent, true); err != nil {
		t.Fatal(err)
	}
	conflict := spent.Copy()
	conflict.TxOut[0].Value--
	core := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net)
	flooder := peertest.NewWatchProxy(t, core.Addr, node.Params.Net, peertest.WatchFloods, nil)
	c := connectTo(t, node, timeout, flooder.Addr)
	start := time.Now()
	res, err := c.SendTransaction(context.Background(), conflict)
	elapsed := time.Since(start)
	t.Logf("%v after %v; warnings %q", err, elapsed.Round(time.Millisecond), res.Warnings)
	if !errors.Is(err, ErrNotConfirmed) || !errors.Is(err, peer.ErrFlooding) || errors.Is(err, peer.ErrRejected) {
		t.Errorf("error %v: want not confirmed, the flood named", err)
	}
	if _, banned := c.pool.IsBanned(flooder.Addr); !banned {
		t.Errorf("the flooding peer is not banned")
	}
	var ne *NotConfirmedError
	if !errors.As(res.Failed[flooder.Addr], &ne) || ne.Watched || !errors.Is(ne.WatchLost, peer.ErrFlooding) ||
		!strings.Contains(ne.Error(), "second connection ended") {
		t.Errorf("failure %v: want not confirmed, its watch said lost to the flood", res.Failed[flooder.Addr])
	}
	if elapsed > timeout+2*time.Second {
		t.Errorf("took %v: want the send ended at the timeout (%v), the dead watch not awaited", elapsed, timeout)
	}
}
