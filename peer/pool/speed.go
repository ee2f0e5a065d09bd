package pool

import (
	"math/rand/v2"
	"slices"
	"time"
)

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
