package peertest

import (
	"fmt"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/rpcclient"
	"github.com/btcsuite/btcd/wire"
)

// CopyChain starts a node of its own for the test holding node's chain,
// copied over RPC: the two never connect, so blocks either mines later
// stay its own. The copy mines to the same key and knows which of its
// coinbases node spent. Mining on the copy makes a node ahead of node on
// the same chain; invalidating blocks on either makes branches.
func CopyChain(t testing.TB, node *Node, opts ...Option) *Node {
	t.Helper()
	return CopyChainTo(t, node, -1, opts...)
}

// CopyChainTo is CopyChain up to height only (node's tip if height is
// negative): an honest node that is behind node.
func CopyChainTo(t testing.TB, node *Node, height int32, opts ...Option) *Node {
	t.Helper()
	n := StartBtcd(t, opts...)
	n.CopyBlocks(t, node, height)
	return n
}

// CopyBlocks submits src's blocks above n's tip up to height (src's tip if
// height is negative) to n, and marks the coinbases src spent as spent on
// n too. The two must hold the same chain up to n's tip.
func (n *Node) CopyBlocks(t testing.TB, src *Node, height int32) {
	t.Helper()
	if err := n.CopyBlocksErr(src, height); err != nil {
		t.Fatal(err)
	}
}

// CopyBlocksErr is CopyBlocks for callers without a testing.TB.
func (n *Node) CopyBlocksErr(src *Node, height int32) error {
	if err := copyBlocks(src, n, height); err != nil {
		return err
	}
	// The same coinbases are spent on the copy.
	src.mu.Lock()
	spent := make([]int64, 0, len(src.spent))
	for h := range src.spent {
		spent = append(spent, h)
	}
	src.mu.Unlock()
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, h := range spent {
		n.spent[h] = true
	}
	return nil
}

// copyBatch is how many blocks one JSON-RPC batch fetches or submits: a
// batch costs one round trip instead of one a request.
const copyBatch = 200

// copyBlocks submits src's blocks above dst's tip, up to height to
// (src's tip if negative), to dst.
func copyBlocks(src, dst *Node, to int32) error {
	if to < 0 {
		tip, err := src.rpc.GetBlockCount()
		if err != nil {
			return fmt.Errorf("peertest: %w", err)
		}
		to = int32(tip)
	}
	from, err := dst.rpc.GetBlockCount()
	if err != nil {
		return fmt.Errorf("peertest: %w", err)
	}
	sb, err := src.batchRPC()
	if err != nil {
		return err
	}
	defer sb.Shutdown()
	db, err := dst.batchRPC()
	if err != nil {
		return err
	}
	defer db.Shutdown()
	for lo := int32(from) + 1; lo <= to; lo += copyBatch {
		hi := min(to, lo+copyBatch-1)
		blocks, err := fetchBlocks(sb, lo, hi)
		if err != nil {
			return err
		}
		submits := make([]rpcclient.FutureSubmitBlockResult, len(blocks))
		for i, b := range blocks {
			submits[i] = db.SubmitBlockAsync(btcutil.NewBlock(b), nil)
		}
		if err := db.Send(); err != nil {
			return fmt.Errorf("peertest: submitting blocks %d..%d: %w", lo, hi, err)
		}
		for i, f := range submits {
			if err := f.Receive(); err != nil {
				return fmt.Errorf("peertest: submitting block %d: %w", lo+int32(i), err)
			}
		}
		// A block that does not extend dst's chain is kept as an orphan
		// without an error: dst's tip must be the last block given.
		best, err := dst.rpc.GetBestBlockHash()
		if err != nil {
			return fmt.Errorf("peertest: %w", err)
		}
		if last := blocks[len(blocks)-1].BlockHash(); *best != last {
			return fmt.Errorf("peertest: copying blocks %d..%d: the copy's tip is %v, not block %d %v: the chains differ", lo, hi, best, hi, last)
		}
	}
	return nil
}

// fetchBlocks returns the blocks at heights lo..hi of the node behind the
// batch client c, in two batches.
func fetchBlocks(c *rpcclient.Client, lo, hi int32) ([]*wire.MsgBlock, error) {
	hashes := make([]rpcclient.FutureGetBlockHashResult, 0, hi-lo+1)
	for h := lo; h <= hi; h++ {
		hashes = append(hashes, c.GetBlockHashAsync(int64(h)))
	}
	if err := c.Send(); err != nil {
		return nil, fmt.Errorf("peertest: hashes of blocks %d..%d: %w", lo, hi, err)
	}
	blocks := make([]rpcclient.FutureGetBlockResult, len(hashes))
	for i, f := range hashes {
		hash, err := f.Receive()
		if err != nil {
			return nil, fmt.Errorf("peertest: hash of block %d: %w", lo+int32(i), err)
		}
		blocks[i] = c.GetBlockAsync(hash)
	}
	if err := c.Send(); err != nil {
		return nil, fmt.Errorf("peertest: blocks %d..%d: %w", lo, hi, err)
	}
	out := make([]*wire.MsgBlock, len(blocks))
	for i, f := range blocks {
		b, err := f.Receive()
		if err != nil {
			return nil, fmt.Errorf("peertest: block %d: %w", lo+int32(i), err)
		}
		out[i] = b
	}
	return out, nil
}
