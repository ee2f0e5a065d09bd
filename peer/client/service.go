package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/banlist"
	"github.com/spvfilter/spvfilter/peer/chain"
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
// the highest block a peer holds, and tells the rescans. The other
// announcers are synced after the new block was reported (see
// syncAnnouncers): one that withholds or is slow delays no report. A
// verification that failed is not tried again for the same block and
// peers before retryInterval (an undecidable dispute is not replayed on
// every announcement). It wakes too when a peer silent on its late claim
// is due to be asked again (see lateClaims.turnTimer).
func (c *Client) follow(ctx context.Context) {
	tick := time.NewTicker(SyncInterval)
	defer tick.Stop()
	f := &followLoop{c: c, verifiedTo: c.bestHeld(wire.SFNodeCF)}
	all := true
	for {
		// Under the operation lock, as every change of the chain: a scan
		// must see one chain from start to end.
		var rest *announcers
		var err error
		if all {
			_, err = c.SyncHeaders(ctx)
		} else {
			rest, err = c.syncAnnouncers(ctx, &f.withheld)
		}
		if err != nil && ctx.Err() == nil {
			c.logf("service: syncing headers: %v", err)
		}
		f.report(ctx)
		if rest != nil {
			// After the report: asking an announcer for what it did not
			// serve delays no new block.
			c.charge(ctx, &f.unserved, rest.synced, rest.reorganized)
		}
		if rest != nil && len(rest.ms) > 0 {
			if err := c.syncRest(ctx, rest, &f.withheld, &f.unserved); err != nil && ctx.Err() == nil {
				c.logf("service: syncing the headers of the other announcers: %v", err)
			}
			f.report(ctx)
		}
		turn := c.svc.late.turnTimer()
		select {
		case <-ctx.Done():
			turn.stop()
			c.svc.late.wait()
			return
		case <-c.svc.wake:
			all = false
			c.svc.settle(ctx)
		case <-tick.C:
			all = true
		case <-turn.c():
			// A silent late claim's turn: its peer is asked again.
			all = false
		}
		turn.stop()
	}
}

// followLoop is what the service's loop (Client.follow) keeps from one
// round to the next.
type followLoop struct {
	c          *Client
	verifiedTo int32 // the highest height whose filter headers it verified
	failed     verifyFailure
	risen      risenTips
	withheld   withholders
	unserved   unservedScores
}

// report tells the rescans of the chain as the header syncs left it,
// takes in the late claims, and verifies the filter headers up to the
// highest block a peer holds, unless that failed lately (see follow).
func (f *followLoop) report(ctx context.Context) {
	c := f.c
	c.tip.notify()
	f.risen.note(c.pool.Serving(wire.SFNodeCF), c.views.tip, &c.svc.late)
	if low, err := c.verifyLate(ctx); err != nil && ctx.Err() == nil {
		c.logf("service: verifying filter headers peers claimed late: %v", err)
		f.verifiedTo = min(f.verifiedTo, low)
	}
	best := c.bestHeld(wire.SFNodeCF)
	now := verifyFailure{best: best, peers: len(c.pool.Serving(wire.SFNodeCF))}
	if best < 0 || best == f.verifiedTo ||
		now.best == f.failed.best && now.peers == f.failed.peers && time.Since(f.failed.at) <= retryInterval {
		return
	}
	if err := c.verifyFilterHeaders(ctx, f.verifiedTo+1, best); err != nil {
		if ctx.Err() == nil {
			c.logf("service: verifying filter headers up to %d: %v", best, err)
		}
		f.failed, f.failed.at = now, time.Now()
		return
	}
	f.verifiedTo = best
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

// announceLeadWait is how long each announcer's header sync (the lead's,
// then each other one's, see syncAnnouncers) may take before the peer is
// taken for one that withholds its headers: a node that announced a
// block answers a getheaders for it with one message, at once.
const announceLeadWait = 2 * leadStall

// restYield is how long the sync of the announcers other than the lead
// waits after the report of what the lead brought (see syncRest).
const restYield = announceQuiet

// withheldMemory is how long an announcer that withheld its headers (see
// WithheldHeadersError) is not picked to lead an announcement's sync
// while another announcer can.
const withheldMemory = 10 * time.Minute

// maxUndelivered is the score of blocks announced and then not served
// (see unservedScores) at which a peer is asked for the blocks it was
// charged for, and banned without proof if it denies one of them (see
// Client.charge).
const maxUndelivered = 20

// unservedHalfLife is how long a block a peer announced and did not serve
// takes to count half as much (see unservedScores).
const unservedHalfLife = time.Hour

// maxUnservedRecords bounds the addresses whose unserved blocks are
// counted at once.
const maxUnservedRecords = 1024

// maxCharged bounds the blocks kept of one host's charges, to be asked of
// it (and refunded if it serves them) when its score reaches
// maxUndelivered: as many as a score below it holds, and the batch of the
// sync that makes it cross.
const maxCharged = maxUndelivered + maxAnnounced

// unservedScores count, by host (banlist.HostKey: the host alone, or
// host:port on loopback, as a ban is kept), the blocks each peer announced and
// then did not serve (see Client.charge): each adds one to its score, and
// the score halves every unservedHalfLife. The blocks charged are kept
// (the newest maxCharged), and a charged block the peer later serves
// (proven: see Client.back) is refunded: its share of the score, as
// decayed, is taken off, once. Only a block whose header hashes to what
// was announced and meets the chain's rules (its proof of work at the
// chain's difficulty) on the chain, or on blocks so proven, is refunded:
// a peer that announces blocks that do not exist is never refunded, so a
// liar's score is the count of its fakes, as without refunds; a block it
// serves late was a real one, and each refund costs it a block's proof
// of work. A peer whose score reaches maxUndelivered is asked for every
// kept block, and banned without proof only if it denies one (see
// Client.charge). Serving a block it was not charged for buys nothing: a
// peer may leave unserved about maxUndelivered·ln 2 blocks an
// unservedHalfLife (14 an hour), whatever it serves, and an honest node,
// which leaves unserved only the blocks of races it lost, serves them
// when asked and starts again from the blocks it did not serve. Keyed by
// host, a score outlives the member and covers every port of its host,
// as the ban it earns does: a peer found again under any address of the
// same host keeps it for the run. At most maxUnservedRecords are kept:
// the lowest goes first.
type unservedScores struct {
	by map[string]*unservedScore
}

// unservedScore is one host's score, as of at, and the blocks charged in
// it, oldest first.
type unservedScore struct {
	score   float64
	at      time.Time
	charged []unservedCharge
	// unheardAt is when it was last dropped for not being heard when
	// asked for its charges: for withheldMemory after, it is dropped at
	// its score's crossing without being waited for again, so that a
	// peer that never answers costs one proofWait each withheldMemory,
	// not one each connection (a slow honest node is asked again after,
	// and refunded if it answers).
	unheardAt time.Time
}

// unheard returns when addr's host was last dropped for not being heard
// when asked for the blocks it was charged for (see Client.charge).
func (u *unservedScores) unheard(addr string) (time.Time, bool) {
	if s := u.by[banlist.HostKey(addr)]; s != nil && !s.unheardAt.IsZero() {
		return s.unheardAt, true
	}
	return time.Time{}, false
}

// noteUnheard records that addr's host was not heard when asked, at now.
func (u *unservedScores) noteUnheard(addr string, now time.Time) {
	if s := u.by[banlist.HostKey(addr)]; s != nil {
		s.unheardAt = now
	}
}

// unservedCharge is one block charged in a score, and when.
type unservedCharge struct {
	hash chainhash.Hash
	at   time.Time
}

// weight returns what a charge made at at counts at now.
func weight(at, now time.Time) float64 {
	return math.Exp2(-float64(now.Sub(at)) / float64(unservedHalfLife))
}

// decayed returns s's score at now.
func (s *unservedScore) decayed(now time.Time) float64 {
	return s.score * weight(s.at, now)
}

// at returns the score of addr's host at now.
func (u *unservedScores) at(addr string, now time.Time) float64 {
	if s := u.by[banlist.HostKey(addr)]; s != nil {
		return s.decayed(now)
	}
	return 0
}

// add counts n more blocks addr did not serve, at now, in the score of
// its host (see unservedScores), and returns that score.
func (u *unservedScores) add(addr string, n int, now time.Time) float64 {
	s := u.record(addr, n, now)
	if s == nil {
		return 0
	}
	s.score, s.at = s.decayed(now)+float64(n), now
	return s.score
}

// charge counts the blocks hashes that addr did not serve, at now, and
// keeps them for a refund (see unservedScores); it returns the score.
func (u *unservedScores) charge(addr string, hashes []chainhash.Hash, now time.Time) float64 {
	score := u.add(addr, len(hashes), now)
	if s := u.by[banlist.HostKey(addr)]; s != nil {
		for _, h := range hashes {
			s.charged = append(s.charged, unservedCharge{hash: h, at: now})
		}
		if n := len(s.charged) - maxCharged; n > 0 {
			s.charged = slices.Delete(s.charged, 0, n)
		}
	}
	return score
}

// kept returns the blocks kept of addr's host's charges, oldest first.
func (u *unservedScores) kept(addr string) []chainhash.Hash {
	s := u.by[banlist.HostKey(addr)]
	if s == nil {
		return nil
	}
	out := make([]chainhash.Hash, len(s.charged))
	for i, c := range s.charged {
		out[i] = c.hash
	}
	return out
}

// refund takes off addr's host's score, at now, the share of each block
// of served it was charged for, and forgets their charges: each is
// refunded once. It returns the score.
func (u *unservedScores) refund(addr string, served []chainhash.Hash, now time.Time) float64 {
	s := u.by[banlist.HostKey(addr)]
	if s == nil {
		return 0
	}
	score := s.decayed(now)
	s.charged = slices.DeleteFunc(s.charged, func(c unservedCharge) bool {
		if !slices.Contains(served, c.hash) {
			return false
		}
		score -= weight(c.at, now)
		return true
	})
	s.score, s.at = max(score, 0), now
	return s.score
}

// record returns addr's host's score, made (and room made for it) if it
// has none and n > 0; nil if it has none and n is 0.
func (u *unservedScores) record(addr string, n int, now time.Time) *unservedScore {
	addr = banlist.HostKey(addr)
	s := u.by[addr]
	if s == nil {
		if n == 0 {
			return nil
		}
		if u.by == nil {
			u.by = map[string]*unservedScore{}
		}
		u.makeRoom(now)
		s = &unservedScore{at: now}
		u.by[addr] = s
	}
	return s
}

// makeRoom forgets, when maxUnservedRecords are kept, the scores decayed
// below one block, or else the lowest.
func (u *unservedScores) makeRoom(now time.Time) {
	if len(u.by) < maxUnservedRecords {
		return
	}
	low, lowest := "", math.Inf(1)
	for addr, s := range u.by {
		d := s.decayed(now)
		if d < 1 {
			delete(u.by, addr)
			continue
		}
		if d < lowest {
			low, lowest = addr, d
		}
	}
	if len(u.by) >= maxUnservedRecords {
		delete(u.by, low)
	}
}

// withholders are the announcers that withheld their headers lately
// (see WithheldHeadersError), and when.
type withholders map[*pool.Member]time.Time

// add records that ms withheld their headers now.
func (w *withholders) add(ms []*pool.Member) {
	if len(ms) == 0 {
		return
	}
	if *w == nil {
		*w = withholders{}
	}
	now := time.Now()
	for _, m := range ms {
		(*w)[m] = now
	}
}

// prefer returns the members of ms that did not withhold their headers
// within withheldMemory, and forgets what is older or of members no
// longer in ms' pool (live keeps them bounded).
func (w withholders) prefer(ms, live []*pool.Member) []*pool.Member {
	for m, at := range w {
		if time.Since(at) > withheldMemory || !slices.Contains(live, m) {
			delete(w, m)
		}
	}
	return slices.DeleteFunc(slices.Clone(ms), func(m *pool.Member) bool {
		_, ok := w[m]
		return ok
	})
}

// announcers are the announcers a sync left for later (see
// syncAnnouncers), those it synced, to be charged after the report, and
// whether the sync before changed the chain's branch (which charges them
// nothing, see peerViews.charge).
type announcers struct {
	ms          []*pool.Member
	synced      []*pool.Member
	reorganized bool
}

// syncAnnouncers syncs the headers of the peers that announced blocks the
// chain lacks, or were connected again (whose tips are not known): of the
// lead (see syncAnnounced) now; the others it returns, for syncRest to
// sync once the block the lead brought was reported, with the others, for
// the service to charge for the announced blocks they then did not serve
// (see charge) once it was reported.
func (c *Client) syncAnnouncers(ctx context.Context, w *withholders) (*announcers, error) {
	ms := c.views.toSync(c.pool.Serving(0))
	if len(ms) == 0 {
		return nil, nil
	}
	c.opMu.Lock()
	rest, reorganized, err := c.syncAnnounced(ctx, ms, w)
	c.opMu.Unlock()
	// A clone: rest may share ms' array (see syncAnnounced), which
	// DeleteFunc would clear.
	synced := slices.DeleteFunc(slices.Clone(ms), func(m *pool.Member) bool { return slices.Contains(rest, m) })
	return &announcers{ms: rest, synced: synced, reorganized: reorganized}, err
}

// syncRest syncs the headers of the announcers syncAnnouncers left, each
// within announceLeadWait: one that withholds or is slow is dropped with
// a *WithheldHeadersError naming it and what it announced, so it holds
// the operation lock (and the scans waiting for it) that long at most,
// and the block the lead brought was reported before. A block another
// peer announces meanwhile ends the sync at once (see preemptOnNews): it
// waits for none of them. It charges them for what they did not serve.
func (c *Client) syncRest(ctx context.Context, a *announcers, w *withholders, u *unservedScores) error {
	ms := slices.DeleteFunc(slices.Clone(a.ms), func(m *pool.Member) bool { return c.heardAll(m) })
	reorganized := a.reorganized
	var err error
	if len(ms) > 0 {
		// The rescans the report woke take the lock first, as a rule:
		// they scan the new block before the others are waited for.
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(restYield):
		}
		rctx, cancel := context.WithCancel(ctx)
		watched := make(chan struct{})
		go func() {
			defer close(watched)
			c.preemptOnNews(rctx, cancel, ms)
		}()
		c.opMu.Lock()
		var up chain.Update
		var withheld []*pool.Member
		up, withheld, err = c.syncPeers(rctx, newScanLog(), ms, announceLeadWait)
		c.opMu.Unlock()
		preempted := ctx.Err() == nil && rctx.Err() != nil
		cancel()
		<-watched
		w.add(withheld)
		reorganized = reorganized || up.Reorganized()
		if preempted {
			// Another peer announced a new block: its sync goes first.
			// These keep what they announced for the next sync,
			// uncharged.
			return nil
		}
	}
	c.charge(ctx, u, a.ms, reorganized)
	return err
}

// preemptOnNews calls cancel, the end of the sync of ms (the announcers
// syncRest syncs), once another live peer announces a block the chain
// lacks that none of ms announced, or ctx ends: a new block waits for no
// announcer's sync. A block one of ms announced is no news: their sync
// brings it, and a peer that announces it again (one whose own sync just
// showed it lacks the block, say) cancels nothing.
func (c *Client) preemptOnNews(ctx context.Context, cancel context.CancelFunc, ms []*pool.Member) {
	known := map[chainhash.Hash]bool{}
	for _, m := range ms {
		hashes, _ := c.views.pending(m)
		for _, hash := range hashes {
			known[hash] = true
		}
	}
	tick := time.NewTicker(leadPoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, m := range c.pool.Serving(0) {
			hashes, ok := c.views.pending(m)
			if !ok || slices.Contains(ms, m) {
				continue
			}
			for _, hash := range c.lacking(hashes) {
				if !known[hash] {
					cancel()
					return
				}
			}
		}
	}
}

// charge charges each of ms for the blocks it announced and then did not
// serve (see peerViews.charge) in its score (see unservedScores). Once a
// charge would bring the score to maxUndelivered, the peer is asked for
// every block it is charged for, the new ones too (see back): those it
// serves (blocks of branches the chain did not take: races its miner
// lost) are refunded. Then, with the score still at maxUndelivered:
//
//   - a peer that denied a block it announced (notfound, or a block that
//     fails its checks) is banned without proof: its own word against
//     its announcement, though no proof it lied;
//   - a peer that could not be asked (it stalled or is slow, does not
//     serve witness blocks, or is not connected) is dropped, not banned:
//     a slow answer is no word against anything. It is dialled again
//     after its backoff, with its score; within withheldMemory, its next
//     crossing drops it without asking (see unservedScore.unheardAt),
//     after that it is asked again.
//
// Below maxUndelivered, blocks are charged unasked: a notfound ends a
// request by dropping the connection (see peer.Peer.GetBlocks), and the
// score alone costs a peer nothing. Nothing is charged once ctx ended.
func (c *Client) charge(ctx context.Context, u *unservedScores, ms []*pool.Member, reorganized bool) {
	has := func(hash chainhash.Hash) bool {
		_, ok := c.chain.HeightOf(hash)
		return ok
	}
	for _, m := range ms {
		missing := c.views.charge(m, has, reorganized)
		if len(missing) == 0 {
			continue
		}
		if u.at(m.Addr(), time.Now())+float64(len(missing)) < maxUndelivered {
			u.charge(m.Addr(), missing, time.Now())
			continue
		}
		kept := u.kept(m.Addr())
		var b announcedServed
		if at, ok := u.unheard(m.Addr()); ok && time.Since(at) < withheldMemory {
			// Not heard lately: not waited for again (see unheardAt).
			b.unasked = fmt.Errorf("not heard when asked %v ago, not asked again before %v", time.Since(at).Round(time.Second), withheldMemory)
		} else {
			b = c.back(ctx, m, append(kept, missing...))
		}
		if ctx.Err() != nil {
			return
		}
		now := time.Now()
		u.refund(m.Addr(), b.served, now)
		unserved := slices.DeleteFunc(slices.Clone(missing), func(h chainhash.Hash) bool { return slices.Contains(b.served, h) })
		score := u.charge(m.Addr(), unserved, now)
		if len(b.served) > 0 {
			c.logf("service: peer %s served %d of the %d blocks it announced it was asked for (branches the chain did not take): refunded, its unserved score %.1f", m.Addr(), len(b.served), len(kept)+len(missing), score)
		}
		switch {
		case score < maxUndelivered:
		case b.denied != nil:
			// No proof of a lie: its word against its announcement.
			// Banned for this life, the ban kept does not keep a peer
			// the user gave out of a later run.
			c.pool.BanWithoutProof(m, peerErr(m, "inv", fmt.Errorf("%w; asked for them, it denied one: %w", &UnservedError{Blocks: int(score)}, b.denied)))
		default:
			u.noteUnheard(m.Addr(), now)
			c.pool.Drop(m, peerErr(m, "inv", fmt.Errorf("%w; asked for them, it could not be heard: %w", &UnservedError{Blocks: int(score)}, b.unasked)))
		}
	}
}

// proofWait is how long an announcer is given to send each block it is
// asked for by back: a node that announced a block sends it at once.
const proofWait = announceLeadWait

// proofBudget bounds the time back waits for all the blocks it asks for.
const proofBudget = 8 * proofWait

// maxStaleDepth bounds the blocks back asks for below one it was asked to
// prove, to reach the chain: a branch the chain did not take, of which
// not every block was announced.
const maxStaleDepth = maxAnnounced

// announcedServed is what a peer asked for blocks it announced (see back) did:
// the blocks it served, and the first it denied or why the rest could
// not be asked.
type announcedServed struct {
	served  []chainhash.Hash
	denied  error // the block it denied: notfound, or one failing its checks
	unasked error // why the blocks after the last served were not heard
}

// back asks m for hashes (blocks it announced that the chain lacks), one
// at a time, in order, each within proofWait and all within proofBudget.
// A block m sends that hashes to the hash it announced, commits to its
// transactions (peer.GetBlocks checks both) and whose header meets the
// chain's rules (proof of work, the difficulty its bits must state, its
// time) on a parent the chain holds, or on blocks m served so, was
// served: a block of a branch the chain did not take. Below a block
// whose parent is neither, its parents are asked of m too, up to
// maxStaleDepth, as a branch of several blocks is proven block by block
// from the chain. Asking ends at the first block m denies (a notfound,
// a block failing a check: that ends its connection) or does not send
// in time.
func (c *Client) back(ctx context.Context, m *pool.Member, hashes []chainhash.Hash) announcedServed {
	var b announcedServed
	p := c.pool.Conn(m)
	if p == nil {
		b.unasked = errors.New("not connected")
		return b
	}
	conn := c.conn(m) // dialled again first if an abandoned request dropped it
	bctx, cancel := context.WithTimeout(ctx, proofBudget)
	defer cancel()
	proven := map[chainhash.Hash]*wire.BlockHeader{}
	for _, hash := range hashes {
		if _, ok := c.chain.HeightOf(hash); ok || proven[hash] != nil {
			b.served = append(b.served, hash)
			continue
		}
		err := c.prove(bctx, conn, hash, proven)
		var d *deniedError
		switch {
		case err == nil:
			b.served = append(b.served, hash)
		case errors.As(err, &d):
			b.denied = d.err
			return b
		default:
			b.unasked = err
			return b
		}
	}
	return b
}

// deniedError is a block a peer denied having (see back).
type deniedError struct{ err error }

func (e *deniedError) Error() string { return e.err.Error() }

// prove asks conn for the block hash, and its parents the chain lacks
// and proven does not hold (at most maxStaleDepth), and checks their
// headers by the chain's rules from the block of the chain they build
// on, through proven; it adds them to proven. A notfound, a block failing
// its checks or a header failing the rules is a *deniedError; any other
// failure (a stall, a service the peer lacks) is returned as is.
func (c *Client) prove(ctx context.Context, conn askingConn, hash chainhash.Hash, proven map[chainhash.Hash]*wire.BlockHeader) error {
	var got []*wire.BlockHeader // hash's first, then its parents'
	for at := hash; ; {
		if len(got) > maxStaleDepth {
			return fmt.Errorf("block %v: more than %d blocks the chain lacks below it", hash, maxStaleDepth)
		}
		header, err := c.blockHeader(ctx, conn, at)
		if err != nil {
			return err
		}
		got = append(got, header)
		prev := header.PrevBlock
		if _, ok := c.chain.HeightOf(prev); ok || proven[prev] != nil {
			break
		}
		at = prev
	}
	slices.Reverse(got)
	var below []*wire.BlockHeader
	for prev := got[0].PrevBlock; proven[prev] != nil; prev = proven[prev].PrevBlock {
		below = append(below, proven[prev])
	}
	slices.Reverse(below)
	if _, err := c.chain.NewBranch(append(below, got...)); err != nil {
		return &deniedError{fmt.Errorf("served block %v, whose header fails the chain's rules: %w", hash, err)}
	}
	for _, h := range got {
		proven[h.BlockHash()] = h
	}
	return nil
}

// blockHeader asks conn for the block hash, within proofWait, and returns
// its header (see prove).
func (c *Client) blockHeader(ctx context.Context, conn askingConn, hash chainhash.Hash) (*wire.BlockHeader, error) {
	rctx, cancel := context.WithTimeout(ctx, proofWait)
	defer cancel()
	var header *wire.BlockHeader
	err := conn.GetBlocks(rctx, []chainhash.Hash{hash}, func(_ int, b *wire.MsgBlock) error {
		header = &b.Header
		return nil
	})
	switch {
	case errors.Is(err, peer.ErrMissingBlocks) || errors.Is(err, peer.ErrBadBlock):
		return nil, &deniedError{err}
	case err != nil:
		return nil, fmt.Errorf("block %v not sent within %v: %w", hash, proofWait, err)
	case header == nil:
		return nil, fmt.Errorf("block %v: not handed out", hash)
	}
	return header, nil
}

// syncAnnounced syncs the headers of one of ms, the lead, within
// announceLeadWait: picked as a header sync's lead is (see leadGate),
// among those that did not withhold their headers lately (with none,
// all are returned, for syncRest). It
// returns the others but those whose every announced block the chain then
// holds: those are taken in as an announcement of a block the chain holds
// is (peerViews.heard), without a getheaders, so that a block announced
// by every peer at once costs one headers message, not one a peer. Being
// first buys the lead nothing: the others' tips rest on their own
// announcements, as ever, and every peer that holds a new block is asked
// for its filter header. A lead that withholds its headers or is slow is
// dropped (see WithheldHeadersError), and every other peer is asked, as
// a periodic sync asks them but each within announceLeadWait too, so the
// new block waits neither for the lead's timeout, nor for its turn to
// lead again, nor for another peer that withholds its headers. It reports whether a
// sync reorganized the chain. Called with opMu held.
func (c *Client) syncAnnounced(ctx context.Context, ms []*pool.Member, w *withholders) (rest []*pool.Member, reorganized bool, err error) {
	log := newScanLog()
	preferred := w.prefer(ms, c.pool.Members())
	if len(preferred) == 0 {
		// Only announcers that withheld their headers lately: nothing
		// to report first; they are synced as the others are.
		return ms, false, nil
	}
	lead := c.leadOf(preferred)
	up, withheld, err := c.syncPeers(ctx, log, []*pool.Member{lead}, announceLeadWait)
	w.add(withheld)
	reorganized = up.Reorganized()
	if len(withheld) > 0 && ctx.Err() == nil {
		others := slices.DeleteFunc(c.pool.Serving(0), func(m *pool.Member) bool { return m == lead })
		if len(others) == 0 {
			return nil, reorganized, nil
		}
		all, stalled, err := c.syncPeers(ctx, log, others, announceLeadWait)
		w.add(stalled)
		return nil, reorganized || all.Reorganized(), err
	}
	if err != nil {
		return nil, reorganized, err
	}
	for _, m := range ms {
		if m != lead && !c.heardAll(m) {
			rest = append(rest, m)
		}
	}
	return rest, reorganized, nil
}

// heardAll reports whether the chain holds every block m announced, and
// takes them in (see peerViews.heard) if so. If it lacks some, m's tip is
// still raised to the highest of them it holds, as an announcement of a
// block of the chain raises it (see announced): a block m announced
// with the lead is not taken as held by the lead alone (which a
// following rescan gives the others time to get) while m's own sync is
// to come.
func (c *Client) heardAll(m *pool.Member) bool {
	hashes, ok := c.views.pending(m)
	if !ok {
		return false
	}
	top, all := int32(-1), true
	for _, hash := range hashes {
		h, ok := c.chain.HeightOf(hash)
		if !ok {
			all = false
			continue
		}
		top = max(top, h)
	}
	if !all {
		if top >= 0 {
			c.views.raise(m, top)
		}
		return false
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
// and are kept so, see noteVerified). A dropped peer's failure that ends
// it is returned as judged names it; so is the last one, after the
// error, when no peer is left to verify again with (see afterDrop).
// Called with opMu held.
func (c *Client) verifyRange(ctx context.Context, from, to int32) error {
	var dropped error // the last dropped peer's failure, as judged names it
	for disputes, drops := 0, 0; ; {
		ms := c.pool.Serving(wire.SFNodeCF)
		if len(ms) == 0 {
			return afterDrop(c.noPeers("getcfheaders"), dropped)
		}
		_, _, err := c.filterHeaders(ctx, newScanLog(), ms, from, to)
		var f *pool.Failure
		if !errors.As(err, &f) || ctx.Err() != nil {
			return afterDrop(err, dropped)
		}
		if errors.Is(f.Err, errDisputedHeader) && disputes < maxAttempts {
			// No proof yet: verified again, from the checkpoints (see
			// unboundPrev).
			disputes++
			from = min(from, c.verifiedTo+1)
			c.logf("service: %v: verifying filter headers %d..%d again", f.Err, from, to)
			continue
		}
		if c.blame(f.Member, f.Err) {
			// Banned: a drop before it is not why peers may run out now.
			dropped = nil
		} else {
			// Dropped, not proven false: the peers left verify without
			// it, a few times at most.
			dropped = judged(err, f)
			if drops++; drops > maxAttempts || len(c.pool.Serving(wire.SFNodeCF)) == 0 {
				return dropped
			}
		}
		c.logf("service: %v: verifying filter headers %d..%d again with the peers left", f.Err, from, to)
	}
}

// afterDrop returns err, what ended a verification of filter headers,
// naming dropped after it when err is that no peer was left (ErrNoPeers)
// and dropped, the failure of a peer the verification dropped before
// (as judged names it), is not nil: the cause of the peers' running
// out. errors.Is and errors.As see both.
func afterDrop(err, dropped error) error {
	if dropped == nil || !errors.Is(err, ErrNoPeers) {
		return err
	}
	return fmt.Errorf("%w (after a peer dropped: %w)", err, dropped)
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
