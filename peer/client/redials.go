package client

import (
	"errors"
	"time"

	"github.com/spvfilter/spvfilter/peer"
)

// Redials of an address are rate-limited whatever its peer does: a dial
// that fails, and a connection that ends before stableConnection (the
// peer hung up, stalled, or was dropped), count as a failure, and the
// next dial waits redialBackoff of the failures in a row, from redialMin
// doubling to redialMax. A connection that lasts stableConnection clears
// them. A connection ended by a flood is no failure but a proof: its peer
// is banned, named, and never dialled again while banned.
const stableConnection = time.Minute

// redialBackoff returns how long the next dial of an address waits after
// failures in a row.
func redialBackoff(failures int) time.Duration {
	if failures <= 0 {
		return 0
	}
	return min(redialMax, redialMin<<min(failures-1, 7))
}

// connectionGone records, with mu held, that m's connection ended at now,
// and when m may be dialled again (see stableConnection).
func (m *member) connectionGone(now time.Time) {
	if now.Sub(m.connectedAt) < stableConnection {
		m.failures++
	} else {
		m.failures = 0
	}
	m.nextDial = later(m.nextDial, now.Add(redialBackoff(m.failures)))
}

// later returns the later of two times.
func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// ended takes in, with mu held, that the service found m's connection
// ended without a request noticing: a flood is returned, for the caller to
// ban m with it once mu is released; otherwise m is no longer live and
// its next dial waits (connectionGone).
func (c *Client) ended(m *member, now time.Time) error {
	err := m.p.Err()
	if errors.Is(err, peer.ErrFlooding) {
		return err
	}
	m.err, m.reason = err, "disconnected: "+errString(err)
	m.connectionGone(now)
	return nil
}
