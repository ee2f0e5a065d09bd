package pool

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrNotMember is an address the pool does not keep.
var ErrNotMember = errors.New("pool: not a member")

// Add makes addr a member and dials it now: permanent, it is kept and
// redialled for as long as the pool runs (as Config.Peers); otherwise it
// is replaced when it goes, as a member found. An address banned with a
// proof is refused; one banned without proof is used, with a note, as
// Config.Peers are. An address already a member is dialled again if it
// is not live (and becomes permanent if asked). It returns the dial's
// error; the member is kept either way. An address of a member's node
// written another way (an IPv4-mapped IPv6 address, a port with a
// leading zero) is that member; a host name is never taken for an
// address (see nodeKey), but once dialled, a member whose connection
// reached a live member's node is that node's alias, not a second peer.
func (p *Pool) Add(ctx context.Context, addr string, permanent bool) error {
	if m := p.sameNode(addr); m != nil {
		p.logf("peer %s is the same node as member %s", addr, m.addr)
		addr = m.addr
	}
	if b, banned := p.bans.Banned(addr); banned {
		if b.Proof {
			return fmt.Errorf("peer %s: banned until %s for what it was caught doing: %s", addr, b.Until.UTC().Format(time.RFC3339), b.Reason)
		}
		p.mu.Lock()
		p.note("peer %s is banned until %s (%s), but the ban rests on no proof: it is used, as it was added", addr, b.Until.UTC().Format(time.RFC3339), b.Reason)
		p.mu.Unlock()
	}
	p.mu.Lock()
	i := slices.IndexFunc(p.members, func(m *Member) bool { return m.addr == addr })
	if i >= 0 {
		m := p.members[i]
		m.permanent = m.permanent || permanent
		if m.banned {
			// Banned without proof (the proof case is refused above):
			// given by the user, it is used.
			m.banned, m.reason, m.err = false, "", nil
		}
		p.mu.Unlock()
		p.reconnect(ctx, m)
		return p.memberErr(m)
	}
	m := &Member{addr: addr, permanent: permanent, dialing: true}
	p.members = append(p.members, m)
	p.mu.Unlock()
	p.dial(ctx, m)
	return p.memberErr(m)
}

// memberErr returns why m is not live (nil if it is).
func (p *Pool) memberErr(m *Member) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m.isLive() {
		return nil
	}
	if m.err != nil {
		return m.err
	}
	return fmt.Errorf("peer %s: %s", m.addr, m.reason)
}

// Remove disconnects addr's member and forgets it: it is not dialled
// again (unless Added again). Its bytes still count in BytesReceived.
func (p *Pool) Remove(addr string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	i, m, err := p.memberLocked(addr)
	if err != nil {
		return err
	}
	m.removed = true
	if m.p != nil {
		m.p.Close()
	}
	p.forgetLocked(m)
	p.members = slices.Delete(p.members, i, i+1)
	return nil
}

// Disconnect ends addr's connection. The member stays: Run redials it
// with its backoff, as any member whose connection ended (one found by
// discovery may be replaced instead).
func (p *Pool) Disconnect(addr string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	_, m, err := p.memberLocked(addr)
	if err != nil {
		return err
	}
	if m.p == nil {
		return fmt.Errorf("peer %s: not connected", addr)
	}
	m.p.Close()
	return nil
}

// forgetLocked keeps the byte counts of m, which leaves the pool, in the
// pool's totals. Called with mu held.
func (p *Pool) forgetLocked(m *Member) {
	m.retire()
	p.goneReceived += m.received
	p.goneSent += m.sent
	m.received, m.sent, m.p = 0, 0, nil
}

// memberLocked returns the member at addr and its index, or
// ErrNotMember. Called with mu held.
func (p *Pool) memberLocked(addr string) (int, *Member, error) {
	i := slices.IndexFunc(p.members, func(m *Member) bool { return m.addr == addr })
	if i < 0 {
		return -1, nil, fmt.Errorf("peer %s: %w", addr, ErrNotMember)
	}
	return i, p.members[i], nil
}
