package client

import (
	"context"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// A following rescan scans again what it reported resting on one peer
// once another peer holds it: see the package documentation (The
// guarantee).

// restedOnOne reports whether a scan's result rests on a single peer
// whole: no peer's word was compared with another's and no heights are
// named OnePeer (the only live peer, which a scan with one peer names in
// Warnings alone). It returns the only live peer offering compact
// filters now, "" if none is.
func (c *Client) restedOnOne(res *ScanResult) (string, bool) {
	if len(res.OnePeer) > 0 || slices.ContainsFunc(res.Peers, func(st PeerStatus) bool { return st.Compared }) {
		return "", false
	}
	switch ms := c.pool.Serving(wire.SFNodeCF); len(ms) {
	case 0:
		return "", true
	case 1:
		return ms[0].Addr(), true
	}
	return "", false
}

// txItem is a watch item reported for a transaction.
type txItem struct {
	txid chainhash.Hash
	item int
}

// reportedBlock is what the rescan reported of a block connected: how
// many watch items it was scanned with, and the items reported for its
// transactions.
type reportedBlock struct {
	items int
	pairs []txItem
}

// noteReported records the matches reported of the block at height h,
// scanned with items watch items. Called with mu held.
func (r *Rescan) noteReported(h int32, items int, ms []Match) {
	b := reportedBlock{items: items}
	for _, m := range ms {
		for _, i := range m.WatchItems {
			b.pairs = append(b.pairs, txItem{m.Txid, i})
		}
	}
	r.reported = append(r.reported, b)
}

// missed returns the matches of ms at height h not reported before: each
// with the watch items, of those the block was first scanned with, not
// reported for it; none for a height not reported. Called with mu held.
func (r *Rescan) missed(h int32, ms []Match) []Match {
	if h < r.base || h >= r.base+int32(len(r.reported)) {
		return nil
	}
	b := &r.reported[h-r.base]
	var out []Match
	for _, m := range ms {
		var items []int
		for _, i := range m.WatchItems {
			if p := (txItem{m.Txid, i}); i < b.items && !slices.Contains(b.pairs, p) {
				items = append(items, i)
				b.pairs = append(b.pairs, p)
			}
		}
		if len(items) > 0 {
			m.WatchItems = items
			out = append(out, m)
		}
	}
	return out
}

// recheckFrom returns the lowest unsure height another peer than the one
// it rested on now holds, or -1. Called with mu held.
func (r *Rescan) recheckFrom() int32 {
	from := int32(-1)
	for _, o := range r.unsure {
		if (from < 0 || o.From < from) && r.c.contested(o, o.From) {
			from = o.From
		}
	}
	return from
}

// recheck scans again, from the lowest unsure height another peer holds
// now up to the last block reported that a peer holds, and reports what the first scan
// missed. A failed scan is kept as a warning and tried again later; it
// returns an error only when ctx ends or the chain changed deeper than
// the rescan remembers.
func (r *Rescan) recheck(ctx context.Context) error {
	r.mu.Lock()
	// Up to what the peers hold: a liar may have been alone higher up.
	from, to := r.recheckFrom(), min(r.next-1, r.c.bestHeld(wire.SFNodeCF))
	req := ScanRequest{Watch: r.items, From: from, To: to, withHeaders: true}
	wl := r.wl
	r.mu.Unlock()
	if from < 0 || from > to {
		return nil
	}
	res, err := r.c.scan(ctx, req, "bip157", wire.SFNodeCF, func(ctx context.Context, log *scanLog, req ScanRequest) (*ScanResult, error) {
		return r.c.scanBIP157(ctx, log, req, wl)
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.addWarnings([]string{fmt.Sprintf("scanning again heights %d-%d, which rested on one peer: %v", from, to, err)})
		return nil
	}
	if err := r.reportReorg(); err != nil {
		return err
	}
	r.addWarnings(res.Warnings)
	events := r.rechecked(req, res)
	for _, e := range events {
		r.emit(e)
	}
	return nil
}

// rechecked takes in the result of scanning again req's heights: the
// heights it still rests on one peer for stay unsure, and it returns the
// events of what the first scan missed. Nothing if the blocks scanned are
// no longer those reported (the next reportReorg reports the change).
func (r *Rescan) rechecked(req ScanRequest, res *ScanResult) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.From < r.base || req.To >= r.next {
		return nil
	}
	for h := req.From; h <= req.To; h++ {
		if res.headers[h-req.From].BlockHash() != r.emitted[h-r.base] {
			return nil
		}
	}
	was := r.unsure
	r.unsure = trimLonely(r.unsure, req.From, req.To)
	for _, o := range res.OnePeer {
		r.unsure = addLonely(r.unsure, o)
	}
	if alone, byOne := r.c.restedOnOne(res); byOne {
		r.unsure = addLonely(r.unsure, OnePeer{From: req.From, To: req.To, Peer: alone})
	}
	var events []Event
	i := 0
	for h := req.From; h <= req.To; h++ {
		j := i
		for ; j < len(res.Matches) && res.Matches[j].Height == h; j++ {
		}
		missed := r.missed(h, res.Matches[i:j])
		i = j
		unsure := slices.ContainsFunc(was, func(o OnePeer) bool { return o.From <= h && h <= o.To })
		if len(missed) == 0 && !unsure {
			continue
		}
		hdr := res.headers[h-req.From]
		hash := hdr.BlockHash()
		for k := range missed {
			events = append(events, Event{Kind: EventMatch, Height: h, BlockHash: hash, Header: hdr, Match: &missed[k]})
		}
		e := Event{Kind: EventRechecked, Height: h, BlockHash: hash, Header: hdr}
		for _, o := range r.unsure {
			if o.From <= h && h <= o.To {
				e.OnePeer = o.Peer
			}
		}
		events = append(events, e)
	}
	return events
}
