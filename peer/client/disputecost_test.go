package client

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestConflictCostsOnlyNewHeadersEachBlock: a liar's filter of the block
// with alice's spend leaves out the script it spends: a conflict the
// block cannot decide, and nobody is banned. The chain of filter headers
// above it then differs between the liar and the honest peers, and
// nothing above it is stored or kept as verified. Each new block is
// still verified from each peer's own filter header where it was last
// compared (see ownHeaders): it costs about what it costs with three
// honest peers, not every peer's filter headers from the conflict on
// (425x before). With a data directory too, where the service verifies
// from the store's tip, which stays below the conflict.
func TestConflictCostsOnlyNewHeadersEachBlock(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) { testConflictCostsOnlyNewHeaders(t, stored) })
	}
}

func testConflictCostsOnlyNewHeaders(t *testing.T, stored bool) {
	needFixture(t)
	h := fx.height[fx.spendAlice.TxHash()]
	const blocks = 3
	last := fx.tip - blocks
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	perBlock := func(third string, want int32) uint64 {
		cfg := Config{Peers: append(honestPeers(t, 2), third), Params: fx.node.Params, Timeout: 5 * time.Second}
		if stored {
			cfg.DataDir = t.TempDir()
		}
		c := connectWith(t, cfg)
		if err := c.verifyFilterHeaders(ctx, 0, last); err != nil {
			t.Fatal(err)
		}
		b0 := c.pool.BytesReceived()
		for to := last + 1; to <= fx.tip; to++ {
			if err := c.verifyFilterHeaders(ctx, to, to); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range c.Peers() {
			if p.Banned {
				t.Errorf("%s banned: %s", p.Address, p.Reason)
			}
		}
		c.opMu.Lock()
		defer c.opMu.Unlock()
		if got := c.conflicts.first(0); got != want {
			t.Errorf("the first conflict known is at %d, want %d", got, want)
		}
		return (c.pool.BytesReceived() - b0) / blocks
	}
	control := perBlock(honestPeers(t, 1)[0], -1)
	attacked := perBlock(peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, h, peertest.OutputsOnly)).Addr, h)
	t.Logf("verifying blocks %d..%d one by one: %d bytes a block with three honest peers, %d with the conflict's liar (%.1fx); conflict at %d",
		last+1, fx.tip, control, attacked, float64(attacked)/float64(control), h)
	if attacked > 4*control {
		t.Errorf("a new block costs %d bytes with an unbannable liar's conflict at %d, %.1fx the %d with three honest peers",
			attacked, h, float64(attacked)/float64(control), control)
	}
}

// TestConflictLiarContradictingOwnWordBanned: a liar on the other side
// of an undecidable conflict is asked for each new block's filter hashes
// from its own filter header at the height it was last compared up to.
// Once it states another chain of filter headers (another forged filter
// of the block, that it cannot decide either), its filter header there
// is not the one
// its own filter hashes stated before, about the same block: that is its
// own contradiction, and the proof that bans it. The honest peers are
// not banned, and the new block is verified with them.
func TestConflictLiarContradictingOwnWordBanned(t *testing.T) {
	needFixture(t)
	h := fx.height[fx.spendAlice.TxHash()]
	first := peertest.ForgeFilter(t, fx.node, h, peertest.OutputsOnly)
	// Another forged filter of the same block, that the block cannot
	// decide either: dave's script in place of alice's.
	other := peertest.ForgeFilter(t, fx.node, h, func(b *wire.MsgBlock) []byte {
		f, err := gcs.BuildBasic(b, [][]byte{peertest.NewKey("dave").PkScript()})
		if err != nil {
			panic(err)
		}
		return f.NBytes()
	})
	var switched atomic.Bool
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if switched.Load() {
			return other(m)
		}
		return first(m)
	}).Addr
	honest := honestPeers(t, 2)
	c := connectWith(t, Config{Peers: append(honest, liar), Params: fx.node.Params, Timeout: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if err := c.verifyRange(ctx, 0, fx.tip-1); err != nil {
		t.Fatal(err)
	}
	if c.conflicts.first(0) != h {
		t.Fatalf("no conflict at %d after the first verification", h)
	}
	switched.Store(true)
	if err := c.verifyRange(ctx, fx.tip, fx.tip); err != nil {
		t.Fatal(err)
	}
	for _, p := range c.Peers() {
		switch {
		case p.Address == liar && !p.Banned:
			t.Errorf("the liar contradicting its own filter headers is not banned")
		case p.Address == liar && !strings.Contains(p.Reason, "before, by its own filter hashes"):
			t.Errorf("the liar is banned for something else than its own contradiction: %s", p.Reason)
		case p.Address != liar && p.Banned:
			t.Errorf("honest peer %s banned: %s", p.Address, p.Reason)
		}
		t.Logf("%s: banned %v %s", p.Address, p.Banned, p.Reason)
	}
}

// TestConflictPeersAskedFromTheirOwnPoints: with an undecidable conflict
// known, each peer is asked from the height where it was last compared:
// a peer compared less far than the others (it lagged) is asked from its
// own point, the others from theirs, all compared from there, and the
// block costs a few heights more, not the chain from the conflict on. A
// peer that joins has no own filter headers yet: the first block after
// it costs the chain from the conflict's segment on, once; the next one
// costs no more than before.
func TestConflictPeersAskedFromTheirOwnPoints(t *testing.T) {
	needFixture(t)
	h := fx.height[fx.spendAlice.TxHash()]
	honest := honestPeers(t, 2)
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, h, peertest.OutputsOnly)).Addr
	c := connectWith(t, Config{Peers: append(honest, liar), Params: fx.node.Params, Timeout: 5 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cost := func(from, to int32) uint64 {
		c.opMu.Lock()
		defer c.opMu.Unlock()
		b0 := c.pool.BytesReceived()
		if err := c.verifyRange(ctx, from, to); err != nil {
			t.Fatalf("verifying %d..%d: %v", from, to, err)
		}
		if c.conflicts.first(0) != h {
			t.Fatalf("no conflict at %d", h)
		}
		return c.pool.BytesReceived() - b0
	}
	tip := fx.tip
	cost(0, tip-6)
	base := cost(tip-5, tip-5)
	// The first honest peer lags: its own filter headers are kept up to
	// tip-9 only.
	c.opMu.Lock()
	for _, m := range c.pool.Members() {
		if m.Addr() == honest[0] {
			for height := range c.owns.peers[m] {
				if height > tip-9 {
					delete(c.owns.peers[m], height)
				}
			}
		}
	}
	c.opMu.Unlock()
	lagged := cost(tip-4, tip-4)
	joiner := honestPeers(t, 1)[0]
	if err := c.AddPeer(ctx, joiner, true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	joined := cost(tip-3, tip-3)
	after := cost(tip-2, tip-2)
	t.Logf("bytes a block with the conflict at %d known: %d; with a peer compared 5 blocks less far: %d; the first block after a peer joins: %d; the next: %d",
		h, base, lagged, joined, after)
	if lagged > 8*base {
		t.Errorf("a block with a peer compared 5 blocks less far costs %d bytes, %.1fx the %d of a block", lagged, float64(lagged)/float64(base), base)
	}
	if after > 4*base {
		t.Errorf("a block after a peer joined and was compared costs %d bytes, %.1fx the %d of a block before", after, float64(after)/float64(base), base)
	}
	for _, p := range c.Peers() {
		if p.Banned {
			t.Errorf("%s banned: %s", p.Address, p.Reason)
		}
	}
	if len(c.pool.Serving(wire.SFNodeCF)) != 4 {
		t.Errorf("%d peers serving, want 4", len(c.pool.Serving(wire.SFNodeCF)))
	}
}
