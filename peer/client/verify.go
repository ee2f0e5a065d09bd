package client

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// Filter headers are verified by height, segment by segment between the
// checkpoints, as the package documentation describes.

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

// prevOf returns m's own filter header before the segment being
// verified: prev, unless the peers' chains of filter headers differ there
// by an undecided filter below it.
func (v *verification) prevOf(m *pool.Member, prev chainhash.Hash) chainhash.Hash {
	if p, ok := v.own[m]; ok {
		return p
	}
	return prev
}

// segmentOf returns the checkpoint segment holding height h: segment 0
// holds 0..1000, segment j > 0 holds j*1000+1..(j+1)*1000.
func segmentOf(h int32) int { return int(max(h-1, 0) / wire.CFCheckptInterval) }

// segmentStart returns the first height of checkpoint segment j and the
// filter header before it, from the agreed checkpoints.
func segmentStart(j int, checkpoints []chainhash.Hash) (int32, chainhash.Hash) {
	if j == 0 {
		return 0, chainhash.Hash{}
	}
	return segmentFirst(j), checkpoints[j-1]
}

// segmentFirst returns the first height of checkpoint segment j.
func segmentFirst(j int) int32 {
	if j == 0 {
		return 0
	}
	return int32(j)*wire.CFCheckptInterval + 1
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
	if full, first, start, ok, err := v.aboveKnown(ctx); ok || err != nil {
		if err != nil {
			return nil, v.ms, err
		}
		return v.conclude(full, first, start)
	}
	agreed, err := v.checkpoints(ctx)
	if err != nil {
		return nil, v.ms, err
	}
	start := from
	if c.st != nil {
		if err := v.checkStoredCheckpoints(ctx, agreed); err != nil {
			return nil, v.ms, err
		}
		if err := c.dropUndecidedStored(v.log); err != nil {
			return nil, v.ms, err
		}
		start = min(from, c.st.FilterHeaderTip()+1)
	}
	if v.cpLimit < math.MaxInt {
		// The peers' own filter headers are followed from the segment
		// where their checkpoints part.
		first, _ := segmentStart(v.cpLimit, agreed)
		start = min(start, first)
	}
	// full holds the filter headers of first-1..to: the segments' whole,
	// since a segment may be asked again below start (see asked).
	first, prev := segmentStart(segmentOf(start), agreed)
	full := make([]chainhash.Hash, 1, to-first+2)
	full[0] = prev
	for j := segmentOf(start); j <= segmentOf(to); j++ {
		hs, err := v.segmentHeaders(ctx, j, agreed, full[len(full)-1])
		if err != nil {
			return nil, v.ms, err
		}
		full = append(full, hs...)
	}
	return v.conclude(full, first, start)
}

// conclude stores and records what the verification verified: full holds
// the filter headers of first-1..to, start is the first height that the
// store or this life did not hold verified already. It returns the
// headers of from-1..to and the peers still taking part.
func (v *verification) conclude(full []chainhash.Hash, first, start int32) ([]chainhash.Hash, []*pool.Member, error) {
	c, from, to := v.c, v.from, v.to
	headers := full[start-first:]
	// What rests on an undecided filter is neither stored nor kept as
	// verified: it is verified again (the conflict is remembered, so its
	// block is not asked for again).
	kept := to
	if u := c.conflicts.first(0); u >= 0 {
		kept = min(to, u-1)
	}
	if c.st != nil {
		// headers[i] is the filter header of height start-1+i.
		if err := c.dropUndecidedStored(v.log); err != nil {
			return nil, v.ms, err
		}
		if tip := c.st.FilterHeaderTip(); tip < kept {
			if err := c.st.AppendFilterHeaders(tip+1, headers[tip+1-(start-1):kept-(start-1)+1]); err != nil {
				return nil, v.ms, fmt.Errorf("client: storing filter headers: %w", err)
			}
		}
	}
	// The heights asked of the peers again below start were compared
	// with them too: they count as verified, or rest on one peer, as
	// those of the range.
	lo := max(min(start, v.asked), first)
	c.noteVoices(v, from, to)
	if lo <= kept {
		c.noteVerified(v.summary(), lo, kept, full[lo-first:kept-first+2])
	}
	return headers[from-start:], v.ms, nil
}

// summary says how far the peers still taking part reached.
func (v *verification) summary() peerReaches {
	top, second := v.topTwo()
	r := peerReaches{peers: len(v.ms), second: second}
	if top != nil {
		r.top, r.topReach = top.Addr(), v.reach[top]
	}
	return r
}

// topTwo returns the peer of the highest reach among those taking part,
// and the second-highest reach (-1 with fewer than two peers): the heights
// above it rest on that peer alone.
func (v *verification) topTwo() (top *pool.Member, second int32) {
	second = -1
	for _, m := range v.ms {
		switch r := v.reach[m]; {
		case top == nil || r > v.reach[top]:
			if top != nil {
				second = v.reach[top]
			}
			top = m
		case r > second:
			second = r
		}
	}
	return top, second
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
	if len(known) > 0 {
		prev = known[len(known)-1]
	}
	v.asked = min(v.asked, from)
	for {
		hashes, err := v.segment(ctx, j, agreed, from, prev)
		if err != nil {
			return nil, err
		}
		headers := make([]chainhash.Hash, len(hashes))
		running := prev
		for i := range hashes {
			running = gcs.MakeHeader(&hashes[i], &running)
			headers[i] = running
		}
		banned, err := v.c.checkStored(ctx, v.log, v.ms, from, headers, hashes)
		if err != nil || !banned {
			return append(known, headers...), err
		}
		// The block proved the peers wrong against the store: those
		// left state the segment again.
		v.keepLive()
	}
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
		cp, err := c.pool.Conn(m).GetCFCheckpt(ctx, c.chain.Hash(v.reach[m]), int(n))
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

// covering returns the peers that stated checkpoint i.
func (v *verification) covering(i int) []*pool.Member {
	var out []*pool.Member
	for _, m := range v.ms {
		if len(v.cps[m]) > i {
			out = append(out, m)
		}
	}
	return out
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

// settleCheckpoint settles a disagreement over checkpoint i: one
// representative of each side states its filter hashes of the segment,
// which must lead to its checkpoint, and the first height they differ at
// is settled. Sides that differ only by filters their blocks could not
// decide between are left apart: the checkpoints from i on are not
// compared (cpLimit), and each peer states its own filter hashes.
func (v *verification) settleCheckpoint(ctx context.Context, i int, sides [][]*pool.Member) error {
	c := v.c
	start := int32(0)
	var prev chainhash.Hash
	if i > 0 {
		start, prev = int32(i)*wire.CFCheckptInterval+1, v.cps[sides[0][0]][i-1]
	}
	end := int32(i+1) * wire.CFCheckptInterval
	claims := make([]claim, len(sides))
	for s, side := range sides {
		rep := side[0]
		got, err := c.segment(ctx, rep, start, end, prev)
		if err == nil && chainHeaders(prev, got) != v.cps[rep][i] {
			err = peerErr(rep, "getcfheaders", fmt.Errorf("%w: filter headers %d..%d do not reach the checkpoint it sent itself",
				peer.ErrBadFilterHeader, start, end))
		}
		if err != nil {
			return &pool.Failure{Member: rep, Err: err}
		}
		claims[s] = claim{members: side, hashes: got}
	}
	h, groups := firstSplit(start, claims, c.settled)
	if h >= 0 {
		return c.settleAt(ctx, h, groups)
	}
	if u := c.conflicts.first(start); u < 0 || u > end {
		return fmt.Errorf("client: checkpoints at height %d differ although the filter hashes before them agree", end)
	}
	v.cpLimit = i
	return nil
}

// claim is what a group of peers that agree states about a segment: the
// filter hashes from its start.
type claim struct {
	members []*pool.Member
	hashes  []chainhash.Hash
}

// firstSplit returns the first height, from start, at which the claims
// that reach it state different filter hashes, with the claims grouped by
// the hash they state there; -1 if they agree wherever they overlap. A
// height where they differ only as settled says (by filters the block
// could not decide between) is passed over.
func firstSplit(start int32, claims []claim, settled func(int32, []group) bool) (int32, []group) {
	for i := 0; ; i++ {
		var gs []group
		for _, cl := range claims {
			if len(cl.hashes) <= i {
				continue
			}
			j := slices.IndexFunc(gs, func(g group) bool { return g.hash == cl.hashes[i] })
			if j < 0 {
				gs = append(gs, group{rep: cl.members[0], hash: cl.hashes[i]})
				j = len(gs) - 1
			}
			gs[j].members = append(gs[j].members, cl.members...)
		}
		switch h := start + int32(i); {
		case len(gs) == 0:
			return -1, nil
		case len(gs) > 1 && !settled(h, gs):
			return h, gs
		}
	}
}

// segment returns the agreed filter hashes of segment j from start (its
// first height, or one past what this life verified already, with prev
// the filter header before it) up to the range's end. When at least two peers agree on the checkpoint that ends it, one
// of them states it; every peer whose reach ends inside it states its
// part, and all are compared height by height until they agree.
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
		var mu sync.Mutex
		open := j >= v.cpLimit
		if len(full) >= 2 {
			// Bound by a checkpoint they agree on: one is enough, the
			// fastest.
			m := c.pool.Fastest(full)
			got, err := c.segment(ctx, m, start, end, prev)
			if err == nil && chainHeaders(prev, got) != agreed[j] {
				err = peerErr(m, "getcfheaders", fmt.Errorf("%w: filter headers %d..%d do not reach the checkpoint it sent itself",
					peer.ErrBadFilterHeader, start, end))
			}
			if err != nil {
				return nil, &pool.Failure{Member: m, Err: err}
			}
			claims = append(claims, claim{members: append([]*pool.Member{m}, slices.DeleteFunc(full, func(o *pool.Member) bool { return o == m })...), hashes: got})
		} else {
			partial = append(partial, full...)
		}
		err := c.pool.Each(ctx, v.log.budget, partial, func(ctx context.Context, m *pool.Member) error {
			own := prev
			if open {
				own = v.prevOf(m, prev)
			}
			got, err := c.segment(ctx, m, start, min(end, v.reach[m]), own)
			if err == nil && v.reach[m] >= end && end%wire.CFCheckptInterval == 0 && len(v.cps[m]) > j && chainHeaders(own, got) != v.cps[m][j] {
				err = peerErr(m, "getcfheaders", fmt.Errorf("%w: filter headers %d..%d do not reach the checkpoint it sent itself",
					peer.ErrBadFilterHeader, start, end))
			}
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			claims = append(claims, claim{members: []*pool.Member{m}, hashes: got})
			return nil
		})
		if err != nil {
			return nil, err
		}
		v.keepLive() // without the peers too slow to wait for
		h, groups := firstSplit(start, claims, c.settled)
		if h < 0 {
			if open {
				v.followOwn(start, end, prev, claims)
			}
			return v.agreedHashes(start, end, claims)
		}
		if err := c.settleAt(ctx, h, groups); err != nil {
			return nil, err
		}
		v.keepLive()
	}
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

// agreedHashes joins the claims of a segment, which agree wherever they
// overlap (but where the block could not decide between their filters:
// the first claim's is taken), into its filter hashes start..end.
func (v *verification) agreedHashes(start, end int32, claims []claim) ([]chainhash.Hash, error) {
	out := make([]chainhash.Hash, 0, end-start+1)
	for i := 0; i < int(end-start)+1; i++ {
		j := slices.IndexFunc(claims, func(cl claim) bool { return len(cl.hashes) > i })
		if j < 0 {
			return nil, fmt.Errorf("client: %w: no peer serves the compact filter headers of heights %d..%d", ErrNoPeers, start+int32(i), end)
		}
		out = append(out, claims[j].hashes[i])
	}
	return out, nil
}

// liveReaches returns the reach of each peer still taking part.
func (v *verification) liveReaches() []int32 {
	out := make([]int32, len(v.ms))
	for i, m := range v.ms {
		out[i] = v.reach[m]
	}
	return out
}

// keepLive drops the peers no longer live from the verification.
func (v *verification) keepLive() { v.ms = v.c.pool.Keep(v.ms) }

// noteVoices records, for the scan's result, which peers' answers were
// compared with another's (both spoke for a height of from..to, whether
// or not one was banned for it), and the heights of from..to that only
// one of the peers left could speak for: those above the second-highest
// reach. A peer that left the verification unbanned (too slow, gone)
// spoke for nothing: its reach is only what it claimed (an announcement
// raises it), so heights only it and one other claimed rest on the other.
func (c *Client) noteVoices(v *verification, from, to int32) {
	if v.log.compared == nil {
		v.log.compared = map[*pool.Member]bool{}
	}
	speakers, silent := v.speakers()
	for _, m := range speakers {
		for _, o := range speakers {
			if o != m && min(v.reach[m], v.reach[o]) >= from {
				v.log.compared[m] = true
			}
		}
	}
	c.views.setCompared(maps.Clone(v.log.compared))
	top, second := v.topTwo()
	if top == nil || len(v.ms) < 2 && !silent || second >= to {
		return
	}
	v.log.oneVoice = append(v.log.oneVoice, OnePeer{From: max(second+1, from), To: v.reach[top], Peer: top.Addr()})
}

// speakers returns the peers whose words the verification weighed: those
// still taking part and those banned for what they said. It reports
// whether any other peer left it (too slow or gone, unbanned).
func (v *verification) speakers() (out []*pool.Member, silent bool) {
	for _, m := range v.all {
		switch {
		case slices.Contains(v.ms, m) || v.c.pool.Status(m).Banned:
			out = append(out, m)
		default:
			silent = true
		}
	}
	return out, silent
}

// segment gets the filter hashes start..end from m and checks that they
// continue from prev.
func (c *Client) segment(ctx context.Context, m *pool.Member, start, end int32, prev chainhash.Hash) ([]chainhash.Hash, error) {
	gotPrev, hashes, err := c.conn(m).GetCFHeaders(ctx, start, c.chain.Hash(end), int(end-start)+1)
	if err != nil {
		return nil, err
	}
	if gotPrev != prev {
		return nil, peerErr(m, "getcfheaders", fmt.Errorf("%w: previous filter header %v at height %d, the agreed one is %v",
			peer.ErrBadFilterHeader, gotPrev, start-1, prev))
	}
	return hashes, nil
}

// chainHeaders returns the filter header reached from prev through the
// filter hashes.
func chainHeaders(prev chainhash.Hash, hashes []chainhash.Hash) chainhash.Hash {
	for i := range hashes {
		prev = gcs.MakeHeader(&hashes[i], &prev)
	}
	return prev
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

// checkStoredCheckpoints compares the stored filter headers at the agreed
// checkpoints with them; at the first that differs, the segment before it
// is stated by a peer and compared height by height (checkStored).
func (v *verification) checkStoredCheckpoints(ctx context.Context, agreed []chainhash.Hash) error {
	c := v.c
	for i := 0; i < len(agreed); i++ {
		h := int32(i+1) * wire.CFCheckptInterval
		if c.st.FilterHeaderTip() < h {
			return nil
		}
		stored, err := c.st.FilterHeaders(h, h)
		if err != nil {
			return fmt.Errorf("client: reading the stored filter headers: %w", err)
		}
		if stored[0] == agreed[i] {
			continue
		}
		start, prev := segmentStart(i, agreed)
		ms := v.covering(i)
		if len(ms) == 0 {
			return nil
		}
		m := ms[rand.IntN(len(ms))]
		hashes, err := c.segment(ctx, m, start, h, prev)
		if err == nil && chainHeaders(prev, hashes) != agreed[i] {
			err = peerErr(m, "getcfheaders", fmt.Errorf("%w: filter headers %d..%d do not reach the checkpoint it sent itself",
				peer.ErrBadFilterHeader, start, h))
		}
		if err != nil {
			return &pool.Failure{Member: m, Err: err}
		}
		headers := make([]chainhash.Hash, len(hashes))
		running := prev
		for k := range hashes {
			running = gcs.MakeHeader(&hashes[k], &running)
			headers[k] = running
		}
		if _, err := c.checkStored(ctx, v.log, v.ms, start, headers, hashes); err != nil {
			return err
		}
		v.keepLive()
		if len(v.ms) == 0 {
			return c.noPeers("getcfheaders")
		}
		// The stored headers were dropped from the difference on, or
		// the peers that differ were banned: look again.
		i--
	}
	return nil
}
