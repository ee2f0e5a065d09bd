package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// Start makes the client a service that runs until ctx ends or Close is
// called, so that a wallet can leave it unattended:
//
//   - it learns new blocks from the peers' announcements (inv), and asks
//     every peer for headers then, and at least every SyncInterval;
//   - it keeps the filter headers verified up to the highest block a peer
//     holds (with a store, from the genesis block; without, from the first
//     block it sees), as scans verify them;
//   - it redials peers whose connection ended, permanent ones (Config.Peers)
//     for as long as it runs, with a backoff from half a second up to a
//     minute, and never a banned one, and keeps Config.TargetPeers peers;
//   - it tells following rescans of every new block at once (no polling).
//
// Scans, rescans, sends and queries run as before, from any goroutine.
func (c *Client) Start(ctx context.Context) error {
	c.svc.mu.Lock()
	defer c.svc.mu.Unlock()
	if c.svc.stop != nil {
		return errors.New("client: already started")
	}
	ctx, cancel := context.WithCancel(ctx)
	c.svc.stop = cancel
	c.svc.done = make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		c.pool.Run(ctx)
	}()
	go func() {
		defer wg.Done()
		c.follow(ctx)
	}()
	go func() {
		wg.Wait()
		close(c.svc.done)
	}()
	return nil
}

// stopService ends what Start started and waits for it.
func (c *Client) stopService() {
	c.svc.mu.Lock()
	stop, done := c.svc.stop, c.svc.done
	c.svc.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// SyncInterval is how often a started client asks its peers for headers
// when no announcement came.
const SyncInterval = 30 * time.Second

// follow syncs the headers of a peer that announces a block the chain
// lacks (that peer alone: an announcement costs the others nothing), once
// the announcements settle (see service.settle), and
// of every peer each SyncInterval, then verifies the filter headers up to
// the highest block a peer holds, and tells the rescans. A verification
// that failed is not tried again for the same block and peers before
// retryInterval (an undecidable dispute is not replayed on every
// announcement).
func (c *Client) follow(ctx context.Context) {
	tick := time.NewTicker(SyncInterval)
	defer tick.Stop()
	verifiedTo := c.bestHeld(wire.SFNodeCF)
	var failed verifyFailure
	var risen risenTips
	all := true
	for {
		// Under the operation lock, as every change of the chain: a scan
		// must see one chain from start to end.
		var err error
		if all {
			_, err = c.SyncHeaders(ctx)
		} else {
			err = c.syncAnnouncers(ctx)
		}
		if err != nil && ctx.Err() == nil {
			c.logf("service: syncing headers: %v", err)
		}
		c.tip.notify()
		risen.note(c.pool.Serving(wire.SFNodeCF), c.views.tip, &c.svc.late)
		if low, err := c.verifyLate(ctx); err != nil && ctx.Err() == nil {
			c.logf("service: verifying filter headers peers claimed late: %v", err)
			verifiedTo = min(verifiedTo, low)
		}
		best := c.bestHeld(wire.SFNodeCF)
		if now := (verifyFailure{best: best, peers: len(c.pool.Serving(wire.SFNodeCF))}); best >= 0 && best != verifiedTo &&
			(now.best != failed.best || now.peers != failed.peers || time.Since(failed.at) > retryInterval) {
			if err := c.verifyFilterHeaders(ctx, verifiedTo+1, best); err != nil {
				if ctx.Err() == nil {
					c.logf("service: verifying filter headers up to %d: %v", best, err)
				}
				failed, failed.at = now, time.Now()
			} else {
				verifiedTo = best
			}
		}
		select {
		case <-ctx.Done():
			c.svc.late.wait()
			return
		case <-c.svc.wake:
			all = false
			c.svc.settle(ctx)
		case <-tick.C:
			all = true
		}
	}
}

// verifyFailure is a verification of the filter headers that failed: up
// to which block, with how many peers, and when.
type verifyFailure struct {
	best  int32
	peers int
	at    time.Time
}

// retryInterval is how long a failed verification waits before it is
// tried again with the same block and peers.
const retryInterval = time.Minute

// announceLeadWait is how long the lead of an announced block's sync has
// to answer (one headers message) before every peer is asked instead.
const announceLeadWait = 2 * leadStall

// maxUndelivered is how many blocks in a row a peer may announce and then
// not serve before it is banned for it (a block of a short fork the chain
// did not take counts too, so it is far above what an honest node does).
const maxUndelivered = 20

// UnservedError is a peer that announced blocks, in a row, that it then
// did not serve (the chain lacks them after its header sync). It proves
// no lie: the peer is banned for it without proof (see
// pool.Pool.BanWithoutProof).
type UnservedError struct {
	// Blocks is how many blocks in a row it announced and did not serve.
	Blocks int
}

func (e *UnservedError) Error() string {
	return fmt.Sprintf("announced %d blocks in a row it then did not serve", e.Blocks)
}

// syncAnnouncers syncs the headers of the peers that announced blocks the
// chain lacks, or were connected again (whose tips are not known), and
// charges each for the announced blocks it then did not serve. A peer on
// a branch of its own (one with less work than the chain, which it
// serves) is charged nothing: its announcements are that branch's, which
// the chain takes once it has more work. An honest node that leaves the
// chain's branch for a longer one, block by block, announces each new
// block before its branch weighs more.
func (c *Client) syncAnnouncers(ctx context.Context) error {
	ms := c.views.toSync(c.pool.Serving(0))
	if len(ms) == 0 {
		return nil
	}
	c.opMu.Lock()
	reorganized, err := c.syncAnnounced(ctx, ms)
	c.opMu.Unlock()
	has := func(hash chainhash.Hash) bool {
		_, ok := c.chain.HeightOf(hash)
		return ok
	}
	for _, m := range ms {
		if undelivered := c.views.charge(m, has, reorganized); undelivered >= maxUndelivered {
			// No proof of a lie: an honest node that reorganizes, or a
			// slow one, fails to serve what it announced too. Banned for
			// this life, the ban kept does not keep a peer the user gave
			// out of a later run.
			c.pool.BanWithoutProof(m, peerErr(m, "inv", &UnservedError{Blocks: undelivered}))
		}
	}
	return err
}

// syncAnnounced syncs the headers of one of ms, picked as a header sync's
// lead is (see leadGate), then of the others but those whose every
// announced block the chain then holds: those are taken in as an
// announcement of a block the chain holds is (peerViews.heard), without a
// getheaders, so that a block announced by every peer at once costs one
// headers message, not one a peer. Being first buys the lead nothing:
// the others' tips rest on their own announcements, as ever, and every
// peer that holds a new block is asked for its filter header. It reports
// whether a sync reorganized the chain. Called with opMu held.
func (c *Client) syncAnnounced(ctx context.Context, ms []*pool.Member) (reorganized bool, err error) {
	log := newScanLog()
	lead := c.leadOf(ms)
	leadCtx, cancel := context.WithTimeout(ctx, announceLeadWait)
	up, err := c.syncPeers(leadCtx, log, []*pool.Member{lead})
	abandoned := ctx.Err() == nil && errors.Is(leadCtx.Err(), context.DeadlineExceeded)
	cancel()
	if abandoned {
		// The lead withholds or is slow: it is abandoned, not blamed, and
		// every other peer is asked, as a periodic sync asks them, so the
		// new block waits neither for the lead's timeout nor for its turn
		// to lead again.
		others := slices.DeleteFunc(c.pool.Serving(0), func(m *pool.Member) bool { return m == lead })
		if len(others) == 0 {
			return up.Reorganized(), nil
		}
		all, err := c.syncPeers(ctx, log, others)
		return up.Reorganized() || all.Reorganized(), err
	}
	if err != nil {
		return up.Reorganized(), err
	}
	reorganized = up.Reorganized()
	var rest []*pool.Member
	for _, m := range ms {
		if m != lead && !c.heardAll(m) {
			rest = append(rest, m)
		}
	}
	if len(rest) == 0 {
		return reorganized, err
	}
	up, err = c.syncPeers(ctx, log, rest)
	return reorganized || up.Reorganized(), err
}

// heardAll reports whether the chain holds every block m announced, and
// takes them in (see peerViews.heard) if so.
func (c *Client) heardAll(m *pool.Member) bool {
	hashes, ok := c.views.pending(m)
	if !ok {
		return false
	}
	top := int32(-1)
	for _, hash := range hashes {
		h, ok := c.chain.HeightOf(hash)
		if !ok {
			return false
		}
		top = max(top, h)
	}
	return c.views.heard(m, hashes, top)
}

// verifyFilterHeaders verifies the filter headers from..to (from the
// store's tip with a store) as a scan does, and keeps them.
func (c *Client) verifyFilterHeaders(ctx context.Context, from, to int32) error {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if c.st != nil {
		from = c.st.FilterHeaderTip() + 1
	}
	from = max(from, 0)
	if from > to {
		return nil
	}
	return c.verifyRange(ctx, from, to)
}

// verifyRange verifies the filter headers from..to with every live peer
// offering compact filters, and blames the peer a failure names. A peer
// proven false that way (banned) ends the verification without the
// heights verified: they are verified again at once with the peers left,
// as many times as peers are banned, so that the tip is not left
// unverified until the next block (with one peer left, they rest on it,
// and are kept so, see noteVerified). Called with opMu held.
func (c *Client) verifyRange(ctx context.Context, from, to int32) error {
	for disputes, drops := 0, 0; ; {
		ms := c.pool.Serving(wire.SFNodeCF)
		if len(ms) == 0 {
			return c.noPeers("getcfheaders")
		}
		_, _, err := c.filterHeaders(ctx, newScanLog(), ms, from, to)
		var f *pool.Failure
		if !errors.As(err, &f) || ctx.Err() != nil {
			return err
		}
		if errors.Is(f.Err, errDisputedHeader) && disputes < maxAttempts {
			// No proof yet: verified again, from the checkpoints (see
			// unboundPrev).
			disputes++
			from = min(from, c.verifiedTo+1)
			c.logf("service: %v: verifying filter headers %d..%d again", f.Err, from, to)
			continue
		}
		if !c.blame(f.Member, f.Err) {
			// Dropped, not proven false: the peers left verify without
			// it, a few times at most.
			if drops++; drops > maxAttempts || len(c.pool.Serving(wire.SFNodeCF)) == 0 {
				return err
			}
		}
		c.logf("service: %v: verifying filter headers %d..%d again with the peers left", f.Err, from, to)
	}
}

// announced takes in a peer's announcement: blocks of the chain raise the
// peer's tip and wake the service, which notes them as claimed late (see
// risenTips); a block the chain lacks wakes the header sync.
func (c *Client) announced(m *pool.Member, a peer.Announcement) {
	wake := false
	for _, hash := range a.Blocks {
		if h, ok := c.chain.HeightOf(hash); ok {
			old := c.views.tip(m)
			c.views.raise(m, h)
			wake = wake || claimsLate(old, h)
		} else if c.views.announce(m, hash) {
			wake = true
		}
	}
	if wake {
		c.svc.wakeUp()
	}
	c.tip.notify()
}

// verifyLate asks the late claims due of the live peers offering compact
// filters (see askLate), and takes in the words that came in since: where
// one differs, the heights from the lowest it claimed are verified again
// with every peer that holds them, the late ones too, and a difference is
// settled as ever (and with a store, what it holds is compared too). A
// peer that gave no word is asked again later (see lateClaims). It
// returns the highest height verified after it: below what was verified
// before if the verification failed (the peers proven false held the
// rest), for the service to verify on from there.
func (c *Client) verifyLate(ctx context.Context) (int32, error) {
	from := c.askLate(ctx)
	words := c.svc.late.takeWords()
	if from < 0 && len(words) == 0 {
		return 0, nil
	}
	c.opMu.Lock()
	defer c.opMu.Unlock()
	if low := c.lateVerdicts(words); low >= 0 && (from < 0 || low < from) {
		from = low
	}
	to := c.verifiedTo
	if from < 0 || from > to {
		return to, nil
	}
	c.giveUpVerified(from - 1)
	err := c.verifyRange(ctx, from, to)
	if err != nil && c.st != nil && c.st.FilterHeaderTip() > c.verifiedTo {
		// What the store holds above is no longer verified: it is
		// verified again from there, not kept on disk as if it were.
		if terr := c.st.TruncateFilterHeaders(c.verifiedTo); terr != nil {
			return c.verifiedTo, errors.Join(err, fmt.Errorf("client: %w", terr))
		}
	}
	return c.verifiedTo, err
}

// askLate takes the late claims due and asks each late claimer alone, in
// the background, for its word on the filter header at its reach within
// what was verified (a getcfheaders of one hash: the header commits to
// those below it, from the height it claimed late; a node answers none up
// to a block it does not hold). Heights not verified yet need no word:
// the service verifies them with every peer that holds them. It returns
// the lowest height claimed when the verified headers from the one
// before it are not all known (they rest on one peer): those are
// verified again at once with every peer; -1 otherwise.
func (c *Client) askLate(ctx context.Context) int32 {
	late := c.svc.late.take(time.Now())
	if len(late) == 0 {
		return -1
	}
	c.opMu.Lock()
	defer c.opMu.Unlock()
	late = c.liveClaims(late)
	from, to := int32(-1), c.verifiedTo
	for m, h := range late {
		switch {
		case h > to || c.views.tip(m) > to:
			// Heights not verified yet, or a peer that holds some: the
			// service verifies them next with every peer that holds
			// them, this one too, and its word there commits to the
			// verified filter headers below, those it claimed late
			// included: it is not asked apart.
			c.svc.late.answered(m)
			delete(late, m)
		case from < 0 || h < from:
			from = h
		}
	}
	if from < 0 {
		return -1
	}
	known := c.knownPrefix(max(from-1, 0), to)
	if from == 0 || len(known) != int(to-from)+2 {
		for m := range late {
			c.svc.late.answered(m)
		}
		return from
	}
	now := time.Now()
	for m, h := range late {
		r := min(to, c.views.tip(m))
		if r < h {
			c.svc.late.unanswered(m, h, now)
			c.logf("service: peer %s claimed the heights from %d late, and its tip is at %d: asked again in %v", m.Addr(), h, r, lateBackoff(c.svc.late.silences(m)))
			continue
		}
		c.svc.late.ask(ctx, lateWord{m: m, conn: c.conn(m), from: h, top: r, block: c.chain.Hash(r), prev: known[r-from], want: known[r-from+1]}, c.svc.wakeUp)
	}
	return -1
}

// liveClaims returns the claims of late whose peers serve compact filters
// now. A banned peer's claim, or one of a peer gone from the pool, is
// forgotten; one of a peer not connected now is asked again later, as if
// it were silent.
func (c *Client) liveClaims(late map[*pool.Member]int32) map[*pool.Member]int32 {
	serving := c.pool.Serving(wire.SFNodeCF)
	members := c.pool.Members()
	now := time.Now()
	for m, h := range late {
		switch {
		case slices.Contains(serving, m):
			continue
		case !slices.Contains(members, m) || c.pool.Status(m).Banned:
			c.svc.late.answered(m)
		default:
			c.svc.late.unanswered(m, h, now)
		}
		delete(late, m)
	}
	return late
}

// lateVerdicts takes in the late words that came in, and returns the
// lowest height claimed by a peer whose word differs from the verified
// filter headers, or -1: those heights are verified again. A word that
// states them lets the verification stand; one asked of headers since
// given up (a reorganization, a verification anew) is asked again; a peer
// that gave no word proves nothing, and is asked again later (see
// lateClaims): the heights stand on the peers that verified them. Called
// with opMu held.
func (c *Client) lateVerdicts(words []lateWord) int32 {
	from := int32(-1)
	now := time.Now()
	for _, w := range words {
		switch {
		case c.pool.Status(w.m).Banned || !slices.Contains(c.pool.Members(), w.m):
			c.svc.late.answered(w.m)
		case !w.current(c):
			c.svc.late.add(w.m, w.from)
		case w.err == nil && w.agrees:
			c.svc.late.answered(w.m)
		case w.err == nil || errors.Is(w.err, peer.ErrBadFilterHeader):
			c.svc.late.answered(w.m)
			c.noteLateWord(w.m, w.top, w.prev, w.hashes, w.err)
			if from < 0 || w.from < from {
				from = w.from
			}
		default:
			c.svc.late.unanswered(w.m, w.from, now)
			c.logf("service: peer %s gave no word on the filter headers it claimed late from height %d (%v): asked again in %v; they stand on the peers that verified them, and the heights from there are verified without it until it answers",
				w.m.Addr(), w.from, w.err, lateBackoff(c.svc.late.silences(w.m)))
		}
	}
	return from
}

// current reports whether the filter headers w was asked against are
// still the verified ones, of the same blocks. Called with opMu held.
func (w *lateWord) current(c *Client) bool {
	known := c.knownPrefix(w.top-1, w.top)
	return c.chain.Hash(w.top) == w.block && len(known) == 2 && known[0] == w.prev && known[1] == w.want
}

// connected takes in that m is connected, for the first time or again:
// what was known of its chain is stale, and the service's header sync is
// woken for it.
func (c *Client) connected(m *pool.Member) {
	c.views.reset(m)
	c.svc.wakeUp()
}

// live wakes the service's header sync again once m is live (the pool's
// OnLive). The sync woken when m connected (see connected) may run before
// m is in use and leave it out (see peerViews.toSync); its tip would then
// stay unknown until the next SyncInterval, and a new block held by one
// other peer would wait for it (see Rescan.Run).
func (c *Client) live(*pool.Member) {
	c.svc.wakeUp()
}
