package client

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// Filter headers are verified by height, segment by segment between the
// checkpoints, as the package documentation describes. The verification
// runs in stages, each in a file of its own that calls only the stages
// after it:
//
//   - verify.go starts a verification and plans it, with
//   - tipheaders.go, which plans a range near the tip without the
//     checkpoints, or with
//   - checkpoints.go, which gets and settles the peers' checkpoints, and
//     stored.go, which checks the store against them;
//   - segments.go gets the filter headers of each segment;
//   - dispute.go settles the first height where the peers differ;
//   - conclude.go stores and records what was verified;
//   - cfheaders.go holds the segments' arithmetic and the getcfheaders
//     request that all of them share.

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
}

// plan is where a verification starts asking segment by segment.
type plan struct {
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
}

// filterHeaders returns the verified basic filter headers of the blocks
// from-1..to (the first is zero for from 0), as the comment above
// describes; peers proven wrong are banned on the way. With a store, the
// range verified starts at the store's tip, so that what is stored stays
// one unbroken chain from the genesis block, and what the store holds is
// checked too (see storedSegment). It returns the peers still taking
// part.
func (c *Client) filterHeaders(ctx context.Context, log *scanLog, ms []*pool.Member, from, to int32) ([]chainhash.Hash, []*pool.Member, error) {
	v := &verification{c: c, log: log, from: from, to: to, asked: from, reach: map[*pool.Member]int32{}, cps: map[*pool.Member][]chainhash.Hash{},
		cpLimit: math.MaxInt}
	for _, m := range ms {
		if r := c.reachOf(m, to); r >= 0 {
			v.ms = append(v.ms, m)
			v.reach[m] = r
		}
	}
	v.all = slices.Clone(v.ms)
	if len(v.ms) == 0 {
		return nil, ms, fmt.Errorf("client: %w: no peer offers compact filters for heights %d..%d", ErrNoPeers, from, to)
	}
	p, ok := v.tipPlan()
	if !ok {
		var err error
		if p, err = v.checkpointPlan(ctx); err != nil {
			return nil, v.ms, err
		}
	}
	full, err := v.segments(ctx, p)
	if err != nil {
		return nil, v.ms, err
	}
	return v.conclude(full, p.first, p.start)
}
