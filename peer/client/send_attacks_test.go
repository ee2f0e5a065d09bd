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

// TestRejectBesideCollusionIsWarned: two colluding peers (echoes sharing
// what they are given: one takes the transaction, the other serves it
// back) against one honest node that rejects it as a double spend of a
// transaction in its mempool. The result may say the transaction
// propagated, but then a warning names the honest node whose reject as
// invalid contradicts the peers that say they hold it.
func TestRejectBesideCollusionIsWarned(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	alice, bob, carol := peertest.NewKey("alice"), peertest.NewKey("bob"), peertest.NewKey("carol")
	fund := node.SpendCoinbase(t, wire.NewTxOut(50_000_000, alice.PkScript()))
	node.Confirm(t, fund)
	in := []peertest.Output{peertest.OutputOf(fund, 0, alice)}
	first := node.Spend(t, in, wire.NewTxOut(50_000_000-peertest.Fee, bob.PkScript())) // in the mempool
	double := peertest.BuildSpend(t, in, wire.NewTxOut(50_000_000-2*peertest.Fee, carol.PkScript()))
	echo := peertest.NewEcho(t, node.P2PAddr, node.Params.Net)
	c := connectTo(t, node, 2*time.Second, echo.Addr, echo.Twin(t).Addr, node.P2PAddr)
	res, err := c.SendTransaction(context.Background(), double)
	if err != nil {
		t.Logf("send failed: %v", err)
		return
	}
	if !node.InMempool(t, first.TxHash()) || node.InMempool(t, double.TxHash()) {
		t.Fatal("the honest node took the double spend")
	}
	var rej *peer.RejectError
	honestErr := res.Failed[node.P2PAddr]
	t.Logf("given %v, accepted %v, seen %v, failed %v, warnings %q", res.Given, res.Accepted, res.Seen, res.Failed, res.Warnings)
	if res.Propagated() && errors.As(honestErr, &rej) && rej.Kind == peer.RejectInvalid &&
		!slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, node.P2PAddr) }) {
		t.Errorf("Propagated() is true and no warning names the honest node that rejected the transaction as %v (%q)", rej.Kind, rej.Reason)
	}
}

// TestForgedRejectDoesNotStopSend: a peer in front of the honest node
// answers every transaction with a forged reject ("invalid") and passes
// none on. In three rounds (the client gives a transaction to one peer at
// a time, in random order) the transaction reaches the honest node, the
// send succeeds, and the forged reject is reported as that peer's failure
// only.
func TestForgedRejectDoesNotStopSend(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	for i := 0; i < 3; i++ {
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
		rejecter := peertest.NewEcho(t, node.P2PAddr, node.Params.Net, peertest.EchoRejects("bad-txns-forged")).Addr
		c := connectTo(t, node, 2*time.Second, rejecter, node.P2PAddr)
		res, err := c.SendTransaction(context.Background(), tx)
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		var rej *peer.RejectError
		// Seen through the rejecter is true: the node behind it holds the
		// transaction. Accepted after being given it would be false.
		if !node.InMempool(t, tx.TxHash()) || slices.Contains(res.Given, rejecter) && slices.Contains(res.Accepted, rejecter) {
			t.Errorf("result %+v; in the honest mempool: %v", res, node.InMempool(t, tx.TxHash()))
		}
		if err, ok := res.Failed[rejecter]; ok && (!errors.As(err, &rej) || rej.Reason != "bad-txns-forged") {
			t.Errorf("the forged reject reported as %v", err)
		}
		t.Logf("given %v, accepted %v, seen %v, failed %v, warnings %q", res.Given, res.Accepted, res.Seen, res.Failed, res.Warnings)
		c.Close()
	}
}
