package peer

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
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

// TestSyncHeadersDeepFork: a node on a branch that forks 2,500 blocks
// below the chain's tip, and needs two headers messages to outweigh it, is
// followed over both and its branch adopted; the same branch one block
// short of outweighing it is reported as the node's branch, not blamed.
func TestSyncHeadersDeepFork(t *testing.T) {
	for _, tt := range []struct {
		name   string
		extra  int // the branch's blocks beyond the chain's 2,500
		adopts bool
	}{
		{"more work", 100, true},
		{"less work", -1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			a := peertest.StartBtcd(t)
			a.Generate(t, 100)
			b := peertest.CopyChain(t, a)
			a.Generate(t, 2500)
			b.Generate(t, 2500+tt.extra)
			c := syncHeadersFrom(t, a)
			p := dialNode(t, b)
			res, err := p.SyncHeaders(context.Background(), c)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.adopts {
				want := Branch{Fork: 100, Height: int32(2600 + tt.extra), Hash: nodeHash(t, b, int32(2600+tt.extra))}
				if c.Height() != 2600 || res.Update.Reorganized() || res.Branch == nil || *res.Branch != want || res.Tip != 100 {
					t.Fatalf("chain height %d, result %+v (branch %+v), want branch %+v", c.Height(), res, res.Branch, want)
				}
				return
			}
			if c.Height() != int32(2600+tt.extra) || len(res.Update.Disconnected) != 2500 || res.Update.Fork != 100 || res.Tip != c.Height() || res.Branch != nil {
				t.Fatalf("chain height %d, result fork %d, %d disconnected, tip %d, branch %+v", c.Height(), res.Update.Fork, len(res.Update.Disconnected), res.Tip, res.Branch)
			}
			if got, want := c.Hash(c.Height()), nodeHash(t, b, c.Height()); got != want {
				t.Fatalf("tip %v, the node's is %v", got, want)
			}
		})
	}
}

// syncHeadersFrom returns a chain synced from node.
func syncHeadersFrom(t *testing.T, node *peertest.Node) *chain.Chain {
	t.Helper()
	c := chain.New(node.Params)
	if _, err := dialNode(t, node).SyncHeaders(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

// dialNode connects to node.
func dialNode(t *testing.T, node *peertest.Node) *Peer { return dialAt(t, node.P2PAddr, node) }

// dialAt connects to node at addr (a liar in front of it, say).
func dialAt(t *testing.T, addr string, node *peertest.Node) *Peer {
	t.Helper()
	p, err := Dial(context.Background(), Config{Addr: addr, Params: node.Params})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// nodeHash returns the hash of the node's block at height h.
func nodeHash(t *testing.T, node *peertest.Node, h int32) chainhash.Hash {
	t.Helper()
	hash, err := node.RPC().GetBlockHash(int64(h))
	if err != nil {
		t.Fatal(err)
	}
	return *hash
}

// TestSyncHeadersReorgInFindTip: a node that answers the first getheaders
// with nothing (its tip below the chain's: it rolled back) and then, as
// the binary search for its tip asks again, with a branch of more work
// (it mined meanwhile) reorganizes the chain in that search; the sync's
// Update says so, fork and all, as a reorganization in the first
// getheaders would, so that what the caller verified above the fork is
// dropped.
func TestSyncHeadersReorgInFindTip(t *testing.T) {
	a := peertest.StartBtcd(t)
	a.Generate(t, 110)
	b := peertest.CopyChain(t, a)
	a.Generate(t, 3) // 111..113
	b.Generate(t, 4) // 111'..114'
	c := syncHeadersFrom(t, a)
	var answers atomic.Int32
	l := peertest.NewLiar(t, b.P2PAddr, b.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if h, ok := m.(*wire.MsgHeaders); ok && answers.Add(1) == 1 {
			h.Headers = nil // rolled back to 110, not mined yet
		}
		return []wire.Message{m}, false
	})
	p := dialAt(t, l.Addr, b)
	res, err := p.SyncHeaders(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if c.Height() != 114 || c.Hash(114) != nodeHash(t, b, 114) {
		t.Fatalf("chain height %d: the node's branch was not adopted", c.Height())
	}
	if up := res.Update; !up.Reorganized() || up.Fork != 110 || up.Connected != 4 || len(up.Disconnected) != 3 {
		t.Errorf("update: fork %d, %d connected, %d disconnected; the chain went from 113 to the node's 114 over a fork at 110",
			up.Fork, up.Connected, len(up.Disconnected))
	}
	if answers.Load() < 2 {
		t.Errorf("%d headers answers: the binary search did not run", answers.Load())
	}
}

// TestFindTipChainChangedUnderIt: a node rolled back to 110 answers the
// first getheaders with nothing, and while the search for its tip runs,
// colluders' sync on the same chain reorganizes it to a branch of more
// work from 105. The sync of the honest node succeeds (no lie, its
// connection kept) and measures its tip at 105, the highest height where
// it holds the chain's block: a height measured against the chain before
// the reorganization (up to 110) is not taken for one of the chain after
// it. The reorganization comes before each answer of the search in
// turn.
func TestFindTipChainChangedUnderIt(t *testing.T) {
	for at := int32(2); at <= 6; at++ {
		t.Run(fmt.Sprintf("before answer %d", at), func(t *testing.T) { findTipChainChanged(t, at) })
	}
}

// findTipChainChanged is TestFindTipChainChangedUnderIt with the
// reorganization before the node's answer at.
func findTipChainChanged(t *testing.T, at int32) {
	a := peertest.StartBtcd(t)
	a.Generate(t, 105)
	b := peertest.CopyChain(t, a)
	a.Generate(t, 5) // 106..110
	h := peertest.CopyChain(t, a)
	a.Generate(t, 3)  // 111..113
	b.Generate(t, 10) // 106'..115'
	c := syncHeadersFrom(t, a)
	var branch []*wire.BlockHeader
	for height := int32(106); height <= 115; height++ {
		hash := nodeHash(t, b, height)
		hdr, err := b.RPC().GetBlockHeader(&hash)
		if err != nil {
			t.Fatal(err)
		}
		branch = append(branch, hdr)
	}
	var answers atomic.Int32
	l := peertest.NewLiar(t, h.P2PAddr, h.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgHeaders); ok && answers.Add(1) == at {
			// The colluders' sync wins the race here.
			if _, err := c.Extend(branch); err != nil {
				t.Errorf("the colluders' branch: %v", err)
			}
		}
		return []wire.Message{m}, false
	})
	p := dialAt(t, l.Addr, h)
	res, err := p.SyncHeaders(context.Background(), c)
	if answers.Load() < at {
		t.Fatalf("%d headers answers: the search did not run", answers.Load())
	}
	if c.Height() != 115 || c.Hash(115) != nodeHash(t, b, 115) {
		t.Fatalf("chain height %d: the colluders' branch is not the chain", c.Height())
	}
	if err != nil {
		t.Fatalf("the honest node's sync failed: %v", err)
	}
	select {
	case <-p.Done():
		t.Fatalf("the honest node was dropped: %v", p.Err())
	default:
	}
	if res.Tip != 105 {
		t.Errorf("tip measured at %d: the node holds the chain's blocks up to 105 only", res.Tip)
	}
}
