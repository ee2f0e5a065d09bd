package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/addrbook"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/pool"
	"github.com/spvfilter/spvfilter/peer/store"
)

// Config says which nodes to use and how patiently.
type Config struct {
	// Peers are nodes' host:port addresses (or host names, .onion ones
	// through Proxy): the client keeps them for as long as it runs, and
	// finds the others it wants (see ConnectOnly).
	Peers []string
	// Params are the network's parameters.
	Params *chaincfg.Params
	// Timeout bounds the handshake and each request's whole answer, per
	// peer; zero means peer.DefaultTimeout.
	Timeout time.Duration
	// Log, if set, receives one line per request and notable event.
	Log io.Writer
	// DataDir, if set, keeps the chain state (headers, verified filter
	// headers, a cache of verified filters) in DataDir/<network>, so a
	// later client resumes where this one stopped (see package store).
	DataDir string
	// FilterCacheBytes caps the cache of verified filters, on disk with
	// a DataDir (zero means store.DefaultFilterCacheBytes), in memory
	// without one (zero means 4 MiB); negative means no cache.
	FilterCacheBytes int64
	// OnHeaders, if set, is called during header syncs after each batch,
	// with the chain's height and the height the peer announced.
	OnHeaders func(height, announced int32)
	// Proxy, if set, is a SOCKS5 proxy (socks5://host:port, Tor's for
	// instance) that every connection goes through, host names and
	// .onion addresses resolved by the proxy; no connection is ever made
	// without it, and the DNS seeds are not asked (their lookup would
	// leave the proxy) unless Resolver is set.
	Proxy string
	// ConnectOnly uses Peers alone, as bitcoind's -connect: no DNS seeds
	// and no addresses learnt from peers. Otherwise the client keeps
	// TargetPeers outbound peers, Peers among them, found in its address
	// book (kept in DataDir), in the network's DNS seeds and in what its
	// peers gossip, spread over network groups (/16 for IPv4).
	ConnectOnly bool
	// TargetPeers is how many peers the client keeps; zero means
	// DefaultTargetPeers.
	TargetPeers int
	// Services are the services a peer found by discovery must offer
	// (Peers are used whatever they offer, for what they offer); zero
	// means compact filters and witness (BIP 157). A BIP 37 client asks
	// for wire.SFNodeBloom.
	Services wire.ServiceFlag
	// Resolver looks up the DNS seeds; nil means the system's resolver,
	// or none with a Proxy.
	Resolver addrbook.Resolver
}

// DefaultTargetPeers is how many peers a client keeps by default.
const DefaultTargetPeers = 8

// Client holds connections to several peers and one header chain. Its
// methods run one at a time.
type Client struct {
	cfg    Config
	opMu   sync.Mutex
	syncMu sync.Mutex // one header sync at a time
	chain  *chain.Chain

	mu      sync.Mutex // guards members' state
	members []*member
	rng     *rand.Rand
	budget  slowBudget // how long the scan waits for slow peers

	st     *store.Store   // nil without Config.DataDir
	mem    *memCache      // without a store: what was verified lately
	bans   *pool.BanList  // in the data directory, or in memory
	dial   peer.DialFunc  // through Config.Proxy; nil for direct connections
	book   *addrbook.Book // where peers are found; nil with ConnectOnly
	blocks blockCache     // the last blocks GetBlock returned
	notes  []string       // warnings for every result (a repaired store)
	news   []string       // warnings for the next result only, under mu
	// The service (Start): its stop, the end of its goroutines, wake-ups
	// of its header sync and the notification of a moved tip.
	svcMu   sync.Mutex
	svcStop context.CancelFunc
	// Discovery by the service, under mu: one at a time, and not again
	// before nextDiscovery.
	discovering   bool
	nextDiscovery time.Time
	svcDone       chan struct{}
	wakeSync      chan struct{}
	tipMu         sync.Mutex
	tipCh         chan struct{}

	// What the current scan found about its peers, for its warnings:
	scanNotes []string // what may make the result less than it looks
	// storeConflicts are the differences with the stored filter headers
	// that the blocks could not decide (see settleStored), until a scan
	// of their heights reports them (guarded by opMu).
	storeConflicts []Conflict
	oneVoice       []OnePeer        // heights only one peer could speak for
	disconnected   []chainhash.Hash // blocks that left the chain since the last result
	resumed        int32            // the height of the chain resumed from the store, or -1
	// verifiedTo is the highest filter header verified with the peers in
	// this life (every one below it too, through the checkpoints), and
	// lonely the heights among them only one of several peers stated.
	// Both are guarded by opMu.
	verifiedTo int32
	lonely     []OnePeer
	// conflicts are the disagreements about filters their blocks could
	// not decide, by height (guarded by opMu).
	conflicts map[int32]*conflict
	synced    bool     // a header sync has ended
	forks     []string // where the chain was replaced since the last result
}

// member is one peer of the client. Its fields are guarded by the
// client's mu; p changes only when the peer is redialled, so requests read
// it through Client.conn.
type member struct {
	addr   string
	p      *peer.Peer // nil when not connected
	tip    int32      // the highest height of the chain the peer is known to hold, or -1
	branch *Branch    // the peer's own branch, when it forks off the chain with less work
	banned bool
	reason string
	err    error  // why it was banned or dropped
	before uint64 // bytes received on the peer's earlier connections
	// compared: the peer's filter headers were compared with another
	// peer's during the current scan.
	compared bool
	// permanent: from Config.Peers, kept and redialled for as long as the
	// client runs; others were found and are replaced when they go.
	permanent bool
	// strikes counts the times the peer failed to serve what it stated
	// during a dispute.
	strikes int
	// alias, if set, is the address under which the same node is a peer
	// already: this one is never dialled.
	alias string
	// announced holds the blocks the peer announced that the chain lacks,
	// until its next header sync; undelivered counts those it then did
	// not serve.
	announced   []chainhash.Hash
	undelivered int
	// fresh: connected again since its last header sync.
	fresh bool
	// The service's redials: dialing while one runs, the failures in a
	// row (dials that failed, connections that did not last), when the
	// next may start, and when the connection was made (see
	// stableConnection).
	dialing     bool
	failures    int
	nextDial    time.Time
	connectedAt time.Time
}

// isLive reports whether the member is connected and neither banned nor
// dropped. Called with the client's mu held.
func (m *member) isLive() bool { return m.p != nil && !m.banned && m.err == nil }

// Branch is a peer's chain where it leaves the client's: the peer holds
// the client's chain up to Fork, then blocks of its own up to Height.
type Branch struct {
	Fork   int32
	Height int32
	Hash   chainhash.Hash
}

// ErrNoPeers: no peer is left to ask; the error wraps what happened to
// each.
var ErrNoPeers = errors.New("no usable peer")

// Connect dials every peer in cfg.Peers at once. Peers that cannot be
// reached are recorded in Peers; it fails only when none can.
func Connect(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.Params == nil {
		return nil, errors.New("client: Config.Params is nil")
	}
	if len(cfg.Peers) == 0 && cfg.ConnectOnly {
		return nil, errors.New("client: ConnectOnly without peers")
	}
	if cfg.Services == 0 {
		cfg.Services = wire.SFNodeCF | wire.SFNodeWitness
	}
	if cfg.TargetPeers <= 0 {
		cfg.TargetPeers = DefaultTargetPeers
	}
	c := &Client{cfg: cfg, chain: chain.New(cfg.Params), rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())), mem: newMemCache(cfg.FilterCacheBytes),
		wakeSync: make(chan struct{}, 1), resumed: -1, verifiedTo: -1}
	if cfg.Proxy != "" {
		dial, err := peer.SOCKS5(cfg.Proxy)
		if err != nil {
			return nil, fmt.Errorf("client: proxy: %w", err)
		}
		c.dial = dial
	} else {
		for _, addr := range cfg.Peers {
			if host, _, err := net.SplitHostPort(addr); err == nil && strings.HasSuffix(host, ".onion") {
				return nil, fmt.Errorf("client: peer %s: an onion address needs a proxy (Config.Proxy, such as Tor's socks5://127.0.0.1:9050)", addr)
			}
		}
	}
	if err := c.openStore(); err != nil {
		return nil, err
	}
	c.openBans()
	if err := c.openBook(); err != nil {
		c.Close()
		return nil, err
	}
	var dial []*member
	seen := map[string]string{} // the node's address: the address given for it
	for _, addr := range cfg.Peers {
		if slices.ContainsFunc(c.members, func(m *member) bool { return m.addr == addr }) {
			continue
		}
		m := &member{addr: addr, tip: -1, permanent: true}
		c.members = append(c.members, m)
		// One node under two spellings is one peer, not two that agree.
		if key := c.nodeKey(ctx, addr); seen[key] != "" {
			m.reason = fmt.Sprintf("the same node as %s: not used twice", seen[key])
			m.err, m.alias = errors.New(m.reason), seen[key]
			continue
		} else {
			seen[key] = addr
		}
		// The user's peers are the user's: a ban is said, and only one
		// that rests on a proof keeps the peer out.
		if b, banned := c.banOf(addr); banned {
			if b.Proof {
				m.banned, m.reason = true, fmt.Sprintf("given, but banned until %s for what it was caught doing: %s; not used until the ban ends or Unban lifts it",
					b.Until.UTC().Format(time.RFC3339), b.Reason)
				m.err = errors.New(m.reason)
				continue
			}
			c.news = append(c.news, fmt.Sprintf("peer %s is banned until %s (%s), but the ban rests on no proof: it is used, as it was given",
				addr, b.Until.UTC().Format(time.RFC3339), b.Reason))
		}
		dial = append(dial, m)
	}
	// All at once; one whose handshake lags the first's beyond its
	// budget is dropped as too slow (see slowBudget).
	c.budget.reset()
	c.eachPeer(ctx, dial, func(ctx context.Context, m *member) error {
		c.dialMember(ctx, m)
		c.mu.Lock()
		defer c.mu.Unlock()
		return m.err
	})
	if err := ctx.Err(); err != nil {
		c.Close()
		return nil, err
	}
	var found []error
	if !cfg.ConnectOnly {
		found = c.discover(ctx, cfg.TargetPeers-len(c.serving(0)))
	}
	if err := ctx.Err(); err != nil {
		c.Close()
		return nil, err
	}
	if len(c.live()) == 0 {
		err := c.noPeers("connect")
		if len(found) > 0 {
			err = fmt.Errorf("%w; finding peers: %w", err, joinErrors(found))
		}
		c.Close()
		return nil, err
	}
	return c, nil
}

// nodeKey returns what tells nodes apart for addr: its IP address (a host
// name looked up, unless connections go through a proxy, which resolves
// them itself) and its port as a number.
func (c *Client) nodeKey(ctx context.Context, addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return addr
	}
	if n, err := strconv.ParseUint(port, 10, 16); err == nil {
		port = strconv.FormatUint(n, 10)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		return net.JoinHostPort(ip.Unmap().String(), port)
	}
	if c.dial == nil {
		if ips, err := net.DefaultResolver.LookupHost(ctx, host); err == nil && len(ips) > 0 {
			if ip, err := netip.ParseAddr(ips[0]); err == nil {
				return net.JoinHostPort(ip.Unmap().String(), port)
			}
		}
	}
	return net.JoinHostPort(strings.ToLower(host), port)
}

// dialMember connects to a member and records the outcome.
func (c *Client) dialMember(ctx context.Context, m *member) {
	if c.book != nil {
		c.book.Attempt(m.addr)
	}
	p, err := peer.Dial(ctx, c.peerConfig(m.addr))
	if err == nil && !m.permanent && p.Services()&c.cfg.Services != c.cfg.Services {
		p.Close()
		err = fmt.Errorf("peer %s: %w: services %v, needed %v", m.addr, peer.ErrMissingService, p.Services(), c.cfg.Services)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	m.dialing = false
	if err != nil {
		m.reason, m.err = "unreachable: "+err.Error(), err
		return
	}
	if m.p != nil {
		m.before += m.p.BytesReceived()
	}
	m.p, m.err, m.reason, m.failures, m.tip, m.connectedAt = p, nil, "", 0, -1, time.Now()
	if c.book != nil {
		c.book.Connected(m.addr, p.Services())
		c.book.Good(m.addr)
	}
}

// Close stops the service (see Start), disconnects from every peer and
// closes the chain state.
func (c *Client) Close() error {
	c.stopService()
	if c.book != nil {
		if err := c.book.Close(); err != nil {
			c.logf("saving the address book: %v", err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m.p != nil {
			m.p.Close()
		}
	}
	if c.bans != nil {
		c.bans.Close()
	}
	if c.st != nil {
		err := c.st.Close()
		c.st = nil
		return err
	}
	return nil
}

// Chain returns the client's verified header chain. It changes during
// SyncHeaders and scans; read it between them.
func (c *Client) Chain() *chain.Chain { return c.chain }

// Peers returns the state of every peer: those of Config.Peers first, in
// their order, then those found.
func (c *Client) Peers() []PeerStatus {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]PeerStatus, 0, len(c.members))
	for _, m := range c.members {
		st := PeerStatus{Address: m.addr, Banned: m.banned, Reason: m.reason, Compared: m.compared, Tip: m.tip}
		if m.p == nil && st.Reason == "" {
			st.Reason = "connecting"
		}
		if m.branch != nil {
			b := *m.branch
			st.Branch = &b
		}
		if m.p != nil {
			st.UserAgent, st.Services = m.p.UserAgent(), m.p.Services().String()
		}
		out = append(out, st)
	}
	return out
}

// BytesReceived adds up the bytes read from every peer so far.
func (c *Client) BytesReceived() uint64 { return c.bytesReceived() }

// bytesReceived adds up the bytes read from every peer.
func (c *Client) bytesReceived() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	var n uint64
	for _, m := range c.members {
		if m.p != nil {
			n += m.before + m.p.BytesReceived()
		}
	}
	return n
}

// live returns the connected peers that are neither banned nor dropped.
// Called with mu held.
func (c *Client) live() []*member {
	var out []*member
	for _, m := range c.members {
		if m.isLive() {
			out = append(out, m)
		}
	}
	return out
}

// serving returns the live peers that offer service.
func (c *Client) serving(service wire.ServiceFlag) []*member {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*member
	for _, m := range c.live() {
		if m.p.Services()&service == service {
			out = append(out, m)
		}
	}
	return out
}

// reaching returns the live peers that offer service and hold the chain
// up to height.
func (c *Client) reaching(service wire.ServiceFlag, height int32) []*member {
	ms := c.serving(service)
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.DeleteFunc(ms, func(m *member) bool { return m.tip < height })
}

// reachOf returns the highest height up to to that m holds, or -1.
func (c *Client) reachOf(m *member, to int32) int32 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return min(m.tip, to)
}

// heldByOne reports whether, of two or more live peers offering compact
// filters, only one holds the chain up to height.
func (c *Client) heldByOne(height int32) bool {
	ms := c.serving(wire.SFNodeCF)
	return len(ms) >= 2 && len(c.reaching(wire.SFNodeCF, height)) == 1
}

// timeout returns how long a request may take.
func (c *Client) timeout() time.Duration {
	if c.cfg.Timeout > 0 {
		return c.cfg.Timeout
	}
	return peer.DefaultTimeout
}

// conn returns m's current connection.
func (c *Client) conn(m *member) *peer.Peer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return m.p
}

// peerConfig is the configuration of the connection to addr. (With a
// store, the chain writes every header it takes to it as it comes, so
// that a sync cut short resumes.)
func (c *Client) peerConfig(addr string) peer.Config {
	return peer.Config{Addr: addr, Params: c.cfg.Params, Timeout: c.cfg.Timeout, Log: c.cfg.Log, Dial: c.dial,
		OnAnnounce:  func(a peer.Announcement) { c.announced(addr, a) },
		OnAddresses: func(addrs []*wire.NetAddressV2) { c.learn(addrs, addr) },
		OnHeaders:   c.cfg.OnHeaders}
}

// redial replaces a member's dropped connection with a new one; a live
// connection is kept.
func (c *Client) redial(ctx context.Context, m *member) error {
	old := c.conn(m)
	select {
	case <-old.Done():
	default:
		return nil
	}
	if err := old.Err(); errors.Is(err, peer.ErrFlooding) {
		// Dropped for flooding: not to be dialled again.
		return err
	}
	p, err := peer.Dial(ctx, c.peerConfig(m.addr))
	if err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.banned || m.err != nil {
		p.Close()
		return fmt.Errorf("peer %s: banned or dropped while it was dialled again: %s", m.addr, m.reason)
	}
	if m.p != old {
		// Redialled meanwhile by another request.
		p.Close()
		return nil
	}
	m.before += old.BytesReceived()
	m.p, m.connectedAt = p, time.Now()
	return nil
}

// ban marks a peer caught lying (or flooding), which err proves; it is
// disconnected and never asked again, and with a store the ban is kept
// for pool.DefaultBanDuration, across restarts, as resting on a proof.
func (c *Client) ban(m *member, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.banned {
		return
	}
	m.banned, m.err, m.reason = true, err, err.Error()
	if c.cfg.Log != nil {
		fmt.Fprintf(c.cfg.Log, "banned %s: %v\n", m.addr, err)
	}
	if m.p != nil {
		m.p.Close()
	}
	c.keepBan(m.addr, m.reason, true)
}

// keepBan records a ban, with proof or not. Called with mu held.
func (c *Client) keepBan(addr, reason string, proof bool) {
	keep := c.bans.Ban
	if proof {
		keep = c.bans.BanWithProof
	}
	if err := keep(addr, reason, pool.DefaultBanDuration); err != nil {
		c.logf("keeping the ban of %s: %v", addr, err)
	}
}

// BanPeer bans the peer at addr (host:port) for pool.DefaultBanDuration,
// kept in the data directory if there is one: a connected peer is
// disconnected, and no ban is dialled (but a peer of Config.Peers, which
// a ban resting on no proof, as this one, does not keep out of a later
// client). Peers the client catches lying or flooding are banned the same
// way, with the proof.
func (c *Client) BanPeer(addr, reason string) error {
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return fmt.Errorf("client: ban %q: %w", addr, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m.addr == addr {
			m.banned, m.reason = true, "banned: "+reason
			m.err = errors.New(m.reason)
			if m.p != nil {
				m.p.Close()
			}
		}
	}
	c.keepBan(addr, reason, false)
	return nil
}

// IsBanned reports whether the peer at addr is banned, and why.
func (c *Client) IsBanned(addr string) (reason string, banned bool) {
	b, ok := c.banOf(addr)
	return b.Reason, ok
}

// banOf returns the ban of the peer at addr, if it is banned.
func (c *Client) banOf(addr string) (pool.Ban, bool) { return c.bans.Banned(addr) }

// Unban lifts the ban of the peer at addr; a peer of the client is used
// again (the service redials it).
func (c *Client) Unban(addr string) error {
	if err := c.bans.Unban(addr); err != nil {
		return fmt.Errorf("client: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.members {
		if m.addr == addr && m.banned {
			m.banned, m.reason = false, "unbanned"
			m.nextDial = time.Time{}
		}
	}
	return nil
}

// Bans lists the bans in force (kept in the data directory, if there is
// one).
func (c *Client) Bans() []pool.Ban { return c.bans.Bans() }

// dropPeer stops using a peer that stalled, disconnected or cannot serve
// the scan, without calling it a liar.
func (c *Client) dropPeer(m *member, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if m.banned || m.err != nil {
		return
	}
	m.err, m.reason = err, err.Error()
	if c.cfg.Log != nil {
		fmt.Fprintf(c.cfg.Log, "dropped %s: %v\n", m.addr, err)
	}
	if m.p != nil {
		m.p.Close()
		m.connectionGone(time.Now())
	}
}

// noPeers builds the error of an operation that ran out of peers: with one
// peer, that peer's own error; with several, all of them.
func (c *Client) noPeers(op string) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	var errs []error
	for _, m := range c.members {
		if m.err != nil {
			errs = append(errs, m.err)
		}
	}
	switch len(errs) {
	case 0:
		return fmt.Errorf("client: %s: %w", op, ErrNoPeers)
	case 1:
		return errs[0]
	}
	return fmt.Errorf("client: %s: %w: %w", op, ErrNoPeers, joinErrors(errs))
}

// SyncHeaders downloads the headers of every live peer into the chain:
// the branch with the most work wins. It learns where each peer's best
// chain stands (see peer.Peer.SyncHeaders): a peer that is behind, or
// rolled back to a lower branch, holds the chain up to its tip and is
// asked only about the heights it holds; one on its own branch with less
// work holds it up to the fork. A peer that sends invalid headers is
// banned; one that stalls is no longer used. It returns how the chain
// changed; it fails only when no peer is left.
func (c *Client) SyncHeaders(ctx context.Context) (chain.Update, error) {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	return c.syncHeaders(ctx)
}

func (c *Client) syncHeaders(ctx context.Context) (chain.Update, error) {
	if !c.started() {
		// Without the service, each sync tries the peers that went away
		// again (with the service's backoff).
		c.revive(ctx)
	}
	return c.syncPeers(ctx, nil)
}

// syncPeers syncs the headers of the live peers of ms (of every live peer
// for nil), as SyncHeaders describes.
func (c *Client) syncPeers(ctx context.Context, ms []*member) (chain.Update, error) {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	total := chain.Update{Fork: c.chain.Height()}
	// Every peer at once. A peer's tip is measured against the chain as
	// it was when its sync ran: while other peers' headers change the
	// chain, every peer is asked again, until a round changes nothing
	// (at most syncRounds).
	for round := 0; round < syncRounds; round++ {
		_, before := c.chain.Tip()
		c.mu.Lock()
		members := c.live()
		if ms != nil {
			members = slices.DeleteFunc(members, func(m *member) bool { return !slices.Contains(ms, m) })
		}
		c.mu.Unlock()
		results := make([]peer.HeadersResult, len(members))
		errs := make([]error, len(members))
		c.eachPeer(ctx, members, func(ctx context.Context, m *member) error {
			i := slices.Index(members, m)
			// A connection dropped by an abandoned request (a cancelled
			// context) is replaced; the peer did nothing wrong.
			if errs[i] = c.redial(ctx, m); errs[i] != nil {
				results[i].Tip = -1
				return errs[i]
			}
			results[i], errs[i] = c.conn(m).SyncHeaders(ctx, c.chain)
			return errs[i]
		})
		if err := ctx.Err(); err != nil {
			// Abandoned, not failed: nobody to blame.
			return total, err
		}
		for i, m := range members {
			if errors.Is(errs[i], context.Canceled) {
				continue // too slow to wait for: eachPeer dropped it
			}
			if err := c.recordSync(m, results[i], errs[i], &total); err != nil {
				return total, err
			}
		}
		if _, after := c.chain.Tip(); after == before {
			break
		}
	}
	c.mu.Lock()
	c.synced = true
	c.mu.Unlock()
	if err := c.chain.Err(); err != nil {
		return total, fmt.Errorf("client: the chain state: %w", err)
	}
	if len(c.serving(0)) == 0 {
		return total, c.noPeers("getheaders")
	}
	return total, nil
}

// syncRounds bounds the rounds of one header sync.
const syncRounds = 3

// recordSync takes in what one peer's header sync showed: how the chain
// changed, the peer's tip and branch, and what it did wrong. Only a
// failure of the chain's own store is returned.
func (c *Client) recordSync(m *member, res peer.HeadersResult, err error, total *chain.Update) error {
	up := res.Update
	if up.Fork < total.Fork {
		total.Fork = up.Fork
	}
	total.Disconnected = append(total.Disconnected, up.Disconnected...)
	total.Connected += up.Connected
	c.mu.Lock()
	if up.Reorganized() {
		// Tips learnt before are on the old branch, and so are the
		// filter headers verified above the fork.
		for _, o := range c.members {
			o.tip = min(o.tip, up.Fork)
		}
		c.mem.dropAbove(up.Fork)
		c.verifiedTo = min(c.verifiedTo, up.Fork)
		c.dropConflictsAbove(up.Fork)
		// Before the first sync ends, only the blocks of a chain resumed
		// from the store count: the rest came and went with that sync.
		gone := up.Disconnected
		if !c.synced {
			gone = gone[:max(0, min(len(gone), int(c.resumed-up.Fork)))]
		}
		if len(gone) > 0 {
			c.disconnected = append(c.disconnected, gone...)
			c.forks = append(c.forks, fmt.Sprintf("the chain was reorganized: %d block(s) above height %d left it for a branch with more work",
				len(gone), up.Fork))
		}
	}
	if err == nil || res.Tip >= 0 {
		// What the peer showed now replaces what it showed before: a
		// peer may roll back.
		m.tip, m.branch = res.Tip, nil
		if b := res.Branch; b != nil {
			m.branch = &Branch{Fork: b.Fork, Height: b.Height, Hash: b.Hash}
		}
	}
	c.mu.Unlock()
	switch {
	case err == nil:
	case errors.Is(err, chain.ErrStorage):
		return fmt.Errorf("client: the chain state: %w", err)
	default:
		c.blame(m, err)
	}
	return nil
}

// pick returns a peer among ms chosen at random.
func (c *Client) pick(ms []*member) *member {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ms[c.rng.IntN(len(ms))]
}

// blame decides what a peer's failed request means: a lie or a flood
// bans it, a stall or disconnect drops it. It reports whether the peer lied. Nobody
// is blamed while the chain cannot read its store: the requests were made
// from what it could not read.
func (c *Client) blame(m *member, err error) bool {
	if c.chain.Err() != nil {
		return false
	}
	if isLie(err) || errors.Is(err, peer.ErrFlooding) {
		c.ban(m, err)
		return isLie(err)
	}
	c.dropPeer(m, err)
	return false
}

// isLie reports whether a request's error proves the peer sent false data.
func isLie(err error) bool {
	for _, e := range []error{peer.ErrBadFilter, peer.ErrBadFilterHeader, peer.ErrBadBlock, peer.ErrBadProof,
		peer.ErrBadHeaders, peer.ErrMissingTransactions, peer.ErrProtocol} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Serves reports whether some live peer advertises every service in
// flags.
func (c *Client) Serves(flags wire.ServiceFlag) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, m := range c.live() {
		if m.p.Services()&flags == flags {
			return true
		}
	}
	return false
}

// peerErrors are the errors of several peers, on one line; errors.Is and
// errors.As see each.
type peerErrors []error

func joinErrors(errs []error) error { return peerErrors(errs) }

func (e peerErrors) Error() string {
	s := make([]string, len(e))
	for i, err := range e {
		s[i] = err.Error()
	}
	return strings.Join(s, "; ")
}

// Unwrap returns the errors of each peer.
func (e peerErrors) Unwrap() []error { return e }
