package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// SyncHeaders downloads the headers of every live peer into the chain:
// the branch with the most work wins. The chain comes from one peer, the
// others send what follows the tip it reached (see leadGate). It learns
// where each peer's best
// chain stands (see peer.Peer.SyncHeaders): a peer that is behind, or
// rolled back to a lower branch, holds the chain up to its tip and is
// asked only about the heights it holds; one on its own branch with less
// work holds it up to the fork. A peer that sends invalid headers is
// banned; one that stalls is no longer used. It returns how the chain
// changed; it fails only when no peer is left.
func (c *Client) SyncHeaders(ctx context.Context) (chain.Update, error) {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	return c.syncHeaders(ctx, newScanLog())
}

// syncHeaders is SyncHeaders within an operation whose log is log, with
// opMu held.
func (c *Client) syncHeaders(ctx context.Context, log *scanLog) (chain.Update, error) {
	if !c.started() {
		// Without the service, each sync tries the peers that went away
		// again (with the service's backoff).
		c.pool.Revive(ctx)
	}
	up, _, err := c.syncPeers(ctx, log, nil, 0)
	return up, err
}

// syncPeers syncs the headers of the live peers of ms (of every live peer
// for nil), as SyncHeaders describes. With a bound, each peer's sync that
// takes longer is abandoned and the peer dropped with a
// *WithheldHeadersError (see syncAnnounced); those are returned. Called
// with opMu held: one header sync at a time.
func (c *Client) syncPeers(ctx context.Context, log *scanLog, ms []*pool.Member, bound time.Duration) (chain.Update, []*pool.Member, error) {
	c.views.keep(c.pool.Members())
	total := chain.Update{Fork: c.chain.Height()}
	var withheld []*pool.Member
	// A peer's tip is measured against the chain as it was when its sync
	// ran: while other peers' headers change the chain, every peer is
	// asked again, until a round changes nothing (at most syncRounds).
	for round := 0; round < syncRounds; round++ {
		members := c.pool.Serving(0)
		if ms != nil {
			members = slices.DeleteFunc(members, func(m *pool.Member) bool { return !slices.Contains(ms, m) })
		}
		r := c.syncRound(ctx, log, members, bound)
		abandoned := ctx.Err()
		for i, m := range members {
			// What a sync changed is recorded however it ended: the
			// chain changes as the headers come.
			c.recordChange(r.results[i].Update, &total)
			if abandoned != nil || errors.Is(r.errs[i], context.Canceled) {
				// Abandoned, not failed: nobody to blame. Or too slow to
				// wait for: Each dropped it.
				continue
			}
			var wh *WithheldHeadersError
			if errors.As(r.errs[i], &wh) && !slices.Contains(withheld, m) {
				withheld = append(withheld, m)
			}
			if err := c.recordSync(m, r.results[i], r.errs[i]); err != nil {
				return total, withheld, err
			}
		}
		if abandoned != nil {
			return total, withheld, abandoned
		}
		if r.current(c.chain) {
			break
		}
	}
	c.synced = true
	if err := c.chain.Err(); err != nil {
		return total, withheld, fmt.Errorf("client: the chain state: %w", err)
	}
	if len(c.pool.Serving(0)) == 0 {
		return total, withheld, c.noPeers("getheaders")
	}
	return total, withheld, nil
}

// headersRound is one round of a header sync: what each member's sync
// showed, and the chain's tip before the round and as each member's sync
// began.
type headersRound struct {
	before  chainhash.Hash
	began   []chainhash.Hash
	results []peer.HeadersResult
	errs    []error
}

// syncRound syncs the headers of members, the lead first (see leadGate),
// each within bound if not zero (see syncPeers).
func (c *Client) syncRound(ctx context.Context, log *scanLog, members []*pool.Member, bound time.Duration) *headersRound {
	r := &headersRound{began: make([]chainhash.Hash, len(members)), results: make([]peer.HeadersResult, len(members)),
		errs: make([]error, len(members))}
	_, r.before = c.chain.Tip()
	gate := c.newLeadGate(members)
	c.pool.Each(ctx, log.budget, members, func(ctx context.Context, m *pool.Member) error {
		i := slices.Index(members, m)
		if m == gate.lead {
			defer gate.release()
		} else {
			gate.wait(ctx)
		}
		// A connection dropped by an abandoned request (a cancelled
		// context) is replaced; the peer did nothing wrong. One the
		// node ended is not waited for within the round beyond its
		// backoff (see Client.ready).
		if r.errs[i] = c.ready(ctx, m); r.errs[i] != nil {
			// Nothing changed: the chain kept its tip (as a sync that
			// fails at once reports).
			r.results[i] = peer.HeadersResult{Update: chain.Update{Fork: c.chain.Height()}, Tip: -1}
			return r.errs[i]
		}
		_, r.began[i] = c.chain.Tip()
		r.results[i], r.errs[i] = c.boundedSync(ctx, m, bound)
		return r.errs[i]
	})
	return r
}

// boundedSync syncs m's headers, within bound if not zero: a sync that
// takes longer, or stalls before, fails with a *WithheldHeadersError
// naming the blocks m announced that the chain lacks, rather than with
// the node's stall (whose text guesses at btcd's stale tip).
func (c *Client) boundedSync(ctx context.Context, m *pool.Member, bound time.Duration) (peer.HeadersResult, error) {
	if bound <= 0 {
		return c.pool.Conn(m).SyncHeaders(ctx, c.chain)
	}
	announced, _ := c.views.pending(m)
	announced = c.lacking(announced)
	bctx, cancel := context.WithTimeout(ctx, bound)
	defer cancel()
	start := time.Now()
	res, err := c.pool.Conn(m).SyncHeaders(bctx, c.chain)
	if ctx.Err() == nil && (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, peer.ErrStalled)) {
		err = peerErr(m, "getheaders", &WithheldHeadersError{Announced: announced, Waited: time.Since(start).Round(time.Millisecond), Err: err})
	}
	return res, err
}

// current reports whether every member's sync of the round measured its
// tip against the chain as the round left it: the round changed nothing,
// or one member alone changed the chain and every other one's sync began
// after it had (the lead's and those it held back, see leadGate). Then
// another round would tell nothing new.
func (r *headersRound) current(ch *chain.Chain) bool {
	_, after := ch.Tip()
	if after == r.before {
		return true
	}
	changers := 0
	for i, res := range r.results {
		switch {
		case res.Update.Connected > 0 || len(res.Update.Disconnected) > 0:
			changers++
		case r.errs[i] == nil && r.began[i] != after:
			return false
		}
	}
	return changers <= 1
}

// syncRounds bounds the rounds of one header sync.
const syncRounds = 3

// A header sync downloads the chain from one peer, the lead, and asks the
// others only once the lead is done, from the tip it reached: each is
// still sent a locator and answers with the headers after the last block
// it shares with the chain, so a peer whose chain differs shows its
// branch, and the branch with the most work wins, as when all download at
// once; a peer whose chain agrees sends one header. So the cost of a sync
// does not grow with the peers, and the lead gains nothing by leading
// (being first buys no trust: it is picked at random among the peers not
// ranked slow). A lead that stalls or drips its headers costs the sync
// little: the others start once the chain has not grown for leadStall, and
// at the latest after a head start of a quarter of the timeout (as the
// grace of pool.Each), and then download what the lead has not.
const (
	leadStall = time.Second
	leadPoll  = 50 * time.Millisecond
)

// leadGate holds the peers of a header sync round other than the lead
// until the lead is done (see above).
type leadGate struct {
	lead      *pool.Member
	chain     *chain.Chain
	start     time.Time
	headStart time.Duration
	done      chan struct{}
}

// newLeadGate picks the lead of a round among members.
func (c *Client) newLeadGate(members []*pool.Member) *leadGate {
	return &leadGate{lead: c.leadOf(members), chain: c.chain, start: time.Now(), headStart: max(leadStall, c.timeout()/4),
		done: make(chan struct{})}
}

// leadOf picks a lead among members (nil for none): at random among
// those not ranked slow (pool.PickFast), and among those whose connection
// is open if any is: a member whose connection an abandoned request ended
// is dialled again first (see syncRound), and a lead that starts with a
// handshake holds the others back for it.
func (c *Client) leadOf(members []*pool.Member) *pool.Member {
	switch {
	case len(members) == 0:
		return nil
	case c.pickLead != nil:
		return c.pickLead(members)
	}
	if open := slices.DeleteFunc(slices.Clone(members), c.needsRedial); len(open) > 0 {
		members = open
	}
	return c.pool.PickFast(members)
}

// needsRedial reports whether m's connection has ended (an abandoned
// request drops it), so that a request to m starts with dialling it again.
func (c *Client) needsRedial(m *pool.Member) bool {
	p := c.pool.Conn(m)
	return p == nil || p.Err() != nil
}

// ready dials m again, within its backoff (see pool.Pool.Redial), when
// its connection has ended: a request this client abandoned (another
// peer answered first, or a download was cancelled) drops the
// connection of a peer that did nothing wrong, and a request over it
// would charge m with a failure of the client's own making. A live
// connection is kept. A connection the node ended itself (it hung up,
// or stalled) is counted, and m is dialled again only if its backoff is
// short (a first failure's): else the end is returned at once, and the
// request goes to another peer rather than wait for one that hangs up
// on each request (see pool.Pool.RedialDue).
func (c *Client) ready(ctx context.Context, m *pool.Member) error {
	if !c.needsRedial(m) {
		return nil
	}
	return c.pool.RedialDue(ctx, m)
}

// release lets the others go: the lead is done.
func (g *leadGate) release() { close(g.done) }

// wait returns once the lead is done, has stalled (the chain has not
// grown for leadStall) or has had its head start, or ctx ends.
func (g *leadGate) wait(ctx context.Context) {
	tick := time.NewTicker(leadPoll)
	defer tick.Stop()
	height, moved := g.chain.Height(), time.Now()
	for {
		select {
		case <-g.done:
			return
		case <-ctx.Done():
			return
		case now := <-tick.C:
			if h := g.chain.Height(); h != height {
				height, moved = h, now
			}
			if now.Sub(moved) >= leadStall || now.Sub(g.start) >= g.headStart {
				return
			}
		}
	}
}

// recordChange takes in how one peer's header sync changed the chain,
// adding it to total: the blocks that left it, where they forked, and
// what rested on them. A sync that changed the chain and then failed, was
// cut off or abandoned changed it all the same, so every sync's change
// is taken in. Called with opMu held.
func (c *Client) recordChange(up chain.Update, total *chain.Update) {
	if up.Fork < total.Fork {
		total.Fork = up.Fork
	}
	total.Disconnected = append(total.Disconnected, up.Disconnected...)
	total.Connected += up.Connected
	if !up.Reorganized() {
		return
	}
	// Tips learnt before are on the old branch, and so are the filter
	// headers verified above the fork.
	c.views.clampTips(up.Fork)
	c.giveUpVerified(up.Fork)
	c.conflicts.dropAbove(up.Fork)
	// Before the first sync ends, only the blocks of a chain resumed from
	// the store count: the rest came and went with that sync.
	gone := up.Disconnected
	if !c.synced {
		gone = gone[:max(0, min(len(gone), int(c.resumed-up.Fork)))]
	}
	c.departed.add(up.Disconnected, up.Fork)
	if len(gone) > 0 {
		c.disconnected = append(c.disconnected, gone...)
		c.forks = append(c.forks, fmt.Sprintf("the chain was reorganized: %d block(s) above height %d left it for a branch with more work",
			len(gone), up.Fork))
	}
}

// recordSync takes in what one peer's header sync showed, but for how
// the chain changed (see recordChange): the peer's tip and branch, and
// what it did wrong. Only a failure of the chain's own store is returned.
// Called with opMu held.
func (c *Client) recordSync(m *pool.Member, res peer.HeadersResult, err error) error {
	if err == nil || res.Tip >= 0 {
		// What the peer showed now replaces what it showed before: a
		// peer may roll back.
		c.views.synced(m, res)
	}
	switch {
	case err == nil:
	case errors.Is(err, chain.ErrStorage):
		return fmt.Errorf("client: the chain state: %w", err)
	default:
		c.blame(m, err)
	}
	return nil
}

// lacking returns those of hashes the chain lacks.
func (c *Client) lacking(hashes []chainhash.Hash) []chainhash.Hash {
	return slices.DeleteFunc(slices.Clone(hashes), func(hash chainhash.Hash) bool {
		_, ok := c.chain.HeightOf(hash)
		return ok
	})
}
