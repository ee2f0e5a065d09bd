package pool

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/addrbook"
	"github.com/spvfilter/spvfilter/peer/banlist"
)

// Config says which nodes a pool keeps and how.
type Config struct {
	// Params are the network's parameters.
	Params *chaincfg.Params
	// Peers are the user's nodes (host:port, or host names): kept and
	// redialled for as long as the pool runs, never silently skipped.
	Peers []string
	// ConnectOnly keeps Peers alone: no address book, no DNS seeds, no
	// gossip.
	ConnectOnly bool
	// Target is how many members the pool keeps connected, Peers among
	// them; zero means DefaultTarget.
	Target int
	// Services are what a member found by discovery must offer (Peers
	// are kept whatever they offer).
	Services wire.ServiceFlag
	// Timeout bounds a handshake and each request; zero means
	// peer.DefaultTimeout.
	Timeout time.Duration
	// Dial, if set, makes every connection (a SOCKS5 proxy, Tor stream
	// isolation): nothing is dialled around it, .onion addresses may be
	// dialled, and the DNS seeds are asked only through Resolver.
	Dial peer.DialFunc
	// Resolver looks up the DNS seeds; nil means the system's resolver,
	// or none with Dial.
	Resolver addrbook.Resolver
	// Dir is the network's directory of a data directory, which keeps
	// the ban list and the address book (its owner locks it: package
	// store does); "" keeps both in memory.
	Dir string
	// Log, if set, receives one line per notable event.
	Log io.Writer
	// OnHeaders is every connection's peer.Config.OnHeaders.
	OnHeaders func(height, announced int32)
	// OnAnnounce, if set, receives what a member announces (see
	// peer.Config.OnAnnounce).
	OnAnnounce func(*Member, peer.Announcement)
	// OnConnect, if set, is told that a member is connected, for the
	// first time or again after its connection ended, before the
	// connection is used: what was known of the node's chain is stale.
	// It is called without the pool's lock and must not call the pool.
	OnConnect func(*Member)
	// OnLive, if set, is told that a member connected (after OnConnect)
	// is live: in use, counted by Serving and Status. It is called
	// without the pool's lock.
	OnLive func(*Member)
}

// DefaultTarget is how many members a pool keeps by default.
const DefaultTarget = 8

// Pool keeps the members of a light client: it dials them, redials the
// ones whose connection ended with a backoff, finds others to keep the
// target (address book, DNS seeds, gossip), refuses the banned, and asks
// many at once within a grace (Each). Its methods are safe for concurrent
// use.
type Pool struct {
	cfg  Config
	book *addrbook.Book // nil with ConnectOnly
	bans *banlist.List

	mu      sync.Mutex
	members []*Member
	notes   []string // warnings for the next result (TakeNotes)
	// goneReceived and goneSent count the bytes of removed members.
	goneReceived, goneSent uint64
	// Discovery by Run: one at a time, and not again before
	// nextDiscovery.
	discovering   bool
	nextDiscovery time.Time
	// records are those of the members found by discovery it forgot,
	// by host (see record).
	records records
}

// New opens the pool's ban list and address book (in cfg.Dir) and takes
// cfg.Peers as its first members; it dials nothing (Connect). The notes
// say what was wrong with the files found, and what became of them.
func New(cfg Config) (*Pool, []string, error) {
	if cfg.Params == nil {
		return nil, nil, errors.New("pool: Config.Params is nil")
	}
	if cfg.Target <= 0 {
		cfg.Target = DefaultTarget
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = peer.DefaultTimeout
	}
	p := &Pool{cfg: cfg}
	var notes []string
	p.bans, notes = banlist.Open(cfg.Dir)
	if !cfg.ConnectOnly {
		book, bookNotes, err := addrbook.Open(cfg.Params, cfg.Dir, time.Now)
		if err != nil {
			p.bans.Close()
			return nil, nil, fmt.Errorf("pool: address book: %w", err)
		}
		p.book = book
		for _, n := range bookNotes {
			notes = append(notes, "address book: "+n)
		}
	}
	for _, addr := range cfg.Peers {
		if !slices.ContainsFunc(p.members, func(m *Member) bool { return m.addr == addr }) {
			p.members = append(p.members, &Member{addr: addr, permanent: true})
		}
	}
	return p, notes, nil
}

// Close disconnects every member, saves the address book and closes the
// ban list. Run must have returned.
func (p *Pool) Close() error {
	var err error
	if p.book != nil {
		if err = p.book.Close(); err != nil {
			p.logf("saving the address book: %v", err)
		}
	}
	p.mu.Lock()
	for _, m := range p.members {
		if m.p != nil {
			m.p.Close()
		}
	}
	p.mu.Unlock()
	p.bans.Close()
	return err
}

// Members lists every member: those of Config.Peers first, in their
// order, then those found.
func (p *Pool) Members() []*Member {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.members)
}

// Live lists the members Status counts live (connected, neither banned
// nor dropped), read under one hold of the pool's lock: also those
// Serving leaves out (see Status.Live for why the two differ).
func (p *Pool) Live() []*Member {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*Member
	for _, m := range p.members {
		if m.isLive() {
			out = append(out, m)
		}
	}
	return out
}

// Serving lists the live members (connected, neither banned nor
// dropped) that advertise every service of s: every live member for 0.
// A member whose connection ended, Run not having noticed yet, is listed
// only if its next dial is due soon (see Member.serves): a request finds
// it dialled again, not refused. It is the list to plan requests on;
// Live, a superset, the members the pool has not given up on.
func (p *Pool) Serving(s wire.ServiceFlag) []*Member {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*Member
	now := time.Now()
	for _, m := range p.members {
		if m.serves(now) && m.p.Services()&s == s {
			out = append(out, m)
		}
	}
	return out
}

// Keep returns the members of ms still live, as Serving counts them (see
// Member.serves).
func (p *Pool) Keep(ms []*Member) []*Member {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*Member
	now := time.Now()
	for _, m := range ms {
		if m.serves(now) {
			out = append(out, m)
		}
	}
	return out
}

// Conn returns m's current connection (nil if it has none).
func (p *Pool) Conn(m *Member) *peer.Peer {
	p.mu.Lock()
	defer p.mu.Unlock()
	return m.p
}

// Status returns what the pool knows of m.
func (p *Pool) Status(m *Member) Status {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := Status{Addr: m.addr, Banned: m.banned, Reason: m.reason, Err: m.err, Connected: m.p != nil, Live: m.isLive(),
		BytesReceived: m.received, BytesSent: m.sent}
	if m.p == nil && st.Reason == "" {
		st.Reason = "connecting"
	}
	if m.p != nil {
		st.UserAgent, st.Services = m.p.UserAgent(), m.p.Services().String()
		st.BytesReceived += m.p.BytesReceived()
		st.BytesSent += m.p.BytesSent()
	}
	return st
}

// BytesReceived adds up the bytes read from every member so far.
func (p *Pool) BytesReceived() uint64 {
	received, _ := p.bytes()
	return received
}

// bytes adds up the bytes read from and written to every member so far,
// those removed included.
func (p *Pool) bytes() (received, sent uint64) {
	p.mu.Lock()
	defer p.mu.Unlock()
	received, sent = p.goneReceived, p.goneSent
	for _, m := range p.members {
		received, sent = received+m.received, sent+m.sent
		if m.p != nil {
			received, sent = received+m.p.BytesReceived(), sent+m.p.BytesSent()
		}
	}
	return received, sent
}

// TakeNotes returns, and forgets, the warnings the pool left for the
// next result: a discovery whose addresses failed it, a user's peer used
// despite a ban without proof.
func (p *Pool) TakeNotes() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	notes := p.notes
	p.notes = nil
	return notes
}

// note leaves a warning for the next result. Called with mu held.
func (p *Pool) note(format string, args ...any) {
	p.notes = append(p.notes, fmt.Sprintf(format, args...))
}

// Ban disconnects m, which proof proves a liar (or a flooder), never asks
// it again and keeps a ban of its host for banlist.DefaultDuration, as resting
// on a proof (in the data directory, across restarts, with a Dir).
func (p *Pool) Ban(m *Member, proof error) { p.ban(m, proof, true) }

// BanWithoutProof bans m for err, which shows it misbehaved but proves no
// lie (it failed to serve what it stated): disconnected and never asked
// again in this life, and kept as a ban without proof, which does not
// keep a peer the user gave out of a later run.
func (p *Pool) BanWithoutProof(m *Member, err error) { p.ban(m, err, false) }

// ban bans m for err, with proof or not.
func (p *Pool) ban(m *Member, err error, proof bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if m.banned {
		return
	}
	m.banned, m.err, m.reason = true, err, err.Error()
	p.logf("banned %s: %v", m.addr, err)
	if m.p != nil {
		m.p.Close()
	}
	p.keepBan(m.addr, m.reason, proof)
}

// keepBan records a ban, with proof or not. Called with mu held.
func (p *Pool) keepBan(addr, reason string, proof bool) {
	keep := p.bans.Ban
	if proof {
		keep = p.bans.BanWithProof
	}
	if err := keep(addr, reason, banlist.DefaultDuration); err != nil {
		p.logf("keeping the ban of %s: %v", addr, err)
	}
}

// BanAddr bans the node at addr (host:port) for banlist.DefaultDuration, by
// hand: a member at addr is disconnected, and no ban is dialled (but a
// member of Config.Peers, which a ban resting on no proof, as this one,
// does not keep out of a later pool).
func (p *Pool) BanAddr(addr, reason string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("pool: ban %q: %w", addr, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.members {
		if m.addr == addr {
			m.banned, m.reason = true, "banned: "+reason
			m.err = errors.New(m.reason)
			if m.p != nil {
				m.p.Close()
			}
		}
	}
	p.keepBan(addr, reason, false)
	return nil
}

// IsBanned returns the ban of the node at addr, if it is banned.
func (p *Pool) IsBanned(addr string) (banlist.Ban, bool) { return p.bans.Banned(addr) }

// Unban lifts the ban of the node at addr; a member at addr is used
// again (Run and Revive redial it).
func (p *Pool) Unban(addr string) error {
	if err := p.bans.Unban(addr); err != nil {
		return err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, m := range p.members {
		if m.addr == addr && m.banned {
			m.banned, m.reason = false, "unbanned"
			m.nextDial = time.Time{}
		}
	}
	return nil
}

// Bans lists the bans in force.
func (p *Pool) Bans() []banlist.Ban { return p.bans.Bans() }

// Drop stops using m, which stalled, disconnected or cannot serve what
// is asked, without calling it a liar; it is redialled after its
// backoff.
func (p *Pool) Drop(m *Member, err error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.dropLocked(m, err)
}

// dropLocked is Drop with mu held.
func (p *Pool) dropLocked(m *Member, err error) {
	if m.banned || (m.err != nil && !m.lapsed) {
		return
	}
	if m.p != nil && !m.endCounted() { // else Run counted the connection's end already
		m.connectionGone(time.Now())
	}
	p.leaveOut(m, err)
}

// leaveOut stops using m, for err, and closes its connection. Called with
// mu held, its failures counted.
func (p *Pool) leaveOut(m *Member, err error) {
	m.err, m.reason, m.lapsed = err, err.Error(), false
	p.logf("dropped %s: %v", m.addr, err)
	if m.p != nil {
		m.p.Close()
	}
}

// Known lists the address book (nil with ConnectOnly). On the public
// networks it is the book as last saved (at open, every ten minutes, at
// Close).
func (p *Pool) Known() ([]addrbook.Known, error) {
	if p.book == nil {
		return nil, nil
	}
	return p.book.Known()
}

// learn takes addresses a member gossiped into the address book.
func (p *Pool) learn(addrs []*wire.NetAddressV2, src string) {
	if p.book != nil {
		p.book.Add(addrs, src)
	}
}

func (p *Pool) logf(format string, args ...any) {
	if p.cfg.Log != nil {
		fmt.Fprintf(p.cfg.Log, format+"\n", args...)
	}
}
