package notify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestLoneLiarHistoryScannedAgainWithNewPeer: a client has one peer, a
// liar that serves for the block of alice's payment (111), or of its
// spend (112), an empty filter, consistent with its own filter headers. A
// confirmation of the payment, or the spend of its output, is registered
// from a height hint below the notifier's rescan, so that the history
// scan alone covers the block: resting on the liar, the only peer, it
// finds nothing. The notifier keeps that scan, as resting on one peer;
// once an honest peer serving filters is added, the scan is queued again:
// the client compares the filter headers it held alone with the new
// peer's, the block proves the liar false and it is banned, and the
// confirmation or the spend is told, in its block.
func TestLoneLiarHistoryScannedAgainWithNewPeer(t *testing.T) {
	t.Run("confirmation", func(t *testing.T) { testHistoryOnLoneLiar(t, false) })
	t.Run("spend", func(t *testing.T) { testHistoryOnLoneLiar(t, true) })
}

func testHistoryOnLoneLiar(t *testing.T, spend bool) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice := peertest.NewKey("alice")
	pay, spendTx := aliceSpent(t, node)  // 111, 112
	node.Generate(t, int(reorgSafety)+8) // 132: the rescan starts at 120
	hidden, height := pay, int32(111)
	if spend {
		hidden, height = spendTx, 112
	}
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, peertest.Forge(t, node, 105, holds(hidden), peertest.EmptyFilter))
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c, n := start(t, node, liar.Addr)

	var rec *record
	prefix := "conf "
	if spend {
		prefix = "spend "
		ev, err := n.RegisterSpend(&wire.OutPoint{Hash: pay.TxHash(), Index: 0}, alice.PkScript(), 105)
		if err != nil {
			t.Fatal(err)
		}
		rec = followSpend(ev)
	} else {
		id := pay.TxHash()
		ev, err := n.RegisterConfirmations(&id, alice.PkScript(), 1, 105)
		if err != nil {
			t.Fatal(err)
		}
		rec = followConf(ev)
	}
	// The history scan runs on the liar alone, and ends.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if len(n.Stalls(0)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the history scan still runs after 30s: %+v", n.Stalls(0))
		}
	}
	if got := rec.count(prefix); got != 0 {
		t.Fatalf("the liar's empty filter did not hide block %d (%q): the test proves nothing", height, rec.snapshot())
	}
	if err := c.AddPeer(context.Background(), honest.Addr, true); err != nil {
		t.Fatal(err)
	}
	banned := false
	for deadline := time.Now().Add(30 * time.Second); !banned && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		for _, st := range c.Peers() {
			banned = banned || st.Address == liar.Addr && st.Banned
		}
	}
	if !banned {
		t.Fatalf("the liar was not banned within 30s of the honest peer's arrival: %+v", c.Peers())
	}
	node.Generate(t, 1)
	deadline := time.Now().Add(20 * time.Second)
	for rec.count(prefix) == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if rec.count(prefix) == 0 {
		reason := ""
		for _, st := range c.Peers() {
			if st.Address == liar.Addr {
				reason = st.Reason
			}
		}
		t.Errorf("block %d's %snever told, 20s after the liar whose filter hid it was banned and a new block (%s); notifications %q, notifier error %v",
			height, prefix, strings.TrimSpace(reason), rec.snapshot(), n.Err())
		return
	}
	got, hash := int32(0), hashAt(t, node, height)
	if spend {
		s := rec.spends[0]
		got = s.Height
		if s.BlockHash != hash || s.InputIndex != 0 || s.SpenderTxid != spendTx.TxHash() {
			t.Errorf("the spend told %+v, want input 0 of %v in %v", s, spendTx.TxHash(), hash)
		}
	} else {
		c := rec.confs[0]
		got = int32(c.Height)
		if c.BlockHash != hash {
			t.Errorf("the confirmation told in %v, want %v", c.BlockHash, hash)
		}
	}
	if got != height {
		t.Errorf("told at height %d, want %d", got, height)
	}
}
