package peer

import (
	"context"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// hideAbove returns a liar behaviour that serves the node's headers only
// up to height top of ref (a copy of the node's chain), as a node whose
// chain ends there would.
func hideAbove(ref *chain.Chain, top int32) peertest.LieFunc {
	return func(m wire.Message) ([]wire.Message, bool) {
		if h, ok := m.(*wire.MsgHeaders); ok {
			kept := h.Headers[:0]
			for _, hdr := range h.Headers {
				if height, ok := ref.HeightOf(hdr.BlockHash()); ok && height <= top {
					kept = append(kept, hdr)
				}
			}
			h.Headers = kept
		}
		return []wire.Message{m}, false
	}
}

// TestSyncHeadersTip: the tip a sync reports is what the node shows it
// holds, whatever it announced in its version message: a node behind the
// chain (or rolled back) is measured without being blamed, whether its
// tip is one of the locator's blocks (found by the binary search) or not.
func TestSyncHeadersTip(t *testing.T) {
	needFixture(t)
	ref := syncHeaders(t, dial(t, fx.node.P2PAddr, 0))
	tests := []struct {
		name    string
		top     int32 // the liar's chain ends here
		wantTip int32
	}{
		{"holds the tip", fx.tip, fx.tip},
		{"one block behind", fx.tip - 1, fx.tip - 1},
		{"three blocks behind", fx.tip - 3, fx.tip - 3},
		{"far behind, between locator blocks", 60, 60},
		{"far behind, at a locator block", 50, 50},
		{"only the genesis block", 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, hideAbove(ref, tt.top))
			p := dial(t, l.Addr, 0)
			// Our chain is the node's whole chain.
			c := syncHeaders(t, dial(t, fx.node.P2PAddr, 0))
			res, err := p.SyncHeaders(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if res.Tip != tt.wantTip || res.Update.Connected != 0 || res.Update.Reorganized() || res.Branch != nil {
				t.Fatalf("result %+v, want tip %d and no change", res, tt.wantTip)
			}
			if c.Height() != fx.tip {
				t.Fatalf("chain height %d, want %d", c.Height(), fx.tip)
			}
		})
	}
	// From an empty chain the node's headers up to its tip are taken, no
	// more, and the node is not blamed for serving fewer than it
	// announced.
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, hideAbove(ref, 50))
	p := dial(t, l.Addr, 0)
	c := chain.New(fx.node.Params)
	res, err := p.SyncHeaders(context.Background(), c)
	if err != nil || res.Tip != 50 || c.Height() != 50 {
		t.Fatalf("sync from genesis: %v, result %+v, chain height %d", err, res, c.Height())
	}
}
