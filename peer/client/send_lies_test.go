package client

import (
	"context"
	"errors"
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
