package notify_test

import (
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestHistoryScannedAgainOnLateWord: two colluders forge the filter of
// the block paying alice (111), an empty one consistent with their own
// filter headers; the honest peer's node is behind, at 110. A
// confirmation registered from a hint below the notifier's rescan is
// found by the history scan alone: resting on the two colluders, who
// agree, it finds nothing, and is not kept as resting on one peer. Then
// the honest node catches up: its tip rises, it claims the heights late,
// and its word on their filter headers differs; the client verifies them
// anew, the block proves the colluders false, and the history from 111
// is scanned again: the confirmation is told, in its block.
func TestHistoryScannedAgainOnLateWord(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	behind := peertest.CopyChainTo(t, node, 110, peertest.WithArgs("--nobanning"))
	alice := peertest.NewKey("alice")
	pay, _ := aliceSpent(t, node)        // 111, 112
	node.Generate(t, int(reorgSafety)+8) // 132: the rescan starts at 120
	forge := func() *peertest.Liar {
		return peertest.NewLiar(t, node.P2PAddr, node.Params.Net, peertest.Forge(t, node, 105, holds(pay), peertest.EmptyFilter))
	}
	liars := []*peertest.Liar{forge(), forge()}
	c, n := start(t, node, liars[0].Addr, liars[1].Addr, behind.P2PAddr)
	id := pay.TxHash()
	ev, err := n.RegisterConfirmations(&id, alice.PkScript(), 1, 105)
	if err != nil {
		t.Fatal(err)
	}
	rec := followConf(ev)
	for deadline := time.Now().Add(30 * time.Second); len(n.Stalls(0)) > 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the history scan still runs after 30s: %+v", n.Stalls(0))
		}
	}
	if got := rec.count("conf "); got != 0 {
		t.Fatalf("the colluders' empty filter did not hide block 111 (%q): the test proves nothing", rec.snapshot())
	}
	start := time.Now()
	behind.CopyBlocks(t, node, 132)
	deadline := time.Now().Add(30 * time.Second)
	for rec.count("conf ") == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if rec.count("conf ") == 0 {
		t.Fatalf("the confirmation in block 111 was not told within 30s of the honest node's late word; notifications %q, peers %+v", rec.snapshot(), c.Peers())
	}
	t.Logf("told %v after the honest node caught up", time.Since(start).Round(time.Millisecond))
	if got, want := rec.confs[0].BlockHash, hashAt(t, node, 111); got != want {
		t.Errorf("the confirmation told in %v, want %v", got, want)
	}
	for _, st := range c.Peers() {
		if st.Address == behind.P2PAddr && st.Banned {
			t.Errorf("the honest peer was banned: %s", st.Reason)
		}
	}
}
