package client

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
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
// kept over the whole download). The plans after the first note
// nothing: the first one's note stands for the download. A peer that
// fetchAgain could not dial again is planned on after it only if the
// pool still lists it among the live peers (see pool.Pool.Serving),
// which it does not once its node's end is counted or while its next
// dial is more than a first failure's backoff off.
//
// A request the pool refused (see fetchPlanned: its peer's connection
// ended between the plan and the request, or after an earlier request
// of the download, and its next dial is not due) fails nothing: once
// the other requests are done, the refused blocks are planned again
// over the peers that did not refuse, going on from the plan they were
// refused in (see planFetches: with an explicit Config.FetchSpread, a
// share that the peers left cannot keep fails with *SpreadError), at
// most maxRefusedPlans times a download. The refusing peer is charged
// nothing, and named in the operation's notes. When no peer is left
// to plan on, or the plans ran out, the download fails with an error
// naming each refusal (each a *pool.NotDialledError).
func (c *Client) fetchWanted(ctx context.Context, log *scanLog, want []int32, own map[int32][]int) error {
	plans := log
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
		case err == nil && replans == maxRefusedPlans:
			return fmt.Errorf("client: getdata block: %d blocks not fetched: requests refused in %d plans of the download: %w",
				len(want), replans+1, pool.Errors(refusals))
		case err == nil:
			replans++
			prior, plans = p, newScanLog()
			continue
		}
		if damaged == maxDamagedAsks || !c.fetchAgain(ctx, p, err) {
			return withRefusals(err, refusals)
		}
		damaged++
		prior, plans = nil, newScanLog()
	}
}

// maxRefusedPlans bounds how often one download plans blocks again after
// requests were refused (see fetchWanted). Each plan leaves out the
// peers that refused, so the bound is reached only when peers keep
// refusing one after another.
const maxRefusedPlans = 4

// withRefusals returns err, the failure of a download, naming the
// requests the pool refused during it (refusals, see fetchWanted), if
// any; errors.As finds each.
func withRefusals(err error, refusals []error) error {
	if len(refusals) == 0 {
		return err
	}
	return fmt.Errorf("%w (after requests refused, their blocks planned again: %w)", err, pool.Errors(refusals))
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
// not due: a *pool.NotDialledError) fails nothing: its blocks are asked
// of the other peers holding them, within the spread, and the error, if
// none is left, names each refusal.
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
				return f.Err
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

// fetchBlock downloads one block of the chain from a random peer that has
// it. A block damaged on the way (see fetchAgain) is asked again, of a
// peer picked again, the damaged one dialled again first (after its
// backoff, see pool.Pool.Redial): at most maxDamagedAsks times. A peer
// whose answers stay damaged, or that cannot be dialled again, fails as
// ever (it is dropped, not banned).
func (c *Client) fetchBlock(ctx context.Context, height int32) (*wire.MsgBlock, error) {
	for n := 0; ; n++ {
		b, err := c.fetchBlockOnce(ctx, height)
		m := damagedMember(err)
		if m == nil || n == maxDamagedAsks || ctx.Err() != nil {
			return b, err
		}
		c.awaitConnEnd(ctx, m)
		if rerr := c.pool.Redial(ctx, m); rerr != nil {
			c.logf("%v; dialling it again: %v", err, rerr)
			return nil, err
		}
		c.logf("%v: dialled again, the block of height %d asked again", err, height)
	}
}

// fetchBlockOnce is fetchBlock's request: one block of the chain from a
// random peer that has it.
func (c *Client) fetchBlockOnce(ctx context.Context, height int32) (*wire.MsgBlock, error) {
	hash := c.chain.Hash(height)
	ms := c.reaching(wire.SFNodeWitness, height)
	if len(ms) == 0 {
		return nil, c.noPeers("getdata block")
	}
	m := c.pool.PickFast(ms)
	var block *wire.MsgBlock
	// Dialled again first if its connection ended (see askingConn).
	err := c.conn(m).GetBlocks(ctx, []chainhash.Hash{hash}, func(_ int, b *wire.MsgBlock) error {
		block = b
		return nil
	})
	if err != nil {
		return nil, &pool.Failure{Member: m, Err: err}
	}
	return block, nil
}
