package client

import (
	"context"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// segmentOf returns the checkpoint segment holding height h: segment 0
// holds 0..1000, segment j > 0 holds j*1000+1..(j+1)*1000.
func segmentOf(h int32) int { return int(max(h-1, 0) / wire.CFCheckptInterval) }

// segmentStart returns the first height of checkpoint segment j and the
// filter header before it, from the agreed checkpoints.
func segmentStart(j int, checkpoints []chainhash.Hash) (int32, chainhash.Hash) {
	if j == 0 {
		return 0, chainhash.Hash{}
	}
	return segmentFirst(j), checkpoints[j-1]
}

// segmentFirst returns the first height of checkpoint segment j.
func segmentFirst(j int) int32 {
	if j == 0 {
		return 0
	}
	return int32(j)*wire.CFCheckptInterval + 1
}

// chainHeaders returns the filter header reached from prev through the
// filter hashes.
func chainHeaders(prev chainhash.Hash, hashes []chainhash.Hash) chainhash.Hash {
	for i := range hashes {
		prev = gcs.MakeHeader(&hashes[i], &prev)
	}
	return prev
}

// headersFrom returns the filter headers of the filter hashes, from prev.
func headersFrom(prev chainhash.Hash, hashes []chainhash.Hash) []chainhash.Hash {
	headers := make([]chainhash.Hash, len(hashes))
	for i := range hashes {
		prev = gcs.MakeHeader(&hashes[i], &prev)
		headers[i] = prev
	}
	return headers
}

// cfHeaders gets the filter hashes start..end from m and checks that they
// continue from prev.
func (c *Client) cfHeaders(ctx context.Context, m *pool.Member, start, end int32, prev chainhash.Hash) ([]chainhash.Hash, error) {
	gotPrev, hashes, err := c.conn(m).GetCFHeaders(ctx, start, c.chain.Hash(end), int(end-start)+1)
	if err != nil {
		return nil, err
	}
	if gotPrev != prev {
		return nil, peerErr(m, "getcfheaders", fmt.Errorf("%w: previous filter header %v at height %d, the agreed one is %v",
			peer.ErrBadFilterHeader, gotPrev, start-1, prev))
	}
	return hashes, nil
}

// checkpointSegment is cfHeaders for a segment start..end that ends at
// the checkpoint cp m sent: its filter hashes must lead there.
func (c *Client) checkpointSegment(ctx context.Context, m *pool.Member, start, end int32, prev, cp chainhash.Hash) ([]chainhash.Hash, error) {
	hashes, err := c.cfHeaders(ctx, m, start, end, prev)
	if err != nil {
		return nil, err
	}
	return hashes, offCheckpoint(m, start, end, prev, hashes, cp)
}

// offCheckpoint returns the error of m whose filter hashes start..end,
// from prev, do not lead to the checkpoint cp it sent itself; nil if they
// do.
func offCheckpoint(m *pool.Member, start, end int32, prev chainhash.Hash, hashes []chainhash.Hash, cp chainhash.Hash) error {
	if chainHeaders(prev, hashes) == cp {
		return nil
	}
	return peerErr(m, "getcfheaders", fmt.Errorf("%w: filter headers %d..%d do not reach the checkpoint it sent itself",
		peer.ErrBadFilterHeader, start, end))
}
