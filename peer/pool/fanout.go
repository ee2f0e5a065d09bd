package pool

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Each runs fn for every member of ms at once and returns the first
// failure, a *Failure, if any. Once one member has answered, each other
// has a grace (see grace): a member still silent then is too slow to
// wait for (its request is cancelled, and it is dropped, with a warning,
// so it is not compared, and sits out a backoff that doubles while it
// stays slow: see Member.sitOut). A member is cut off sooner, once it has
// spent its budget b for the operation (see Budget), which is the hold
// at least (see hold), however fast the others: any member's
// answer may be the only one that could contradict theirs, and the fast
// ones may be liars, one or several, fast so that the honest member is
// left out. So a member slow on every answer costs an operation the hold
// at most (twice the operation's own time if more), and is then cut off:
// being slow buys no trust, and being fast or many none either; a caller
// whose result rests on fewer members for a member cut off says so.
func (p *Pool) Each(ctx context.Context, b *Budget, ms []*Member, fn func(ctx context.Context, m *Member) error) error {
	r := &round{p: p, b: b, ms: ms, start: time.Now(), errs: make([]error, len(ms)),
		answered: make([]bool, len(ms)), cut: make([]bool, len(ms)), bound: make([]time.Duration, len(ms)), allow: make([]time.Duration, len(ms))}
	results := r.ask(ctx, fn)
	r.collect(results)
	r.end(ctx)
	return r.failure()
}

// The grace of Each is graceFactor times the first answer's time, a
// quarter of the timeout, or minGrace, whichever is longest: long enough
// for an honest node under load, short against one that holds every answer
// until just before the timeout (and a member's budget bounds it further).
const (
	minGrace    = time.Second
	graceFactor = 20
)

// grace returns how long members may answer after the first, which took
// first.
func (p *Pool) grace(first time.Duration) time.Duration {
	return max(minGrace, graceFactor*first, p.cfg.Timeout/4)
}

// hold returns the least budget of a member over an operation: a quarter
// of the timeout, or minGrace if longer, however fast the first answer
// (see Each).
func (p *Pool) hold() time.Duration { return max(minGrace, p.cfg.Timeout/4) }

// dropSlow drops a member cut off as too slow by Each, for its sit-out
// (see Member.sitOut), saying how slow it was, whether it was cut off at
// the end of the round's grace, when (not zero), or of its budget, and
// for how long it is left out (a member whose handshake was cut is named
// so too). A member banned, or dropped for something else, meanwhile is
// left as it is.
func (p *Pool) dropSlow(b *Budget, m *Member, bound time.Duration) {
	how := b.describe(m, bound, p.hold())
	p.mu.Lock()
	defer p.mu.Unlock()
	if m.banned || m.p != nil && m.err != nil && !m.lapsed {
		return
	}
	sitOut := m.sitOut(time.Now())
	p.leaveOut(m, fmt.Errorf("peer %s: too slow: %s; left out for %v", m.addr, how, sitOut))
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
	// bound is, for a member cut off at the end of the grace rather than
	// of its budget, when (zero otherwise).
	bound []time.Duration
	timer *time.Timer // at the next member due, if any
}

// reply is the outcome of the request to ms[i]: its answer or error.
type reply struct {
	i   int
	err error
}

// ask sends fn to every member at once, each under a context of its own
// (cancelled when it is cut off); the answers come on the channel.
func (r *round) ask(ctx context.Context, fn func(ctx context.Context, m *Member) error) <-chan reply {
	answers := make(chan reply, len(r.ms))
	r.cancels = make([]context.CancelFunc, len(r.ms))
	for i, m := range r.ms {
		mctx, cancel := context.WithCancel(ctx)
		r.cancels[i] = cancel
		go func() { answers <- reply{i, fn(mctx, m)} }()
	}
	return answers
}

// collect waits for every answer, cutting off each member still silent
// when it is due.
func (r *round) collect(answers <-chan reply) {
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
func (r *round) take(a reply) {
	r.answered[a.i], r.errs[a.i] = true, a.err
	if r.cut[a.i] || a.err != nil && r.first == 0 {
		return
	}
	took := time.Since(r.start)
	if r.first == 0 {
		r.first = max(took, 1)
		for i, m := range r.ms {
			r.allow[i] = r.b.left(m, r.p.hold())
		}
	}
	if a.err == nil {
		r.b.answered(r.ms[a.i], took, took-r.first)
	}
}

// waiting reports whether member i has neither answered nor been cut off.
func (r *round) waiting(i int) bool { return !r.answered[i] && !r.cut[i] }

// due returns when member i is cut off if it has not answered, from the
// round's start, and whether for its budget: at the end of the grace, or
// sooner once its budget is spent (see Each).
func (r *round) due(i int) (at time.Duration, budget bool) {
	at = r.first + r.p.grace(r.first)
	if a := r.first + max(0, r.allow[i]); a < at {
		at, budget = a, true
	}
	return at, budget
}

// cutDue cuts off the members due by now: their lag counts in their
// budget, and their requests are cancelled.
func (r *round) cutDue() {
	now := time.Since(r.start)
	for i := range r.ms {
		if at, budget := r.due(i); r.waiting(i) && at <= now {
			r.cut[i] = true
			if !budget {
				r.bound[i] = at
			}
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
		if at, _ := r.due(i); r.waiting(i) && (next < 0 || at < next) {
			next = at
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
		r.b.addRound(r.first, time.Since(r.start)-r.first)
	}
	for i, m := range r.ms {
		r.cancels[i]()
		if r.cut[i] && ctx.Err() == nil && errors.Is(r.errs[i], context.Canceled) {
			r.p.dropSlow(r.b, m, r.bound[i])
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
