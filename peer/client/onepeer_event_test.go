package client

import (
	"slices"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestEventNamesSinglePeer: a rescan whose only peer serves every block
// rests on that peer for each of them, found by the catch-up and when
// following the tip: every EventConnected names it (OnePeer), as when
// two peers are connected and one is ahead.
func TestEventNamesSinglePeer(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice := peertest.NewKey("alice")
	c := connectTo(t, node, 5*time.Second)
	log, stop := follow(t, c, 100, alice.PkScript())
	log.waitFor(t, "tip at 110", tipAt(110))
	node.Generate(t, 2)
	log.waitFor(t, "block 112", func(es []Event) bool {
		return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventConnected && e.Height == 112 })
	})
	if err := stop(); err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	connected := 0
	for _, e := range log.snapshot() {
		if e.Kind != EventConnected {
			continue
		}
		connected++
		if e.OnePeer != node.P2PAddr {
			t.Errorf("block %d rests on the only peer %s, but OnePeer is %q", e.Height, node.P2PAddr, e.OnePeer)
		}
	}
	if connected < 13 {
		t.Errorf("%d blocks connected, want 100..112", connected)
	}
}
