package btcwallet

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/chain"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/wtxmgr"
	"github.com/spvfilter/spvfilter/peer/client"
)

// Name is the name BackEnd returns.
const Name = "spvfilter"

// DefaultTimeout bounds, by default, each call of the wallet that waits
// for the network: GetBlock, FilterBlocks and SendRawTransaction.
const DefaultTimeout = 2 * time.Minute

// DefaultQueueSize is how many notifications, by default, wait for the
// wallet to take them before the rescan pauses.
const DefaultQueueSize = 1024

// ErrStopped: a call to a backend that Stop has stopped, or that was never
// started.
var ErrStopped = errors.New("btcwallet: the backend is not running")

// Config says how a Backend behaves; the zero Config is ready to use.
type Config struct {
	// Timeout bounds each call of the wallet that waits for the network;
	// zero means DefaultTimeout.
	Timeout time.Duration
	// QueueSize bounds the notifications waiting for the wallet; zero
	// means DefaultQueueSize. A full queue pauses the rescan, never the
	// wallet.
	QueueSize int
	// Log, if set, receives one line per notable event: a rescan that
	// failed and resumes, a warning of a scan or a broadcast.
	Log io.Writer
}

// Backend is a chain backend for btcwallet (chain.Interface) over a
// started spvfilter client; see the package documentation. A Backend
// serves one life of a wallet: Start, then Stop; the client it uses may
// serve other backends and goes on after Stop.
type Backend struct {
	c      *client.Client
	cfg    Config
	params *chaincfg.Params

	// ctx ends at Stop; every goroutine and call of the backend runs
	// under it.
	ctx    context.Context
	cancel context.CancelFunc
	// queue holds the notifications on their way to the wallet; the
	// relay passes them on to out, which Notifications returns.
	queue chan interface{}
	out   chan interface{}
	wg    sync.WaitGroup

	// subMu serializes Rescan, NotifyReceived and NotifyBlocks, which
	// replace or extend the subscription.
	subMu sync.Mutex

	mu      sync.Mutex
	started bool
	stopped bool
	sub     *subscription       // the running rescan, nil if none
	stamp   waddrmgr.BlockStamp // the last BlockConnected the wallet took
	recent  *recentHeaders      // headers of the blocks reported connected
	window  headerWindow        // the headers GetBlockHash read last
	order   disconnectionOrder  // how a reorganization is announced

	unmined *unmined // the wallet's transactions sent again at each block
}

// New returns a backend over c, a client that runs as a service
// (client.Connect, then Client.Start), for one wallet.
func New(c *client.Client, cfg Config) *Backend {
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.QueueSize <= 0 {
		cfg.QueueSize = DefaultQueueSize
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Backend{
		c: c, cfg: cfg, params: c.Chain().Params(), ctx: ctx, cancel: cancel,
		queue: make(chan interface{}, cfg.QueueSize), out: make(chan interface{}),
		recent: newRecentHeaders(recentDepth), order: lowestFirst, unmined: newUnmined(),
	}
}

// A compile-time check that Backend is a btcwallet chain backend.
var _ chain.Interface = (*Backend)(nil)

// Start starts the delivery of notifications, ClientConnected first. It
// is to be called once, before the backend is given to the wallet
// (Wallet.SynchronizeRPC).
func (b *Backend) Start() error {
	if b.isStopped() {
		return ErrStopped
	}
	best, err := b.bestBlock()
	if err != nil {
		if b.isStopped() {
			return ErrStopped // Stop ended the wait
		}
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return ErrStopped
	}
	if b.started {
		return nil
	}
	b.started = true
	b.stamp = waddrmgr.BlockStamp{Height: best.Height, Hash: best.Hash, Timestamp: best.Header.Timestamp}
	b.queue <- chain.ClientConnected{} // the queue is empty: this never blocks
	b.wg.Add(2)
	go b.relay()
	go b.rebroadcast()
	return nil
}

// relay passes the queued notifications on to the wallet, one at a time,
// and keeps the last BlockConnected the wallet took for BlockStamp. It
// closes the wallet's channel when the backend stops.
func (b *Backend) relay() {
	defer b.wg.Done()
	defer close(b.out)
	for {
		var n interface{}
		select {
		case n = <-b.queue:
		case <-b.ctx.Done():
			return
		}
		select {
		case b.out <- n:
		case <-b.ctx.Done():
			return
		}
		if bc, ok := n.(chain.BlockConnected); ok {
			b.mu.Lock()
			b.stamp = waddrmgr.BlockStamp{Height: bc.Height, Hash: bc.Hash, Timestamp: bc.Time}
			b.mu.Unlock()
		}
	}
}

// Stop ends the rescan and the delivery of notifications, and closes the
// channel Notifications returns. It does not wait (see WaitForShutdown)
// and leaves the client running.
func (b *Backend) Stop() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		return
	}
	b.stopped = true
	b.sub = nil
	b.cancel()
	if !b.started {
		close(b.out)
	}
}

// WaitForShutdown waits until the goroutines Stop ended have returned.
func (b *Backend) WaitForShutdown() { b.wg.Wait() }

// Notifications returns the channel of the wallet's notifications; it is
// the same channel on every call, closed after Stop.
func (b *Backend) Notifications() <-chan interface{} { return b.out }

// BackEnd returns Name.
func (b *Backend) BackEnd() string { return Name }

// isStopped reports whether Stop was called.
func (b *Backend) isStopped() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.stopped
}

// running returns ErrStopped unless the backend runs.
func (b *Backend) running() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.started || b.stopped {
		return ErrStopped
	}
	return nil
}

// callContext returns the context of a call that waits for the network:
// bounded by Config.Timeout, ended by Stop.
func (b *Backend) callContext() (context.Context, context.CancelFunc) {
	return context.WithTimeout(b.ctx, b.cfg.Timeout)
}

func (b *Backend) logf(format string, args ...any) {
	if b.cfg.Log != nil {
		fmt.Fprintf(b.cfg.Log, "btcwallet backend: "+format+"\n", args...)
	}
}

// GetBestBlock returns the highest block of the client's verified chain
// that a connected peer holds.
func (b *Backend) GetBestBlock() (*chainhash.Hash, int32, error) {
	best, err := b.bestBlock()
	if err != nil {
		return nil, 0, err
	}
	return &best.Hash, best.Height, nil
}

// bestBlock returns the client's best block, once it is synced with its
// peers (within the call's timeout).
func (b *Backend) bestBlock() (client.Stamp, error) {
	ctx, cancel := b.callContext()
	defer cancel()
	best, err := b.c.BestBlock(ctx)
	if err != nil {
		return client.Stamp{}, fmt.Errorf("btcwallet: %w", err)
	}
	return best, nil
}

// GetBlockHash returns the hash of the block at height in the client's
// verified chain.
func (b *Backend) GetBlockHash(height int64) (*chainhash.Hash, error) {
	if height < 0 || height > math.MaxInt32 {
		return nil, fmt.Errorf("btcwallet: no block at height %d: %w", height, client.ErrUnknownBlock)
	}
	hash, err := b.window.hash(b.c.Chain(), int32(height))
	if err != nil {
		return nil, err
	}
	return &hash, nil
}

// GetBlockHeader returns the header of the block with the given hash: a
// block of the client's chain, or one of the last blocks the backend
// reported connected that a reorganization has since disconnected.
func (b *Backend) GetBlockHeader(hash *chainhash.Hash) (*wire.BlockHeader, error) {
	ch := b.c.Chain()
	if hdr, ok := b.window.header(ch, *hash); ok {
		return &hdr, nil
	}
	if h, ok := ch.HeightOf(*hash); ok {
		if hdr := ch.Header(h); hdr.BlockHash() == *hash {
			return &hdr, nil
		}
	}
	if hdr, ok := b.recent.header(*hash); ok {
		return &hdr, nil
	}
	return nil, fmt.Errorf("btcwallet: header of block %v: %w", hash, client.ErrUnknownBlock)
}

// GetBlock returns the block with the given hash, checked against its
// header (Client.GetBlock).
func (b *Backend) GetBlock(hash *chainhash.Hash) (*wire.MsgBlock, error) {
	ctx, cancel := b.callContext()
	defer cancel()
	block, err := b.c.GetBlock(ctx, *hash)
	if err != nil {
		return nil, fmt.Errorf("btcwallet: %w", err)
	}
	return block, nil
}

// IsCurrent reports whether the client is caught up with its peers
// (Client.IsCurrent).
func (b *Backend) IsCurrent() bool { return b.c.IsCurrent() }

// BlockStamp returns the last block connected that the wallet has taken
// from the notifications (the client's best block before the first), so
// that it never runs ahead of the wallet.
func (b *Backend) BlockStamp() (*waddrmgr.BlockStamp, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.started || b.stopped {
		return nil, ErrStopped
	}
	bs := b.stamp
	return &bs, nil
}

// blockMeta is the wallet's description of a block.
func blockMeta(height int32, hash chainhash.Hash, t time.Time) wtxmgr.BlockMeta {
	return wtxmgr.BlockMeta{Block: wtxmgr.Block{Hash: hash, Height: height}, Time: t}
}
