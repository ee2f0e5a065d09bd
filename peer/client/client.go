package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
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
const DefaultTargetPeers = pool.DefaultTarget

// Client holds connections to several peers and one header chain. Its
// methods are safe for concurrent use; operations that change the chain
// (header syncs, verifications, scans) run one at a time.
type Client struct {
	cfg   Config
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
	// lonely the heights among them only one of several peers stated.
	verifiedTo int32
	lonely     []OnePeer
	// conflicts are the disagreements about filters their blocks could
	// not decide, by height; storeConflicts the differences with the
	// stored filter headers that the blocks could not decide (see
	// settleStored), until a scan of their heights reports them.
	conflicts      map[int32]*conflict
	storeConflicts []Conflict
	svc            service   // Start's goroutines
	tip            tipSignal // the notification of a moved tip
}

// Branch is a peer's chain where it leaves the client's: the peer holds
// the client's chain up to Fork, then blocks of its own up to Height.
type Branch struct {
	Fork   int32
	Height int32
	Hash   chainhash.Hash
}

// ErrNoPeers: no peer is left to ask; the error wraps what happened to
// each.
var ErrNoPeers = pool.ErrNoPeers

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
	c := &Client{cfg: cfg, chain: chain.New(cfg.Params), mem: newMemCache(cfg.FilterCacheBytes), resumed: -1, verifiedTo: -1}
	c.svc.init()
	var dial peer.DialFunc
	if cfg.Proxy != "" {
		var err error
		if dial, err = peer.SOCKS5(cfg.Proxy); err != nil {
			return nil, fmt.Errorf("client: proxy: %w", err)
		}
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
	dir := ""
	if c.st != nil {
		dir = c.st.Dir()
	}
	p, notes, err := pool.New(pool.Config{Params: cfg.Params, Peers: cfg.Peers, ConnectOnly: cfg.ConnectOnly, Target: cfg.TargetPeers,
		Services: cfg.Services, Timeout: cfg.Timeout, Dial: dial, Resolver: cfg.Resolver, Dir: dir, Log: cfg.Log,
		OnHeaders: cfg.OnHeaders, OnAnnounce: c.announced, OnRedial: c.redialled})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("client: %w", err)
	}
	c.pool = p
	for _, n := range notes {
		c.notes = append(c.notes, "chain state: "+n)
	}
	found := c.pool.Connect(ctx)
	if err := ctx.Err(); err != nil {
		c.Close()
		return nil, err
	}
	if len(c.pool.Live()) == 0 {
		err := c.noPeers("connect")
		if len(found) > 0 {
			err = fmt.Errorf("%w; finding peers: %w", err, pool.Errors(found))
		}
		c.Close()
		return nil, err
	}
	return c, nil
}

// Close stops the service (see Start), disconnects from every peer and
// closes the chain state.
func (c *Client) Close() error {
	c.stopService()
	if c.pool != nil {
		c.pool.Close()
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

// heldByOne reports whether, of two or more live peers offering compact
// filters, only one holds the chain up to height.
func (c *Client) heldByOne(height int32) bool {
	ms := c.pool.Serving(wire.SFNodeCF)
	return len(ms) >= 2 && len(c.reaching(wire.SFNodeCF, height)) == 1
}

// noPeers builds the error of an operation that ran out of peers: with one
// peer, that peer's own error; with several, all of them.
func (c *Client) noPeers(op string) error {
	errs := c.pool.Failed()
	switch len(errs) {
	case 0:
		return fmt.Errorf("client: %s: %w", op, ErrNoPeers)
	case 1:
		return errs[0]
	}
	return fmt.Errorf("client: %s: %w: %w", op, ErrNoPeers, pool.Errors(errs))
}

// blame decides what a peer's failed request means: a lie or a flood
// bans it, a stall or disconnect drops it. It reports whether the peer
// lied. Nobody is blamed while the chain cannot read its store: the
// requests were made from what it could not read.
func (c *Client) blame(m *pool.Member, err error) bool {
	if c.chain.Err() != nil {
		return false
	}
	if isLie(err) || errors.Is(err, peer.ErrFlooding) {
		c.pool.Ban(m, err)
		return isLie(err)
	}
	c.pool.Drop(m, err)
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
