package client

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestAttackReorgAcrossCheckpointWithPrevLiar: the chain leaves its
// top 110 blocks, across checkpoint 1000, for a branch one block longer,
// with a data directory; beside two honest peers, a third is honest or
// the prevLiar (a false filter header before the heights whenever it was
// not just asked for its checkpoints). After the reorganization the new
// heights are verified: no honest peer is banned, the stored filter
// headers are the node's, and the liar, if it falsified an answer, does
// not survive unbanned. (Measured: both verifications are planned from
// the checkpoints here, where the liar answers honestly, so it falsifies
// none.)
func TestAttackReorgAcrossCheckpointWithPrevLiar(t *testing.T) {
	for _, liar := range []bool{false, true} {
		t.Run(fmt.Sprintf("liar=%v", liar), func(t *testing.T) { testReorgAcrossCheckpoint(t, liar) })
	}
}

func testReorgAcrossCheckpoint(t *testing.T, withLiar bool) {
	needFixture(t)
	node := peertest.CopyChain(t, fx.node)
	tip := fx.tip
	const depth = 110
	fork := tip - depth
	if fork >= wire.CFCheckptInterval {
		t.Fatalf("fork %d: want it below checkpoint 1000", fork)
	}
	honest := []string{peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr}
	const window = 4 * time.Second
	l := &prevLiar{window: window}
	third := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr
	if withLiar {
		third = peertest.NewLiar(t, node.P2PAddr, node.Params.Net, l.lie).Addr
	}
	c := connectWith(t, Config{Peers: append(honest, third), Params: node.Params, Timeout: 5 * time.Second, DataDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := c.verifyFilterHeaders(ctx, 0, tip); err != nil {
		t.Fatal(err)
	}
	hash, err := node.RPC().GetBlockHash(int64(fork + 1))
	if err != nil {
		t.Fatal(err)
	}
	if err := node.RPC().InvalidateBlock(hash); err != nil {
		t.Fatal(err)
	}
	node.Generate(t, depth+1)
	time.Sleep(window + time.Second)
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	newTip := c.Chain().Height()
	b0 := c.pool.BytesReceived()
	err = c.verifyFilterHeaders(ctx, fork+1, newTip)
	t.Logf("after the reorganization at %d, verifying up to %d: %v, %d bytes; the liar falsified %d answers", fork, newTip, err, c.pool.BytesReceived()-b0, l.lieCount())
	if err != nil {
		t.Errorf("verifying the new branch: %v", err)
	}
	// One block more, followed at the tip.
	node.Generate(t, 1)
	time.Sleep(window + time.Second)
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	b1 := c.pool.BytesReceived()
	err = c.verifyFilterHeaders(ctx, newTip+1, newTip+1)
	t.Logf("the next block %d: %v, %d bytes; the liar falsified %d answers", newTip+1, err, c.pool.BytesReceived()-b1, l.lieCount())
	if err != nil {
		t.Errorf("verifying the next block: %v", err)
	}
	for _, p := range c.Peers() {
		t.Logf("%s: banned %v %q", p.Address, p.Banned, p.Reason)
		switch {
		case p.Address != third || !withLiar:
			if p.Banned {
				t.Errorf("honest peer %s banned: %s", p.Address, p.Reason)
			}
		case !p.Banned && l.lieCount() > 0:
			t.Errorf("the liar falsified %d answers and is not banned", l.lieCount())
		}
	}
	for _, h := range []int32{fork, fork + 1, wire.CFCheckptInterval, newTip + 1} {
		got, err := c.st.FilterHeaders(h, h)
		if err != nil {
			t.Errorf("stored filter header at %d: %v", h, err)
			continue
		}
		bh, err := node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		want, err := node.RPC().GetCFilterHeader(bh, wire.GCSFilterRegular)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != want.PrevFilterHeader {
			t.Errorf("stored filter header at %d is %v, the node's %v", h, got[0], want.PrevFilterHeader)
		}
	}
}
