package btcwallet

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/chain"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/wtxmgr"
	"github.com/spvfilter/spvfilter/peer/client"
)

// ErrChainChanged: the blocks of a FilterBlocksRequest are no longer the
// chain's (a reorganization); the wallet asks again.
var ErrChainChanged = errors.New("btcwallet: the blocks asked about left the chain")

// FilterBlocks searches the blocks of req, which must be consecutive
// blocks of the chain, for payments to its addresses and spends of its
// outpoints, and answers for the first block that holds any, nil if none
// does. The blocks are scanned with compact filters, as Client.ScanBIP157
// scans (filters checked against the filter headers all peers agree on,
// disputes settled by the block); the answer is built by btcwallet's own
// chain.BlockFilterer over the transactions found, in block order.
func (b *Backend) FilterBlocks(req *chain.FilterBlocksRequest) (*chain.FilterBlocksResponse, error) {
	if len(req.Blocks) == 0 {
		return nil, nil
	}
	from := req.Blocks[0].Height
	to := from + int32(len(req.Blocks)) - 1
	if err := b.checkBlocks(req.Blocks); err != nil {
		return nil, err
	}
	watch, err := filterWatch(req)
	if err != nil {
		return nil, err
	}
	ctx, cancel := b.callContext()
	defer cancel()
	res, err := b.c.ScanBIP157(ctx, client.ScanRequest{Watch: watch, From: from, To: to})
	if err != nil {
		return nil, fmt.Errorf("btcwallet: filtering blocks %d..%d: %w", from, to, err)
	}
	for _, w := range res.Warnings {
		b.logf("filtering blocks %d..%d: %s", from, to, w)
	}
	if len(res.Disconnected) > 0 {
		return nil, fmt.Errorf("%w: %d block(s) left the chain while blocks %d..%d were filtered", ErrChainChanged, len(res.Disconnected), from, to)
	}
	bf := chain.NewBlockFilterer(b.params, req)
	for i := 0; i < len(res.Matches); {
		h := res.Matches[i].Height
		idx := h - from
		if idx < 0 || idx >= int32(len(req.Blocks)) || res.Matches[i].BlockHash != req.Blocks[idx].Hash {
			return nil, fmt.Errorf("%w: the scan found a transaction in block %v at height %d", ErrChainChanged, res.Matches[i].BlockHash, h)
		}
		// The block's relevant transactions, in block order, stand for
		// the block: BlockFilterer looks at nothing else.
		found := &wire.MsgBlock{}
		for ; i < len(res.Matches) && res.Matches[i].Height == h; i++ {
			found.Transactions = append(found.Transactions, res.Matches[i].Tx)
		}
		if !bf.FilterBlock(found) {
			continue
		}
		return &chain.FilterBlocksResponse{
			BatchIndex:         uint32(idx),
			BlockMeta:          req.Blocks[idx],
			FoundExternalAddrs: bf.FoundExternal,
			FoundInternalAddrs: bf.FoundInternal,
			FoundOutPoints:     bf.FoundOutPoints,
			RelevantTxns:       bf.RelevantTxns,
		}, nil
	}
	return nil, nil
}

// checkBlocks checks that blocks are consecutive blocks of the chain.
func (b *Backend) checkBlocks(blocks []wtxmgr.BlockMeta) error {
	from := blocks[0].Height
	to := from + int32(len(blocks)) - 1
	hashes, err := b.c.Chain().Hashes(from, to)
	if err != nil {
		return fmt.Errorf("%w: blocks %d..%d: %w", ErrChainChanged, from, to, err)
	}
	for i, blk := range blocks {
		if blk.Height != from+int32(i) {
			return fmt.Errorf("btcwallet: FilterBlocks: block %v at height %d follows height %d", blk.Hash, blk.Height, from+int32(i)-1)
		}
		if blk.Hash != hashes[i] {
			return fmt.Errorf("%w: block %v at height %d", ErrChainChanged, blk.Hash, blk.Height)
		}
	}
	return nil
}

// filterWatch returns the watch list of a FilterBlocksRequest: the
// scripts of its addresses, and its outpoints with the scripts their
// addresses pay.
func filterWatch(req *chain.FilterBlocksRequest) ([]client.WatchItem, error) {
	addrs := make([]btcutil.Address, 0, len(req.ExternalAddrs)+len(req.InternalAddrs))
	for _, m := range []map[waddrmgr.ScopedIndex]btcutil.Address{req.ExternalAddrs, req.InternalAddrs} {
		for _, a := range m {
			addrs = append(addrs, a)
		}
	}
	return watchItems(addrs, req.WatchedOutPoints)
}
