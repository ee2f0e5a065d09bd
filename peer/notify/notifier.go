package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/spvfilter/spvfilter/peer/client"
)

// DefaultReorgSafety is the depth after which a notification is final
// when Options.ReorgSafety is zero: 144 blocks, as lnd's.
const DefaultReorgSafety = 144

var (
	// ErrStopped is a registration on a notifier not started, or
	// stopped.
	ErrStopped = errors.New("notify: the notifier is not running")
	// ErrNumConfs is a number of confirmations outside 1..ReorgSafety.
	ErrNumConfs = errors.New("notify: number of confirmations out of range")
	// ErrNoScript is a registration without the output script: compact
	// filters hold scripts, so the script is how a block is found.
	ErrNoScript = errors.New("notify: an output script is needed")
)

// The notifier's bounds: a failed step of following the chain is retried
// after minRetry, the wait doubling up to maxRetry; at most
// maxHistoryWorkers history scans run at once.
const (
	minRetry          = 500 * time.Millisecond
	maxRetry          = 10 * time.Second
	maxHistoryWorkers = 4
)

// Options say how a notifier runs.
type Options struct {
	// ReorgSafety is the depth after which a notification is final:
	// the registration is then over (Done). Zero means
	// DefaultReorgSafety.
	ReorgSafety uint32
	// PollInterval is how often the rescan asks the peers for headers
	// when the client runs without its service (client.Start); zero
	// means one second.
	PollInterval time.Duration
	// MaxReaderWait bounds how long a notification waits for its
	// registration's reader: a reader that lets one wait longer has its
	// registration cancelled (see StallError). Zero means
	// DefaultMaxReaderWait.
	MaxReaderWait time.Duration
	// Log, if not nil, receives a line for each registration cancelled
	// because its reader lagged too far behind, each failed step of
	// following the chain and each failed history scan (both retried).
	Log io.Writer
}

// Notifier tells of confirmations, spends and blocks, as lnd's chain
// notifier does. Its methods may be called from any goroutine.
type Notifier struct {
	c   *client.Client
	opt Options

	mu      sync.Mutex
	r       *client.Rescan // the rescan following the chain
	ctx     context.Context
	cancel  context.CancelFunc
	ended   chan struct{} // closed when the notifier stops following the chain
	started bool
	running bool
	lastErr error // the last failed step, until a block is reported again
	// failingSince is when the steps began to fail, while lastErr is
	// set; behindSince when the client's chain was first seen holding a
	// block the rescan had not reported, while it is so (see watchChain).
	failingSince, behindSince time.Time
	view                      view
	items                     []client.WatchItem // the rescan's watch list, in order
	applied                   struct {           // the items a rescan is known to have applied
		r     *client.Rescan
		items int // the first items
	}
	pending []client.Match // the matches of the block about to be connected
	depth   int32          // blocks disconnected by the reorganization under way
	confs   map[*confReg]bool
	spends  map[*spendReg]bool
	epochs  map[*epochReg]bool
	compact context.CancelFunc // ends the rescan, to drop the items of registrations over
	jobs    []*historyJob      // history scans waiting for a worker
	// scanning are the history scans a worker runs.
	scanning map[*historyJob]bool
	// unsure are the history scans whose last result rested on one
	// peer, kept to be scanned again once another holds their blocks.
	unsure map[*historyJob]unsureScan
	// scanned are the history scans done, kept to be scanned again if
	// the filter headers they rested on are given up (requeueRevised)
	// until their registrations end.
	scanned map[*historyJob]bool
	workers int // history workers running
	wg      sync.WaitGroup
}

// New prepares a notifier over c, which may be started (client.Start) or
// not; Start runs it.
func New(c *client.Client, opt Options) *Notifier {
	if opt.ReorgSafety == 0 {
		opt.ReorgSafety = DefaultReorgSafety
	}
	return &Notifier{c: c, opt: opt, confs: map[*confReg]bool{}, spends: map[*spendReg]bool{}, epochs: map[*epochReg]bool{},
		scanning: map[*historyJob]bool{}, unsure: map[*historyJob]unsureScan{}, scanned: map[*historyJob]bool{}}
}

// Start follows the chain from ReorgSafety blocks below the peers' tip,
// with a rescan of the client, until Stop or ctx ends. It first waits for
// the client's headers to be synced (client.BestBlock), so that a
// notifier started with the client does not scan from genesis; it
// returns once the rescan runs: a registration made then finds what
// happened before it from its height hint.
func (n *Notifier) Start(ctx context.Context) error {
	n.mu.Lock()
	if n.started {
		n.mu.Unlock()
		return errors.New("notify: started already")
	}
	n.started = true
	n.mu.Unlock()
	best, err := n.c.BestBlock(ctx)
	if err != nil {
		n.mu.Lock()
		n.started = false
		n.mu.Unlock()
		return fmt.Errorf("notify: the best block to start from: %w", err)
	}
	from := max(0, best.Height-int32(n.opt.ReorgSafety))
	n.mu.Lock()
	defer n.mu.Unlock()
	n.ctx, n.cancel = context.WithCancel(ctx)
	n.view = view{base: from}
	n.r = n.newRescanLocked(from)
	n.ended = make(chan struct{})
	n.running = true
	go n.run(n.ctx)
	n.wg.Add(1)
	go n.watchChain(n.ctx)
	return nil
}

// newRescanLocked returns a following rescan from height from, watching
// the items of the live registrations (each spend registration told its
// item's new index: it reads its spends by it). Called with mu held.
func (n *Notifier) newRescanLocked(from int32) *client.Rescan {
	var idxs []*int // the registrations' indexes of their items
	for r := range n.confs {
		idxs = append(idxs, &r.idx)
	}
	for r := range n.spends {
		idxs = append(idxs, &r.idx)
	}
	slices.SortFunc(idxs, func(a, b *int) int { return *a - *b })
	items := make([]client.WatchItem, 0, len(idxs))
	for _, idx := range idxs {
		items = append(items, n.items[*idx])
		*idx = len(items) - 1
	}
	n.items = items
	return n.c.NewRescan(client.RescanOptions{Watch: slices.Clone(items), From: from, Follow: true,
		PollInterval: n.opt.PollInterval, OnEvent: n.onEvent})
}

// run follows the chain until ctx ends: a rescan that fails is followed,
// after a bounded backoff, by a new one from the last block reported, so
// that registrations outlive a peer that stalls; when ctx ends, every
// registration is cancelled.
func (n *Notifier) run(ctx context.Context) {
	defer close(n.ended)
	wait := minRetry
	for {
		r, compacted, err := n.runRescan(ctx)
		if ctx.Err() != nil {
			break
		}
		if !compacted {
			wait = n.failed(r, err, wait)
			select {
			case <-ctx.Done():
			case <-time.After(wait):
			}
			if ctx.Err() != nil {
				break
			}
			wait = min(2*wait, maxRetry)
		}
		n.mu.Lock()
		n.r = n.newRescanLocked(n.resumeLocked())
		n.mu.Unlock()
	}
	n.mu.Lock()
	n.running = false
	n.mu.Unlock()
	n.cancelAll()
}

// runRescan runs the current rescan until it ends: with its error, or
// compacted when droppedLocked ended it to drop the items of
// registrations over.
func (n *Notifier) runRescan(ctx context.Context) (r *client.Rescan, compacted bool, err error) {
	rctx, rcancel := context.WithCancel(ctx)
	defer rcancel()
	n.mu.Lock()
	r = n.r
	n.compact = rcancel
	n.mu.Unlock()
	err = r.Run(rctx)
	return r, ctx.Err() == nil && rctx.Err() != nil, err
}

// failed records that rescan r ended with err (nil: it ended without
// one) and returns how long to wait before the next: minRetry if it had
// recovered since the last failure, wait otherwise.
func (n *Notifier) failed(r *client.Rescan, err error, wait time.Duration) time.Duration {
	if err == nil {
		err = errors.New("the rescan ended")
	}
	n.mu.Lock()
	if n.lastErr == nil {
		wait = minRetry // it had recovered since the last failure
		n.failingSince = time.Now()
	}
	n.lastErr = fmt.Errorf("notify: following the chain from height %d: %w", r.Height(), err)
	n.mu.Unlock()
	n.logf("%v (again in %v)", err, wait)
	return wait
}

// maxDead is how many items of registrations over the watch list may keep
// before a new rescan drops them (when they outnumber the live ones too).
const maxDead = 64

// dropped counts an item of a registration over, and ends the rescan
// (run follows it with one without the items of registrations over) once
// they are more than maxDead and than the live ones. Called with mu held.
func (n *Notifier) droppedLocked() {
	live := len(n.confs) + len(n.spends)
	if dead := len(n.items) - live; dead > maxDead && dead > live && n.compact != nil {
		n.compact()
		n.compact = nil
	}
}

// resumeLocked returns the height a new rescan resumes from: above the
// last block reported that the client's chain still holds. The blocks
// reported above it left the chain while no rescan ran: they are told
// disconnected first. Called with mu held.
func (n *Notifier) resumeLocked() int32 {
	for h := n.view.tip(); h >= n.view.base; h-- {
		hash := n.view.hashes[h-n.view.base]
		if n.c.Chain().Hash(h) == hash {
			break
		}
		n.handleLocked(client.Event{Kind: client.EventDisconnected, Height: h, BlockHash: hash})
	}
	n.pending = nil
	return n.view.tip() + 1
}

// Stop cancels every registration (their channels are closed) and stops
// following the chain. It returns the error of the last failed step of
// following the chain if no block was reported since.
func (n *Notifier) Stop() error {
	n.mu.Lock()
	cancel, ended := n.cancel, n.ended
	n.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-ended
	n.wg.Wait()
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lastErr
}

// Err returns the error of the last failed step of following the chain
// (a stalled or missing peer) while no block was reported since: the
// notifier retries from the last block reported, with a bounded backoff,
// and its registrations stay; nil while it follows.
func (n *Notifier) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.lastErr
}

// cancelAll cancels every registration.
func (n *Notifier) cancelAll() {
	n.mu.Lock()
	var cancels []func()
	for r := range n.confs {
		cancels = append(cancels, r.cancel)
	}
	for r := range n.spends {
		cancels = append(cancels, r.cancel)
	}
	for r := range n.epochs {
		cancels = append(cancels, r.cancel)
	}
	n.mu.Unlock()
	for _, c := range cancels {
		c()
	}
}

// dropConf, dropSpend and dropEpoch forget a registration cancelled or
// over, and end its history scan.
func (n *Notifier) dropConf(r *confReg) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.confs, r)
	if r.stopHistory != nil {
		r.stopHistory()
	}
	n.droppedLocked()
}

func (n *Notifier) dropSpend(r *spendReg) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.spends, r)
	if r.stopHistory != nil {
		r.stopHistory()
	}
	n.droppedLocked()
}

func (n *Notifier) dropEpoch(r *epochReg) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.epochs, r)
}

// delivery is how the registrations' notifications reach their readers.
func (n *Notifier) delivery() delivery { return delivery{maxWait: n.opt.MaxReaderWait, logf: n.logf} }

func (n *Notifier) logf(format string, args ...any) {
	if n.opt.Log != nil {
		fmt.Fprintf(n.opt.Log, format+"\n", args...)
	}
}

// onEvent takes the rescan's events, in order, from its goroutine.
func (n *Notifier) onEvent(e client.Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.handleLocked(e)
}

// handleLocked takes an event of the chain. Called with mu held.
func (n *Notifier) handleLocked(e client.Event) {
	switch e.Kind {
	case client.EventMatch:
		n.pending = append(n.pending, *e.Match)
	case client.EventConnected:
		n.depth = 0
		n.lastErr = nil
		n.view.connect(e.Height, e.BlockHash, int32(n.opt.ReorgSafety))
		n.applyLocked(e.OnePeer)
	case client.EventRechecked:
		// A block told already, scanned again once another peer held
		// it: the matches before this event are what its first scan
		// missed (a liar's filter left them out).
		n.applyLocked(e.OnePeer)
	case client.EventDisconnected:
		n.pending = nil
		n.depth++
		n.view.disconnect(e.Height)
		for r := range n.confs {
			r.disconnected(e.BlockHash, n.depth)
		}
		for r := range n.spends {
			r.disconnected(e.BlockHash)
		}
	}
}

// applyLocked tells the registrations the pending matches, which rest on
// onePeer if it is set, and advances them to the tip. Called with mu
// held.
func (n *Notifier) applyLocked(onePeer string) {
	matches := n.pending
	n.pending = nil
	tip := n.view.tip()
	for r := range n.confs {
		for _, m := range matches {
			r.seen(m, onePeer)
		}
		if r.advance(tip) {
			delete(n.confs, r)
		}
	}
	for r := range n.spends {
		for _, m := range matches {
			r.seen(m, r.idx, onePeer)
		}
		if r.advance(tip) {
			delete(n.spends, r)
		}
	}
}
