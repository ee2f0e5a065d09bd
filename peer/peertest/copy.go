package peertest

import (
	"fmt"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
)

// CopyChain starts a node of its own for the test holding node's chain,
// block by block over RPC: the two never connect, so blocks either mines
// later stay its own. The copy mines to the same key and knows which of
// its coinbases node spent. Mining on the copy makes a node ahead of node on the
// same chain; invalidating blocks on either makes branches.
func CopyChain(t testing.TB, node *Node, opts ...Option) *Node {
	t.Helper()
	n := StartBtcd(t, opts...)
	if err := copyBlocks(node, n); err != nil {
		t.Fatal(err)
	}
	// The same coinbases are spent on the copy.
	node.mu.Lock()
	defer node.mu.Unlock()
	for h := range node.spent {
		n.spent[h] = true
	}
	return n
}

// copyBlocks submits every block of src above dst's tip to dst.
func copyBlocks(src, dst *Node) error {
	tip, err := src.rpc.GetBlockCount()
	if err != nil {
		return fmt.Errorf("peertest: %w", err)
	}
	from, err := dst.rpc.GetBlockCount()
	if err != nil {
		return fmt.Errorf("peertest: %w", err)
	}
	for h := from + 1; h <= tip; h++ {
		hash, err := src.rpc.GetBlockHash(h)
		if err != nil {
			return fmt.Errorf("peertest: block %d: %w", h, err)
		}
		b, err := src.rpc.GetBlock(hash)
		if err != nil {
			return fmt.Errorf("peertest: block %v: %w", hash, err)
		}
		if err := dst.rpc.SubmitBlock(btcutil.NewBlock(b), nil); err != nil {
			return fmt.Errorf("peertest: submitting block %d: %w", h, err)
		}
	}
	return nil
}
