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

// fetchBlocks downloads the blocks at heights, each request from a peer
// chosen at random among those that serve them, and returns them in the
// order of heights.
func (c *Client) fetchBlocks(ctx context.Context, heights []int32) ([]*wire.MsgBlock, error) {
	out := make([]*wire.MsgBlock, 0, len(heights))
	for start := 0; start < len(heights); start += peer.MaxBlocksPerRequest {
		batch := heights[start:min(start+peer.MaxBlocksPerRequest, len(heights))]
		ms := c.reaching(wire.SFNodeWitness, batch[len(batch)-1])
		if len(ms) == 0 {
			return nil, c.noPeers("getdata block")
		}
		m := c.pool.PickFast(ms)
		hashes := make([]chainhash.Hash, len(batch))
		for i, h := range batch {
			hashes[i] = c.chain.Hash(h)
		}
		err := c.conn(m).GetBlocks(ctx, hashes, func(_ int, b *wire.MsgBlock) error {
			out = append(out, b)
			return nil
		})
		if err != nil {
			return nil, &pool.Failure{Member: m, Err: err}
		}
	}
	return out, nil
}

// FetchBlocks downloads the blocks from..to of the chain, each request
// from a peer chosen at random, checks each against its header, and calls
// fn for each in height order. An error from fn stops the download and is
// returned as is.
func (c *Client) FetchBlocks(ctx context.Context, from, to int32, fn func(height int32, b *wire.MsgBlock) error) error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if err := c.chain.CheckRange(from, to); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	for start := from; start <= to; start += peer.MaxBlocksPerRequest {
		var heights []int32
		for h := start; h <= min(to, start+peer.MaxBlocksPerRequest-1); h++ {
			heights = append(heights, h)
		}
		blocks, err := c.fetchBlocks(ctx, heights)
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
