package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Connect dials the members of Config.Peers at once, then, unless
// ConnectOnly, discovers others up to Config.Target. One node given under
// two spellings is one member; a member given and banned with a proof is
// not dialled, and one banned without proof is, with a warning (the
// user's peers are the user's). It returns why members could not be
// found; whether any is live, Live says. A member whose handshake lags
// the first's beyond its budget or grace is dropped as too slow (see Each).
func (p *Pool) Connect(ctx context.Context) []error {
	dial := p.admit()
	p.Each(ctx, NewBudget(), dial, func(ctx context.Context, m *Member) error {
		p.dial(ctx, m)
		p.mu.Lock()
		defer p.mu.Unlock()
		return m.err
	})
	if ctx.Err() != nil || p.cfg.ConnectOnly {
		return nil
	}
	return p.discover(ctx, p.cfg.Target-len(p.Serving(0)))
}

// admit returns the members of Config.Peers to dial: not a second
// spelling of another, and not banned with a proof.
func (p *Pool) admit() []*Member {
	var dial []*Member
	seen := map[string]string{} // the node's address: the address given for it
	for _, m := range p.Members() {
		if !m.permanent {
			continue
		}
		// One node written two ways is one member, not two that agree.
		key := nodeKey(m.addr)
		first := seen[key]
		if first == "" {
			seen[key] = m.addr
		}
		b, banned := p.bans.Banned(m.addr)
		p.mu.Lock()
		switch {
		case first != "":
			m.reason = fmt.Sprintf("the same node as %s: not used twice", first)
			m.err, m.alias = errors.New(m.reason), first
		case banned && b.Proof:
			m.banned, m.reason = true, fmt.Sprintf("given, but banned until %s for what it was caught doing: %s; not used until the ban ends or Unban lifts it",
				b.Until.UTC().Format(time.RFC3339), b.Reason)
			m.err = errors.New(m.reason)
		default:
			if banned {
				p.note("peer %s is banned until %s (%s), but the ban rests on no proof: it is used, as it was given",
					m.addr, b.Until.UTC().Format(time.RFC3339), b.Reason)
			}
			dial = append(dial, m)
		}
		p.mu.Unlock()
	}
	return dial
}

// managerInterval is how often Run looks after the members.
const managerInterval = 250 * time.Millisecond

// maxFailures is how many failures in a row a member found by discovery
// gets before it is forgotten (those of Config.Peers are redialled for
// ever): dials that failed and connections that did not last. Cut-offs
// as too slow are not counted (being slow proves nothing, and an honest
// node may be slow for a few seconds): they only lengthen its sit-out
// (see Member.sitOut). maxSlowCuts of them in a row forget it, the last
// after a sit-out of redialMax (about two minutes of sit-outs in all),
// so that members slow every time they are back, which do not count
// toward the target while they sit out, are not kept for ever beside
// those discovery adds meanwhile.
const (
	maxFailures = 3
	maxSlowCuts = 9
)

// Run looks after the members until ctx ends: it notices connections
// that ended and redials them with their backoff (a flood bans its
// member, named, instead), forgets members found by discovery that
// failed too often, and discovers others while fewer than Config.Target
// are connected. It returns once every dial it started has ended.
func (p *Pool) Run(ctx context.Context) {
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
		for _, f := range p.tend(ctx, &dials) {
			p.Ban(f.Member, f.Err)
		}
	}
}

// tend is one look of Run after the members: it starts the redials and
// discovery due, and returns the members whose connection a flood ended,
// to be banned with it once mu is released.
func (p *Pool) tend(ctx context.Context, dials *sync.WaitGroup) (floods []*Failure) {
	now := time.Now()
	p.mu.Lock()
	defer p.mu.Unlock()
	p.pruneLocked()
	for _, m := range p.members {
		if f := p.tendLocked(ctx, dials, m, now); f != nil {
			floods = append(floods, f)
		}
	}
	p.discoverDueLocked(ctx, dials, now)
	return floods
}

// tendLocked redials m if its connection ended, without a request
// noticing, and its backoff has passed; a connection a flood ended is
// returned instead. Called with mu held.
func (p *Pool) tendLocked(ctx context.Context, dials *sync.WaitGroup, m *Member, now time.Time) *Failure {
	if m.banned || m.dialing || m.alias != "" {
		return nil
	}
	if err := p.endedUnnoticed(m, now); err != nil {
		return &Failure{Member: m, Err: err}
	}
	if m.isLive() || now.Before(m.nextDial) {
		return nil
	}
	m.dialing = true
	dials.Add(1)
	go func() {
		defer dials.Done()
		p.redial(ctx, m)
	}()
	return nil
}

// discoverDueLocked starts a discovery when fewer members than the
// target are connected or dialled, none runs and discoverInterval has
// passed since the last. Called with mu held.
func (p *Pool) discoverDueLocked(ctx context.Context, dials *sync.WaitGroup, now time.Time) {
	want := p.cfg.Target - p.outboundLocked()
	if want <= 0 || p.book == nil || p.discovering || !now.After(p.nextDiscovery) {
		return
	}
	p.discovering, p.nextDiscovery = true, now.Add(discoverInterval)
	dials.Add(1)
	go func() {
		defer dials.Done()
		p.discover(ctx, want)
		p.mu.Lock()
		p.discovering = false
		p.mu.Unlock()
	}()
}

// outboundLocked counts the members connected or being dialled. Called
// with mu held.
func (p *Pool) outboundLocked() int {
	n := 0
	for _, m := range p.members {
		if m.isLive() || m.dialing {
			n++
		}
	}
	return n
}

// pruneLocked forgets the members found by discovery that failed too
// often, their cut-offs as too slow counted apart (see maxFailures),
// keeping their records (see record). Called with mu held.
func (p *Pool) pruneLocked() {
	kept := p.members[:0]
	for _, m := range p.members {
		if !m.permanent && !m.banned && !m.dialing && !m.isLive() && (m.failures-m.slow >= maxFailures || m.slow >= maxSlowCuts) {
			p.records.remember(m)
			p.forgetLocked(m)
			continue
		}
		kept = append(kept, m)
	}
	clear(p.members[len(kept):])
	p.members = kept
}

// Revive redials, at once, the members of Config.Peers whose connection
// ended and whose backoff has passed, and returns when they are done.
func (p *Pool) Revive(ctx context.Context) {
	now := time.Now()
	var ms []*Member
	p.mu.Lock()
	for _, m := range p.members {
		if m.permanent && !m.banned && m.alias == "" && !m.dialing && !m.isLive() && !now.Before(m.nextDial) {
			m.dialing = true
			ms = append(ms, m)
		}
	}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.redial(ctx, m)
		}()
	}
	wg.Wait()
}
