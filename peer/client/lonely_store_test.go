package client

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestOnePeerHeightsKeptAcrossCheckpoint: with a data directory, a liar
// alone holds 996..1005 (the honest node is at 995). The verification of
// 1006 with both peers live asks the segment from 1001 again; 996..1000,
// which only the liar stated and which were not asked again, still rest
// on one peer, and GetCFilter(996) says so instead of returning the
// liar's filter.
func TestOnePeerHeightsKeptAcrossCheckpoint(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 995)
	ahead := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	alice := peertest.NewKey("alice")
	ahead.Confirm(t, ahead.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))) // 996
	ahead.Generate(t, 9)                                                                  // 1005
	liar := peertest.NewLiar(t, ahead.P2PAddr, ahead.Params.Net, peertest.Forge(t, ahead, 996, paysTo(alice.PkScript()), peertest.EmptyFilter))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c, err := Connect(ctx, Config{Peers: []string{node.P2PAddr, liar.Addr}, Params: node.Params, DataDir: t.TempDir(), Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.verifyFilterHeaders(ctx, 0, 1005); err != nil {
		t.Fatal(err)
	}
	t.Logf("after 0..1005: lonely %+v verifiedTo %d", c.lonely, c.verifiedTo)
	ahead.Generate(t, 1) // 1006
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.verifyFilterHeaders(ctx, 1006, 1006); err != nil {
		t.Fatal(err)
	}
	t.Logf("after 1006 (both live): lonely %+v verifiedTo %d", c.lonely, c.verifiedTo)
	if !c.lonelyAt(996) {
		t.Errorf("height 996, stated by the liar alone and not asked again, no longer rests on one peer")
	}
	hash, _ := ahead.RPC().GetBlockHash(996)
	want, err := ahead.RPC().GetCFilter(hash, wire.GCSFilterRegular)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetCFilter(ctx, *hash)
	t.Logf("GetCFilter(996): %x err %v", got, err)
	if err == nil && !bytes.Equal(got, want.Data) {
		t.Errorf("GetCFilter(996) returned the liar's forged filter %x with no error (the header rests on the liar alone)", got)
	}
}
