package notify_test

import (
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestForkConfirmationNamesItsMiner: a peer mines, on the
// chain's tip, a block of its own holding a payment to alice that no
// other node has (it has the hash power: regtest), and announces it
// before the honest peers find theirs. The confirmation registered for
// the payment is told in that block, which only that peer's chain holds:
// it must name that peer (OnePeer); once the honest chain has more work,
// NegativeConf is told, and nobody is banned. The block only the miner
// holds is reported once the others had the client's timeout to get it
// (see client.Rescan.Run): a short timeout keeps the test short.
func TestForkConfirmationNamesItsMiner(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	miner := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c, n := startTimeout(t, node, 2*time.Second, node.P2PAddr, honest.Addr, miner.P2PAddr)
	alice := peertest.NewKey("alice")
	pay := miner.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	id := pay.TxHash()
	ev, err := n.RegisterConfirmations(&id, alice.PkScript(), 1, 110)
	if err != nil {
		t.Fatal(err)
	}
	conf := followConf(ev)
	mined := time.Now()
	private := miner.Confirm(t, pay) // 111'
	conf.waitCount(t, "conf ", 1)
	told := time.Since(mined)
	if got := conf.confs[0]; got.BlockHash != *private || got.OnePeer != miner.P2PAddr {
		t.Errorf("confirmed in %v resting on %q, want in the miner's block %v resting on %s", got.BlockHash, got.OnePeer, private, miner.P2PAddr)
	}
	mined = time.Now()
	node.Generate(t, 2) // 111, 112: more work
	conf.waitCount(t, "neg ", 1)
	t.Logf("the confirmation told %v after the miner's block, NegativeConf %v after the honest blocks",
		told.Round(time.Millisecond), time.Since(mined).Round(time.Millisecond))
	for _, st := range c.Peers() {
		if st.Banned {
			t.Errorf("peer %s banned: %s", st.Address, st.Reason)
		}
	}
	t.Logf("notifications %q", conf.snapshot())
}
