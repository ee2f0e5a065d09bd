package client

import (
	"math"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// A following rescan scans again what it reported resting on one peer
// once another peer holds it, and what it scanned against filter headers
// the client has since verified anew to other values: see the package
// documentation (The guarantee).

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
// many watch items it was scanned with, the verified filter header it was
// scanned against (zero if unknown), and the items reported for its
// transactions.
type reportedBlock struct {
	items  int
	filter chainhash.Hash
	pairs  []txItem
}

// rechecks is what a rescan keeps to scan again the blocks it reported
// resting on one peer, and to report then only what it had not: what it
// reported of each block it remembers, and the heights that rested on
// one peer. Its owner holds the blocks' heights and hashes and guards it
// with its lock.
type rechecks struct {
	reported []reportedBlock // what was reported of each block remembered, lowest first
	unsure   []OnePeer       // the heights reported resting on one peer
	// revised is the count of the client's filter headers given up
	// (Client.revised) last seen, and compareFrom the lowest height whose
	// filter header is still to be compared with the one verified anew
	// since (noRevision when none is).
	revised     uint64
	compareFrom int32
}

// noRevision is rechecks.compareFrom when no filter header is to be
// compared.
const noRevision = math.MaxInt32

// note records the matches reported of the next block, scanned with
// items watch items against the verified filter header filter, and the
// peer it rested on alone, if any.
func (k *rechecks) note(items int, filter chainhash.Hash, ms []Match, unsure *OnePeer) {
	b := reportedBlock{items: items, filter: filter}
	for _, m := range ms {
		for _, i := range m.WatchItems {
			b.pairs = append(b.pairs, txItem{m.Txid, i})
		}
	}
	k.reported = append(k.reported, b)
	if unsure != nil {
		k.unsure = addLonely(k.unsure, *unsure)
	}
}

// missed returns the matches of ms in the i-th block remembered not
// reported before: each with the watch items, of those the block was
// first scanned with, not reported for it; none for a block not
// remembered.
func (k *rechecks) missed(i int, ms []Match) []Match {
	if i < 0 || i >= len(k.reported) {
		return nil
	}
	b := &k.reported[i]
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

// from returns the lowest unsure height another peer of c than the one
// it rested on now holds, or -1.
func (k *rechecks) from(c *Client) int32 {
	from := int32(-1)
	for _, o := range k.unsure {
		if (from < 0 || o.From < from) && c.contested(o, o.From) {
			from = o.From
		}
	}
	return from
}

// take takes in the result of scanning again req's heights, whose first
// remembered block is at height base: the heights it still rests on one
// peer of c for stay unsure, the filter headers they were scanned against
// now are remembered, and it returns the events of what the first scan
// missed. The caller checks first that the blocks scanned are those
// reported.
func (k *rechecks) take(c *Client, base int32, req ScanRequest, res *ScanResult) []Event {
	for h := req.From; h <= req.To; h++ {
		k.reported[h-base].filter = res.filterHeader(h)
	}
	if req.From <= k.compareFrom && k.compareFrom <= req.To {
		k.compareFrom = req.To + 1 // scanned against the headers verified now
	}
	was := k.unsure
	k.unsure = trimLonely(k.unsure, req.From, req.To)
	for _, o := range res.OnePeer {
		k.unsure = addLonely(k.unsure, o)
	}
	if alone, byOne := c.restedOnOne(res); byOne {
		k.unsure = addLonely(k.unsure, OnePeer{From: req.From, To: req.To, Peer: alone})
	}
	var events []Event
	i := 0
	for h := req.From; h <= req.To; h++ {
		j := i
		for ; j < len(res.Matches) && res.Matches[j].Height == h; j++ {
		}
		missed := k.missed(int(h-base), res.Matches[i:j])
		i = j
		// A height that rested on one peer and rests on it alone still
		// was compared with nobody: nothing to report but what it missed.
		if before := restsOn(was, h); len(missed) == 0 && (before == "" || restsOn(k.unsure, h) == before) {
			continue
		}
		events = append(events, k.recheckedAt(h, res.headers[h-req.From], missed)...)
	}
	return events
}

// recheckedAt returns the events of the block hdr at height h scanned
// again: the matches missed before, then EventRechecked naming the peer
// the block still rests on alone, if any.
func (k *rechecks) recheckedAt(h int32, hdr wire.BlockHeader, missed []Match) []Event {
	hash := hdr.BlockHash()
	var events []Event
	for i := range missed {
		events = append(events, Event{Kind: EventMatch, Height: h, BlockHash: hash, Header: hdr, Match: &missed[i]})
	}
	e := Event{Kind: EventRechecked, Height: h, BlockHash: hash, Header: hdr, OnePeer: restsOn(k.unsure, h)}
	return append(events, e)
}

// restsOn returns the peer that unsure says height h rests on alone, ""
// if none.
func restsOn(unsure []OnePeer, h int32) string {
	peer := ""
	for _, o := range unsure {
		if o.From <= h && h <= o.To {
			peer = o.Peer
		}
	}
	return peer
}
