package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// Filter headers are verified by height, segment by segment between the
// checkpoints, as the package documentation describes. The verification
// runs in stages, each in a file of its own that calls only the files
// listed after it:
//
//   - verify.go starts a verification and runs its stages;
//   - tipheaders.go plans a range near the tip without the checkpoints;
//   - checkpoints.go otherwise gets and settles the peers' checkpoints,
//     and plans from them;
//   - stored.go checks the store against the agreed checkpoints;
//   - segments.go gets the filter headers of each segment planned, from
//     the store or the peers (the getcfheaders request), and holds the
//     segments' arithmetic;
//   - conclude.go stores and records what was verified;
//   - storeddispute.go compares what the store holds with the peers;
//   - dispute.go settles, with the block, the first height where the
//     peers differ, and claims.go finds it;
//   - verification.go holds the state of one verification, and
//     headerchain.go the filter headers a chain of filter hashes reaches.

// filterHeaders returns the verified basic filter headers of the blocks
// from-1..to (the first is zero for from 0), as the comment above
// describes; peers proven wrong are banned on the way. With a store, the
// range verified starts at the store's tip, so that what is stored stays
// one unbroken chain from the genesis block, and what the store holds is
// checked too (see storedSegment). A peer silent on the heights it
// claimed late takes part below them only (see lateClaims). It returns
// the peers still taking part.
func (c *Client) filterHeaders(ctx context.Context, log *scanLog, ms []*pool.Member, from, to int32) ([]chainhash.Hash, []*pool.Member, error) {
	return c.filterHeadersFed(ctx, log, ms, from, to, nil)
}

// filterHeadersFed is filterHeaders for a scan that downloads the filters
// of the range anyway: with feed, the segments bounded by an agreed
// checkpoint are verified by their filters (see filterFeed).
func (c *Client) filterHeadersFed(ctx context.Context, log *scanLog, ms []*pool.Member, from, to int32, feed *filterFeed) ([]chainhash.Hash, []*pool.Member, error) {
	v := &verification{c: c, log: log, from: from, to: to, asked: from, reach: map[*pool.Member]int32{}, cps: map[*pool.Member][]chainhash.Hash{},
		cpLimit: math.MaxInt, words: c.takeLateWords(), feed: feed}
	for _, m := range ms {
		if r := c.svc.late.reachFor(m, c.reachOf(m, to)); r >= 0 {
			v.ms = append(v.ms, m)
			v.reach[m] = r
		}
	}
	v.all = slices.Clone(v.ms)
	// A peer not ready (see ready) is left out of this verification. ms
	// is read from pool.Pool.Serving just before, which no longer lists
	// a peer whose ended connection ready would refuse for its backoff
	// (the end counted or not); but ready still fails for what Serving
	// cannot tell: a connection due to be dialled again whose dial
	// fails (its node gone), one a flood ended (listed for the request
	// that finds it to ban it: this one, see leftOutNotReady), or one
	// that ended since ms was read. Asked here, each would fail the
	// verification's requests, and the scan's retries picked it again.
	v.ms = slices.DeleteFunc(v.ms, func(m *pool.Member) bool {
		return c.leftOutNotReady(ctx, m)
	})
	if err := ctx.Err(); err != nil {
		return nil, ms, err
	}
	v.placeWords()
	if len(v.ms) == 0 {
		return nil, ms, fmt.Errorf("client: %w: no peer offers compact filters for heights %d..%d", ErrNoPeers, from, to)
	}
	full, p, err := v.planned(ctx)
	if err != nil {
		return nil, v.ms, v.keepLeftWords(err)
	}
	headers, left, err := v.conclude(full, p.first, p.start)
	if err == nil {
		v.noteLeftOut()
		c.owns.follow(c.conflicts.first(0), from-1, headers)
	}
	c.owns.keepOnly(c.pool.Members())
	return headers, left, v.keepLeftWords(err)
}

// leftOutNotReady reports whether m is left out of a verification, not
// ready (see ready): logged, and banned when a flood ended its
// connection (the flood is the proof, as blame takes it).
func (c *Client) leftOutNotReady(ctx context.Context, m *pool.Member) bool {
	err := c.ready(ctx, m)
	if err == nil {
		return false
	}
	c.logf("%s: dialling again before verifying filter headers: %v", m.Addr(), err)
	if errors.Is(err, peer.ErrFlooding) {
		c.blame(m, err)
	}
	return true
}

// planned plans the verification of v (ownPlan, tipPlan, or else
// checkpointPlan) and returns the filter headers of p.first-1..to it
// verifies.
func (v *verification) planned(ctx context.Context) ([]chainhash.Hash, segmentPlan, error) {
	if p, ok := v.ownPlan(); ok {
		full, err := v.ownSegments(ctx, p)
		return full, p, err
	}
	p, ok := v.tipPlan()
	if !ok || v.heldBelow(p.first) {
		var err error
		if p, err = v.checkpointPlan(ctx); err != nil {
			return nil, p, err
		}
	}
	full, err := v.segments(ctx, p)
	return full, p, err
}

// noteLeftOut says, for the scan's result, which peers left the
// verification unbanned (too slow or gone): what was verified was not
// cross-checked with them, and rests on the peers left, named (whether
// those are one or several: colluders faster than an honest peer are
// many and fast).
func (v *verification) noteLeftOut() {
	var left, kept []string
	for _, m := range v.all {
		switch {
		case slices.Contains(v.ms, m):
			kept = append(kept, m.Addr())
		case !v.c.pool.Status(m).Banned && v.reach[m] >= v.from:
			left = append(left, m.Addr())
		}
	}
	if len(left) == 0 {
		return
	}
	note := fmt.Sprintf("the filter headers of heights %d..%d were not cross-checked with %s, left out unbanned (too slow or gone, see the peers' warnings): they rest on the peers left, %s",
		v.from, v.to, strings.Join(left, ", "), strings.Join(kept, ", "))
	if !slices.Contains(v.log.notes, note) {
		v.log.note(note)
	}
}
