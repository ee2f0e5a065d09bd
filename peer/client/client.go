package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/addrbook"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/cover"
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
	// FetchSpread is the largest share of a scan's block downloads one
	// peer may be asked for. Zero spreads them evenly over the live peers
	// holding them (1/n each, or as evenly as the peers' chains allow,
	// with a warning); 1 lets one peer serve all. With 0 < FetchSpread <
	// 1, a scan that cannot keep it fails with *SpreadError before asking
	// for any block. A peer that saw every block a wallet fetched can
	// tell its scripts by them; spreading is no protection against peers
	// that collude.
	FetchSpread float64
	// Isolate fetches each block over a connection of its own, made
	// through Proxy with fresh SOCKS5 credentials (peer.WithIsolation),
	// or through Dialer, which reads them with peer.Isolation: Tor then
	// gives each its own circuit, and a node sees each block asked by a
	// stranger (though it may link them by their timing). It needs Proxy
	// or Dialer: without, Connect fails with ErrIsolateWithoutProxy.
	Isolate bool
	// Dialer, if set, makes every connection (Tor stream isolation, a
	// transport of the caller's; see peer.Isolation for Isolate's
	// credentials): nothing is dialled around it, .onion
	// addresses may be given, and the DNS seeds are asked only through
	// Resolver. It cannot be set together with Proxy.
	Dialer peer.DialFunc
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
	// PrivacyTarget, in (0, 1), has BIP 157 scans fetch the blocks of
	// cover scripts with the wallet's so that the block-download attack
	// gives no watched script a posterior above it, per peer and for all
	// peers together (see covers.go and ScanResult.Cover); zero means no
	// covers. It needs DataDir, which keeps the covers across sessions:
	// without, Connect fails with ErrCoversNeedDataDir.
	PrivacyTarget float64
	// NewCovers accepts a new cover set in place of a damaged or deleted
	// cover file that no good earlier copy replaces (a scan otherwise
	// fails with *cover.DamagedError): anyone holding earlier sessions
	// can then strip the covers they fetched.
	NewCovers bool
	// MaxCoverBlocks bounds the blocks a scan fetches only for covers;
	// zero means DefaultCoverBlocksFactor times the wallet's blocks, a
	// negative value none: the blocks a scan explores to find covers and
	// those of the covers. Covers still short of the target within it,
	// the scan fails with *PrivacyTargetError before it fetches any block
	// of the wallet's, unless AllowShortCovers.
	MaxCoverBlocks int
	// AllowShortCovers has a scan whose covers are short of the target
	// within MaxCoverBlocks fetch the wallet's blocks anyway, with the
	// covers it has, and say so in ScanResult.Cover (Met false).
	AllowShortCovers bool

	// feedHeld bounds the bytes of filters a scan's filter feed holds
	// until their segments are verified: zero means feedHeldBytes, a
	// negative value none (tests, to have filters dropped).
	feedHeld int64
}

// DefaultTargetPeers is how many peers a client keeps by default.
const DefaultTargetPeers = pool.DefaultTarget

// Client holds connections to several peers and one header chain. Its
// methods are safe for concurrent use; operations that change the chain
// (header syncs, verifications, scans) run one at a time.
type Client struct {
	cfg Config
	// dial makes every connection the client opens: Config.Dialer, or
	// through Config.Proxy; nil dials directly. Set at Connect.
	dial  peer.DialFunc
	opMu  sync.Mutex // one operation at a time; guards all below but where said
	chain *chain.Chain
	pool  *pool.Pool
	views peerViews    // what the client knows of each member's chain
	st    *store.Store // nil without Config.DataDir
	mem   *memCache    // without a store: what was verified lately
	// blocks keeps the last blocks GetBlock returned and those of
	// disputes; it guards itself.
	blocks blockCache
	notes  []string // warnings for every result (a repaired store), set at Connect
	// disconnected and forks are the blocks that left the chain since the
	// last result, and where it was replaced.
	disconnected []chainhash.Hash
	forks        []string
	resumed      int32 // the height of the chain resumed from the store, or -1
	synced       bool  // a header sync has ended
	// verifiedTo is the highest filter header verified with the peers in
	// this life (every one below it too, through the checkpoints), and
	// lonely the heights among them only one of several peers stated;
	// alone those the only peer the client had stated, which stand until
	// another peer holds them.
	verifiedTo int32
	lonely     []OnePeer
	alone      []OnePeer
	// revised counts the times filter headers verified were given up to
	// be verified again (see giveUpVerified); rescans read it without
	// the operation lock.
	revised   atomic.Uint64
	revisions revisionLog // the heights each was given up from, for rescans
	// lateWords are peers' words that differed from the verified filter
	// headers (see lateAgree, unboundPrev, ownCheckpoint), held against
	// what they state when the heights are verified again (see
	// holdToWords, holdToCheckpoints).
	lateWords heldWords
	// conflicts are the disagreements about filters their blocks could
	// not decide.
	conflicts conflicts
	owns      ownHeaders // each peer's own filter headers near the tip (ownheaders.go)
	departed  departed   // the blocks that left the chain lately
	// ledger records what each peer was asked (ledger.go); it guards
	// itself.
	ledger *ledger
	// covers is the cover set of a client with a PrivacyTarget, opened
	// by its first scan (covers.go); guarded by opMu.
	covers *cover.Set
	svc    service   // Start's goroutines
	tip    tipSignal // the notification of a moved tip
	// pickLead, if set, picks the lead of a header sync round (see
	// leadGate) instead of pool.PickFast: for tests.
	pickLead func([]*pool.Member) *pool.Member
}

// Chain returns the client's verified header chain. It changes during
// SyncHeaders and scans; read it between them.
func (c *Client) Chain() *chain.Chain { return c.chain }

// timeout returns how long a request may take.
func (c *Client) timeout() time.Duration {
	if c.cfg.Timeout > 0 {
		return c.cfg.Timeout
	}
	return peer.DefaultTimeout
}

// reaching returns the live peers that offer service and hold the chain
// up to height.
func (c *Client) reaching(service wire.ServiceFlag, height int32) []*pool.Member {
	return slices.DeleteFunc(c.pool.Serving(service), func(m *pool.Member) bool { return c.views.tip(m) < height })
}

// reachOf returns the highest height up to to that m holds, or -1.
func (c *Client) reachOf(m *pool.Member, to int32) int32 { return min(c.views.tip(m), to) }

// conn returns m's connection for requests the ledger records; its
// requests of compact filters and blocks dial m again first when a
// request this client abandoned dropped the connection (see askingConn).
func (c *Client) conn(m *pool.Member) askingConn {
	a := c.connOver(c.pool.Conn(m), m)
	a.c, a.m = c, m
	return a
}

// connOver returns p, a connection to m's node, for requests the ledger
// records under m's address.
func (c *Client) connOver(p *peer.Peer, m *pool.Member) askingConn {
	return askingConn{Peer: p, l: c.ledger, chain: c.chain, addr: m.Addr()}
}

// heldByOne reports whether, of two or more live peers offering compact
// filters, only one holds the chain up to height.
func (c *Client) heldByOne(height int32) bool {
	ms := c.pool.Serving(wire.SFNodeCF)
	return len(ms) >= 2 && len(c.reaching(wire.SFNodeCF, height)) == 1
}

// noPeers builds the error of an operation that ran out of peers, an
// ErrNoPeers: with one peer that failed, that peer's own error (see
// noPeersError); with several, all of them.
func (c *Client) noPeers(op string) error {
	var errs []error
	for _, m := range c.pool.Members() {
		if err := c.pool.Status(m).Err; err != nil {
			errs = append(errs, err)
		}
	}
	switch len(errs) {
	case 0:
		return fmt.Errorf("client: %s: %w", op, ErrNoPeers)
	case 1:
		return &noPeersError{err: errs[0]}
	}
	return fmt.Errorf("client: %s: %w: %w", op, ErrNoPeers, pool.Errors(errs))
}

// blame decides what a peer's failed request means: a lie or a flood
// bans it, a stall or disconnect drops it. It reports whether the peer
// lied. Nobody is blamed while the chain cannot read its store: the
// requests were made from what it could not read; nor for a connection
// this client dropped itself, abandoning a request over it
// (peer.ErrAbandoned): the next request dials it again (see ready).
func (c *Client) blame(m *pool.Member, err error) bool {
	if c.chain.Err() != nil {
		return false
	}
	if errors.Is(err, peer.ErrAbandoned) && !isLie(err) {
		c.logf("%s: %v (dropped by this client, not the peer's doing)", m.Addr(), err)
		return false
	}
	if earnsBan(err) {
		c.pool.Ban(m, err)
		return isLie(err)
	}
	c.pool.Drop(m, err)
	return false
}

// earnsBan reports whether err, a peer's answer, earns the peer a ban:
// a proof of a lie (isLie), or a flood (see Client.blame).
func earnsBan(err error) bool { return isLie(err) || errors.Is(err, peer.ErrFlooding) }

// takeStoreNotes adds what the store repaired or set aside (at open, or
// since: a filter cache damaged while open) to the warnings of every
// result.
func (c *Client) takeStoreNotes() {
	if c.st == nil {
		return
	}
	for _, r := range c.st.Recovered() {
		if note := "chain state: " + r; !slices.Contains(c.notes, note) {
			c.notes = append(c.notes, note)
		}
	}
}

// bestHeld returns the highest height of the chain a live peer offering
// service holds, or -1.
func (c *Client) bestHeld(service wire.ServiceFlag) int32 {
	best := int32(-1)
	for _, m := range c.pool.Serving(service) {
		best = max(best, c.reachOf(m, c.chain.Height()))
	}
	return best
}

// service is what Start runs: its stop, the end of its goroutines, and
// the wake-ups of its header sync.
type service struct {
	mu   sync.Mutex
	stop context.CancelFunc // nil while it does not run
	done chan struct{}
	wake chan struct{} // a peer announced a block, or is back
	late lateClaims    // blocks peers announced once their filter headers were verified
}

func (s *service) init() { s.wake = make(chan struct{}, 1) }

// wakeUp wakes the service's header sync, if it sleeps.
func (s *service) wakeUp() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// started reports whether the service runs.
func (c *Client) started() bool {
	c.svc.mu.Lock()
	defer c.svc.mu.Unlock()
	return c.svc.stop != nil
}
