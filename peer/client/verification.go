package client

import (
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// verification is one verification of the filter headers of a range.
type verification struct {
	c        *Client
	log      *scanLog                          // the operation's
	all      []*pool.Member                    // the peers that took part
	ms       []*pool.Member                    // the peers taking part, live ones only after each step
	reach    map[*pool.Member]int32            // the highest height of the range each can speak for
	cps      map[*pool.Member][]chainhash.Hash // each peer's checkpoints up to its reach
	from, to int32
	// asked is the lowest height whose filter header the peers were
	// asked for: below from when a segment is asked again from a height
	// this life verified with one peer only (see knownPrefix).
	asked int32
	// cpLimit is the index of the first checkpoint not compared: the
	// peers' checkpoints from there on may differ by the filters the
	// block of a conflict could not decide between (see Conflict). From
	// that segment on, every peer states its own filter hashes, from its
	// own filter header before them (own), and they are compared height
	// by height.
	cpLimit int
	own     map[*pool.Member]chainhash.Hash
	// words are the peers' filter headers before the heights they were
	// asked for that differed from the verified ones, held against what
	// they state when those heights are asked again (see disputedPrev).
	words []headerWord
	// feed, for a scan, downloads the filters of the segments that end
	// at an agreed checkpoint, which verify them in place of their
	// filter headers (see filterFeed); nil otherwise.
	feed *filterFeed
}

// segmentPlan is where a verification starts asking segment by segment.
type segmentPlan struct {
	// agreed are the agreed checkpoints up to the range's end (none near
	// the tip, see tipPlan).
	agreed []chainhash.Hash
	// first is the first height of the first segment asked, prev the
	// filter header before it.
	first int32
	prev  chainhash.Hash
	// start is the first height that the store or this life did not hold
	// verified already.
	start int32
	// own, for ownPlan, is the first height the peers are asked for.
	own int32
}

// covering returns the peers of v that stated checkpoint i.
func (v *verification) covering(i int) []*pool.Member {
	var out []*pool.Member
	for _, m := range v.ms {
		if len(v.cps[m]) > i {
			out = append(out, m)
		}
	}
	return out
}

// keepLive drops the peers no longer live from the verification.
func (v *verification) keepLive() { v.ms = v.c.pool.Keep(v.ms) }

// prevOf returns m's own filter header before the segment being
// verified: prev, unless the peers' chains of filter headers differ there
// by an undecided filter below it.
func (v *verification) prevOf(m *pool.Member, prev chainhash.Hash) chainhash.Hash {
	if p, ok := v.own[m]; ok {
		return p
	}
	return prev
}
