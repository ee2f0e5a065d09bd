package client

import (
	"context"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
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
	headers, ms, err := c.filterHeaders(ctx, log, ms, from, to)
	if err != nil {
		return nil, err
	}
	res := &ScanResult{From: from, To: to, Matches: []Match{}, BlocksScanned: int(to-from) + 1}
	if req.withHeaders {
		res.filterHeaders = headers
	}
	scripts := wl.scripts
	var cs *coverScan
	matching := scripts
	if c.cfg.PrivacyTarget > 0 {
		if cs, err = c.startCovers(scripts, from, to); err != nil {
			return nil, err
		}
		matching = slices.Concat(scripts, cs.covers)
	}
	matched, received, err := c.matchFilters(ctx, ms, matching, headers, from, to, req.Progress)
	if err != nil {
		return nil, err
	}
	res.FiltersReceived = received
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
		planned = slices.Concat(scripts, cs.set.Scripts())
	}
	blocks, err := c.fetchBlocks(ctx, log, matched, c.scriptsAt(matched, planned))
	if err != nil {
		return nil, err
	}
	if cs != nil {
		res.Cover = cs.finish(matched, blocks)
		res.Warnings = append(res.Warnings, cs.warnings...)
	}
	for i, b := range blocks {
		h := matched[i]
		res.BlocksFetched++
		found, pays := false, false
		for i, tx := range b.Transactions {
			if items, spends := wl.match(tx); len(items) > 0 {
				found = true
				res.Matches = append(res.Matches, Match{
					Txid: tx.TxHash(), Tx: tx, Height: h, BlockHash: c.chain.Hash(h), TxIndex: i, WatchItems: items, Spends: spends,
				})
			}
			pays = pays || wl.pays(tx)
		}
		switch {
		case found, forced[h]:
		case cs != nil && !cs.walletAt[h]:
			// Fetched for a cover: its matches are not the wallet's.
		case len(scripts) > 0 && !pays && spendsUnrevealed(b):
			// The filter holds a watched script no output pays: an input
			// spends it without revealing it.
			res.SpendOnlyBlocks = append(res.SpendOnlyBlocks, h)
		default:
			res.FalsePositiveBlocks++
		}
	}
	for _, k := range res.Conflicts {
		res.Warnings = append(res.Warnings, k.String())
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
			if typ, _ := gcs.SpendCandidates(in); !typ.Reveals() {
				return true
			}
		}
	}
	return false
}
