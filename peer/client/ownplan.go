package client

import (
	"context"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// ownPlan plans the verification of the range of v near the tip while a
// conflict parts the peers' chains of filter headers (where tipPlan does
// not apply), as the comment on ownHeaders describes. first is the
// lowest height above the own filter headers kept of the peers that
// reach the range: each peer that reaches first is asked from there,
// from its own filter header before it (held in own), and the heights of
// the range below first, which every such peer was compared on already,
// are the verified ones kept. ok is false when the case does not hold: a
// peer without its own filter header there, more than tipWindow heights
// to ask, a range starting below the first conflict, or words held (see
// placeWords).
func (v *verification) ownPlan() (p segmentPlan, ok bool) {
	c := v.c
	u := c.conflicts.first(0)
	if u < 0 || v.from < u || len(v.words) > 0 {
		return segmentPlan{}, false
	}
	first := v.to + 1
	for _, m := range v.ms {
		if v.reach[m] >= v.from {
			first = min(first, c.owns.top(m, c.chain.Hash)+1)
		}
	}
	if first <= 0 || v.to-first+1 > tipWindow {
		return segmentPlan{}, false
	}
	own := map[*pool.Member]chainhash.Hash{}
	for _, m := range v.ms {
		if v.reach[m] < first {
			continue
		}
		h, ok := c.owns.at(m, first-1, c.chain.Hash)
		if !ok {
			return segmentPlan{}, false
		}
		own[m] = h
	}
	low := min(v.from, first)
	if _, ok := c.owns.followed(low-1, first-1); !ok {
		return segmentPlan{}, false
	}
	prev, _ := c.owns.followed(low-1, low-1)
	v.own, v.cpLimit = own, 0
	return segmentPlan{first: low, prev: prev[0], start: low, own: first}, true
}

// ownSegments returns the verified filter headers of p.first-1..to for
// ownPlan: those kept below p.own, and above it the new filter hashes
// each peer states from its own filter header, compared segment by
// segment (see segment).
func (v *verification) ownSegments(ctx context.Context, p segmentPlan) ([]chainhash.Hash, error) {
	kept, _ := v.c.owns.followed(p.first-1, p.own-1)
	full := make([]chainhash.Hash, len(kept), v.to-p.first+2)
	copy(full, kept)
	for start := p.own; start <= v.to; {
		j := segmentOf(start)
		hashes, err := v.segment(ctx, j, nil, start, full[len(full)-1])
		if err != nil {
			return nil, err
		}
		full = append(full, headersFrom(full[len(full)-1], hashes)...)
		start += int32(len(hashes))
	}
	return full, nil
}
