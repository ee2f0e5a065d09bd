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
	heights blockHeights
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
	return l.heights.of(hash)
}

// blockHeights looks up the heights of a node's blocks, remembering them.
type blockHeights struct {
	node    *peertest.Node
	heights map[chainhash.Hash]int32
}

// of returns the height of the node's block hash, -1 if unknown.
func (b blockHeights) of(hash chainhash.Hash) int32 {
	if h, ok := b.heights[hash]; ok {
		return h
	}
	hdr, err := b.node.RPC().GetBlockHeaderVerbose(&hash)
	if err != nil {
		return -1
	}
	b.heights[hash] = hdr.Height
	return hdr.Height
}

// TestAttackConflictThenOpenPrevLie: a liar's filter of the block with
// alice's spend leaves out the script it spends, which the block cannot
// decide (a Conflict, nobody banned): from that checkpoint segment on the
// peers' checkpoints are not compared (cpLimit) and each peer states its
// own filter hashes from its own filter header. The liar then states
// another filter header before segment 1 than the one its own hashes of
// segment 0 reach: a self-contradiction, which the package documentation
// (disputedPrev) calls a proof: the liar is banned on it, and the
// verification succeeds with the two honest peers.
func TestAttackConflictThenOpenPrevLie(t *testing.T) {
	needFixture(t)
	h := fx.height[fx.spendAlice.TxHash()]
	if h > wire.CFCheckptInterval || fx.tip <= wire.CFCheckptInterval {
		t.Fatalf("the fixture's spend at %d, tip %d: want the spend in segment 0 and a tip past it", h, fx.tip)
	}
	// The same conflict without the false header, for the cost.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	measure := func(lie peertest.LieFunc) (*Client, string, uint64, error) {
		liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, lie).Addr
		c := connectWith(t, Config{Peers: append(honestPeers(t, 2), liar), Params: fx.node.Params, Timeout: 5 * time.Second})
		c.opMu.Lock()
		defer c.opMu.Unlock()
		b0 := c.pool.BytesReceived()
		start := time.Now()
		err := c.verifyRange(ctx, 0, fx.tip)
		b := c.pool.BytesReceived() - b0
		t.Logf("verifying 0..%d: %d bytes received in %v; err %v", fx.tip, b, time.Since(start).Round(time.Millisecond), err)
		return c, liar, b, err
	}
	_, _, control, err := measure(peertest.ForgeFilter(t, fx.node, h, peertest.OutputsOnly))
	if err != nil {
		t.Fatalf("the conflict alone: %v", err)
	}
	l := &openPrevLiar{node: fx.node, lie: peertest.ForgeFilter(t, fx.node, h, peertest.OutputsOnly), above: wire.CFCheckptInterval, heights: blockHeights{fx.node, map[chainhash.Hash]int32{}}}
	c, liar, b, err := measure(l.forge)
	l.mu.Lock()
	lies := l.lies
	l.mu.Unlock()
	t.Logf("the liar falsified %d answers; %d bytes, %.1fx the %d of the conflict alone", lies, b, float64(b)/float64(control), control)
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
