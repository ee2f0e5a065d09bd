package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
)

// ScanRequest says what a scan looks for and where.
type ScanRequest struct {
	// Watch is the watch list; Match.WatchItems index into it.
	Watch []WatchItem
	// From and To bound the heights scanned, inclusive.
	From, To int32
	// Progress, if not nil, is called as blocks are done.
	Progress func(done, total int)
}

// maxAttempts bounds the restarts of a scan after a reorganization or a
// failed peer.
const maxAttempts = 8

// ScanBIP157 scans the blocks req.From..req.To with BIP 157 basic compact
// filters, as the package documentation describes. Before it starts and
// whenever a request fails, it syncs the headers of every peer: if the
// chain has reorganized, the scan starts again on the new chain, the
// blocks that left it are listed in ScanResult.Disconnected, and the
// failed peer is not blamed; otherwise a peer that lied is banned, one that
// stalled or disconnected is dropped, and the scan goes on with the others.
//
// A spend is found when it spends an output found earlier in the scan or a
// watched outpoint, or reveals the key or script of a watched P2PKH,
// P2WPKH, P2SH or P2WSH output; a block whose filter matched only through
// an output it spends that the block does not reveal (P2TR, P2PK) is
// listed in SpendOnlyBlocks, never counted as a false positive.
func (c *Client) ScanBIP157(ctx context.Context, req ScanRequest) (*ScanResult, error) {
	wl := newWatchList(req.Watch)
	return c.scan(ctx, req, "bip157", wire.SFNodeCF, func(ctx context.Context, req ScanRequest) (*ScanResult, error) {
		return c.scanBIP157(ctx, req, wl)
	})
}

// scan runs pass until it succeeds, checking for a reorganization after
// every failure before blaming the peer, as ScanBIP157 describes.
func (c *Client) scan(ctx context.Context, req ScanRequest, mode string, service wire.ServiceFlag,
	pass func(context.Context, ScanRequest) (*ScanResult, error)) (*ScanResult, error) {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	startBytes := c.bytesReceived()
	var disconnected []chainhash.Hash
	for attempt := 0; ; attempt++ {
		up, err := c.syncHeaders(ctx)
		if err != nil {
			return nil, err
		}
		disconnected = append(disconnected, up.Disconnected...)
		if err := c.chain.CheckRange(req.From, req.To); err != nil {
			return nil, fmt.Errorf("client: %w", err)
		}
		res, err := pass(ctx, req)
		if err == nil {
			// Blocks scanned may have left the chain meanwhile: a node
			// still serves a block it disconnected.
			up, err := c.syncHeaders(ctx)
			if err != nil {
				return nil, err
			}
			disconnected = append(disconnected, up.Disconnected...)
			if up.Reorganized() && up.Fork < req.To && attempt < maxAttempts {
				c.logf("chain reorganized at height %d during the scan: starting again", up.Fork)
				continue
			}
			res.Disconnected = disconnected
			res.BytesReceived = c.bytesReceived() - startBytes
			c.finish(res, mode)
			return res, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		var f *failure
		if !errors.As(err, &f) {
			return nil, err
		}
		if serr := c.chain.Err(); serr != nil {
			return nil, fmt.Errorf("client: the chain state: %w", serr)
		}
		// A reorganization explains stalls, notfound and changed filter
		// headers from an honest node: check before blaming, on a new
		// connection if the failed request dropped the old one.
		if !isLie(f.err) {
			if err := c.redial(ctx, f.m); err != nil {
				c.logf("redialing %s: %v", f.m.addr, err)
			}
		}
		up, serr := c.syncHeaders(ctx)
		disconnected = append(disconnected, up.Disconnected...)
		if serr == nil && up.Reorganized() && up.Fork < req.To && attempt < maxAttempts {
			c.logf("chain reorganized at height %d during the scan: starting again", up.Fork)
			continue
		}
		c.blame(f.m, f.err)
		if attempt >= maxAttempts || len(c.usable(service, req.To)) == 0 {
			return nil, f.err
		}
	}
}

// scanBIP157 runs one pass of the scan over the current chain.
// wl carries the outpoints found before, by earlier passes or scans.
func (c *Client) scanBIP157(ctx context.Context, req ScanRequest, wl *watchList) (*ScanResult, error) {
	from, to := req.From, req.To
	ms := c.usable(wire.SFNodeCF, to)
	if len(ms) == 0 {
		return nil, fmt.Errorf("client: %w: no peer offers compact filters (NODE_COMPACT_FILTERS) up to height %d", ErrNoPeers, to)
	}
	// btcd v0.24.2 crashes on cfilter requests when it runs without
	// them: peers without the service are never asked.
	headers, ms, err := c.agreedFilterHeaders(ctx, ms, from, to)
	if err != nil {
		return nil, err
	}
	res := &ScanResult{Matches: []Match{}, BlocksScanned: int(to-from) + 1}
	scripts := Scripts(req.Watch)
	matched, received, err := c.matchFilters(ctx, ms, scripts, headers, from, to, req.Progress)
	if err != nil {
		return nil, err
	}
	res.FiltersReceived = received
	blocks, err := c.fetchBlocks(ctx, matched)
	if err != nil {
		return nil, err
	}
	for i, b := range blocks {
		h := matched[i]
		res.BlocksFetched++
		found, pays := false, false
		for _, tx := range b.Transactions {
			if items := wl.involve(tx); len(items) > 0 {
				found = true
				res.Matches = append(res.Matches, Match{
					Txid: tx.TxHash(), Tx: tx, Height: h, BlockHash: c.chain.Hash(h), WatchItems: items,
				})
			}
			pays = pays || wl.pays(tx)
		}
		switch {
		case found:
		case len(scripts) > 0 && !pays && spendsUnrevealed(b):
			// The filter holds a watched script no output pays: an input
			// spends it without revealing it.
			res.SpendOnlyBlocks = append(res.SpendOnlyBlocks, h)
		default:
			res.FalsePositiveBlocks++
		}
	}
	if len(res.SpendOnlyBlocks) > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"%d block(s) matched a watched script only through an output they spend without revealing its script (P2TR or P2PK), at heights %v: watch the outpoint (TXID:VOUT) to identify the transaction",
			len(res.SpendOnlyBlocks), res.SpendOnlyBlocks))
	}
	for i, it := range req.Watch {
		if it.IsOutPoint && len(it.Script) == 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf(
				"watch item %d (outpoint %v) has no script: BIP 158 filters hold scripts, not outpoints, so its spend is found only if its block is fetched for another item; give the script it pays (TXID:VOUT:ADDRESS)", i, it.OutPoint))
		}
	}
	return res, nil
}

// spendsUnrevealed reports whether some input of the block spends without
// revealing the script it spends (so that a filter may hold a watched
// script no output pays).
func spendsUnrevealed(b *wire.MsgBlock) bool {
	for _, tx := range b.Transactions[1:] {
		for _, in := range tx.TxIn {
			if len(spentScripts(in)) == 0 {
				return true
			}
		}
	}
	return false
}

// filterBatch is one getcfilters request of the scan.
type filterBatch struct {
	start, stop int32
}

// matchFilters gets the filters from..to, from the cache or from all
// peers at once, each batch from whichever peer is free, checks each
// against its agreed filter header (headers holds those of from-1..to),
// and returns the heights whose filter matches a script, sorted, and how
// many filters were downloaded.
func (c *Client) matchFilters(ctx context.Context, ms []*member, scripts [][]byte, headers []chainhash.Hash,
	from, to int32, progress func(done, total int)) ([]int32, int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	base := gcs.NewMatcher(scripts)
	check := func(h int32, data []byte) error {
		fh := chainhash.DoubleHashH(data)
		if got, want := gcs.MakeHeader(&fh, &headers[h-from]), headers[h-from+1]; got != want {
			return fmt.Errorf("%w: filter for block %v (height %d) leads to filter header %v, the agreed one is %v",
				peer.ErrBadFilter, c.chain.Hash(h), h, got, want)
		}
		return nil
	}
	var (
		mu       sync.Mutex
		matched  []int32
		done     int
		received int
		firstErr error
	)
	finish := func(b filterBatch, hits []int32) {
		mu.Lock()
		defer mu.Unlock()
		matched = append(matched, hits...)
		done += int(b.stop-b.start) + 1
		if progress != nil {
			progress(done, int(to-from)+1)
		}
	}
	// Batches the cache holds whole are matched here; the others go to
	// the peers.
	batches := make(chan filterBatch)
	go func() {
		defer close(batches)
		for start := from; start <= to; start += wire.MaxGetCFiltersReqRange {
			b := filterBatch{start, min(to, start+wire.MaxGetCFiltersReqRange-1)}
			if hits, ok := c.cachedBatch(b, base, check); ok {
				finish(b, hits)
				continue
			}
			select {
			case batches <- b:
			case <-ctx.Done():
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			matcher := base.Clone()
			blocks := make([]chainhash.Hash, 0, wire.MaxGetCFiltersReqRange)
			var datas [][]byte
			for b := range batches {
				blocks, datas = blocks[:0], datas[:0]
				for h := b.start; h <= b.stop; h++ {
					blocks = append(blocks, c.chain.Hash(h))
				}
				var hits []int32
				err := m.p.GetCFilters(ctx, b.start, blocks, func(i int, data []byte) error {
					h := b.start + int32(i)
					if err := check(h, data); err != nil {
						return peerErr(m, "getcfilters", err)
					}
					datas = append(datas, data)
					if matcher.Len() == 0 {
						return nil
					}
					// The filter is the one its agreed header commits to:
					// one pass that may stop at the first match.
					hit, err := matcher.MatchVerifiedBytes(data, gcs.BasicKey(&blocks[i]))
					if err != nil {
						return peerErr(m, "getcfilters", fmt.Errorf("%w: filter for block %v (height %d): %v", peer.ErrBadFilter, blocks[i], h, err))
					}
					if hit {
						hits = append(hits, h)
					}
					return nil
				})
				if err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = &failure{m: m, err: err}
					}
					mu.Unlock()
					cancel()
					return
				}
				c.cacheFilters(blocks, datas)
				mu.Lock()
				received += len(blocks)
				mu.Unlock()
				finish(b, hits)
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return nil, 0, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	slices.Sort(matched)
	return matched, received, nil
}

// fetchBlocks downloads the blocks at heights, each request from a peer
// chosen at random among those that serve them, and returns them in the
// order of heights.
func (c *Client) fetchBlocks(ctx context.Context, heights []int32) ([]*wire.MsgBlock, error) {
	out := make([]*wire.MsgBlock, 0, len(heights))
	for start := 0; start < len(heights); start += peer.MaxBlocksPerRequest {
		batch := heights[start:min(start+peer.MaxBlocksPerRequest, len(heights))]
		ms := c.usable(wire.SFNodeWitness, batch[len(batch)-1])
		if len(ms) == 0 {
			return nil, c.noPeers("getdata block")
		}
		m := c.pick(ms)
		hashes := make([]chainhash.Hash, len(batch))
		for i, h := range batch {
			hashes[i] = c.chain.Hash(h)
		}
		err := m.p.GetBlocks(ctx, hashes, func(_ int, b *wire.MsgBlock) error {
			out = append(out, b)
			return nil
		})
		if err != nil {
			return nil, &failure{m: m, err: err}
		}
	}
	return out, nil
}

// finish fills in what every scan result says about its peers.
func (c *Client) finish(res *ScanResult, mode string) {
	res.Warnings = append(res.Warnings, c.notes...)
	res.Warnings = append(res.Warnings, c.decisions...)
	c.decisions = nil
	res.Peers = c.Peers()
	used := 0
	for _, st := range res.Peers {
		if !st.Banned && st.Reason == "" {
			used++
		}
	}
	// BIP 37 filters at one peer however many there are; its pass says
	// which.
	if used <= 1 && mode != "bip37" {
		res.Warnings = append(res.Warnings, fmt.Sprintf(
			"the %s result rests on one peer: nothing it said was cross-checked with another peer (give several with --peer)", mode))
	}
	for _, st := range res.Peers {
		if st.Banned {
			res.Warnings = append(res.Warnings, fmt.Sprintf("peer %s was banned: %s", st.Address, st.Reason))
		}
	}
}

func (c *Client) logf(format string, args ...any) {
	if c.cfg.Log != nil {
		fmt.Fprintf(c.cfg.Log, format+"\n", args...)
	}
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
			var f *failure
			if errors.As(err, &f) {
				c.blame(f.m, f.err)
				return f.err
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
