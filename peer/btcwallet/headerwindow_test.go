package btcwallet

import (
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestBlockHashesAcrossReorg: GetBlockHash asked for every height in
// order (the headers read ahead) and GetBlockHeader asked for each hash
// answer the node's blocks; after a reorganization replaces the top five
// blocks, they answer the new chain's, not the headers read before it,
// from the first height asked.
func TestBlockHashesAcrossReorg(t *testing.T) {
	a := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	a.Generate(t, 30)
	fork := peertest.CopyChainTo(t, a, 25)
	fork.Generate(t, 8) // 26..33, more work than a's 26..30
	_, b, _ := startBackendOn(t, a.Params, a.P2PAddr)
	check := func(node *peertest.Node, tip, first int32) {
		t.Helper()
		waitFor(t, "the client at the node's tip", waitLimit, func() (bool, string) {
			hash, height, err := b.GetBestBlock()
			want, _ := node.RPC().GetBlockHash(int64(tip))
			return err == nil && height == tip && *hash == *want, "not there"
		})
		for i := int32(0); i <= tip; i++ {
			h := (first + i) % (tip + 1) // from first, the heights in order
			want, err := node.RPC().GetBlockHash(int64(h))
			if err != nil {
				t.Fatal(err)
			}
			hash, err := b.GetBlockHash(int64(h))
			if err != nil || *hash != *want {
				t.Fatalf("GetBlockHash(%d) = %v, %v; want %v", h, hash, err, want)
			}
			hdr, err := b.GetBlockHeader(hash)
			if err != nil || hdr.BlockHash() != *want {
				t.Fatalf("GetBlockHeader(%v) at %d: %v", want, h, err)
			}
		}
	}
	check(a, 30, 0)
	for h := int64(26); h <= 33; h++ {
		hash, err := fork.RPC().GetBlockHash(h)
		if err != nil {
			t.Fatal(err)
		}
		block, err := fork.RPC().GetBlock(hash)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.RPC().SubmitBlock(btcutil.NewBlock(block), nil); err != nil {
			t.Fatal(err)
		}
	}
	check(fork, 33, 26) // first inside the headers read before
	if _, err := b.GetBlockHash(34); err == nil {
		t.Error("GetBlockHash above the tip: no error")
	}
	var unknown chainhash.Hash
	if _, err := b.GetBlockHeader(&unknown); err == nil {
		t.Error("GetBlockHeader of an unknown block: no error")
	}
}
