package client

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/pool"
	"github.com/spvfilter/spvfilter/peer/store"
)

// ErrIsolateWithoutProxy is Config.Isolate without Config.Proxy or
// Config.Dialer: connections of their own made directly all come from
// the client's address, which isolates nothing.
var ErrIsolateWithoutProxy = errors.New("client: Config.Isolate needs Config.Proxy or Config.Dialer: without a proxy every connection comes from the client's own address")

// openStore opens the chain state in cfg.DataDir and resumes the chain
// from it; without a DataDir the client keeps nothing.
func (c *Client) openStore() error {
	if c.cfg.DataDir == "" {
		return nil
	}
	opts := store.DefaultOptions()
	switch {
	case c.cfg.FilterCacheBytes > 0:
		opts.FilterCacheBytes = c.cfg.FilterCacheBytes
	case c.cfg.FilterCacheBytes < 0:
		opts.FilterCacheBytes = 0
	}
	st, err := store.OpenWith(c.cfg.DataDir, c.cfg.Params, opts)
	if err != nil {
		return fmt.Errorf("client: %w", err)
	}
	ch, err := st.Chain()
	if err != nil {
		st.Close()
		return fmt.Errorf("client: resuming the chain from %s: %w", st.Dir(), err)
	}
	c.st, c.chain, c.resumed = st, ch, ch.Height()
	l, note, err := openLedger(st.Dir(), c.cfg.Params.Name, time.Now())
	if err != nil {
		st.Close()
		c.st = nil
		return err
	}
	c.ledger = l
	if note != "" {
		c.notes = append(c.notes, note)
	}
	c.takeStoreNotes()
	c.logf("chain state %s: %d headers, filter headers to %d", st.Dir(), ch.Height(), st.FilterHeaderTip())
	return nil
}

// Connect dials every peer in cfg.Peers at once. Peers that cannot be
// reached are recorded in Peers; it fails only when none can.
func Connect(ctx context.Context, cfg Config) (*Client, error) {
	if cfg.Params == nil {
		return nil, errors.New("client: Config.Params is nil")
	}
	if len(cfg.Peers) == 0 && cfg.ConnectOnly {
		return nil, errors.New("client: ConnectOnly without peers")
	}
	if err := checkFetchSpread(cfg.FetchSpread); err != nil {
		return nil, err
	}
	if err := checkPrivacyTarget(cfg); err != nil {
		return nil, err
	}
	if cfg.Isolate && cfg.Proxy == "" && cfg.Dialer == nil {
		return nil, ErrIsolateWithoutProxy
	}
	if cfg.Services == 0 {
		cfg.Services = wire.SFNodeCF | wire.SFNodeWitness
	}
	if cfg.TargetPeers <= 0 {
		cfg.TargetPeers = DefaultTargetPeers
	}
	c := &Client{cfg: cfg, chain: chain.New(cfg.Params), mem: newMemCache(cfg.FilterCacheBytes), resumed: -1, verifiedTo: -1,
		ledger: &ledger{}}
	c.svc.init()
	dial := cfg.Dialer
	switch {
	case cfg.Proxy != "" && cfg.Dialer != nil:
		return nil, errors.New("client: Config.Proxy and Config.Dialer together: one makes every connection")
	case cfg.Dialer != nil:
	case cfg.Proxy != "":
		var err error
		if dial, err = peer.SOCKS5(cfg.Proxy); err != nil {
			return nil, fmt.Errorf("client: proxy: %w", err)
		}
	default:
		for _, addr := range cfg.Peers {
			if err := onionWithoutProxy(addr); err != nil {
				return nil, err
			}
		}
	}
	c.dial = dial
	if err := c.openStore(); err != nil {
		return nil, err
	}
	dir := ""
	if c.st != nil {
		dir = c.st.Dir()
	}
	p, notes, err := pool.New(pool.Config{Params: cfg.Params, Peers: cfg.Peers, ConnectOnly: cfg.ConnectOnly, Target: cfg.TargetPeers,
		Services: cfg.Services, Timeout: cfg.Timeout, Dial: dial, Resolver: cfg.Resolver, Dir: dir, Log: cfg.Log,
		OnHeaders: cfg.OnHeaders, OnAnnounce: c.announced, OnConnect: c.connected, OnLive: c.live})
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
	if len(c.pool.Serving(0)) == 0 {
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
		err := errors.Join(c.ledger.save(c.st.Dir(), c.cfg.Params.Name, true), c.st.Close())
		c.st = nil
		return err
	}
	return nil
}
