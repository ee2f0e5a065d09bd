package notify_test

import (
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestHistoryLeftToLiarScannedAgain: of two peers, the honest one is away
// (its node restarting) when a spend is registered from a height hint in
// the past; the other, a liar, serves for the spending block a filter
// without the scripts its inputs spend, which the block cannot prove
// false. The history scan, resting on the liar alone, finds nothing; it
// is scanned again once the honest peer is back, and the spend is told in
// its block: a liar left alone for a moment does not hide it for good.
func TestHistoryLeftToLiarScannedAgain(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice := peertest.NewKey("alice")
	payAlice, spendAlice := aliceSpent(t, node) // 111, 112
	node.Generate(t, 1)                         // 113
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, peertest.Forge(t, node, 105, holds(spendAlice), peertest.OutputsOnly))
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c, n := start(t, node, liar.Addr, honest.Addr)

	back := make(chan struct{})
	go func() {
		defer close(back)
		honest.Pause(t, 3*time.Second)
	}()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		away := false
		for _, st := range c.Peers() {
			away = away || st.Address == honest.Addr && st.Reason != ""
		}
		if away {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the honest peer is still in use while its node is down: %+v", c.Peers())
		}
	}
	op := wire.OutPoint{Hash: payAlice.TxHash(), Index: 0}
	ev, err := n.RegisterSpend(&op, alice.PkScript(), 105)
	if err != nil {
		t.Fatal(err)
	}
	spend := followSpend(ev)
	<-back
	spend.waitCount(t, "spend ", 1)
	if s := spend.spends[0]; s.Height != 112 || s.BlockHash != hashAt(t, node, 112) || s.SpenderTxid != spendAlice.TxHash() {
		t.Errorf("alice's spend %+v, want in block %v (height 112)", s, hashAt(t, node, 112))
	}
	if got := spend.count("spend "); got != 1 {
		t.Errorf("alice's spend told %d times: %q", got, spend.snapshot())
	}
}
