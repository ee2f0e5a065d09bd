package client

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// openPrevLiar wraps lie (a Forge) and falsifies the filter header
// before the heights asked of every cfheaders answer that starts above
// height above.
type openPrevLiar struct {
	node  *peertest.Node
	lie   peertest.LieFunc
	above int32

	mu      sync.Mutex
	heights map[chainhash.Hash]int32
	lies    int
}

func (l *openPrevLiar) forge(m wire.Message) ([]wire.Message, bool) {
	out, hangup := l.lie(m)
	for _, o := range out {
		hs, ok := o.(*wire.MsgCFHeaders)
		if !ok {
			continue
		}
		if start := l.height(hs.StopHash) - int32(len(hs.FilterHashes)) + 1; start > l.above {
			hs.PrevFilterHeader[0] ^= 0xff
			l.mu.Lock()
			l.lies++
			l.mu.Unlock()
		}
	}
	return out, hangup
}

func (l *openPrevLiar) height(hash chainhash.Hash) int32 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if h, ok := l.heights[hash]; ok {
		return h
	}
	hdr, err := l.node.RPC().GetBlockHeaderVerbose(&hash)
	if err != nil {
		return -1
	}
	l.heights[hash] = hdr.Height
	return hdr.Height
}

// TestAttack30ConflictThenOpenPrevLie: a liar's filter of the block with
// alice's spend leaves out the script it spends, which the block cannot
// decide (a Conflict, nobody banned): from that checkpoint segment on the
// peers' checkpoints are not compared (cpLimit) and each peer states its
// own filter hashes from its own filter header. The liar then states
// another filter header before segment 1 than the one its own hashes of
// segment 0 reach: a self-contradiction, which the package documentation
// (disputedPrev) calls a proof. unboundPrev calls it a dispute instead
// (j >= cpLimit): the whole chain is verified again, maxAttempts times,
// then the liar is dropped, not banned, and the verification fails,
// though two honest peers agree on every filter header.
func TestAttack30ConflictThenOpenPrevLie(t *testing.T) {
	needFixture(t)
	h := fx.height[fx.spendAlice.TxHash()]
	if h > wire.CFCheckptInterval || fx.tip <= wire.CFCheckptInterval {
		t.Fatalf("the fixture's spend at %d, tip %d: want the spend in segment 0 and a tip past it", h, fx.tip)
	}
	l := &openPrevLiar{node: fx.node, lie: peertest.ForgeFilter(t, fx.node, h, peertest.OutputsOnly), above: wire.CFCheckptInterval, heights: map[chainhash.Hash]int32{}}
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, l.forge).Addr
	c := connectWith(t, Config{Peers: append(honestPeers(t, 2), liar), Params: fx.node.Params, Timeout: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c.opMu.Lock()
	b0 := c.pool.BytesReceived()
	start := time.Now()
	err := c.verifyRange(ctx, 0, fx.tip)
	b := c.pool.BytesReceived() - b0
	c.opMu.Unlock()
	l.mu.Lock()
	lies := l.lies
	l.mu.Unlock()
	t.Logf("verifying 0..%d: %d bytes received in %v, the liar falsified %d answers; err %v", fx.tip, b, time.Since(start).Round(time.Millisecond), lies, err)
	if err != nil {
		t.Errorf("verifying with two honest peers and the liar: %v", err)
	}
	for _, p := range c.Peers() {
		t.Logf("%s: banned %v %q", p.Address, p.Banned, p.Reason)
		switch {
		case p.Address != liar && (p.Banned || p.Reason != "" && p.Reason != "connecting"):
			t.Errorf("honest peer %s: banned %v, reason %q", p.Address, p.Banned, p.Reason)
		case p.Address == liar && !p.Banned && strings.Contains(p.Reason, errDisputedHeader.Error()):
			t.Errorf("the liar, which contradicted its own filter hashes, is dropped, not banned: %q", p.Reason)
		}
	}
}
