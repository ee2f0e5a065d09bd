package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// segments returns the agreed filter headers of p.first-1..to, segment by
// segment from the one holding p.first.
func (v *verification) segments(ctx context.Context, p segmentPlan) ([]chainhash.Hash, error) {
	if v.feed != nil {
		v.feed.start(ctx, v, p)
		defer v.feed.stop(false)
	}
	full := make([]chainhash.Hash, 1, v.to-p.first+2)
	full[0] = p.prev
	for j := segmentOf(p.first); j <= segmentOf(v.to); j++ {
		hs, err := v.segmentHeaders(ctx, j, p.agreed, full[len(full)-1])
		if err != nil {
			return nil, err
		}
		full = append(full, hs...)
	}
	return full, nil
}

// segmentHeaders returns the agreed filter headers of segment j, from its
// start up to the range's end: from the store when it holds them (see
// storedSegment), otherwise from the peers (see segment), compared with
// what the store holds.
func (v *verification) segmentHeaders(ctx context.Context, j int, agreed []chainhash.Hash, prev chainhash.Hash) ([]chainhash.Hash, error) {
	start := segmentFirst(j)
	end := min(int32(j+1)*wire.CFCheckptInterval, v.to)
	if hs, ok := v.c.storedSegment(j, start, end, prev, agreed, v.liveReaches()); ok {
		return hs, nil
	}
	// What this life verified already with several peers is not asked
	// again: only the heights above it.
	known := v.c.knownPrefix(start, end)
	from := start + int32(len(known))
	if from > end {
		return known, nil
	}
	before := prev
	if len(known) > 0 {
		prev = known[len(known)-1]
	}
	for {
		v.asked = min(v.asked, from)
		var hashes []chainhash.Hash
		var err error
		switch {
		case from == start && v.feed != nil:
			hashes, err = v.fedSegment(ctx, j, agreed, from, prev)
		default:
			if v.feed != nil {
				// The peers are asked: the feed's requests end first
				// (see filterFeed.stop).
				v.feed.stop(true)
			}
			hashes, err = v.segmentAgain(ctx, j, agreed, from, prev)
		}
		if proof := v.contradictsOwn(err); proof != nil {
			return nil, proof
		}
		if w, ok := v.disputedPrev(err, j, from); ok {
			// No proof: the segment is verified again from its start
			// with every peer, the peer's word held against its hashes
			// (see disputeprev.go).
			v.c.logf("%v: verifying the filter headers from height %d again", err, start)
			v.words = append(v.words, w)
			v.c.giveUpVerified(start - 1)
			known, from, prev = nil, start, before
			continue
		}
		if err := v.unboundPrev(err, j, from); err != nil {
			return nil, err
		}
		if err != nil {
			return nil, err
		}
		headers := headersFrom(prev, hashes)
		banned, err := v.c.checkStored(ctx, v.log, v.ms, from, headers, hashes)
		if err != nil || !banned {
			return append(known, headers...), err
		}
		// The block proved the peers wrong against the store: those
		// left state the segment again.
		v.keepLive()
	}
}

// storedSegment returns the stored filter headers start..end of a segment
// ending at checkpoint j, if the store holds them all, they lead from the
// agreed checkpoint before it to the agreed one at its end, and no peer's
// chain ends inside the segment: such a peer must be compared height by
// height, since the checkpoint at the end may rest on the others alone
// (reach holds the reach of each peer taking part).
func (c *Client) storedSegment(j int, start, end int32, prev chainhash.Hash, agreed []chainhash.Hash, reach []int32) ([]chainhash.Hash, bool) {
	st := c.st
	if st == nil || end%wire.CFCheckptInterval != 0 || j >= len(agreed) || st.FilterHeaderTip() < end {
		return nil, false
	}
	for _, r := range reach {
		if r >= start && r < end {
			return nil, false
		}
	}
	hs, err := st.FilterHeaders(max(start-1, 0), end)
	if err != nil {
		return nil, false
	}
	if start > 0 && hs[0] != prev || hs[len(hs)-1] != agreed[j] {
		return nil, false
	}
	if start > 0 {
		hs = hs[1:]
	}
	return hs, true
}

// liveReaches returns the reach of each peer still taking part.
func (v *verification) liveReaches() []int32 {
	out := make([]int32, len(v.ms))
	for i, m := range v.ms {
		out[i] = v.reach[m]
	}
	return out
}

// segment returns the agreed filter hashes of segment j from start (its
// first height, or one past what this life verified already, with prev
// the filter header before it) up to the range's end. When at least two
// peers agree on the checkpoint that ends it, one of them states it;
// every peer whose reach ends inside it states its part (in full, or its
// word on its highest, see partialClaims), and all are compared height
// by height until they agree.
func (v *verification) segment(ctx context.Context, j int, agreed []chainhash.Hash, start int32, prev chainhash.Hash) ([]chainhash.Hash, error) {
	c := v.c
	end := min(int32(j+1)*wire.CFCheckptInterval, v.to)
	for {
		if len(v.ms) == 0 {
			return nil, c.noPeers("getcfheaders")
		}
		var full, partial []*pool.Member
		for _, m := range v.ms {
			switch {
			case end%wire.CFCheckptInterval == 0 && j < len(agreed) && len(v.cps[m]) > j:
				full = append(full, m)
			case v.reach[m] >= start:
				partial = append(partial, m)
			}
		}
		var claims []claim
		open := j >= v.cpLimit
		if len(full) >= 2 {
			// Bound by a checkpoint they agree on: one is enough, the
			// fastest.
			m := c.pool.Fastest(full)
			got, err := c.checkpointSegment(ctx, m, start, end, prev, agreed[j])
			if err != nil {
				return nil, &pool.Failure{Member: m, Err: err}
			}
			claims = append(claims, claim{members: append([]*pool.Member{m}, slices.DeleteFunc(full, func(o *pool.Member) bool { return o == m })...), hashes: got})
		} else {
			partial = append(partial, full...)
		}
		stated, err := v.partialClaims(ctx, j, partial, start, end, prev, open)
		if err != nil {
			return nil, err
		}
		claims = v.holdToWords(start, prev, append(claims, stated...))
		v.keepLive() // without the peers too slow to wait for
		h, groups := firstSplit(start, claims, c.settled)
		if h < 0 {
			v.noteOwn(start, prev, open, claims)
			if open {
				v.followOwn(start, end, prev, claims)
			}
			return agreedHashes(start, end, claims)
		}
		if err := c.settleAt(ctx, v.log, h, groups); err != nil {
			return nil, err
		}
		v.keepLive()
	}
}

// maxDamagedAsks bounds how many times segmentAgain asks a segment's
// filter hashes again after an answer damaged on the way, and how many
// damaged answers in a row the filter download takes before it fails
// (filterDownload).
const maxDamagedAsks = 3

// segmentAgain is segment, asked again when a peer's answer was damaged
// on the way (peer.ErrDamaged: a payload that fails the checksum its node
// gave it, which proves nothing about the node), that peer dialled again
// first (after its backoff, see pool.Pool.Redial): the damage ended its
// connection, and a request on it fails with the same damage, unsent.
// So does a request on a connection a damaged answer to the feed ended
// (see filterFeed.stop) when the dial that was to replace it failed. A
// peer whose answers stay damaged, or that cannot be dialled again, fails
// as ever (it is dropped, not banned).
func (v *verification) segmentAgain(ctx context.Context, j int, agreed []chainhash.Hash, start int32, prev chainhash.Hash) ([]chainhash.Hash, error) {
	for n := 0; ; n++ {
		hashes, err := v.segment(ctx, j, agreed, start, prev)
		m := damagedMember(err)
		if m == nil || n == maxDamagedAsks {
			return hashes, err
		}
		if rerr := v.c.pool.Redial(ctx, m); rerr != nil {
			v.c.logf("%v; dialling it again: %v", err, rerr)
			return hashes, err
		}
		v.c.logf("%v: dialled again, the filter headers from height %d asked again", err, start)
	}
}

// damagedMember returns the peer whose failure err is an answer damaged
// on the way, and nothing it is proved to have said; nil otherwise.
func damagedMember(err error) *pool.Member {
	var f *pool.Failure
	if !errors.As(err, &f) || !errors.Is(f.Err, peer.ErrDamaged) || isLie(f.Err) {
		return nil
	}
	return f.Member
}

// stateSegment asks each peer of ms for its filter hashes of segment j
// from start up to its reach (end at most), from prev or, when open, its
// own filter header before them, and returns each peer's claim.
func (v *verification) stateSegment(ctx context.Context, j int, ms []*pool.Member, start, end int32, prev chainhash.Hash, open bool) ([]claim, error) {
	var claims []claim
	var mu sync.Mutex
	err := v.c.pool.Each(ctx, v.log.budget, ms, func(ctx context.Context, m *pool.Member) error {
		own := prev
		if open {
			own = v.prevOf(m, prev)
		}
		got, err := v.c.cfHeaders(ctx, m, start, min(end, v.reach[m]), own)
		if _, ok := v.own[m]; ok && open {
			err = ownContradiction(m, own, err)
		}
		if err == nil && v.reach[m] >= end && end%wire.CFCheckptInterval == 0 && len(v.cps[m]) > j {
			err = offCheckpoint(m, start, end, own, got, v.cps[m][j])
		}
		if err != nil {
			return err
		}
		mu.Lock()
		defer mu.Unlock()
		claims = append(claims, claim{members: []*pool.Member{m}, hashes: got})
		return nil
	})
	return claims, err
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

// followOwn moves each peer's own filter header (see cpLimit) to the end
// of the segment start..end its claim states in full, from prev.
func (v *verification) followOwn(start, end int32, prev chainhash.Hash, claims []claim) {
	if v.own == nil {
		v.own = map[*pool.Member]chainhash.Hash{}
	}
	for _, cl := range claims {
		if start+int32(len(cl.hashes))-1 < end {
			continue
		}
		for _, m := range cl.members {
			v.own[m] = chainHeaders(v.prevOf(m, prev), cl.hashes)
		}
	}
}

// checkpointSegment is cfHeaders for a segment start..end that ends at
// the checkpoint cp m sent: its filter hashes must lead there.
func (c *Client) checkpointSegment(ctx context.Context, m *pool.Member, start, end int32, prev, cp chainhash.Hash) ([]chainhash.Hash, error) {
	hashes, err := c.cfHeaders(ctx, m, start, end, prev)
	if err != nil {
		return nil, err
	}
	return hashes, offCheckpoint(m, start, end, prev, hashes, cp)
}

// cfHeaders gets the filter hashes start..end from m and checks that they
// continue from prev.
func (c *Client) cfHeaders(ctx context.Context, m *pool.Member, start, end int32, prev chainhash.Hash) ([]chainhash.Hash, error) {
	return cfHeadersOn(ctx, c.conn(m), m, start, c.chain.Hash(end), prev, int(end-start)+1)
}
