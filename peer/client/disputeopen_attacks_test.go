//go:build openattacks

// Attacks not answered yet: go test -tags openattacks runs them.

package client

import (
	"context"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestAttackConflictCostsWholeChainEachBlock: a liar's filter of the
// block with alice's spend leaves out the script it spends: a conflict
// the block cannot decide, and nobody is banned. While the client knows
// a conflict it plans no verification at the tip (tipPlan refuses when
// conflicts.first(0) >= 0), the peers' checkpoints from the conflict's
// segment on are not compared (cpLimit), and every peer states its own
// filter hashes from there in full: each new block costs every peer's
// filter headers from the conflict's segment to the tip, against a few
// hundred bytes with three honest peers. An unbannable liar so buys a
// whole-chain download from every peer on every block.
func TestAttackConflictCostsWholeChainEachBlock(t *testing.T) {
	needFixture(t)
	h := fx.height[fx.spendAlice.TxHash()]
	tip := fx.tip
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	perBlock := func(third string) uint64 {
		c := connectWith(t, Config{Peers: append(honestPeers(t, 2), third), Params: fx.node.Params, Timeout: 5 * time.Second})
		c.opMu.Lock()
		defer c.opMu.Unlock()
		if err := c.verifyRange(ctx, 0, tip-1); err != nil {
			t.Fatal(err)
		}
		b0 := c.pool.BytesReceived()
		if err := c.verifyRange(ctx, tip, tip); err != nil {
			t.Fatal(err)
		}
		return c.pool.BytesReceived() - b0
	}
	control := perBlock(honestPeers(t, 1)[0])
	attacked := perBlock(peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, h, peertest.OutputsOnly)).Addr)
	t.Logf("verifying block %d: %d bytes with three honest peers, %d with the conflict's liar (%.1fx); conflict at %d", tip, control, attacked, float64(attacked)/float64(control), h)
	if attacked > 4*control {
		t.Errorf("a new block costs %d bytes with an unbannable liar's conflict at %d, %.1fx the %d with three honest peers",
			attacked, h, float64(attacked)/float64(control), control)
	}
}
