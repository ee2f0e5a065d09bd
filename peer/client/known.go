package client

import (
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// peerReaches says how far the peers left at the end of a verification
// reached: how many they are, the one of the highest reach and its reach,
// and the second-highest reach (-1 with fewer than two peers).
type peerReaches struct {
	peers    int
	top      string // "" with none
	topReach int32
	second   int32
}

// giveUpVerified makes the filter headers verified above h unverified
// (a conflict or a peer's late word asks for them again, or a
// reorganization replaced their blocks) and forgets those kept in memory.
// A rescan that reported blocks above h compares the filter headers it
// scanned them against with those verified anew (see Rescan.revisedFrom).
func (c *Client) giveUpVerified(h int32) {
	if h < c.verifiedTo {
		c.verifiedTo = h
		c.revisions.add(c.revised.Add(1), h+1)
	}
	c.mem.dropAbove(h)
	c.owns.dropAbove(h)
}

// noteVerified records that the filter headers start..to (headers holds
// those of start-1..to) were verified with the peers r describes, in this
// life.
// The heights at least two of them stated are verified: they are no
// longer lonely, and are kept in memory. The heights above the
// second-highest reach, or all of them when one peer was left of
// several, rest on one peer: they are lonely, kept apart and asked again
// once another peer holds them. A client that only had one peer keeps
// what it verified, as there is no other to ask, until another peer
// holds those heights: then they are asked again too (the one peer may
// have lied while it was alone).
func (c *Client) noteVerified(r peerReaches, start, to int32, headers []chainhash.Hash) {
	c.verifiedTo = max(c.verifiedTo, to)
	several := len(c.pool.Members()) > 1
	switch {
	case r.peers >= 2:
		c.lonely = trimLonely(c.lonely, start, min(to, r.second))
		c.alone = trimLonely(c.alone, start, min(to, r.second))
		if from, upto := max(r.second+1, start), min(to, r.topReach); from <= upto {
			c.lonely = addLonely(c.lonely, OnePeer{From: from, To: upto, Peer: r.top})
		}
	case r.top != "" && several:
		c.lonely = addLonely(c.lonely, OnePeer{From: start, To: to, Peer: r.top})
	case r.top != "":
		c.alone = addLonely(c.alone, OnePeer{From: start, To: to, Peer: r.top})
	}
	if c.st != nil {
		return
	}
	// Kept in runs of heights that do not rest on one peer, the peers
	// serving filters looked up once.
	lonely := c.lonelyCheck()
	run := -1 // the index in headers where the current run began
	for i := range headers {
		height := start - 1 + int32(i)
		switch keep := height >= 0 && !lonely.at(height); {
		case keep && run < 0:
			run = i
		case !keep && run >= 0:
			c.mem.putHeaders(start-1+int32(run), headers[run:i])
			run = -1
		}
	}
	if run >= 0 {
		c.mem.putHeaders(start-1+int32(run), headers[run:])
	}
}

// addLonely adds o to the lonely ranges, joined to a range of the same
// peer it overlaps or touches, so that the list stays as long as the
// gaps between them, not the verifications.
func addLonely(lonely []OnePeer, o OnePeer) []OnePeer {
	for i := range lonely {
		if p := &lonely[i]; p.Peer == o.Peer && o.From <= p.To+1 && p.From <= o.To+1 {
			p.From, p.To = min(p.From, o.From), max(p.To, o.To)
			return lonely
		}
	}
	return append(lonely, o)
}

// trimLonely removes the heights from..to from the lonely ranges, keeping
// the parts of each outside them.
func trimLonely(lonely []OnePeer, from, to int32) []OnePeer {
	if from > to {
		return lonely
	}
	var out []OnePeer
	for _, o := range lonely {
		if o.To < from || o.From > to {
			out = append(out, o)
			continue
		}
		if o.From < from {
			out = append(out, OnePeer{From: o.From, To: from - 1, Peer: o.Peer})
		}
		if o.To > to {
			out = append(out, OnePeer{From: to + 1, To: o.To, Peer: o.Peer})
		}
	}
	return out
}

// knownPrefix returns the filter headers of start, start+1, ... up to end
// that this life verified with several peers already (below verifiedTo,
// and below the first height only one of several peers stated), as kept
// in the store or in memory; none if it cannot read them.
func (c *Client) knownPrefix(start, end int32) []chainhash.Hash {
	last := min(end, c.verifiedTo)
	for _, o := range c.lonely {
		if o.To >= start && o.From <= last {
			last = min(last, o.From-1)
		}
	}
	for _, o := range c.alone {
		if o.To >= start && o.From <= last && c.contested(o, max(start, o.From)) {
			last = min(last, max(start, o.From)-1)
		}
	}
	if last < start {
		return nil
	}
	if c.st != nil {
		if c.st.FilterHeaderTip() < last {
			return nil
		}
		hs, err := c.st.FilterHeaders(start, last)
		if err != nil {
			return nil
		}
		return hs
	}
	out := make([]chainhash.Hash, 0, last-start+1)
	for h := start; h <= last; h++ {
		fh, ok := c.mem.header(h)
		if !ok {
			return nil
		}
		out = append(out, fh)
	}
	return out
}

// lonelyAt reports whether the filter header of height was last verified
// with only one of several peers.
func (c *Client) lonelyAt(height int32) bool { return c.lonelyCheck().at(height) }

// lonelyCheck is lonelyAt for many heights, with the peers serving
// filters looked up once.
type lonelyCheck struct {
	c       *Client
	serving []*pool.Member
}

func (c *Client) lonelyCheck() lonelyCheck {
	return lonelyCheck{c: c, serving: c.pool.Serving(wire.SFNodeCF)}
}

// at is lonelyAt.
func (l lonelyCheck) at(height int32) bool {
	in := func(o OnePeer) bool { return o.From <= height && height <= o.To }
	return slices.ContainsFunc(l.c.lonely, in) ||
		slices.ContainsFunc(l.c.alone, func(o OnePeer) bool { return in(o) && l.c.contestedAmong(l.serving, o, height) })
}

// contested reports whether a live peer offering compact filters other
// than the one the heights of o rested on alone holds height.
func (c *Client) contested(o OnePeer, height int32) bool {
	return c.contestedAmong(c.pool.Serving(wire.SFNodeCF), o, height)
}

// contestedAmong is contested with serving the live peers offering
// compact filters.
func (c *Client) contestedAmong(serving []*pool.Member, o OnePeer, height int32) bool {
	return slices.ContainsFunc(serving, func(m *pool.Member) bool { return m.Addr() != o.Peer && c.views.tip(m) >= height })
}

// keptFilterHeader returns the filter headers of height-1 and height from
// the store or, without one, from memory.
func (c *Client) keptFilterHeader(height int32) (prev, header chainhash.Hash, ok bool) {
	if c.st != nil {
		if c.st.FilterHeaderTip() < height {
			return prev, header, false
		}
		hs, err := c.st.FilterHeaders(max(height-1, 0), height)
		if err != nil {
			return prev, header, false
		}
		if height == 0 {
			return chainhash.Hash{}, hs[0], true
		}
		return hs[0], hs[1], true
	}
	p, okPrev := c.mem.header(height - 1)
	h, ok := c.mem.header(height)
	return p, h, ok && (okPrev || height == 0)
}
