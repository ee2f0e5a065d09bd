package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// fetchBlocks downloads the blocks at heights, spread over the peers
// that hold them (see planFetches; own says which watched scripts each
// block holds, where known), and returns them in the order of heights.
// The blocks of an earlier pass of the operation (log) are not asked for
// again.
func (c *Client) fetchBlocks(ctx context.Context, log *scanLog, heights []int32, own map[int32][]int) ([]*wire.MsgBlock, error) {
	var want []int32
	for _, h := range heights {
		if log.held[c.chain.Hash(h)] == nil {
			want = append(want, h)
		}
	}
	if len(want) > 0 {
		p, err := c.planFetches(log, want, own)
		if err != nil {
			return nil, err
		}
		got, err := c.fetchPlanned(ctx, p)
		for h, b := range got {
			log.hold(c.chain.Hash(h), b)
		}
		if err != nil {
			return nil, err
		}
	}
	out := make([]*wire.MsgBlock, len(heights))
	for i, h := range heights {
		out[i] = log.held[c.chain.Hash(h)]
	}
	return out, nil
}

// FetchBlocks downloads the blocks from..to of the chain, spread over the
// peers that hold them as a scan's are (Config.FetchSpread, within each
// window of as many blocks as the peers ask for at once), checks each
// against its header, and calls fn for each in height order. An error
// from fn stops the download and is returned as is.
func (c *Client) FetchBlocks(ctx context.Context, from, to int32, fn func(height int32, b *wire.MsgBlock) error) error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if err := c.chain.CheckRange(from, to); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	window := int32(peer.MaxBlocksPerRequest * max(1, len(c.pool.Serving(wire.SFNodeWitness))))
	for start := from; start <= to; start += window {
		var heights []int32
		for h := start; h <= min(to, start+window-1); h++ {
			heights = append(heights, h)
		}
		blocks, err := c.fetchBlocks(ctx, newScanLog(), heights, nil)
		if err != nil {
			var f *pool.Failure
			if errors.As(err, &f) {
				c.blame(f.Member, f.Err)
				return f.Err
			}
			return err
		}
		for i, b := range blocks {
			if err := fn(heights[i], b); err != nil {
				return err
			}
		}
	}
	return nil
}

// fetchBlock downloads one block of the chain from a random peer that has
// it.
func (c *Client) fetchBlock(ctx context.Context, height int32) (*wire.MsgBlock, error) {
	hash := c.chain.Hash(height)
	ms := c.reaching(wire.SFNodeWitness, height)
	if len(ms) == 0 {
		return nil, c.noPeers("getdata block")
	}
	m := c.pool.PickFast(ms)
	var block *wire.MsgBlock
	err := c.conn(m).GetBlocks(ctx, []chainhash.Hash{hash}, func(_ int, b *wire.MsgBlock) error {
		block = b
		return nil
	})
	if err != nil {
		return nil, &pool.Failure{Member: m, Err: err}
	}
	return block, nil
}
