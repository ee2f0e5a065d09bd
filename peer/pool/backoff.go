package pool

import "time"

// Redials of an address are rate-limited whatever its member does: a
// dial that fails, and a connection that ends before stableConnection
// (the node hung up, stalled, or was dropped), count as a failure, and
// the next dial waits redialBackoff of the failures in a row, from
// redialMin doubling to redialMax. A connection that lasts
// stableConnection clears them. A connection ended by a flood is no
// failure but a proof: its member is banned, named, and never dialled
// again while banned.
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
	if now.Sub(m.connectedAt) < stableConnection {
		m.failures++
	} else {
		m.failures = 0
	}
	if next := now.Add(redialBackoff(m.failures)); next.After(m.nextDial) {
		m.nextDial = next
	}
}

// dialFailed records, with the pool's mu held, a dial of m that failed
// at now: one more failure in a row, and the next dial waits its backoff.
func (m *Member) dialFailed(now time.Time) {
	m.failures++
	m.nextDial = now.Add(redialBackoff(m.failures))
}
