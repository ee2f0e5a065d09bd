package pool

import (
	"errors"
	"time"

	"github.com/spvfilter/spvfilter/peer"
)

// Member is one node of the pool, connected or not. Its address and
// whether it is the user's never change; the rest is the pool's, read
// through the pool's methods (Status, Conn).
type Member struct {
	addr string
	// permanent: from Config.Peers, kept and redialled for as long as
	// the pool runs; others were found and are replaced when they go.
	permanent bool

	// The rest is guarded by the pool's mu; p changes only when the
	// member is dialled again, so requests read it through Pool.Conn.
	p      *peer.Peer // nil when not connected
	banned bool
	reason string
	err    error // why it was banned or dropped
	// lapsed: err says only that the connection ended, as Run found it
	// (see Pool.ended), not that the member was dropped: a request whose
	// answer ended it may still dial it again (Redial).
	lapsed bool
	// alias, if set, is the address under which the same node is a
	// member already: this one is never dialled.
	alias string
	// removed: Remove forgot it; a dial that ends later closes its
	// connection.
	removed bool
	// received and sent count the bytes of its earlier connections.
	received, sent uint64
	// Redials: dialing while one runs, the failures in a row (dials that
	// failed, connections that did not last, cut-offs as too slow), how
	// many of those were cut-offs as too slow (they count for the
	// backoff, not for forgetting: see maxFailures), when the next may
	// start, and when the connection was made (see stableConnection).
	dialing     bool
	failures    int
	slow        int
	nextDial    time.Time
	connectedAt time.Time
}

// Addr is the member's host:port, as given or found.
func (m *Member) Addr() string { return m.addr }

// isLive reports whether the member is connected and neither banned nor
// dropped. Called with the pool's mu held.
func (m *Member) isLive() bool { return m.p != nil && !m.banned && m.err == nil }

// serves reports whether requests may be planned on m: live, and,
// if its connection ended without Run noticing yet (this side dropped
// it, abandoning a request, or the node ended it), its next dial due
// within redialMin, so that a request dials it again (see
// Pool.RedialDue) rather than being refused at once. A member whose
// next dial is further off is left out until it is due: counted live,
// it was picked by every plan, each request over it refused. The next
// dial is the one RedialDue will see: for an end the node caused, the
// backoff that taking it in sets (see connectionGone), which a
// connection made after earlier failures, its next dial cleared, does
// not show until then (a node that hangs up after each answer was
// listed, planned on and refused). A flood's end is listed: the dial
// of the request that finds it (Pool.RedialDue) returns an
// error wrapping the flood (peer.ErrFlooding), which that request's
// caller takes as its proof to ban the member; a pool not listing it
// left it unnamed until Run looked (a one-off scan never told a
// flooder). Called with the pool's mu held.
func (m *Member) serves(now time.Time) bool {
	if !m.isLive() {
		return false
	}
	select {
	case <-m.p.Done():
	default:
		return true
	}
	next := m.nextDial
	switch end := m.p.Err(); {
	case errors.Is(end, peer.ErrFlooding):
		return true
	case !errors.Is(end, peer.ErrAbandoned):
		if n := now.Add(redialBackoff(m.failuresAfterEnd(now))); n.After(next) {
			next = n
		}
	}
	return next.Sub(now) <= redialMin
}

// connected makes c, just dialled, m's connection. m's next dial is
// cleared if it is still due, the one that stood when the dial began:
// the backoff that set it was waited for, or overruled by the user's
// word (Add dials whatever the backoff). Kept, it outlived the
// connection made after it: an end this side caused later (an abandoned
// request), which sets no next dial of its own, left m refused by
// RedialDue, and once Run looked out of Serving, until that stale dial
// was due, up to redialMax. An end the node causes sets its own (see
// connectionGone), from the failures in a row, which only a connection
// that lasts clears; a next dial set while the dial ran (a sit-out, see
// sitOut) stands. Called with the pool's mu held.
func (m *Member) connected(c *peer.Peer, due time.Time) {
	m.retire()
	m.p, m.err, m.reason, m.lapsed, m.connectedAt = c, nil, "", false, time.Now()
	if m.nextDial.Equal(due) {
		m.nextDial = time.Time{}
	}
}

// retire keeps the byte counts of m's connection before it is replaced.
// Called with the pool's mu held.
func (m *Member) retire() {
	if m.p != nil {
		m.received += m.p.BytesReceived()
		m.sent += m.p.BytesSent()
	}
}

// Status is what the pool knows of a member.
type Status struct {
	// Addr is the member's host:port (Member.Addr).
	Addr string
	// UserAgent is what the node's handshake named it, empty before one.
	UserAgent string
	// Services are the services the member advertised, as btcd names
	// them.
	Services string
	// Connected: it has a connection (possibly ended, until the pool
	// notices).
	Connected bool
	// Live: connected, neither banned nor dropped: the pool has not
	// given up on it. It reads true for some members Pool.Serving leaves
	// out, on purpose: those whose connection has ended, the end not yet
	// counted (by Run, a drop, or a request dialling it again, see
	// Pool.RedialDue), and whose next dial is more than a first
	// failure's backoff off: for an end the node caused, the dial that
	// counting the end sets; for one this side caused (an abandoned
	// request), a sit-out set meanwhile. Live says what the pool holds
	// (nothing decided against the member), Serving what a request
	// planned now would find (a refusal, until the dial is due): a caller
	// that accounts for every member not given up on (a send names those
	// it leaves out) takes Pool.Live, one that plans requests Serving.
	// Once the end is counted, Live reads false too. A connection open,
	// or ended by a flood (listed, for the request that finds it to ban
	// the member), the two agree, Serving's services aside.
	Live bool
	// Banned: refused, with a proof or by hand (Reason says which).
	Banned bool
	// Reason says why a member is banned or not used (stalled,
	// disconnected, unreachable), empty for one in use.
	Reason string
	// Err is the error Reason says, nil for a member in use: errors.Is
	// and errors.As find the peer package's (a *peer.PeerError, a
	// *peer.NetworkError, a *peer.ProxyError).
	Err error
	// BytesReceived and BytesSent count every byte of its connections.
	BytesReceived, BytesSent uint64
}
