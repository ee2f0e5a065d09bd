package peer

import (
	"context"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
)

// ScanBIP157 scans blocks from..to (inclusive) of chain with BIP 157
// basic compact filters for transactions paying to or spending from the
// output scripts in watch.
//
// It gets the filter-header checkpoints up to the end of the range
// (getcfcheckpt), the filter headers from the checkpoint below the range
// (getcfheaders, at most 2,000 per request), checking that the chain of
// headers meets every checkpoint on its way, and the filters (getcfilters,
// at most 1,000 per request), each checked against its header. Filters
// are matched locally; only matching blocks are downloaded, verified
// against the header chain, and searched for the transactions that
// involve a watch item. A matching block without such a transaction counts
// as a false-positive block.
//
// With a single peer, filter headers after the last checkpoint in range
// are only as good as that peer; every filter is still bound to them.
// A spend is recognized when it spends an output found earlier in the
// scan, or reveals the key or script of a watched P2PKH, P2WPKH, P2SH or
// P2WSH output.
func (p *Peer) ScanBIP157(ctx context.Context, chain *HeaderChain, watch [][]byte, from, to int32, progress func(done, total int)) (*ScanResult, error) {
	if err := checkRange(chain, from, to); err != nil {
		return nil, err
	}
	end, err := p.begin("bip157 scan")
	if err != nil {
		return nil, err
	}
	defer end()
	// btcd v0.24.2 crashes on cfilter requests when it runs without
	// them: refuse before sending any.
	if err := p.need("getcfcheckpt", wire.SFNodeCF, "NODE_COMPACT_FILTERS (BIP 157)"); err != nil {
		return nil, err
	}
	startBytes := p.BytesReceived()
	res := &ScanResult{Matches: []Match{}, BlocksScanned: int(to-from) + 1}

	checkpoints, err := p.cfCheckpoints(ctx, chain, to)
	if err != nil {
		return nil, err
	}
	filterHashes, err := p.cfHeaders(ctx, chain, checkpoints, from, to)
	if err != nil {
		return nil, err
	}
	wl := newWatchList(watch)
	matcher := gcs.NewMatcher(watch)
	for start := from; start <= to; start += wire.MaxGetCFiltersReqRange {
		stop := min(to, start+wire.MaxGetCFiltersReqRange-1)
		matched, err := p.cfilters(ctx, chain, matcher, filterHashes[start-from:], start, stop)
		if err != nil {
			return nil, err
		}
		res.FiltersReceived += int(stop-start) + 1
		err = p.fetchBlocks(ctx, chain, matched, func(h int32, b *wire.MsgBlock) error {
			res.BlocksFetched++
			found := false
			for _, tx := range b.Transactions {
				if items := wl.involve(tx); len(items) > 0 {
					found = true
					res.Matches = append(res.Matches, Match{
						Txid: tx.TxHash(), Tx: tx, Height: h, BlockHash: chain.Hash(h), WatchItems: items,
					})
				}
			}
			if !found {
				res.FalsePositiveBlocks++
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if progress != nil {
			progress(int(stop-from)+1, res.BlocksScanned)
		}
	}
	res.BytesReceived = p.BytesReceived() - startBytes
	return res, nil
}

// cfCheckpoints returns the basic filter headers at every multiple of
// 1,000 up to height to.
func (p *Peer) cfCheckpoints(ctx context.Context, chain *HeaderChain, to int32) ([]chainhash.Hash, error) {
	const op = "getcfcheckpt"
	stop := chain.Hash(to)
	if err := p.send(ctx, op, wire.NewMsgGetCFCheckpt(wire.GCSFilterRegular, &stop)); err != nil {
		return nil, err
	}
	{
		m, err := p.recv(ctx, op, is[*wire.MsgCFCheckpt])
		if err != nil {
			return nil, err
		}
		cp := m.(*wire.MsgCFCheckpt)
		if cp.FilterType != wire.GCSFilterRegular || cp.StopHash != stop {
			return nil, p.fail(op, "%w: checkpoints for filter type %d up to %v, asked for type 0 up to %v",
				ErrBadFilterHeader, cp.FilterType, cp.StopHash, stop)
		}
		if want := int(to / wire.CFCheckptInterval); len(cp.FilterHeaders) != want {
			return nil, p.fail(op, "%w: %d checkpoints up to height %d, expected %d",
				ErrBadFilterHeader, len(cp.FilterHeaders), to, want)
		}
		out := make([]chainhash.Hash, len(cp.FilterHeaders))
		for i, h := range cp.FilterHeaders {
			out[i] = *h
		}
		return out, nil
	}
}

// cfHeaders fetches the filter headers from the last checkpoint below
// from up to to, checks the chain against the checkpoints, and returns the
// filter hashes of heights from..to.
func (p *Peer) cfHeaders(ctx context.Context, chain *HeaderChain, checkpoints []chainhash.Hash, from, to int32) ([]chainhash.Hash, error) {
	const op = "getcfheaders"
	const interval = wire.CFCheckptInterval
	// Start right after the last checkpoint below from, whose header is
	// then the previous header; from the genesis block if there is none.
	var prev chainhash.Hash
	start := int32(0)
	if from > 0 {
		if k := (from - 1) / interval; k > 0 {
			start = k*interval + 1
			prev = checkpoints[k-1]
		}
	}
	hashes := make([]chainhash.Hash, 0, to-from+1)
	for start <= to {
		stop := min(to, start+wire.MaxCFHeadersPerMsg-1)
		stopHash := chain.Hash(stop)
		if err := p.send(ctx, op, wire.NewMsgGetCFHeaders(wire.GCSFilterRegular, uint32(start), &stopHash)); err != nil {
			return nil, err
		}
		m, err := p.recv(ctx, op, is[*wire.MsgCFHeaders])
		if err != nil {
			return nil, err
		}
		msg := m.(*wire.MsgCFHeaders)
		switch {
		case msg.FilterType != wire.GCSFilterRegular || msg.StopHash != stopHash:
			return nil, p.fail(op, "%w: headers for filter type %d up to %v, asked for type 0 up to %v",
				ErrBadFilterHeader, msg.FilterType, msg.StopHash, stopHash)
		case msg.PrevFilterHeader != prev:
			return nil, p.fail(op, "%w: previous filter header %v at height %d, expected %v",
				ErrBadFilterHeader, msg.PrevFilterHeader, start-1, prev)
		case len(msg.FilterHashes) != int(stop-start)+1:
			return nil, p.fail(op, "%w: %d filter hashes for heights %d..%d", ErrBadFilterHeader, len(msg.FilterHashes), start, stop)
		}
		for i, fh := range msg.FilterHashes {
			h := start + int32(i)
			prev = gcs.MakeHeader(fh, &prev)
			if h > 0 && h%interval == 0 && checkpoints[h/interval-1] != prev {
				return nil, p.fail(op, "%w: filter header chain reaches %v at height %d, checkpoint says %v",
					ErrBadFilterHeader, prev, h, checkpoints[h/interval-1])
			}
			if h >= from {
				hashes = append(hashes, *fh)
			}
		}
		start = stop + 1
	}
	return hashes, nil
}

// cfilters fetches the filters start..stop, checks each against its filter
// hash and returns the heights whose filter matches.
func (p *Peer) cfilters(ctx context.Context, chain *HeaderChain, matcher *gcs.Matcher, filterHashes []chainhash.Hash, start, stop int32) ([]int32, error) {
	const op = "getcfilters"
	stopHash := chain.Hash(stop)
	if err := p.send(ctx, op, wire.NewMsgGetCFilters(wire.GCSFilterRegular, uint32(start), &stopHash)); err != nil {
		return nil, err
	}
	var matched []int32
	for h := start; h <= stop; {
		m, err := p.recv(ctx, op, is[*wire.MsgCFilter])
		if err != nil {
			return nil, err
		}
		cf := m.(*wire.MsgCFilter)
		want := chain.Hash(h)
		if cf.FilterType != wire.GCSFilterRegular || cf.BlockHash != want {
			return nil, p.fail(op, "%w: filter of type %d for block %v, expected type 0 for %v (height %d)",
				ErrBadFilter, cf.FilterType, cf.BlockHash, want, h)
		}
		if got := chainhash.DoubleHashH(cf.Data); got != filterHashes[h-start] {
			return nil, p.fail(op, "%w: filter for block %v (height %d) hashes to %v, its filter header commits to %v",
				ErrBadFilter, want, h, got, filterHashes[h-start])
		}
		f, err := gcs.DecodeBasic(cf.Data)
		if err != nil {
			return nil, p.fail(op, "%w: filter for block %v (height %d): %v", ErrBadFilter, want, h, err)
		}
		if matcher.Len() > 0 && matcher.Match(f, gcs.BasicKey(&want)) {
			matched = append(matched, h)
		}
		h++
	}
	return matched, nil
}
