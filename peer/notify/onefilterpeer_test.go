package notify_test

import (
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestHistoryNamesOnlyFilterPeer: two peers, of which only one serves
// compact filters (the other a node run with --nocfilters). A
// confirmation found by a registration's history scan, and one found as
// the tip moves, rest on that one peer's filters: each names it
// (OnePeer), though another peer is connected and in use.
func TestHistoryNamesOnlyFilterPeer(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice, bob := peertest.NewKey("alice"), peertest.NewKey("bob")
	payAlice := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, payAlice) // 111
	plain := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning", "--nocfilters"))
	_, n := start(t, node, node.P2PAddr, plain.P2PAddr)

	payBob := node.BuildCoinbaseSpend(t, wire.NewTxOut(20_000_000, bob.PkScript()))
	bobID := payBob.TxHash()
	ev, err := n.RegisterConfirmations(&bobID, bob.PkScript(), 1, 111)
	if err != nil {
		t.Fatal(err)
	}
	live := followConf(ev)
	if _, err := node.RPC().SendRawTransaction(payBob, true); err != nil {
		t.Fatal(err)
	}
	node.Confirm(t, payBob) // 112
	live.waitCount(t, "conf ", 1)
	// The rescan is past 111: only the history scan finds it.
	aliceID := payAlice.TxHash()
	ev, err = n.RegisterConfirmations(&aliceID, alice.PkScript(), 1, 105)
	if err != nil {
		t.Fatal(err)
	}
	past := followConf(ev)
	past.waitCount(t, "conf ", 1)
	for what, one := range map[string]string{"confirmation found by the history": past.confs[0].OnePeer,
		"live confirmation": live.confs[0].OnePeer} {
		if one != node.P2PAddr {
			t.Errorf("%s rests on the only peer serving filters %s, but OnePeer is %q", what, node.P2PAddr, one)
		}
	}
}
