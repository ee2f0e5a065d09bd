package client

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// checkpointPlan plans the verification of the range of v from the peers'
// checkpoints: it gets and settles them (checkpoints), checks the store
// against them, and starts at the segment holding the store's tip, or the
// segment where the peers' checkpoints part (see cpLimit), if lower.
func (v *verification) checkpointPlan(ctx context.Context) (segmentPlan, error) {
	c := v.c
	agreed, err := v.checkpoints(ctx)
	if err != nil {
		return segmentPlan{}, err
	}
	start := v.from
	if c.st != nil {
		if err := v.checkStoredCheckpoints(ctx, agreed); err != nil {
			return segmentPlan{}, err
		}
		start = min(v.from, c.st.FilterHeaderTip()+1)
	}
	start = v.knownOffCheckpoints(agreed, start)
	if v.cpLimit < math.MaxInt {
		// The peers' own filter headers are followed from the segment
		// where their checkpoints part.
		start = min(start, segmentFirst(v.cpLimit))
	}
	// The segments are asked whole, since a segment may be asked again
	// below start (see asked).
	first, prev := segmentStart(segmentOf(start), agreed)
	return segmentPlan{agreed: agreed, first: first, prev: prev, start: start}, nil
}

// knownOffCheckpoints gives up the filter headers this life verified from
// the segment whose agreed checkpoint they do not reach (they were agreed
// without the peers that settled the checkpoints, see settleCheckpoint),
// and returns the first height to verify: start, or that segment's first
// height if lower. (The store is compared with the checkpoints first, see
// checkStoredCheckpoints.)
func (v *verification) knownOffCheckpoints(agreed []chainhash.Hash, start int32) int32 {
	for i, cp := range agreed {
		h := int32(i+1) * wire.CFCheckptInterval
		if h > v.c.verifiedTo {
			break
		}
		if known := v.c.knownPrefix(h, h); len(known) == 1 && known[0] != cp {
			v.c.logf("the filter header verified at height %d is not the agreed checkpoint: verifying again from height %d", h, segmentFirst(i))
			v.c.giveUpVerified(segmentFirst(i) - 1)
			return min(start, segmentFirst(i))
		}
	}
	return start
}

// checkpoints gets every peer's checkpoints up to its reach, checks them
// against the hard-coded ones, settles every disagreement, and returns the
// agreed checkpoints up to the range's end.
func (v *verification) checkpoints(ctx context.Context) ([]chainhash.Hash, error) {
	c := v.c
	const interval = wire.CFCheckptInterval
	var mu sync.Mutex
	err := c.pool.Each(ctx, v.log.budget, v.ms, func(ctx context.Context, m *pool.Member) error {
		n := v.reach[m] / interval
		if n == 0 {
			return nil
		}
		cp, err := c.conn(m).GetCFCheckpt(ctx, c.chain.Hash(v.reach[m]), int(n))
		mu.Lock()
		v.cps[m] = cp
		mu.Unlock()
		return err
	})
	if err != nil {
		return nil, err
	}
	v.keepLive()
	// Hard-coded checkpoints come first: no peer overrules them.
	for _, m := range v.ms {
		for i, h := range v.cps[m] {
			if err := chain.CheckFilterHeader(c.cfg.Params, int32(i+1)*interval, h); err != nil {
				c.pool.Ban(m, peerErr(m, "getcfcheckpt", fmt.Errorf("%w: %v", peer.ErrBadFilterHeader, err)))
				break
			}
		}
	}
	v.keepLive()
	v.holdToCheckpoints()
	for {
		if len(v.ms) == 0 {
			return nil, c.noPeers("getcfcheckpt")
		}
		i, sides := v.checkpointSplit()
		if i < 0 {
			break
		}
		if err := v.settleCheckpoint(ctx, i, sides); err != nil {
			return nil, err
		}
		v.keepLive()
	}
	k := min(int(v.to/interval), v.cpLimit)
	agreed := make([]chainhash.Hash, k)
	for i := range agreed {
		ms := v.covering(i)
		if len(ms) == 0 {
			// Segments past here are stated by peers whose reach ends
			// inside them; nothing needs the missing checkpoints.
			return agreed[:i], nil
		}
		agreed[i] = v.cps[ms[0]][i]
	}
	return agreed, nil
}

// checkpointSplit returns the lowest checkpoint index the peers stating it
// disagree on, with the peers grouped by the checkpoint they state, or -1.
func (v *verification) checkpointSplit() (int, [][]*pool.Member) {
	for i := 0; i < v.cpLimit; i++ {
		ms := v.covering(i)
		if len(ms) == 0 {
			return -1, nil
		}
		sides := sidesOf(ms, func(m *pool.Member) chainhash.Hash { return v.cps[m][i] })
		if len(sides) > 1 {
			return i, sides
		}
	}
	return -1, nil
}

// sidesOf groups members by the hash key gives each, in first-seen order.
func sidesOf(ms []*pool.Member, key func(*pool.Member) chainhash.Hash) [][]*pool.Member {
	var sides [][]*pool.Member
	pos := map[chainhash.Hash]int{}
	for _, m := range ms {
		h := key(m)
		i, ok := pos[h]
		if !ok {
			i = len(sides)
			pos[h] = i
			sides = append(sides, nil)
		}
		sides[i] = append(sides[i], m)
	}
	return sides
}

// settleCheckpoint settles a disagreement over checkpoint i: one
// representative of each side states its filter hashes of the segment,
// which must lead to its checkpoint, and the first height they differ at
// is settled. Sides that differ only by filters their blocks could not
// decide between are left apart: the checkpoints from i on are not
// compared (cpLimit), and each peer states its own filter hashes.
func (v *verification) settleCheckpoint(ctx context.Context, i int, sides [][]*pool.Member) error {
	c := v.c
	start, prev := segmentStart(i, v.cps[sides[0][0]])
	end := int32(i+1) * wire.CFCheckptInterval
	claims := make([]claim, len(sides))
	for s, side := range sides {
		rep := side[0]
		got, err := c.checkpointSegment(ctx, rep, start, end, prev, v.cps[rep][i])
		if err != nil {
			return &pool.Failure{Member: rep, Err: err}
		}
		claims[s] = claim{members: side, hashes: got}
	}
	h, groups := firstSplit(start, claims, c.settled)
	if h >= 0 {
		return c.settleAt(ctx, v.log, h, groups)
	}
	if u := c.conflicts.first(start); u < 0 || u > end {
		return fmt.Errorf("client: checkpoints at height %d differ although the filter hashes before them agree", end)
	}
	v.cpLimit = i
	return nil
}
