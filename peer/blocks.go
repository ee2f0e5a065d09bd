package peer

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
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
	end, err := p.begin(ctx, op)
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
// commits to, by gcs.CheckCommitted's rule (a coinbase first, the merkle
// root without the CVE-2012-2459 duplication, the witness commitment),
// failing with ErrBadBlock; a block whose coinbase is 64 bytes fails with
// ErrAmbiguousBlock, no proof of a lie (CVE-2017-12842).
func CheckBlock(b *wire.MsgBlock) error {
	err := gcs.CheckCommitted(b)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, gcs.ErrAmbiguousBlock):
		return fmt.Errorf("%w: %w", ErrAmbiguousBlock, err)
	}
	return fmt.Errorf("%w: %w", ErrBadBlock, err)
}

// innerNodeSize is the size of an inner node of a merkle tree, two
// hashes: a transaction of that size without its witness can be read as
// one.
const innerNodeSize = 2 * chainhash.HashSize
