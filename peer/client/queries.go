package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// The queries a wallet makes of the chain. Each may be called from any
// goroutine, while scans and rescans run; header lookups are the chain's
// own (Chain), which is safe for concurrent use too. BestBlock, GetBlock,
// GetCFilter, FilterHeader and GetUtxo called before the client is synced
// with its peers (right after Connect or Start, a peer connected again)
// wait for it, within their context, and fail with a *SyncWaitError
// saying what they waited for.

// BestBlock returns the highest block of the chain that a connected peer
// holds: the end of what a scan can verify now. Without such a peer it is
// the chain's tip. It waits for the client to sync (see awaitSynced).
func (c *Client) BestBlock(ctx context.Context) (Stamp, error) {
	if err := c.awaitSynced(ctx, "the best block", 0); err != nil {
		return Stamp{}, err
	}
	h := c.bestHeld(0)
	if h < 0 {
		h = c.chain.Height()
	}
	hdr := c.chain.Header(h)
	return Stamp{Height: h, Hash: hdr.BlockHash(), Header: hdr}, nil
}

// currentAge is how old the chain's tip may be for the client to count as
// current, as btcd counts itself.
const currentAge = 24 * time.Hour

// IsCurrent reports whether the client is caught up: a connected peer
// holds the chain's tip and no connected peer is known to hold more, and
// the tip is less than a day old.
func (c *Client) IsCurrent() bool {
	tip := c.chain.Height()
	if c.bestHeld(0) != tip {
		return false
	}
	hdr := c.chain.Header(tip)
	return time.Since(hdr.Timestamp) < currentAge
}

// GetBlock returns the block of the chain with the given hash, checked
// against its header (merkle root and witness commitment). It is asked of
// a fast peer chosen at random among those that hold it, and of another
// if that one fails (a peer that sends a false block is banned); the last
// few blocks are kept.
func (c *Client) GetBlock(ctx context.Context, hash chainhash.Hash) (*wire.MsgBlock, error) {
	if err := c.awaitSynced(ctx, fmt.Sprintf("block %v", hash), wire.SFNodeWitness); err != nil {
		return nil, err
	}
	height, ok := c.chain.HeightOf(hash)
	if !ok {
		return nil, fmt.Errorf("client: block %v: %w", hash, ErrUnknownBlock)
	}
	if b, ok := c.blocks.get(hash); ok {
		return b, nil
	}
	var errs []error
	for try := 0; try < maxTries; try++ {
		ms := c.reaching(wire.SFNodeWitness, height)
		if len(ms) == 0 {
			break
		}
		m := c.pool.PickFast(ms)
		var block *wire.MsgBlock
		// Dialled again first if its connection ended (see askingConn).
		err := c.conn(m).GetBlocks(ctx, []chainhash.Hash{hash}, func(_ int, b *wire.MsgBlock) error {
			block = b
			return nil
		})
		if err == nil {
			c.blocks.put(hash, block)
			return block, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		c.blame(m, err)
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("client: block %v (height %d): %w", hash, height, c.noPeers("getdata block"))
	}
	return nil, fmt.Errorf("client: block %v (height %d): %w", hash, height, pool.Errors(errs))
}

// maxTries is how many peers a query asks before it gives up.
const maxTries = 3

// GetCFilter returns the BIP 158 basic filter of the block of the chain
// with the given hash, as serialized on the wire, checked against the
// filter headers the peers agree on (verified as a scan verifies them:
// compared across every peer that holds the block, disputes settled by
// the block). Filters already verified are taken from the store's cache
// or, without a store, from memory.
func (c *Client) GetCFilter(ctx context.Context, hash chainhash.Hash) ([]byte, error) {
	if err := c.awaitSynced(ctx, fmt.Sprintf("the filter of block %v", hash), wire.SFNodeCF); err != nil {
		return nil, err
	}
	height, ok := c.chain.HeightOf(hash)
	if !ok {
		return nil, fmt.Errorf("client: filter of block %v: %w", hash, ErrUnknownBlock)
	}
	prev, header, err := c.agreedFilterHeader(ctx, height)
	if err != nil {
		return nil, err
	}
	check := func(data []byte) error {
		fh := chainhash.DoubleHashH(data)
		if got := gcs.MakeHeader(&fh, &prev); got != header {
			return fmt.Errorf("%w: filter for block %v (height %d) leads to filter header %v, the agreed one is %v",
				peer.ErrBadFilter, hash, height, got, header)
		}
		return nil
	}
	if data, ok := c.cachedFilter(hash); ok {
		if check(data) == nil {
			return data, nil
		}
		c.dropCached(hash)
	}
	var errs []error
	for try := 0; try < maxTries; try++ {
		ms := c.reaching(wire.SFNodeCF, height)
		if len(ms) == 0 {
			break
		}
		m := c.pool.PickFast(ms)
		var data []byte
		// Dialled again first if its connection ended (see askingConn).
		err := c.conn(m).GetCFilters(ctx, height, []chainhash.Hash{hash}, func(_ int, d []byte) error {
			if err := check(d); err != nil {
				return peerErr(m, "getcfilters", err)
			}
			data = d
			return nil
		})
		if err == nil {
			c.cacheFilters([]chainhash.Hash{hash}, [][]byte{data})
			return data, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		c.blame(m, err)
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("client: filter of block %v (height %d): %w", hash, height, c.noPeers("getcfilters"))
	}
	return nil, fmt.Errorf("client: filter of block %v (height %d): %w", hash, height, pool.Errors(errs))
}

// FilterHeader returns the basic filter header of the block of the chain
// at height, verified as a scan verifies them (compared across every peer
// that holds the block, disputes settled by the block): a header only
// one of several peers could state is an *OnePeerError, one resting on a
// filter in conflict a *ConflictError. It waits for the client to sync.
func (c *Client) FilterHeader(ctx context.Context, height int32) (chainhash.Hash, error) {
	if err := c.awaitSynced(ctx, fmt.Sprintf("the filter header of height %d", height), wire.SFNodeCF); err != nil {
		return chainhash.Hash{}, err
	}
	if err := c.chain.CheckRange(height, height); err != nil {
		return chainhash.Hash{}, fmt.Errorf("client: %w", err)
	}
	_, header, err := c.agreedFilterHeader(ctx, height)
	return header, err
}

// agreedFilterHeader returns the verified filter headers of height-1 and
// height: kept from an earlier verification of this client's life that
// more than one peer took part in (the store's records are trusted only
// once the peers have been compared with them), or verified now. A header
// only one of several peers could state is an *OnePeerError. A peer whose
// request failed the verification is judged by its own error (blame), and
// the error returned names after it the requests refused or cut off in
// the same download (a dispute's block, see settleAt and judged).
func (c *Client) agreedFilterHeader(ctx context.Context, height int32) (prev, header chainhash.Hash, err error) {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if height <= c.verifiedTo && !c.lonelyAt(height) {
		if prev, header, ok := c.keptFilterHeader(height); ok {
			return prev, header, nil
		}
	}
	log := newScanLog()
	ms := c.pool.Serving(wire.SFNodeCF)
	if len(ms) == 0 {
		return prev, header, fmt.Errorf("client: %w: no peer offers %s", ErrNoPeers, serviceName(wire.SFNodeCF))
	}
	hs, _, err := c.filterHeaders(ctx, log, ms, height, height)
	if err != nil {
		var f *pool.Failure
		if errors.As(err, &f) {
			c.blame(f.Member, f.Err)
			err = judged(err, f)
		}
		return prev, header, err
	}
	if ks := c.conflicts.in(height, height, c.chain.Hash); len(ks) > 0 {
		return prev, header, &ConflictError{Height: height, BlockHash: ks[0].BlockHash, Sides: ks[0].Sides,
			Why: "the filter asked for is one of theirs (" + ks[0].Undecided + ")"}
	}
	for _, o := range log.oneVoice {
		if o.From <= height && height <= o.To {
			return prev, header, &OnePeerError{Height: height, Peer: o.Peer}
		}
	}
	return hs[0], hs[1], nil
}

// UtxoRequest asks about one output.
type UtxoRequest struct {
	// OutPoint is the output asked about.
	OutPoint wire.OutPoint
	// Script is the script the output pays: compact filters hold
	// scripts, so the blocks that create and spend the output are found
	// by it.
	Script []byte
	// From is the first height searched: at or below the output's block.
	From int32
	// To is the last height searched; zero or negative means the highest
	// block a peer holds (height 0 spends nothing, so zero is no end).
	To int32
	// Progress, if not nil, is called with the height reached.
	Progress func(height int32)
}

// UtxoReport is what GetUtxo found.
type UtxoReport struct {
	// Output is the output, and Height and Block where it was created;
	// nil if no block from the request's From holds it.
	Output *wire.TxOut
	Height int32
	Block  chainhash.Hash
	// SpentBy is the transaction that spends it, at SpendHeight in
	// SpendBlock, input SpendInput; nil while it is unspent.
	SpentBy     *wire.MsgTx
	SpendHeight int32
	SpendBlock  chainhash.Hash
	SpendInput  int
	// To is the last height searched.
	To int32
	// Warnings are the scan's (see ScanResult.Warnings).
	Warnings []string
}

// Unspent reports whether the output was found and is not spent up to To.
func (r *UtxoReport) Unspent() bool { return r.Output != nil && r.SpentBy == nil }

// GetUtxo searches the blocks from req.From to req.To (the highest block
// a peer holds by default) for the output and its spend, with compact filters (a BIP 157
// scan for the output's script and the outpoint), and reports where it
// was created and whether and where it was spent.
func (c *Client) GetUtxo(ctx context.Context, req UtxoRequest) (*UtxoReport, error) {
	if len(req.Script) == 0 {
		return nil, errors.New("client: GetUtxo needs the script the output pays: compact filters hold scripts, not outpoints")
	}
	if err := c.awaitSynced(ctx, fmt.Sprintf("output %v", req.OutPoint), wire.SFNodeCF); err != nil {
		return nil, err
	}
	// The script finds the block that creates the output, the outpoint
	// the one that spends it.
	sr := ScanRequest{Watch: []WatchItem{ScriptItem(req.Script), OutPointItem(req.OutPoint, req.Script)}, From: req.From, To: -1}
	if req.To > 0 {
		sr.To = req.To
	}
	if req.Progress != nil {
		var mu sync.Mutex
		sr.Progress = func(done, _ int) {
			mu.Lock()
			defer mu.Unlock()
			req.Progress(req.From + int32(done) - 1)
		}
	}
	res, err := c.ScanBIP157(ctx, sr)
	if err != nil {
		return nil, err
	}
	rep := &UtxoReport{To: res.To, Warnings: res.Warnings}
	for _, m := range res.Matches {
		if m.Txid == req.OutPoint.Hash && int(req.OutPoint.Index) < len(m.Tx.TxOut) {
			rep.Output, rep.Height, rep.Block = m.Tx.TxOut[req.OutPoint.Index], m.Height, m.BlockHash
		}
		for i, in := range m.Tx.TxIn {
			if in.PreviousOutPoint == req.OutPoint {
				rep.SpentBy, rep.SpendHeight, rep.SpendBlock, rep.SpendInput = m.Tx, m.Height, m.BlockHash, i
			}
		}
	}
	return rep, nil
}

// Revised returns how many times the client has given up filter headers
// it verified (a peer's late word, a conflict or a reorganization asked
// for them again), now, and the lowest height given up by those after
// the seen-th: math.MaxInt32 if none, 0 if the client no longer knows
// them all (any height may have been). A caller that scanned blocks
// against verified filter headers scans those from there again: their
// filters may have hidden what it looked for.
func (c *Client) Revised(seen uint64) (now uint64, from int32) {
	now = c.revised.Load()
	low, all := c.revisions.lowestSince(seen, now)
	if !all {
		low = 0
	}
	return now, low
}
