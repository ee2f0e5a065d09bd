package pool

import (
	"errors"
	"time"

	"github.com/spvfilter/spvfilter/peer"
)

// Redials of an address are rate-limited whatever its member does: a
// dial that fails, and a connection that ends before stableConnection
// (the node hung up, stalled, or was dropped), count as a failure, and
// the next dial waits redialBackoff of the failures in a row, from
// redialMin doubling to redialMax. A connection that lasts
// stableConnection clears them. A connection ended by a flood is no
// failure but a proof: its member is banned, named, and never dialled
// again while banned. A member cut off as too slow (see Pool.Each) sits
// out the same backoff, the cut counting as a failure in a row (see
// sitOut), but a slow one: slowness proves nothing, so only the other
// failures forget a member found by discovery (see maxFailures).
const (
	redialMin        = 500 * time.Millisecond
	redialMax        = time.Minute
	stableConnection = time.Minute
)

// redialBackoff returns how long the next dial of an address waits after
// failures in a row.
func redialBackoff(failures int) time.Duration {
	if failures <= 0 {
		return 0
	}
	return min(redialMax, redialMin<<min(failures-1, 7))
}

// connectionGone records, with the pool's mu held, that m's connection
// ended at now, and when m may be dialled again (see stableConnection).
func (m *Member) connectionGone(now time.Time) {
	if m.failures = m.failuresAfterEnd(now); m.failures == 0 {
		m.slow = 0
	}
	m.backOff(now)
}

// failuresAfterEnd returns m's failures in a row once an end of its
// connection at now is counted: one more if the connection did not last
// stableConnection, else none. Called with the pool's mu held.
func (m *Member) failuresAfterEnd(now time.Time) int {
	if now.Sub(m.connectedAt) < stableConnection {
		return m.failures + 1
	}
	return 0
}

// backOff sets m's next dial to the backoff of its failures from now,
// unless it is due later already. Called with the pool's mu held.
func (m *Member) backOff(now time.Time) {
	if next := now.Add(redialBackoff(m.failures)); next.After(m.nextDial) {
		m.nextDial = next
	}
}

// sitOut records, with the pool's mu held, that m was cut off as too slow
// at now, and returns how long it is left out: the redial backoff of its
// failures in a row, the cut counting as one (a connection that did not
// last, or a dial, if its handshake was cut; Run may have counted the
// connection's end already). A node slow once (a pause for garbage
// collection, a loaded disk) sits out redialMin and is compared again once
// back; one slow each time it is back sits out twice as long each time, up
// to redialMax. Back within an operation, its lag stays counted in the
// operation's Budget: however often it comes back, it costs an operation
// its budget at most, and its sit-outs bound how many operations it
// slows. A connection that lasted stableConnection (the member answered
// in time meanwhile) starts the count again: the cut is then its first
// failure. The cut is counted as slow too (see Member.slow): it lengthens
// the sit-out but does not bring a member found by discovery closer to
// being forgotten (see maxFailures).
func (m *Member) sitOut(now time.Time) time.Duration {
	if m.p != nil && !m.endCounted() {
		m.connectionGone(now)
		if m.failures > 0 {
			m.slow++ // the connection that did not last ended with the cut
		}
	}
	if m.p == nil || m.failures == 0 {
		m.failures++ // a dial cut, or a connection that lasted
		m.slow++
	}
	m.backOff(now)
	return m.nextDial.Sub(now)
}

// endCounted reports whether Run found m's connection ended and counted
// it (see Pool.ended): not when this side ended it, abandoning a request
// over it (peer.ErrAbandoned), as Each does cutting a member off: the
// cut, or a drop, counts it then. The end is the connection's own error,
// not m.err, which a failed dial again replaces. Called with m's
// connection set (m.p, which its callers check) and the pool's mu held.
func (m *Member) endCounted() bool {
	return m.lapsed && !errors.Is(m.p.Err(), peer.ErrAbandoned)
}

// dialFailed records, with the pool's mu held, a dial of m that failed
// at now: one more failure in a row (not a slow one), and the next dial
// waits its backoff.
func (m *Member) dialFailed(now time.Time) {
	m.failures++
	m.nextDial = now.Add(redialBackoff(m.failures))
}
