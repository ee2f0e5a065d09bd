package client

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// fetchBlocks downloads the blocks at heights, spread over the peers
// that hold them (see planFetches; own says which watched scripts each
// block holds, where known), and returns them in the order of heights.
// The blocks of an earlier pass of the operation (log) are not asked for
// again.
func (c *Client) fetchBlocks(ctx context.Context, log *scanLog, heights []int32, own map[int32][]int) ([]*wire.MsgBlock, error) {
	var want []int32
	for _, h := range heights {
		if log.held[c.chain.Hash(h)] == nil {
			want = append(want, h)
		}
	}
	if len(want) > 0 {
		if err := c.fetchWanted(ctx, log, want, own); err != nil {
			return nil, err
		}
	}
	blocks := make([]*wire.MsgBlock, len(heights))
	for i, h := range heights {
		blocks[i] = log.held[c.chain.Hash(h)]
	}
	return blocks, nil
}

// fetchWanted downloads the blocks at heights want as planFetches plans
// them and holds them in log. When a peer's answer was damaged on the
// way (see fetchAgain), the blocks not in yet are planned again, over
// the peers then live, and asked again: at most maxDamagedAsks times in
// all, as the filter download bounds its damaged answers in a row (a
// round's blocks arrive in an order the plan shuffles, so the blocks
// that came in before a damaged one do not break the row: the bound is
// kept over the whole download). Those plans after the first note
// nothing: the first one's note stands for the download. A peer that
// fetchAgain could not dial again is planned on after it only if the
// pool still lists it among the live peers (see pool.Pool.Serving),
// which it does not once its node's end is counted or while its next
// dial is more than a first failure's backoff off.
//
// A request the pool refused (see fetchPlanned: its peer's connection
// ended between the plan and the request, or after an earlier request
// of the download, and its next dial is not due), or one sent over a
// connection that then ended before the answer was whole (see
// replannable: the node hung up mid-answer, which proves no lie), fails
// nothing: once the other requests are done, the blocks that peer did
// not deliver are planned again over the peers that neither refused
// nor hung up, going on from the plan they were given in (see
// planFetches: with an explicit Config.FetchSpread, a share that the
// peers left cannot keep fails with *SpreadError), as many times a
// download as the pool had members when it started, and at least
// maxRefusedPlans times (see Client.replans), each plan's note and blocks
// going to the operation's log as the first's (see planFetches). The
// peer is charged nothing (its ends are the pool's to count, see
// pool.Pool.RedialDue), and named in the operation's notes. When no
// peer is left to plan on, or the plans ran out, the download fails
// with an error naming each peer and why (a *pool.NotDialledError, or
// a *peer.PeerError wrapping peer.ErrDisconnected).
func (c *Client) fetchWanted(ctx context.Context, log *scanLog, want []int32, own map[int32][]int) error {
	plans := log
	replansMax := c.replans()
	var prior *fetchPlan
	var refusals []error
	skip := map[*pool.Member]bool{}
	for damaged, replans := 0, 0; ; {
		p, err := c.planFetches(plans, want, own, prior, skip)
		if err != nil {
			return withRefusals(err, refusals)
		}
		got, refused, err := c.fetchPlanned(ctx, p)
		for h, b := range got {
			log.hold(c.chain.Hash(h), b)
		}
		want = slices.DeleteFunc(want, func(h int32) bool { return got[h] != nil })
		for m, rerr := range refused {
			skip[m] = true
			refusals = append(refusals, rerr)
			n := 0
			for _, h := range want {
				if p.to[h] == m {
					n++
				}
			}
			w := fmt.Sprintf("%v: its %d blocks were asked of the other peers", rerr, n)
			c.logf("%s", w)
			log.note(w)
		}
		switch {
		case err == nil && len(want) == 0:
			return nil
		case err == nil && replans == replansMax:
			return withRefusals(fmt.Errorf("client: getdata block: %d blocks not fetched: requests refused or cut off in %d plans of the download",
				len(want), replans+1), refusals)
		case err == nil:
			// The plan goes on from p: its note and tally go to the
			// operation's log (see planFetches), which a scan's spread
			// note is made of.
			replans++
			prior, plans = p, log
			continue
		}
		if damaged == maxDamagedAsks || !c.fetchAgain(ctx, p, err) {
			return withRefusals(err, refusals)
		}
		damaged++
		prior, plans = nil, newScanLog()
	}
}

// maxRefusedPlans is the least bound on how often one download plans
// blocks again after requests were refused or cut off by their
// connection's end (see Client.replans).
const maxRefusedPlans = 4

// replans returns how often a download starting now plans blocks again
// after requests were refused or cut off (see fetchWanted): once a
// member of the pool, and at least maxRefusedPlans times. Each plan
// leaves out the peers that refused or hung up, one at least, so the
// peers run out before the plans unless peers joined during the
// download: peers that hang up in turn, each on the blocks the one
// before it did not deliver, cannot fail it while a peer that serves
// them is left (with maxRefusedPlans alone, five such peers failed it
// whenever a block passed along all five first). Members away at the
// start (dropped, their next dial a backoff off) count too: they may be
// back during the download and take a plan each (counting only those
// serving, one download in eight failed beside an honest peer with
// three of six such peers away at its start). Each plan again costs at
// most the requests of its blocks, of peers the download then asks
// nothing more: being slow proves nothing, and charges nothing.
func (c *Client) replans() int { return max(maxRefusedPlans, len(c.pool.Members())) }

// withRefusals returns err, the failure of a download, naming the
// requests the pool refused or their connection's end cut off during it
// (refusals, see fetchWanted), if any: a *refusalsError.
func withRefusals(err error, refusals []error) error {
	if len(refusals) == 0 {
		return err
	}
	return &refusalsError{err: err, refusals: refusals}
}

// refusalsNamed returns how many requests refused or cut off err, the
// failure of fetchWanted, names (see withRefusals), and err without
// them: for a note of the failure that follows the download's notes,
// which name each already.
func refusalsNamed(err error) (int, error) {
	if r, ok := err.(*refusalsError); ok {
		return len(r.refusals), r.err
	}
	return 0, err
}

// refusalsError is the failure of a download, err, after requests the
// pool refused or their connection's end cut off (see fetchWanted);
// errors.Is and errors.As see err and each refusal.
type refusalsError struct {
	err      error
	refusals pool.Errors
}

func (e *refusalsError) Error() string {
	return fmt.Sprintf("%v (after requests refused or cut off, their blocks planned again: %v)", e.err, e.refusals)
}

// Unwrap returns the failure and each refusal.
func (e *refusalsError) Unwrap() []error { return []error{e.err, e.refusals} }

// judged returns the error an operation ends with when err, holding the
// failure f of a peer's request (errors.As), failed it and f.Member was
// judged by f.Err (see blame): f.Err, and, when the request was a
// download's with requests refused or cut off before it failed, the
// refusals named after it as withRefusals names them. f.Err alone judges
// the peer: the others' ends are no part of its failure.
func judged(err error, f *pool.Failure) error {
	var r *refusalsError
	var g *pool.Failure
	if errors.As(err, &r) && errors.As(r.err, &g) && g == f {
		return withRefusals(f.Err, r.refusals)
	}
	return f.Err
}

// fetchAgain takes in the failure err of a download planned as p, and
// reports whether the blocks not in are to be asked again: when a peer's
// answer was damaged on the way (peer.ErrDamaged, and no lie: a payload
// failing the checksum its node gave it proves nothing about the node),
// that peer's connection, which the damage ends, is waited for to end
// and dialled again (after its backoff, see pool.Pool.Redial), as are
// the connections of the plan's other peers that the failure's
// cancelling of their requests ended (one its node ended itself, only if
// its next dial is due soon: see pool.Pool.RedialDue). A peer that
// cannot be dialled again fails the download as ever, and is dropped,
// not banned; another peer that is not dialled again is left to the
// pool, whose live peers, which the next plan picks from, no longer list
// it (its end counted, or its next dial far off: see pool.Pool.Serving);
// a lie is judged as ever.
func (c *Client) fetchAgain(ctx context.Context, p *fetchPlan, err error) bool {
	m := damagedMember(err)
	if m == nil || ctx.Err() != nil {
		return false
	}
	if !c.cfg.Isolate {
		// With isolation the damage ended a connection of the request's
		// own (see fetchIsolated): m's is untouched.
		c.awaitConnEnd(ctx, m)
	}
	if rerr := c.pool.Redial(ctx, m); rerr != nil {
		c.logf("%v; dialling it again: %v", err, rerr)
		return false
	}
	for o := range p.load {
		if o == m || !c.needsRedial(o) {
			continue
		}
		c.awaitConnEnd(ctx, o)
		if rerr := c.pool.RedialDue(ctx, o); rerr != nil {
			c.logf("%s: dialling again after another peer's damaged block: %v", o.Addr(), rerr)
		} else {
			c.logf("%s: dialled again after another peer's damaged block", o.Addr())
		}
	}
	c.logf("%v: dialled again, the blocks not in asked again", err)
	return true
}

// FetchBlocks downloads the blocks from..to of the chain, spread over the
// peers that hold them as a scan's are (Config.FetchSpread, within each
// window of as many blocks as the peers ask for at once), checks each
// against its header, and calls fn for each in height order. An error
// from fn stops the download and is returned as is. A peer whose
// request the pool refuses (its connection ended and its next dial is
// not due: a *pool.NotDialledError), or whose connection ends while a
// request is answered (a *peer.PeerError wrapping peer.ErrDisconnected),
// fails nothing and is charged nothing: the blocks it did not deliver
// are asked of the other peers holding them, within the spread, and the
// error, if none is left or another peer fails the download after them,
// names each such peer and why.
func (c *Client) FetchBlocks(ctx context.Context, from, to int32, fn func(height int32, b *wire.MsgBlock) error) error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if err := c.chain.CheckRange(from, to); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	window := int32(peer.MaxBlocksPerRequest * max(1, len(c.pool.Serving(wire.SFNodeWitness))))
	for start := from; start <= to; start += window {
		var heights []int32
		for h := start; h <= min(to, start+window-1); h++ {
			heights = append(heights, h)
		}
		blocks, err := c.fetchBlocks(ctx, newScanLog(), heights, nil)
		if err != nil {
			var f *pool.Failure
			if errors.As(err, &f) {
				c.blame(f.Member, f.Err)
				return judged(err, f)
			}
			return err
		}
		for i, b := range blocks {
			if err := fn(heights[i], b); err != nil {
				return err
			}
		}
	}
	return nil
}

// fetchBlock downloads one block of the chain, for a dispute, from a
// peer that has it, picked at random among those not slow to answer
// (see planFetches): the download of one block of fetchWanted. A block
// damaged on the way is asked again, the damaged peer dialled again
// first (after its backoff, see fetchAgain): at most maxDamagedAsks
// times; a peer whose answers stay damaged, or that cannot be dialled
// again, fails as ever (it is dropped, not banned). A request the pool
// refuses, or one cut off by its connection's end, fails nothing and
// charges its peer nothing: the block is asked of another peer that has
// it, as often again as fetchWanted plans again (see Client.replans), and
// the error, when none is left or the plans ran out, names each such
// peer and why. With Config.Isolate it is asked over a connection of
// its own, as a scan's blocks are. The download's notes (the peers that
// refused or hung up) go to notes, the operation's log, unless it is
// nil.
func (c *Client) fetchBlock(ctx context.Context, notes *scanLog, height int32) (*wire.MsgBlock, error) {
	log := newScanLog()
	err := c.fetchWanted(ctx, log, []int32{height}, nil)
	if notes != nil {
		for _, n := range log.notes {
			notes.note(n)
		}
	}
	if err != nil {
		return nil, err
	}
	return log.held[c.chain.Hash(height)], nil
}
