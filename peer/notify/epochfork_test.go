package notify_test

import (
	"testing"

	"github.com/spvfilter/spvfilter/peer/notify"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestBlockEpochsFromBlockNeverKnown: the caller's best block (lnd's, of
// its last run) left the chain while the client was down, so the client
// never had it: the epochs start after the fork its header names, as for
// a best block the client saw leave, instead of failing the registration
// (and lnd's start); a best block whose parent is unknown too starts at
// the tip.
func TestBlockEpochsFromBlockNeverKnown(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	other := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	other.Generate(t, 2) // 111', 112': never on the client's chain
	node.Generate(t, 3)  // 111..113
	stale := func(h int32) *notify.BlockEpoch {
		hash := hashAt(t, other, h)
		hdr, err := other.RPC().GetBlockHeader(&hash)
		if err != nil {
			t.Fatal(err)
		}
		return &notify.BlockEpoch{Hash: hash, Height: h, Header: *hdr}
	}
	_, n := start(t, node)
	ev, err := n.RegisterBlockEpochs(stale(111))
	if err != nil {
		t.Fatalf("from a best block that left the chain while the client was down: %v", err)
	}
	defer ev.Cancel()
	for h := int32(111); h <= 113; h++ {
		if e := nextEpoch(t, ev); e.Height != h || e.Hash != hashAt(t, node, h) {
			t.Fatalf("epoch %+v, want height %d of the chain", e, h)
		}
	}
	ev, err = n.RegisterBlockEpochs(stale(112))
	if err != nil {
		t.Fatalf("from a best block whose parent is unknown too: %v", err)
	}
	defer ev.Cancel()
	if e := nextEpoch(t, ev); e.Height != 113 || e.Hash != hashAt(t, node, 113) {
		t.Fatalf("epoch %+v, want the tip 113", e)
	}
}
