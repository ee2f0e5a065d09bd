package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
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
//     minute, and never a banned one;
//   - it tells following rescans of every new block at once (no polling).
//
// Scans, rescans, sends and queries run as before, from any goroutine.
func (c *Client) Start(ctx context.Context) error {
	c.svcMu.Lock()
	defer c.svcMu.Unlock()
	if c.svcStop != nil {
		return errors.New("client: already started")
	}
	ctx, cancel := context.WithCancel(ctx)
	c.svcStop = cancel
	c.svcDone = make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		c.manage(ctx)
	}()
	go func() {
		defer wg.Done()
		c.follow(ctx)
	}()
	go func() {
		wg.Wait()
		close(c.svcDone)
	}()
	return nil
}

// stopService ends what Start started and waits for it.
func (c *Client) stopService() {
	c.svcMu.Lock()
	stop, done := c.svcStop, c.svcDone
	c.svcMu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
}

// started reports whether the service runs.
func (c *Client) started() bool {
	c.svcMu.Lock()
	defer c.svcMu.Unlock()
	return c.svcStop != nil
}

// SyncInterval is how often a started client asks its peers for headers
// when no announcement came.
const SyncInterval = 30 * time.Second

// follow syncs the headers of a peer that announces a block the chain
// lacks (that peer alone: an announcement costs the others nothing), and
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
		c.notifyTip()
		best := c.bestHeld(wire.SFNodeCF)
		if now := (verifyFailure{best: best, peers: len(c.serving(wire.SFNodeCF))}); best >= 0 && best != verifiedTo &&
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
			return
		case <-c.wakeSync:
			all = false
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

// maxUndelivered is how many blocks in a row a peer may announce and then
// not serve before it is banned for it (a block of a short fork the chain
// did not take counts too, so it is far above what an honest node does).
const maxUndelivered = 20

// syncAnnouncers syncs the headers of the peers that announced blocks the
// chain lacks, or were connected again (whose tips are not known), and
// charges each for the announced blocks it then did not serve. A peer on
// a branch of its own (one with less work than the chain, which it
// serves) is charged nothing: its announcements are that branch's, which
// the chain takes once it has more work. An honest node that leaves the
// chain's branch for a longer one, block by block, announces each new
// block before its branch weighs more.
func (c *Client) syncAnnouncers(ctx context.Context) error {
	c.mu.Lock()
	var ms []*member
	for _, m := range c.members {
		if (len(m.announced) > 0 || m.fresh) && m.isLive() {
			m.fresh = false
			ms = append(ms, m)
		}
	}
	c.mu.Unlock()
	if len(ms) == 0 {
		return nil
	}
	c.opMu.Lock()
	up, err := c.syncPeers(ctx, ms)
	c.opMu.Unlock()
	for _, m := range ms {
		c.mu.Lock()
		missing := 0
		for _, hash := range m.announced {
			if _, ok := c.chain.HeightOf(hash); !ok && (m.branch == nil || m.branch.Hash != hash) {
				missing++
			}
		}
		if missing < len(m.announced) || m.branch != nil || up.Reorganized() {
			// It served some, or serves a branch of its own, or the
			// chain changed branch (what it announced may be on the
			// branch it left): only a run of blocks never served counts.
			m.undelivered, missing = 0, 0
		}
		m.announced, m.undelivered = nil, m.undelivered+missing
		undelivered := m.undelivered
		c.mu.Unlock()
		if undelivered >= maxUndelivered {
			c.ban(m, peerErr(m, "inv", fmt.Errorf("%w: announced %d blocks it did not serve", peer.ErrProtocol, undelivered)))
		}
	}
	return err
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
	ms := c.serving(wire.SFNodeCF)
	if len(ms) == 0 {
		return c.noPeers("getcfheaders")
	}
	c.startPass()
	c.budget.reset()
	_, _, err := c.filterHeaders(ctx, ms, from, to)
	var f *failure
	if errors.As(err, &f) {
		c.blame(f.m, f.err)
	}
	return err
}

// announced takes in a peer's announcement: blocks of the chain raise the
// peer's tip; a block the chain lacks wakes the header sync.
func (c *Client) announced(addr string, a peer.Announcement) {
	unknown := false
	c.mu.Lock()
	for _, hash := range a.Blocks {
		h, ok := c.chain.HeightOf(hash)
		for _, m := range c.members {
			switch {
			case m.addr != addr:
			case ok && m.tip < h:
				m.tip = h
			case !ok && len(m.announced) < maxAnnounced:
				m.announced = append(m.announced, hash)
				unknown = true
			}
		}
	}
	c.mu.Unlock()
	if unknown {
		select {
		case c.wakeSync <- struct{}{}:
		default:
		}
	}
	c.notifyTip()
}

// maxAnnounced bounds the unknown blocks a peer's announcements are
// remembered for until its next header sync.
const maxAnnounced = 16

// notifyTip tells whoever waits on tipChanged that the chain or a peer's
// tip may have moved.
func (c *Client) notifyTip() {
	c.tipMu.Lock()
	defer c.tipMu.Unlock()
	if c.tipCh != nil {
		close(c.tipCh)
	}
	c.tipCh = make(chan struct{})
}

// tipChanged returns a channel closed at the next notifyTip.
func (c *Client) tipChanged() <-chan struct{} {
	c.tipMu.Lock()
	defer c.tipMu.Unlock()
	if c.tipCh == nil {
		c.tipCh = make(chan struct{})
	}
	return c.tipCh
}

// Backoff of redials: the first after half a second, doubling to a
// minute.
const (
	redialMin = 500 * time.Millisecond
	redialMax = time.Minute
)

// managerInterval is how often the service looks after its peers.
const managerInterval = 250 * time.Millisecond

// manage looks after the peers: it notices connections that ended and
// redials them with backoff.
func (c *Client) manage(ctx context.Context) {
	tick := time.NewTicker(managerInterval)
	defer tick.Stop()
	var dials sync.WaitGroup
	defer dials.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		now := time.Now()
		type flood struct {
			m   *member
			err error
		}
		var floods []flood
		c.mu.Lock()
		c.pruneLocked()
		for _, m := range c.members {
			if m.banned || m.dialing || m.alias != "" {
				continue
			}
			if m.isLive() {
				select {
				case <-m.p.Done():
					// Gone without a request noticing.
					if err := c.ended(m, now); err != nil {
						floods = append(floods, flood{m, err})
						continue
					}
				default:
					continue
				}
			}
			if now.Before(m.nextDial) {
				continue
			}
			m.dialing = true
			dials.Add(1)
			go func() {
				defer dials.Done()
				c.redialMember(ctx, m)
			}()
		}
		want := c.cfg.TargetPeers - c.outboundLocked()
		discovering := c.discovering
		if want > 0 && c.book != nil && !discovering && now.After(c.nextDiscovery) {
			c.discovering, c.nextDiscovery = true, now.Add(discoverInterval)
			dials.Add(1)
			go func() {
				defer dials.Done()
				c.discover(ctx, want)
				c.mu.Lock()
				c.discovering = false
				c.mu.Unlock()
			}()
		}
		c.mu.Unlock()
		for _, f := range floods {
			c.ban(f.m, f.err)
		}
	}
}

// discoverInterval is how often the service looks for more peers while it
// has fewer than it wants.
const discoverInterval = 5 * time.Second

// maxFailures is how many redials in a row a peer found by discovery gets
// before it is forgotten (peers of Config.Peers are redialled for ever).
const maxFailures = 3

// outboundLocked counts the peers connected or being dialled. Called with
// mu held.
func (c *Client) outboundLocked() int {
	n := 0
	for _, m := range c.members {
		if m.isLive() || m.dialing {
			n++
		}
	}
	return n
}

// pruneLocked forgets the peers found by discovery that failed too often.
// Called with mu held.
func (c *Client) pruneLocked() {
	kept := c.members[:0]
	for _, m := range c.members {
		if !m.permanent && !m.banned && !m.dialing && !m.isLive() && m.failures >= maxFailures {
			continue
		}
		kept = append(kept, m)
	}
	c.members = kept
}

// revive redials, at once, the peers of Config.Peers whose connection
// ended and whose backoff has passed.
func (c *Client) revive(ctx context.Context) {
	now := time.Now()
	var ms []*member
	c.mu.Lock()
	for _, m := range c.members {
		if m.permanent && !m.banned && m.alias == "" && !m.dialing && !m.isLive() && !now.Before(m.nextDial) {
			m.dialing = true
			ms = append(ms, m)
		}
	}
	c.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.redialMember(ctx, m)
		}()
	}
	wg.Wait()
}

// redialMember dials a member whose connection ended; on success it is
// live again, on failure its next try waits twice as long.
func (c *Client) redialMember(ctx context.Context, m *member) {
	p, err := peer.Dial(ctx, c.peerConfig(m.addr))
	c.mu.Lock()
	defer c.mu.Unlock()
	m.dialing = false
	if err != nil {
		m.failures++
		m.nextDial = time.Now().Add(redialBackoff(m.failures))
		m.reason = "unreachable: " + err.Error()
		if m.err == nil {
			m.err = err
		}
		return
	}
	if m.p != nil {
		m.before += m.p.BytesReceived()
	}
	// The failures in a row are cleared only once the connection lasts
	// (see stableConnection).
	m.p, m.err, m.reason, m.tip, m.fresh, m.connectedAt = p, nil, "", -1, true, time.Now()
	c.logf("service: %s is back", m.addr)
	select {
	case c.wakeSync <- struct{}{}:
	default:
	}
}

// errString is err's message, or "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
