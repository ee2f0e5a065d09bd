package pool

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
)

// peerConfig is the configuration of m's connection.
func (p *Pool) peerConfig(m *Member) peer.Config {
	cfg := peer.Config{Addr: m.addr, Params: p.cfg.Params, Timeout: p.cfg.Timeout, Log: p.cfg.Log, Dial: p.cfg.Dial,
		OnAddresses: func(addrs []*wire.NetAddressV2) { p.learn(addrs, m.addr) },
		OnHeaders:   p.cfg.OnHeaders}
	if on := p.cfg.OnAnnounce; on != nil {
		cfg.OnAnnounce = func(a peer.Announcement) { on(m, a) }
	}
	return cfg
}

// dial connects to a member for the first time and records the outcome:
// a member found by discovery that lacks the services wanted is not kept.
func (p *Pool) dial(ctx context.Context, m *Member) {
	if p.book != nil {
		p.book.Attempt(m.addr)
	}
	p.mu.Lock()
	due := m.nextDial
	p.mu.Unlock()
	c, err := peer.Dial(ctx, p.peerConfig(m))
	if err == nil && !m.permanent && c.Services()&p.cfg.Services != p.cfg.Services {
		c.Close()
		err = fmt.Errorf("peer %s: %w: services %v, needed %v", m.addr, peer.ErrMissingService, c.Services(), p.cfg.Services)
	}
	if err == nil && p.cfg.OnConnect != nil {
		p.cfg.OnConnect(m)
	}
	live := false
	defer p.tellLive(m, &live)
	p.mu.Lock()
	defer p.mu.Unlock()
	m.dialing = false
	if err != nil {
		m.reason, m.err = "unreachable: "+err.Error(), err
		return
	}
	if m.removed {
		c.Close()
		return
	}
	if o := p.reachedLocked(m, c); o != nil {
		c.Close()
		m.reason = fmt.Sprintf("the same node as %s (both reach %s): not used twice", o.addr, c.RemoteAddr())
		m.err, m.alias = errors.New(m.reason), o.addr
		return
	}
	// The failures in a row (a member found again keeps those of its
	// address, see record) are cleared only once the connection lasts
	// (see stableConnection).
	m.connected(c, due)
	live = true
	if p.book != nil {
		p.book.Connected(m.addr, c.Services())
		p.book.Good(m.addr)
	}
}

// Redial replaces m's connection when it ended: a request that was
// abandoned (a cancelled context) ended it, and the member did nothing
// wrong, or the node or a failed request did. What is known of its chain
// stands. A live connection is kept. A connection ended by a flood is
// not replaced: its error is returned; nor is that of a member banned or
// dropped meanwhile. Run finding the ended connection first drops
// nothing: the member is live again (see Member.lapsed).
//
// An end this side did not cause is counted as Run counts it (see
// ended), if Run has not yet: a failure in a row, whose backoff the dial
// waits for; else a node that hangs up on each request would be dialled
// again at once, its failures never counted, whenever a request comes
// before Run's look. An end this side caused, abandoning a request, is
// not taken in: the member stays live while it is dialled again, and a
// request choosing among the live members meanwhile (a block's filters
// compared across them) still asks it. A ctx already ended dials
// nothing and counts nothing, and a dial that ctx's cancellation, or its
// deadline before the dial's own timeout, cut short is no failure of the
// node's: both are this side's doing (see dialCharged).
//
// A redial keeps the member's backoff (see redialBackoff): it waits,
// within ctx, until the member's next dial is due, while another dial of
// it runs, and a dial that fails counts as a failure in a row. However
// many requests ask, a node that refuses dials is dialled at the
// backoff's pace, one dial at a time; but dials a request's short
// deadline cuts before the pool's timeout count nothing, so requests of
// such deadlines dial a node that stalls its handshake once each (see
// TestStalledHandshakeDialPace; a client's requests pick live members,
// and the end once taken in leaves it not live). Only the user's own
// word, Add, dials at once whatever the backoff.
func (p *Pool) Redial(ctx context.Context, m *Member) error {
	return p.redialFor(ctx, m, true)
}

// RedialDue is Redial for a request about to be sent to m, which waits
// for no long backoff: unless m's next dial is due within redialMin (the
// backoff of a first failure: a node restarted, a glitch), an error
// wrapping the end's is returned at once, nothing dialled, and the
// request goes to another peer. An end the node caused is counted first,
// as Redial counts it. Waiting inside the request let a node that answers
// each request and then hangs up hold the next request that picked it
// before Run's look for its whole backoff, doubling each time up to
// redialMax, while other peers could answer at once. An end this side
// caused (an abandoned request, peer.ErrAbandoned) is not waited for
// beyond redialMin either, and still charges nothing: a next dial put
// off for another reason (a sit-out) held a request queued on that
// connection for up to redialMax.
func (p *Pool) RedialDue(ctx context.Context, m *Member) error {
	return p.redialFor(ctx, m, false)
}

// redialFor is Redial; with waitBackoff false, RedialDue.
func (p *Pool) redialFor(ctx context.Context, m *Member, waitBackoff bool) error {
	old := p.Conn(m)
	if old == nil {
		return fmt.Errorf("peer %s: not connected", m.addr)
	}
	select {
	case <-old.Done():
	default:
		return nil
	}
	end := old.Err()
	if errors.Is(end, peer.ErrFlooding) {
		// Dropped for flooding: not to be dialled again.
		return end
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("peer %s: not dialled again: %w", m.addr, err)
	}
	if !errors.Is(end, peer.ErrAbandoned) {
		p.mu.Lock()
		p.endedUnnoticed(m, time.Now()) // a flood was refused above
		p.mu.Unlock()
	}
	if !waitBackoff {
		if err := p.dueSoon(m, end); err != nil {
			return err
		}
	}
	if due, err := p.dueRedial(ctx, m, old); !due {
		return err
	}
	p.mu.Lock()
	due := m.nextDial
	p.mu.Unlock()
	start := time.Now()
	c, err := peer.Dial(ctx, p.peerConfig(m))
	p.mu.Lock()
	defer p.mu.Unlock()
	m.dialing = false
	if err != nil {
		if p.dialCharged(ctx, start) {
			m.dialFailed(time.Now())
		}
		return err
	}
	if err := m.unusable(); err != nil {
		c.Close()
		return err
	}
	if m.p != old && m.isLive() {
		// Replaced meanwhile by a dial Redial does not wait for (Add).
		c.Close()
		return nil
	}
	m.connected(c, due)
	return nil
}

// dueSoon returns nil when m's next dial is due within redialMin, or
// else an error wrapping end, how m's connection ended, for a request
// that does not wait that long (RedialDue).
func (p *Pool) dueSoon(m *Member, end error) error {
	p.mu.Lock()
	d := m.dialDue(time.Now())
	p.mu.Unlock()
	if d.wait <= redialMin {
		return nil
	}
	return d.notDialled(true, end)
}

// dialDue is when a member's next dial is due, read with the pool's mu
// held, and the failures in a row that put it there.
type dialDue struct {
	addr     string
	failures int
	wait     time.Duration
}

// dialDue returns m's next dial as of now. Called with the pool's mu
// held.
func (m *Member) dialDue(now time.Time) dialDue {
	return dialDue{addr: m.addr, failures: m.failures, wait: m.nextDial.Sub(now)}
}

// notDialled is the error of a member not dialled again (for a request
// that does not wait, if request) because its next dial was not due,
// wrapping cause.
func (d dialDue) notDialled(request bool, cause error) error {
	return &NotDialledError{Peer: d.addr, Failures: d.failures, Wait: d.wait, Request: request, Err: cause}
}

// dialCharged reports whether a dial of a request, begun at start, that
// failed counts as a failure of its node's: not when the request's ctx
// ended it first, cancelled (this side gave up) or at a deadline before
// the dial's own timeout (Config.Timeout), which the request may have
// spent waiting for the dial to be due. A dial that had its whole
// timeout, and failed, is the node's: a node that stalls its handshake
// is charged whatever the request's deadline.
func (p *Pool) dialCharged(ctx context.Context, start time.Time) bool {
	switch err := ctx.Err(); {
	case err == nil:
		return true
	case errors.Is(err, context.Canceled):
		return false
	}
	deadline, _ := ctx.Deadline()
	return !deadline.Before(start.Add(p.cfg.Timeout))
}

// redialPoll is how often a redial waiting for another dial of its
// member looks whether it ended.
const redialPoll = 20 * time.Millisecond

// dueRedial waits until m, whose connection old ended, may be dialled
// again: it reports true, with m's dialing set, when the dial is due; or
// false and nil when another dial replaced old meanwhile; or false and
// why it cannot be dialled (banned, dropped, removed, or ctx ended before
// the backoff did).
func (p *Pool) dueRedial(ctx context.Context, m *Member, old *peer.Peer) (bool, error) {
	for {
		p.mu.Lock()
		if err := m.unusable(); err != nil {
			p.mu.Unlock()
			return false, err
		}
		if m.p != old && m.isLive() {
			p.mu.Unlock()
			return false, nil
		}
		d := m.dialDue(time.Now())
		if m.dialing {
			d.wait = redialPoll
		} else if d.wait <= 0 {
			m.dialing = true
			p.mu.Unlock()
			return true, nil
		}
		p.mu.Unlock()
		t := time.NewTimer(d.wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return false, d.notDialled(false, ctx.Err())
		case <-t.C:
		}
	}
}

// unusable returns why m may not be dialled again by a request: banned,
// dropped (not merely found disconnected by Run) or removed; nil
// otherwise. Called with the pool's mu held.
func (m *Member) unusable() error {
	if m.banned || (m.err != nil && !m.lapsed) || m.removed {
		return fmt.Errorf("peer %s: banned or dropped while it was dialled again: %s", m.addr, m.reason)
	}
	return nil
}

// reconnect dials m, whose connection ended or who was dropped, now,
// whatever its backoff: the user asked for it (Add). On success it is
// live again (Config.OnConnect is told first), on failure its next try
// waits twice as long. A banned member, or one being dialled, is left
// alone; a connection that ended before Run noticed is taken as ended
// (see ended), and one a flood ended bans its member instead.
func (p *Pool) reconnect(ctx context.Context, m *Member) {
	p.mu.Lock()
	if flood := p.endedUnnoticed(m, time.Now()); flood != nil {
		p.mu.Unlock()
		p.Ban(m, flood)
		return
	}
	if m.banned || m.dialing || m.alias != "" || m.isLive() {
		p.mu.Unlock()
		return
	}
	m.dialing = true
	p.mu.Unlock()
	p.redial(ctx, m)
}

// endedUnnoticed takes in, with mu held, that the connection of m, still
// counted live, ended by now (see ended): the flood that ended it is
// returned, for the caller to ban m with once mu is released.
func (p *Pool) endedUnnoticed(m *Member, now time.Time) error {
	if !m.isLive() {
		return nil
	}
	select {
	case <-m.p.Done():
		return p.ended(m, now)
	default:
		return nil
	}
}

// redial dials a member whose connection ended (its dialing set); on
// success it is live again, on failure its next try waits twice as long.
func (p *Pool) redial(ctx context.Context, m *Member) {
	p.mu.Lock()
	due := m.nextDial
	p.mu.Unlock()
	c, err := peer.Dial(ctx, p.peerConfig(m))
	if err == nil && p.cfg.OnConnect != nil {
		// Before the connection is used: what was known of the node's
		// chain is stale.
		p.cfg.OnConnect(m)
	}
	live := false
	defer p.tellLive(m, &live)
	p.mu.Lock()
	defer p.mu.Unlock()
	m.dialing = false
	if err != nil {
		m.dialFailed(time.Now())
		// The error kept is the one the reason gives: the latest
		// dial's, not an earlier failure's (see Status.Err).
		m.reason, m.err = "unreachable: "+err.Error(), err
		return
	}
	if m.banned || m.removed || m.isLive() || m.leftOutSince(due) {
		// Banned, removed or left out (cut off as too slow, dropped)
		// while it was dialled, or dialled again by a request (Redial),
		// whose connection is in use.
		c.Close()
		return
	}
	// The failures in a row are cleared only once the connection lasts
	// (see stableConnection).
	m.connected(c, due)
	live = true
	p.logf("service: %s is back", m.addr)
}

// leftOutSince reports whether m was left out (Pool.leaveOut) for a
// backoff that has not passed and was set after a dial began, when its
// next dial was due: a connection that dial made would cut its sit-out
// short. Run dials a member whose connection an abandoned request ended
// at once (see ended), and Each drops the member it cut off, whose
// request it abandoned, only once the round ends. Called with the pool's
// mu held.
func (m *Member) leftOutSince(due time.Time) bool {
	return m.err != nil && !m.lapsed && m.nextDial.After(due) && time.Now().Before(m.nextDial)
}

// tellLive tells Config.OnLive that m is live, if *live: deferred by a
// dial before it takes the pool's lock, so that it runs once the lock is
// released.
func (p *Pool) tellLive(m *Member, live *bool) {
	if *live && p.cfg.OnLive != nil {
		p.cfg.OnLive(m)
	}
}

// ended takes in, with mu held, that Run found m's connection ended
// without a request noticing: a flood is returned, for the caller to ban
// m with it once mu is released; otherwise m is no longer live and its
// next dial waits (connectionGone), unless this side dropped the
// connection itself (peer.ErrAbandoned): then it is due as it was.
func (p *Pool) ended(m *Member, now time.Time) error {
	err := m.p.Err()
	if errors.Is(err, peer.ErrFlooding) {
		return err
	}
	m.err, m.reason, m.lapsed = err, "disconnected: "+errString(err), true
	if errors.Is(err, peer.ErrAbandoned) {
		// Dropped by this side, which abandoned a request over it: no
		// failure of the node's, which would count toward forgetting it
		// (see maxFailures), and no wait either. Waiting the backoff of
		// its earlier failures (cleared only by a connection lasting
		// stableConnection) let requests dropped less than that apart,
		// which another peer answering first causes, keep an honest
		// node out of Serving, and of a send, for up to redialMax each
		// time.
		return nil
	}
	m.connectionGone(now)
	return nil
}

// errString is err's message, or "" for nil.
func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// nodeKey returns what tells nodes apart for addr: an IP address
// written one way (an IPv4-mapped IPv6 address as IPv4, no zone) with its
// port as a number; a host name, lower-cased, is its own node. A name is
// never looked up here: its answer may list the addresses of other nodes
// (round-robin DNS, or a resolver an attacker answers), which would then
// go undialled as its aliases, and behind a proxy the lookup would leave
// it.
func nodeKey(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if n, err := strconv.ParseUint(port, 10, 16); err == nil {
		port = strconv.FormatUint(n, 10)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return net.JoinHostPort(ip.Unmap().WithZone("").String(), port)
	}
	return net.JoinHostPort(strings.ToLower(host), port)
}

// reachedLocked returns the live member other than m whose connection
// reached the node c reached (two names, or a name and an address, of one
// node), or nil; with mu held. Through Config.Dial nothing can be told.
func (p *Pool) reachedLocked(m *Member, c *peer.Peer) *Member {
	at := c.RemoteAddr()
	if at == "" {
		return nil
	}
	key := nodeKey(at)
	for _, o := range p.members {
		if o != m && o.p != nil && o.isLive() && o.p.RemoteAddr() != "" && nodeKey(o.p.RemoteAddr()) == key {
			return o
		}
	}
	return nil
}

// sameNode returns the member that is addr's node written another way
// (127.0.0.1:8333 and [::ffff:127.0.0.1]:8333, a port with a leading
// zero, a name in capitals), or nil when addr is a member's own address.
func (p *Pool) sameNode(addr string) *Member {
	members := p.Members()
	if slices.ContainsFunc(members, func(m *Member) bool { return m.addr == addr && m.alias == "" }) {
		return nil
	}
	key := nodeKey(addr)
	for _, m := range members {
		if m.addr != addr && nodeKey(m.addr) == key {
			return m
		}
	}
	return nil
}

// DialOnce makes a connection of its own to m's address, beside m's
// connection, which it leaves alone, runs fn on it and closes it: one
// request over a connection nothing else uses (with peer.WithIsolation in
// ctx, over its own proxy circuit). Its bytes count in m's. A banned or
// removed member is not dialled.
func (p *Pool) DialOnce(ctx context.Context, m *Member, fn func(*peer.Peer) error) error {
	p.mu.Lock()
	banned, removed := m.banned, m.removed
	p.mu.Unlock()
	if banned || removed {
		return fmt.Errorf("peer %s: banned or dropped: not dialled", m.addr)
	}
	c, err := peer.Dial(ctx, p.peerConfig(m))
	if err != nil {
		return err
	}
	err = fn(c)
	c.Close()
	p.mu.Lock()
	m.received += c.BytesReceived()
	m.sent += c.BytesSent()
	p.mu.Unlock()
	return err
}
