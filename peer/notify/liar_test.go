package notify_test

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// paysTo picks the blocks that pay one of scripts.
func paysTo(scripts ...[]byte) func(int32, *wire.MsgBlock) bool {
	return blocksWith(func(tx *wire.MsgTx) bool {
		return slices.ContainsFunc(tx.TxOut, func(out *wire.TxOut) bool {
			return slices.ContainsFunc(scripts, func(s []byte) bool { return bytes.Equal(out.PkScript, s) })
		})
	})
}

// blocksWith picks the blocks with a transaction that has.
func blocksWith(has func(*wire.MsgTx) bool) func(int32, *wire.MsgBlock) bool {
	return func(_ int32, b *wire.MsgBlock) bool { return slices.ContainsFunc(b.Transactions, has) }
}

// TestNotifierLiarAmongHonest: a peer serving empty filters for the
// blocks that pay alice and bob, consistent with its own filter headers,
// beside two honest ones: alice's payment, found in the history, and
// bob's, mined after the registration, are both confirmed in the right
// blocks, and the liar is banned with the block's proof.
func TestNotifierLiarAmongHonest(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice, bob := peertest.NewKey("alice"), peertest.NewKey("bob")
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, peertest.Forge(t, node, 105, paysTo(alice.PkScript(), bob.PkScript()), peertest.EmptyFilter))
	honest1 := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	honest2 := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	payAlice := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, payAlice) // 111
	node.Generate(t, 1)

	c, n := start(t, node, liar.Addr, honest1.Addr, honest2.Addr)
	aliceID := payAlice.TxHash()
	ev, err := n.RegisterConfirmations(&aliceID, alice.PkScript(), 1, 105)
	if err != nil {
		t.Fatal(err)
	}
	aliceConf := followConf(ev)
	payBob := node.BuildCoinbaseSpend(t, wire.NewTxOut(20_000_000, bob.PkScript()))
	bobID := payBob.TxHash()
	ev, err = n.RegisterConfirmations(&bobID, bob.PkScript(), 2, 112)
	if err != nil {
		t.Fatal(err)
	}
	bobConf := followConf(ev)
	if _, err := node.RPC().SendRawTransaction(payBob, true); err != nil {
		t.Fatal(err)
	}
	node.Confirm(t, payBob) // 113
	node.Generate(t, 1)
	aliceConf.waitCount(t, "conf ", 1)
	bobConf.waitCount(t, "conf ", 1)
	if c := aliceConf.confs[0]; c.Height != 111 || c.BlockHash != hashAt(t, node, 111) {
		t.Errorf("alice's confirmation %+v", c)
	}
	if c := bobConf.confs[0]; c.Height != 113 || c.BlockHash != hashAt(t, node, 113) {
		t.Errorf("bob's confirmation %+v", c)
	}
	for _, st := range c.Peers() {
		switch {
		case st.Address == liar.Addr && (!st.Banned || !strings.Contains(st.Reason, "proves it false")):
			t.Errorf("liar not banned with the proof: %+v", st)
		case st.Address != liar.Addr && st.Banned:
			t.Errorf("honest peer banned: %+v", st)
		}
	}
}
