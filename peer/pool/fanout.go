package pool

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Each runs fn for every member of ms at once and returns the first
// failure, a *Failure, if any. Once one member has answered, each other
// has a grace (graceFactor times the first answer's time), within what is
// left of its budget b for the operation (see Budget): a member still
// silent then is too slow to wait for (its request is cancelled, and it
// is dropped for slowPause, with a warning, so it is not compared). Being
// slow buys no trust.
func (p *Pool) Each(ctx context.Context, b *Budget, ms []*Member, fn func(ctx context.Context, m *Member) error) error {
	r := &round{p: p, b: b, ms: ms, start: time.Now(), errs: make([]error, len(ms)),
		answered: make([]bool, len(ms)), cut: make([]bool, len(ms)), allow: make([]time.Duration, len(ms))}
	results := r.ask(ctx, fn)
	r.collect(results)
	r.end(ctx)
	return r.failure()
}

// round is one call of Each: the members asked, which have answered and
// how, and which were cut off as too slow.
type round struct {
	p       *Pool
	b       *Budget
	ms      []*Member
	start   time.Time
	cancels []context.CancelFunc
	// first is the first answer's time, once it came; allow, from then,
	// what each member may still lag (its budget left).
	first    time.Duration
	allow    []time.Duration
	errs     []error
	answered []bool
	cut      []bool
	timer    *time.Timer // at the next member due, if any
}

// answer is the outcome of the request to ms[i].
type answer struct {
	i   int
	err error
}

// ask sends fn to every member at once, each under a context of its own
// (cancelled when it is cut off); the answers come on the channel.
func (r *round) ask(ctx context.Context, fn func(ctx context.Context, m *Member) error) <-chan answer {
	answers := make(chan answer, len(r.ms))
	r.cancels = make([]context.CancelFunc, len(r.ms))
	for i, m := range r.ms {
		mctx, cancel := context.WithCancel(ctx)
		r.cancels[i] = cancel
		go func() { answers <- answer{i, fn(mctx, m)} }()
	}
	return answers
}

// collect waits for every answer, cutting off each member still silent
// when it is due.
func (r *round) collect(answers <-chan answer) {
	defer r.stopTimer()
	for n := 0; n < len(r.ms); {
		select {
		case a := <-answers:
			n++
			r.take(a)
		case <-r.wake():
			r.cutDue()
		}
		r.rearm()
	}
}

// take records an answer. The first success fixes the round's first
// answer time and what each member may lag from then on: the waiting to
// come does not add to the operation's own time.
func (r *round) take(a answer) {
	r.answered[a.i], r.errs[a.i] = true, a.err
	if r.cut[a.i] || a.err != nil && r.first == 0 {
		return
	}
	took := time.Since(r.start)
	if r.first == 0 {
		r.first = max(took, 1)
		for i, m := range r.ms {
			r.allow[i] = r.b.left(m)
		}
	}
	if a.err == nil {
		r.b.answered(r.ms[a.i], took, took-r.first)
	}
}

// waiting reports whether member i has neither answered nor been cut off.
func (r *round) waiting(i int) bool { return !r.answered[i] && !r.cut[i] }

// due returns when member i is cut off if it has not answered, from the
// round's start.
func (r *round) due(i int) time.Duration {
	return r.first + max(0, min(r.p.grace(r.first), r.allow[i]))
}

// cutDue cuts off the members due by now: their lag counts in their
// budget, and their requests are cancelled.
func (r *round) cutDue() {
	now := time.Since(r.start)
	for i := range r.ms {
		if r.waiting(i) && r.due(i) <= now {
			r.cut[i] = true
			r.b.answered(r.ms[i], now, now-r.first)
			r.cancels[i]()
		}
	}
}

// rearm sets the timer to the next member due, once a first answer came.
func (r *round) rearm() {
	r.stopTimer()
	if r.first == 0 {
		return
	}
	next := time.Duration(-1)
	for i := range r.ms {
		if r.waiting(i) && (next < 0 || r.due(i) < next) {
			next = r.due(i)
		}
	}
	if next >= 0 {
		r.timer = time.NewTimer(next - time.Since(r.start))
	}
}

// wake returns the timer's channel, nil (never ready) without a timer.
func (r *round) wake() <-chan time.Time {
	if r.timer == nil {
		return nil
	}
	return r.timer.C
}

func (r *round) stopTimer() {
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
}

// end records the round in the budget, releases the requests' contexts,
// and drops the members cut off as too slow (their cancelled requests
// are no failures), unless the caller's context ended.
func (r *round) end(ctx context.Context) {
	if r.first > 0 {
		r.b.round(r.first, time.Since(r.start)-r.first)
	}
	for i, m := range r.ms {
		r.cancels[i]()
		if r.cut[i] && ctx.Err() == nil && errors.Is(r.errs[i], context.Canceled) {
			r.p.dropSlow(r.b, m)
			r.errs[i] = nil
		}
	}
}

// failure returns the first member's failure, in the order of ms, or nil.
func (r *round) failure() error {
	for i, err := range r.errs {
		if err != nil {
			return &Failure{Member: r.ms[i], Err: err}
		}
	}
	return nil
}

// The grace of Each is graceFactor times the first answer's time, a
// quarter of the timeout, or minGrace, whichever is longest: long enough
// for an honest node under load, short against one that holds every answer
// until just before the timeout (and a member's budget bounds it further).
// slowPause is how long a member dropped as too slow is left alone.
const (
	minGrace    = time.Second
	graceFactor = 20
	slowPause   = time.Minute
)

// grace returns how long members may answer after the first, which took
// first.
func (p *Pool) grace(first time.Duration) time.Duration {
	return max(minGrace, graceFactor*first, p.cfg.Timeout/4)
}

// dropSlow drops a member cut off as too slow by Each, for slowPause,
// saying how slow it was (a member whose handshake was cut is named so
// too).
func (p *Pool) dropSlow(b *Budget, m *Member) {
	err := fmt.Errorf("peer %s: too slow: %s; left out for %v", m.addr, b.describe(m), slowPause)
	p.mu.Lock()
	defer p.mu.Unlock()
	if !m.banned && m.p == nil {
		m.err, m.reason = err, err.Error() // its dial was cut
	}
	m.nextDial = time.Now().Add(slowPause)
	p.dropLocked(m, err)
}

// slowFactor is how many times slower than the fastest member a member's
// answers must be, and slowFloor how slow at least, for it to be ranked
// down: it is still asked to compare (its word counts as any other's), but
// bulk downloads go to the faster members.
const (
	slowFactor = 4
	slowFloor  = 50 * time.Millisecond
)

// Slow returns the members of ms whose answers, by their latency so far,
// take over slowFactor times the fastest member's and at least slowFloor.
func (p *Pool) Slow(ms []*Member) map[*Member]bool {
	lat := make(map[*Member]time.Duration, len(ms))
	fastest := time.Duration(0)
	for _, m := range ms {
		l := p.latency(m)
		lat[m] = l
		if l > 0 && (fastest == 0 || l < fastest) {
			fastest = l
		}
	}
	slow := map[*Member]bool{}
	for _, m := range ms {
		if fastest > 0 && lat[m] > slowFactor*fastest && lat[m] >= slowFloor {
			slow[m] = true
			p.logf("%s answers in %v against %v for the fastest peer: bulk downloads go to faster peers", m.addr, lat[m], fastest)
		}
	}
	return slow
}

// latency returns m's answer time so far (0 unmeasured or unconnected).
func (p *Pool) latency(m *Member) time.Duration {
	if c := p.Conn(m); c != nil {
		return c.Latency()
	}
	return 0
}

// Fastest returns the member of ms with the lowest latency so far (the
// first of those not measured yet).
func (p *Pool) Fastest(ms []*Member) *Member {
	best, bestLat := ms[0], time.Duration(-1)
	for _, m := range ms {
		l := p.latency(m)
		if bestLat < 0 || l < bestLat {
			best, bestLat = m, l
		}
	}
	return best
}

// PickFast returns a member of ms chosen at random, leaving out the slow
// ones (see Slow) unless all are.
func (p *Pool) PickFast(ms []*Member) *Member {
	slow := p.Slow(ms)
	if fast := slices.DeleteFunc(slices.Clone(ms), func(m *Member) bool { return slow[m] }); len(fast) > 0 {
		ms = fast
	}
	return ms[rand.IntN(len(ms))]
}
