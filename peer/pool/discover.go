package pool

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/addrbook"
)

// bookDeadline bounds a connection to an address found in the address
// book, a DNS seed or gossip: the dial and the handshake, as Bitcoin
// Core's -timeout (5 s) does. A member the user gives has the whole
// Config.Timeout; an address nobody vouches for that has not answered by
// then is not waited for.
const bookDeadline = 5 * time.Second

// maxDialsAtOnce bounds the addresses a discovery dials at once.
const maxDialsAtOnce = 16

// discoverInterval is how often Run looks for more members while it has
// fewer than it wants.
const discoverInterval = 5 * time.Second

// bookDial is one discovery: it dials addresses from the address book
// (the DNS seeds asked when the book has none to offer) in parallel, up
// to twice as many at once as members are still wanted, a new one as
// soon as one fails, until enough are connected, none is left, or one
// connect deadline has passed since it began: a discovery never costs
// more, however many addresses do not answer. Each dial counts as an
// attempt in the book and each connection as a success (Book.Attempt,
// Good), so that an address that fails is picked later, as btcd's addrmgr
// weighs its failed attempts.
type bookDial struct {
	p    *Pool
	want int
	// What it did, for the warning: addresses dialled, connected, and
	// those that did not answer by the deadline; how long it took.
	tried, connected, silent int
	took                     time.Duration
	problems                 []error
	// seen are the addresses dialled, each once; seeded, whether the
	// DNS seeds were asked.
	seen   map[string]bool
	seeded bool
}

// connectDeadline returns the deadline of a connection to an address
// found: bookDeadline, or the timeout if shorter.
func (p *Pool) connectDeadline() time.Duration { return min(bookDeadline, p.cfg.Timeout) }

// run dials as bookDial describes.
func (d *bookDial) run(ctx context.Context) {
	start := time.Now()
	deadline := d.p.connectDeadline()
	dctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	done := make(chan *Member)
	// A dial started with less than a quarter of the deadline left would
	// rarely finish its handshake.
	last := start.Add(deadline - deadline/4)
	for inflight := d.dialMore(dctx, done, 0, last); inflight > 0; inflight = d.dialMore(dctx, done, inflight-1, last) {
		if d.settle(ctx, <-done, deadline) {
			cancel() // the others are not needed
		}
	}
	d.took = time.Since(start)
}

// dialMore starts dials, each reporting its member on done once it ends,
// while members are wanted, fewer than allowed are in flight, last has
// not passed and the book (or, once, the DNS seeds) has an address not
// tried yet. It returns how many dials are in flight.
func (d *bookDial) dialMore(ctx context.Context, done chan<- *Member, inflight int, last time.Time) int {
	for d.connected < d.want && inflight < min(maxDialsAtOnce, 2*(d.want-d.connected)) && time.Now().Before(last) {
		m := d.next(ctx)
		if m == nil {
			break
		}
		inflight++
		d.tried++
		go func() {
			d.p.dial(ctx, m)
			done <- m
		}()
	}
	return inflight
}

// next returns a member to dial at an address not tried yet, asking the
// DNS seeds once when the book has none; nil if there is none.
func (d *bookDial) next(ctx context.Context) *Member {
	cands := d.p.candidates(1, d.seen)
	if len(cands) == 0 && !d.seeded {
		d.seeded = true
		d.problems = append(d.problems, d.p.seed(ctx)...)
		cands = d.p.candidates(1, d.seen)
	}
	if len(cands) == 0 {
		return nil
	}
	d.seen[cands[0].addr] = true
	return cands[0]
}

// settle takes in a dial that ended: a member connected counts (it
// reports whether enough are), one that failed is forgotten, its error
// kept (a dial that did not answer by the deadline named so, one
// cancelled as no longer needed left out).
func (d *bookDial) settle(ctx context.Context, m *Member, deadline time.Duration) (enough bool) {
	d.p.mu.Lock()
	live, err := m.isLive(), m.err
	d.p.mu.Unlock()
	if live {
		d.connected++
		return d.connected >= d.want
	}
	if (errors.Is(err, context.DeadlineExceeded) || errors.Is(err, peer.ErrStalled)) && ctx.Err() == nil {
		d.silent++
		err = fmt.Errorf("peer %s: no handshake within the connect deadline of %v: %w", m.addr, deadline, err)
	}
	if !errors.Is(err, context.Canceled) {
		d.problems = append(d.problems, err)
	}
	d.p.forget(m)
	return false
}

// warning says what the discovery cost, if addresses failed it.
func (d *bookDial) warning() string {
	if d.tried == d.connected {
		return ""
	}
	return fmt.Sprintf("discovery: %d address(es) from the address book, DNS seeds or gossip tried, %d connected, %d did not answer within the %v connect deadline (%v spent)",
		d.tried, d.connected, d.silent, d.p.connectDeadline(), d.took.Round(time.Millisecond))
}

// discover dials up to want more members from the address book, asking
// the DNS seeds when the book has none to offer (see bookDial); it
// returns why members could not be found, if it found fewer, and leaves a
// warning for the next result when addresses failed.
func (p *Pool) discover(ctx context.Context, want int) []error {
	if p.book == nil || want <= 0 {
		return nil
	}
	d := &bookDial{p: p, want: want, seen: map[string]bool{}}
	d.run(ctx)
	if w := d.warning(); w != "" {
		p.mu.Lock()
		p.note("%s", w)
		p.mu.Unlock()
	}
	if d.connected < want && len(d.problems) == 0 {
		d.problems = append(d.problems, errors.New("pool: the address book has no more peers to try"))
	}
	return d.problems
}

// candidates picks up to n addresses to dial, each a new member, none in
// a network group already in use, nor in skip (those tried already), nor
// forgotten and not due again (see record).
func (p *Pool) candidates(n int, skip map[string]bool) []*Member {
	p.mu.Lock()
	defer p.mu.Unlock()
	var inUse []string
	known := map[string]bool{}
	for _, m := range p.members {
		known[m.addr] = true
		if m.isLive() || m.dialing {
			inUse = append(inUse, m.addr)
		}
	}
	var out []*Member
	now := time.Now()
	for len(out) < n {
		addr, ok := p.book.Pick(p.cfg.Services, inUse, func(a string) bool {
			if known[a] || skip[a] || p.records.notDue(a, now) {
				return true
			}
			_, banned := p.bans.Banned(a)
			return banned || p.cfg.Dial == nil && addrbook.IsOnion(a)
		})
		if !ok {
			break
		}
		known[addr] = true
		inUse = append(inUse, addr)
		m := p.records.foundAgain(addr)
		p.members = append(p.members, m)
		out = append(out, m)
	}
	return out
}

// forget removes a member found by discovery that could not be used: its
// dial counts as a failure in its record (see record).
func (p *Pool) forget(m *Member) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, o := range p.members {
		if o == m && !m.permanent && !m.banned {
			m.dialFailed(time.Now())
			p.records.remember(m)
			p.members = append(p.members[:i], p.members[i+1:]...)
			return
		}
	}
}

// seed asks the network's DNS seeds for members and adds them to the
// book. Behind Config.Dial, the seeds are asked only through a Resolver
// given.
func (p *Pool) seed(ctx context.Context) []error {
	resolve := p.cfg.Resolver
	if resolve == nil {
		if p.cfg.Dial != nil {
			return []error{errors.New("pool: the DNS seeds are not asked behind a proxy (their lookup would leave it): give peers, or a Resolver")}
		}
		resolve = addrbook.SystemResolver
	}
	addrs, errs := addrbook.Seed(ctx, p.cfg.Params, p.cfg.Services, resolve)
	p.book.Add(addrs, "dns seeds")
	return errs
}
