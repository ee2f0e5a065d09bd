package peertest

import (
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"
)

// TestCopyChainTo copies a chain longer than one batch up to a height,
// then the rest; the copy holds the same blocks and spends none of the
// coinbases the source spent. A node on another chain is refused loudly.
func TestCopyChainTo(t *testing.T) {
	src := StartBtcd(t)
	src.Generate(t, 101)
	spent := src.SpendCoinbase(t, wire.NewTxOut(1_000_000, NewKey("alice").PkScript()))
	src.Confirm(t, spent)
	src.Generate(t, 2*copyBatch)
	tip, err := src.RPC().GetBlockCount()
	if err != nil {
		t.Fatal(err)
	}
	sameAt := func(n *Node, h int64) {
		t.Helper()
		count, err := n.RPC().GetBlockCount()
		if err != nil || count != h {
			t.Fatalf("copy at %d (%v), want %d", count, err, h)
		}
		want, _ := src.RPC().GetBlockHash(h)
		if got, err := n.RPC().GetBlockHash(h); err != nil || *got != *want {
			t.Fatalf("block %d of the copy %v (%v), want %v", h, got, err, want)
		}
	}
	cp := CopyChainTo(t, src, copyBatch+10)
	sameAt(cp, copyBatch+10)
	cp.CopyBlocks(t, src, -1)
	sameAt(cp, tip)
	again := cp.SpendCoinbase(t, wire.NewTxOut(1_000_000, NewKey("bob").PkScript()))
	if again.TxIn[0].PreviousOutPoint == spent.TxIn[0].PreviousOutPoint {
		t.Fatal("the copy spent a coinbase the source had spent")
	}
	cp.Confirm(t, again)

	other := StartBtcd(t)
	other.Generate(t, 5)
	if err := other.CopyBlocksErr(src, 10); err == nil || !strings.Contains(err.Error(), "chains differ") {
		t.Errorf("copying onto another chain: %v", err)
	}
}
