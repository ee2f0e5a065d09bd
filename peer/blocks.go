package peer

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// MaxBlocksPerRequest is how many full blocks one GetBlocks asks for:
// blocks can be megabytes each, and the whole answer is due within the
// timeout.
const MaxBlocksPerRequest = 16

// GetBlocks downloads the witness blocks with the given hashes (at most
// MaxBlocksPerRequest) and calls fn for each in the given order. Every
// block must hash to the hash asked for, and its transactions must lead
// to its header's merkle root and witness commitment (CheckBlock). A
// block the node leaves out or answers with notfound is reported with
// ErrMissingBlocks. A block that fails these checks and its payload
// checksum too is reported with ErrDamaged, not as a lie. A block
// CheckBlock finds ambiguous is not handed to fn: ErrAmbiguousBlock is
// returned, as an error from fn is, after the rest of the answer was
// read.
func (p *Peer) GetBlocks(ctx context.Context, hashes []chainhash.Hash, fn func(i int, b *wire.MsgBlock) error) error {
	const op = "getdata block"
	if len(hashes) == 0 {
		return nil
	}
	end, err := p.begin(op)
	if err != nil {
		return err
	}
	defer end()
	if err := p.need(op, wire.SFNodeWitness, "NODE_WITNESS"); err != nil {
		return err
	}
	if len(hashes) > MaxBlocksPerRequest {
		return p.errorf(op, "peer: %d blocks asked for, at most %d per request", len(hashes), MaxBlocksPerRequest)
	}
	req := wire.NewMsgGetDataSizeHint(uint(len(hashes)))
	for i := range hashes {
		req.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessBlock, &hashes[i]))
	}
	deadline := p.deadline()
	if err := p.send(ctx, op, req, deadline); err != nil {
		return err
	}
	// btcd answers a getdata in order; blocks are checked as they come
	// and handed out in that order.
	var fnErr error // or the first ambiguous block's
	for i, want := range hashes {
		m, err := p.recv(ctx, op, deadline, func(m wire.Message) bool {
			return is[*wire.MsgBlock](m) || is[*wire.MsgNotFound](m)
		})
		if err != nil {
			return err
		}
		block, ok := m.(*wire.MsgBlock)
		if !ok {
			return p.fail(op, "%w: notfound for %d of the blocks asked for (first %v)",
				ErrMissingBlocks, len(m.(*wire.MsgNotFound).InvList), m.(*wire.MsgNotFound).InvList[0].Hash)
		}
		got := block.BlockHash()
		if got != want && slices.Contains(hashes[i+1:], got) {
			return p.fail(op, "%w: block %v left out of the answer", ErrMissingBlocks, want)
		}
		err = CheckBlock(block)
		if (got != want || err != nil) && !p.intact(block) {
			return p.damaged(op, "block %v", want)
		}
		if got != want {
			return p.fail(op, "%w: sent block %v, asked for %v", ErrBadBlock, got, want)
		}
		if errors.Is(err, ErrAmbiguousBlock) {
			if fnErr == nil {
				fnErr = p.errorf(op, "block %v: %w", want, err)
			}
			continue
		}
		if err != nil {
			return p.fail(op, "block %v: %w", want, err)
		}
		if fnErr == nil {
			fnErr = fn(i, block)
		}
	}
	return fnErr
}

// CheckBlock checks that a block's transactions are the ones its header
// commits to: the first is a coinbase, the merkle root (refusing the
// CVE-2012-2459 duplication) and the witness commitment, failing with
// ErrBadBlock; and that the coinbase is not 64 bytes without its witness,
// failing with ErrAmbiguousBlock: every leaf of the merkle tree lies at
// the coinbase's depth, so a 64-byte transaction could stand for an inner
// node (or an inner node for one) only if the coinbase could too
// (CVE-2017-12842), as gcs.CheckBasic also holds.
func CheckBlock(b *wire.MsgBlock) error {
	if len(b.Transactions) == 0 {
		return fmt.Errorf("%w: no transactions", ErrBadBlock)
	}
	if !blockchain.IsCoinBaseTx(b.Transactions[0]) {
		return fmt.Errorf("%w: the first transaction is not a coinbase", ErrBadBlock)
	}
	seen := make(map[chainhash.Hash]bool, len(b.Transactions))
	for _, tx := range b.Transactions {
		id := tx.TxHash()
		// Duplicates would let a mutated block keep the merkle root.
		if seen[id] {
			return fmt.Errorf("%w: transaction %v appears twice", ErrBadBlock, id)
		}
		seen[id] = true
	}
	blk := btcutil.NewBlock(b)
	if root := blockchain.CalcMerkleRoot(blk.Transactions(), false); root != b.Header.MerkleRoot {
		return fmt.Errorf("%w: transactions hash to merkle root %v, header says %v", ErrBadBlock, root, b.Header.MerkleRoot)
	}
	if err := blockchain.ValidateWitnessCommitment(blk); err != nil {
		return fmt.Errorf("%w: witness data: %w", ErrBadBlock, err)
	}
	if b.Transactions[0].SerializeSizeStripped() == innerNodeSize {
		return fmt.Errorf("%w: its coinbase (%v)", ErrAmbiguousBlock, blk.Transactions()[0].Hash())
	}
	return nil
}

// innerNodeSize is the size of an inner node of a merkle tree, two
// hashes: a transaction of that size without its witness can be read as
// one.
const innerNodeSize = 2 * chainhash.HashSize
