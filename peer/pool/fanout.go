package pool

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"time"
)

// Each runs fn for every member of ms at once and returns the first
// failure, a *Failure, if any. Once one member has answered, each other
// has a grace (see grace): a member still silent then is too slow to
// wait for (its request is cancelled, and it is dropped for slowPause,
// with a warning, so it is not compared). A member is cut off sooner,
// once it has spent its budget b for the operation (see Budget), which is
// the hold at least (see hold), however fast the others: any member's
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

// hold returns the least budget of a member over an operation: a quarter
// of the timeout, or minGrace if longer, however fast the first answer
// (see Each).
func (p *Pool) hold() time.Duration { return max(minGrace, p.cfg.Timeout/4) }

// dropSlow drops a member cut off as too slow by Each, for slowPause,
// saying how slow it was and whether it was cut off at the end of the
// round's grace, when (not zero), or of its budget (a member whose
// handshake was cut is named so too).
func (p *Pool) dropSlow(b *Budget, m *Member, bound time.Duration) {
	err := fmt.Errorf("peer %s: too slow: %s; left out for %v", m.addr, b.describe(m, bound, p.hold()), slowPause)
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
