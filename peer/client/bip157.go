package client

import (
	"context"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/wire"
)

// scanBIP157 runs one pass of the scan over the current chain.
// wl carries the outpoints found before, by earlier passes or scans.
func (c *Client) scanBIP157(ctx context.Context, log *scanLog, req ScanRequest, wl *watchList) (*ScanResult, error) {
	from, to := req.From, req.To
	// btcd v0.24.2 crashes on cfilter requests when it runs without
	// them: peers without the service are never asked.
	ms := c.pool.Serving(wire.SFNodeCF)
	if len(ms) == 0 {
		return nil, fmt.Errorf("client: %w: no peer offers compact filters (NODE_COMPACT_FILTERS)", ErrNoPeers)
	}
	log.startPass()
	scripts := wl.scripts
	var cs *coverScan
	var err error
	matching := scripts
	// lo is the first height whose filter is matched: from, or with
	// covers the first of their margin below it (rangeMargin), whose
	// blocks are fetched for covers only.
	lo := from
	if c.cfg.PrivacyTarget > 0 {
		if cs, err = c.startCovers(scripts, from, to); err != nil {
			return nil, err
		}
		matching = slices.Concat(scripts, cs.covers)
		lo = cs.from
	}
	// The filters of the segments that end at an agreed checkpoint are
	// downloaded while the filter headers are verified, and verify them
	// (see filterFeed).
	feed := c.newFilterFeed(matching)
	headers, ms, err := c.filterHeadersFed(ctx, log, ms, lo, to, feed)
	if err != nil {
		return nil, err
	}
	res := &ScanResult{From: from, To: to, Matches: []Match{}, BlocksScanned: int(to-from) + 1}
	if req.withHeaders {
		res.filterHeaders = headers[from-lo:]
	}
	matched, received, err := c.matchFilters(ctx, log, ms, matching, headers, lo, to, req.Progress, feed)
	if err != nil {
		return nil, err
	}
	res.FiltersReceived = received
	// A match below from is a cover's, or none: the plan fetches the
	// covers' blocks of the margin itself.
	matched = slices.DeleteFunc(matched, func(h int32) bool { return h < from })
	// Where the peers (or the store and the peers) disagree and the block
	// cannot decide, the block is scanned whole: what it holds is found
	// whichever side is right.
	res.Conflicts = append(c.conflicts.in(from, to, c.chain.Hash), c.conflicts.takeStored(from, to, c.chain.Hash)...)
	forced := map[int32]bool{}
	for _, k := range res.Conflicts {
		if !slices.Contains(matched, k.Height) {
			matched = append(matched, k.Height)
			forced[k.Height] = true
		}
	}
	slices.Sort(matched)
	planned := scripts
	if cs != nil {
		// The covers' blocks join the wallet's in one plan, which spreads
		// a cover's blocks over the peers as it spreads a watched
		// script's.
		if matched, err = cs.plan(ctx, log, matched, forced); err != nil {
			return nil, err
		}
		planned = slices.Concat(scripts, cs.scripts())
	}
	blocks, err := c.fetchBlocks(ctx, log, matched, c.scriptsAt(matched, planned))
	if err != nil {
		return nil, err
	}
	if cs != nil {
		res.Cover = cs.finish(matched, blocks)
		res.Warnings = append(res.Warnings, cs.warnings...)
	}
	for _, k := range res.Conflicts {
		res.Warnings = append(res.Warnings, k.String())
	}
	// The blocks of the covers' margin are fetched, never scanned for
	// the wallet.
	if cs != nil && lo < from {
		var hs []int32
		var bs []*wire.MsgBlock
		for i, h := range matched {
			if h >= from {
				hs, bs = append(hs, h), append(bs, blocks[i])
			} else {
				res.BlocksFetched++
			}
		}
		matched, blocks = hs, bs
	}
	res.scanBlocks(wl, matched, blocks, func(h int32) bool { return !forced[h] && (cs == nil || cs.walletAt[h]) }, c.chain.Hash)
	for i, it := range req.Watch {
		if it.IsOutPoint && len(it.Script) == 0 {
			res.Warnings = append(res.Warnings, fmt.Sprintf(
				"watch item %d (outpoint %v) has no script: BIP 158 filters hold scripts, not outpoints, so its spend is found only if its block is fetched for another item; give the script it pays (TXID:VOUT:ADDRESS)", i, it.OutPoint))
		}
	}
	return res, nil
}
