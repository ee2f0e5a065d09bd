package client

import (
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// tipPlan plans the verification of the range of v without the peers'
// checkpoints when they add nothing: the range lies in one checkpoint
// segment whose filter header before it this life verified already with
// several peers, and at most tipWindow heights of it, crossing no
// checkpoint, are not verified yet. That is a client following the tip.
// The segment is then verified as any other (segmentHeaders): what is
// verified is not asked again, one peer that reaches the new heights is
// asked for the new filter hashes alone, from the verified header before
// them, and every other for its word on its highest (a getcfheaders of
// one each, see partialClaims), and the answers are compared height by
// height, with the store too, and settled as ever:
// the cross-check and the dispute rules are the same. The checkpoints
// bound segments whose start is not verified yet, which is not the case
// here. ok is false when the case does not hold, and the verification is
// planned from the checkpoints (checkpointPlan).
func (v *verification) tipPlan() (p segmentPlan, ok bool) {
	c, from, to := v.c, v.from, v.to
	first := segmentFirst(segmentOf(to))
	start := from
	if c.st != nil {
		start = min(from, c.st.FilterHeaderTip()+1)
	}
	if start < first || c.conflicts.first(0) >= 0 {
		return segmentPlan{}, false
	}
	var prev chainhash.Hash
	if first > 0 {
		known := c.knownPrefix(first-1, first-1)
		if len(known) == 0 {
			return segmentPlan{}, false
		}
		prev = known[0]
	}
	last := first - 1 + int32(len(c.knownPrefix(first, to))) // the highest height verified
	if last < to && (to-last > tipWindow || to%wire.CFCheckptInterval == 0) {
		return segmentPlan{}, false
	}
	return segmentPlan{first: first, prev: prev, start: start}, true
}
