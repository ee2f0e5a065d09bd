package client

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// tipWindow is the most filter headers above those verified already that
// every peer is asked for directly, without the checkpoints (see
// tipPlan): a client following the tip asks for one or a few.
const tipWindow = 100

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

// partialClaims returns the claims of the peers of ms on segment j from
// start, each up to its reach (end at most). Where it saves bytes, one
// peer states the hashes in full and every other gives its word on the
// filter header at its own reach alone (see tipWords); a word that
// differs, or a lead that stated nothing, has every peer state its
// hashes in full, compared and settled as ever (stateSegment), and a
// peer whose hashes do not lead to its own word contradicted itself: a
// failure of that peer.
func (v *verification) partialClaims(ctx context.Context, j int, ms []*pool.Member, start, end int32, prev chainhash.Hash, open bool) ([]claim, error) {
	lead, ok := v.wordsLead(j, ms, start, end, open)
	if !ok {
		return v.stateSegment(ctx, j, ms, start, end, prev, open)
	}
	claims, differ, err := v.tipWords(ctx, lead, ms, start, end, prev)
	if err != nil || claims != nil && len(differ) == 0 {
		return claims, err
	}
	rest := slices.DeleteFunc(v.c.pool.Keep(ms), func(m *pool.Member) bool { return claims != nil && m == lead })
	if len(rest) == 0 {
		return claims, nil
	}
	more, err := v.stateSegment(ctx, j, rest, start, end, prev, open)
	if err != nil {
		return nil, err
	}
	for _, w := range differ {
		for _, cl := range more {
			if cl.members[0] == w.m && !w.matches(start, prev, cl.hashes) {
				return nil, &pool.Failure{Member: w.m, Err: peerErr(w.m, "getcfheaders", fmt.Errorf(
					"%w: its filter hashes from height %d do not lead to its own word on the filter header at height %d",
					peer.ErrBadFilterHeader, start, w.height))}
			}
		}
	}
	return append(claims, more...), nil
}

// wordsLead returns the peer of ms that states segment j in full when
// the others give their words alone (see tipWords): the fastest of those
// reaching highest. ok is false where words save nothing or do not
// apply: fewer than two peers, none reaching past start, peers whose
// filter headers before the segment may differ (open), or a segment
// ending at a checkpoint a peer sent, which its own hashes must reach.
func (v *verification) wordsLead(j int, ms []*pool.Member, start, end int32, open bool) (*pool.Member, bool) {
	if len(ms) < 2 || open {
		return nil, false
	}
	top := int32(-1)
	for _, m := range ms {
		if end%wire.CFCheckptInterval == 0 && len(v.cps[m]) > j {
			return nil, false
		}
		top = max(top, min(end, v.reach[m]))
	}
	if top <= start {
		return nil, false
	}
	highest := slices.DeleteFunc(slices.Clone(ms), func(m *pool.Member) bool { return min(end, v.reach[m]) != top })
	return v.c.pool.Fastest(highest), true
}

// tipWord is a peer's word on the filter header at one height: the
// filter hash there and the filter header before it.
type tipWord struct {
	m      *pool.Member
	height int32
	prev   chainhash.Hash
	hash   chainhash.Hash
}

// matches reports whether w is the word the filter hashes from start,
// from prev, state at w's height.
func (w tipWord) matches(start int32, prev chainhash.Hash, hashes []chainhash.Hash) bool {
	i := int(w.height - start)
	return i < len(hashes) && w.prev == chainHeaders(prev, hashes[:i]) && w.hash == hashes[i]
}

// tipWords asks lead for its filter hashes from start up to its reach
// (end at most), from prev, and every other peer of ms for its word on
// the filter header at its own reach alone: a getcfheaders of one hash,
// whose answer holds the peer's filter header before it too (122 bytes,
// where the hashes from start cost 32 bytes a height more). A filter
// header commits to every filter hash below it, so a peer whose word is
// the header lead's hashes reach there states lead's hashes up to its
// reach, and its claim is those. It returns the claims, lead's first, and
// the words that differ from lead's hashes; no claims if lead stated
// nothing (too slow), every word then differing.
func (v *verification) tipWords(ctx context.Context, lead *pool.Member, ms []*pool.Member, start, end int32, prev chainhash.Hash) (claims []claim, differ []tipWord, err error) {
	var (
		mu    sync.Mutex
		full  []chainhash.Hash
		words []tipWord
	)
	err = v.c.pool.Each(ctx, v.log.budget, ms, func(ctx context.Context, m *pool.Member) error {
		r := min(end, v.reach[m])
		if m == lead {
			got, err := v.c.cfHeaders(ctx, m, start, r, prev)
			mu.Lock()
			defer mu.Unlock()
			full = got
			return err
		}
		before, hashes, err := v.c.conn(m).GetCFHeaders(ctx, r, v.c.chain.Hash(r), 1)
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		words = append(words, tipWord{m: m, height: r, prev: before, hash: hashes[0]})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if full == nil {
		return nil, words, nil
	}
	claims = []claim{{members: []*pool.Member{lead}, hashes: full}}
	for _, w := range words {
		if !w.matches(start, prev, full) {
			differ = append(differ, w)
			continue
		}
		claims = append(claims, claim{members: []*pool.Member{w.m}, hashes: full[:w.height-start+1]})
	}
	if len(differ) > 0 {
		return claims[:1], differ, nil
	}
	return claims, nil, nil
}
