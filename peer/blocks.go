package peer

import (
	"context"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// blockBatch is how many full blocks one getdata asks for: blocks can be
// megabytes each.
const blockBatch = 16

// FetchBlocks downloads the witness blocks from..to (inclusive) of chain
// and calls fn for each in height order. Every block must hash to the
// verified header at its height and its transactions must lead to the
// header's merkle root and witness commitment. An error from fn stops the
// download and is returned as is.
func (p *Peer) FetchBlocks(ctx context.Context, chain *HeaderChain, from, to int32, fn func(height int32, b *wire.MsgBlock) error) error {
	if err := checkRange(chain, from, to); err != nil {
		return err
	}
	end, err := p.begin("getdata block")
	if err != nil {
		return err
	}
	defer end()
	heights := make([]int32, 0, min(int(to-from)+1, blockBatch))
	for h := from; h <= to; h++ {
		heights = append(heights, h)
		if len(heights) == blockBatch || h == to {
			if err := p.fetchBlocks(ctx, chain, heights, fn); err != nil {
				return err
			}
			heights = heights[:0]
		}
	}
	return nil
}

// fetchBlocks fetches the blocks at heights (at most blockBatch, any
// order) and calls fn for them in the given order.
func (p *Peer) fetchBlocks(ctx context.Context, chain *HeaderChain, heights []int32, fn func(int32, *wire.MsgBlock) error) error {
	const op = "getdata block"
	if len(heights) == 0 {
		return nil
	}
	if err := p.need(op, wire.SFNodeWitness, "NODE_WITNESS"); err != nil {
		return err
	}
	var fnErr error
	for start := 0; start < len(heights); start += blockBatch {
		batch := heights[start:min(start+blockBatch, len(heights))]
		req := wire.NewMsgGetDataSizeHint(uint(len(batch)))
		for _, h := range batch {
			hash := chain.Hash(h)
			req.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessBlock, &hash))
		}
		if err := p.send(ctx, op, req); err != nil {
			return err
		}
		// btcd answers a getdata in order; blocks are checked as they
		// come and handed out in that order.
		for _, h := range batch {
			want := chain.Hash(h)
			m, err := p.recv(ctx, op, func(m wire.Message) bool {
				return is[*wire.MsgBlock](m) || is[*wire.MsgNotFound](m)
			})
			if err != nil {
				return err
			}
			block, ok := m.(*wire.MsgBlock)
			if !ok {
				return p.fail(op, "%w: notfound for %d of the blocks asked for", ErrMissingBlocks, len(m.(*wire.MsgNotFound).InvList))
			}
			if got := block.BlockHash(); got != want {
				return p.fail(op, "%w: sent block %v, asked for %v (height %d)", ErrBadBlock, got, want, h)
			}
			if err := checkBlock(block); err != nil {
				return p.fail(op, "%w: block %v (height %d): %v", ErrBadBlock, want, h, err)
			}
			if fnErr == nil {
				fnErr = fn(h, block)
			}
		}
		// After an error from fn the rest of the batch is still read,
		// so that no block of it is left for the next request.
		if fnErr != nil {
			return fnErr
		}
	}
	return nil
}

// checkBlock checks that a block's transactions are the ones its header
// commits to.
func checkBlock(b *wire.MsgBlock) error {
	if len(b.Transactions) == 0 {
		return errors.New("no transactions")
	}
	seen := make(map[chainhash.Hash]bool, len(b.Transactions))
	for _, tx := range b.Transactions {
		id := tx.TxHash()
		// Duplicates would let a mutated block keep the merkle root
		// (CVE-2012-2459).
		if seen[id] {
			return fmt.Errorf("transaction %v appears twice", id)
		}
		seen[id] = true
	}
	blk := btcutil.NewBlock(b)
	if root := blockchain.CalcMerkleRoot(blk.Transactions(), false); root != b.Header.MerkleRoot {
		return fmt.Errorf("transactions hash to merkle root %v, header says %v", root, b.Header.MerkleRoot)
	}
	if err := blockchain.ValidateWitnessCommitment(blk); err != nil {
		return fmt.Errorf("witness data: %v", err)
	}
	return nil
}
