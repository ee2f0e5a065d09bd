package notify_test

import (
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestLiarAheadSpendToldOnceHonestHolds: a liar first to hold block 113
// serves a filter leaving out the spend of a watched output, and is alone
// with it beyond the client's wait. Once the honest node holds the same
// block (and two more), the spend is told, once: the rescan scans again
// what rested on the liar.
func TestLiarAheadSpendToldOnceHonestHolds(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice, carol := peertest.NewKey("alice"), peertest.NewKey("carol")
	payAlice := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, payAlice) // 111
	node.Generate(t, 1)       // 112
	ahead := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	lie := peertest.Forge(t, ahead, 113, func(_ int32, b *wire.MsgBlock) bool { return len(b.Transactions) > 1 }, peertest.EmptyFilter)
	liar := peertest.NewLiar(t, ahead.P2PAddr, ahead.Params.Net, lie)
	c, n := start(t, node, node.P2PAddr, liar.Addr)
	op := wire.OutPoint{Hash: payAlice.TxHash()}
	ev, err := n.RegisterSpend(&op, alice.PkScript(), 111)
	if err != nil {
		t.Fatal(err)
	}
	rec := followSpend(ev)
	spend := peertest.BuildSpend(t, []peertest.Output{peertest.OutputOf(payAlice, 0, alice)}, wire.NewTxOut(30_000_000-peertest.Fee, carol.PkScript()))
	if _, err := ahead.RPC().SendRawTransaction(spend, true); err != nil {
		t.Fatal(err)
	}
	ahead.Confirm(t, spend)        // 113 on the liar's node only
	time.Sleep(8 * time.Second)    // beyond the client's 5 s wait for others
	node.CopyBlocks(t, ahead, 113) // the honest node holds the same block
	node.Generate(t, 2)            // 114, 115 on the honest node
	rec.waitCount(t, "spend ", 1)
	time.Sleep(time.Second)
	if got := rec.count("spend "); got != 1 {
		t.Errorf("the spend was told %d times, want once: %q", got, rec.snapshot())
	}
	for _, st := range c.Peers() {
		if st.Address == liar.Addr && !st.Banned {
			t.Errorf("the liar was not banned: %+v", st)
		}
	}
}
