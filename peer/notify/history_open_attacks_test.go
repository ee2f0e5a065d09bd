//go:build openattacks

// Attacks on the notifier not answered yet: go test -tags openattacks
// runs them.

package notify_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestHistoryOnLoneLiarToldOnceProven: a client has one peer, a liar that
// serves for the block paying alice (111) an empty filter, consistent
// with its own filter headers. A confirmation of alice's payment is
// registered from a height hint below the notifier's rescan, so that the
// history scan alone covers block 111: resting on the liar, the only
// peer, it finds nothing, and nothing says so (no notification carries
// OnePeer for a block where nothing was found). Then an honest peer is
// added: the client compares the filter headers it held alone with it,
// the block proves the liar false and it is banned. The confirmation must
// then be told, in block 111: the client knows the filter it trusted was
// false.
//
// Not answered yet: the history scan rested on the only peer in use, so
// it is not scanned again (restedOnOneAmongMore needs another peer set
// aside), and the rescan's recheck covers only the blocks the rescan
// reported; the liar is banned, and the confirmation is never told.
func TestHistoryOnLoneLiarToldOnceProven(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice := peertest.NewKey("alice")
	pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, pay)                 // 111
	node.Generate(t, int(reorgSafety)+8) // 131: the rescan starts at 119
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, peertest.Forge(t, node, 105, holds(pay), peertest.EmptyFilter))
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c, n := start(t, node, liar.Addr)

	id := pay.TxHash()
	ev, err := n.RegisterConfirmations(&id, alice.PkScript(), 1, 105)
	if err != nil {
		t.Fatal(err)
	}
	conf := followConf(ev)
	// The history scan runs on the liar alone, and ends.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if len(n.Stalls(0)) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the history scan still runs after 30s: %+v", n.Stalls(0))
		}
	}
	if got := conf.count("conf "); got != 0 {
		t.Fatalf("the liar's empty filter did not hide the payment (%q): the test proves nothing", conf.snapshot())
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
	deadline := time.Now().Add(20 * time.Second)
	for conf.count("conf ") == 0 && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if conf.count("conf ") == 0 {
		reason := ""
		for _, st := range c.Peers() {
			if st.Address == liar.Addr {
				reason = st.Reason
			}
		}
		t.Errorf("alice's payment in block 111 never confirmed, 20s after the liar whose filter hid it was banned (%s); notifications %q, notifier error %v",
			strings.TrimSpace(reason), conf.snapshot(), n.Err())
	} else if c := conf.confs[0]; c.Height != 111 || c.BlockHash != hashAt(t, node, 111) {
		t.Errorf("alice's payment confirmed at height %d in %v, want 111 in %v", c.Height, c.BlockHash, hashAt(t, node, 111))
	}
}
