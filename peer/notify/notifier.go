package notify

import (
	"context"
	"errors"
	"fmt"
	"io"
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
	// Log, if not nil, receives a line for each registration cancelled
	// because its reader lagged too far behind.
	Log io.Writer
}

// Notifier tells of confirmations, spends and blocks, as lnd's chain
// notifier does. Its methods may be called from any goroutine.
type Notifier struct {
	c   *client.Client
	opt Options

	regMu sync.Mutex // one registration at a time: watch list indexes

	mu      sync.Mutex
	r       *client.Rescan
	ctx     context.Context
	cancel  context.CancelFunc
	ended   chan struct{} // closed when the rescan's Run returns
	runErr  error
	running bool
	view    view
	items   int            // watch items added to the rescan
	pending []client.Match // the matches of the block about to be connected
	depth   int32          // blocks disconnected by the reorganization under way
	confs   map[*confReg]bool
	spends  map[*spendReg]bool
	epochs  map[*epochReg]bool
}

// New prepares a notifier over c, which may be started (client.Start) or
// not; Start runs it.
func New(c *client.Client, opt Options) *Notifier {
	if opt.ReorgSafety == 0 {
		opt.ReorgSafety = DefaultReorgSafety
	}
	return &Notifier{c: c, opt: opt, confs: map[*confReg]bool{}, spends: map[*spendReg]bool{}, epochs: map[*epochReg]bool{}}
}

// Start follows the chain from ReorgSafety blocks below the tip, with a
// rescan of the client, until Stop or ctx ends. It returns once the
// rescan runs: a registration made then finds what happened before it
// from its height hint.
func (n *Notifier) Start(ctx context.Context) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.running || n.ended != nil {
		return errors.New("notify: started already")
	}
	from := max(0, n.c.Chain().Height()-int32(n.opt.ReorgSafety))
	n.ctx, n.cancel = context.WithCancel(ctx)
	n.view = view{base: from}
	n.r = n.c.NewRescan(client.RescanOptions{From: from, Follow: true, PollInterval: n.opt.PollInterval, OnEvent: n.onEvent})
	n.ended = make(chan struct{})
	n.running = true
	go n.run(n.ctx)
	return nil
}

// run runs the rescan; when it ends, every registration is cancelled.
func (n *Notifier) run(ctx context.Context) {
	err := n.r.Run(ctx)
	n.mu.Lock()
	n.runErr, n.running = err, false
	n.mu.Unlock()
	if err != nil {
		n.logf("notify: the chain is no longer followed: %v", err)
	}
	n.cancelAll()
	close(n.ended)
}

// Stop cancels every registration (their channels are closed) and stops
// following the chain. It returns the error that ended the rescan, if
// one did before.
func (n *Notifier) Stop() error {
	n.mu.Lock()
	cancel, ended := n.cancel, n.ended
	n.mu.Unlock()
	if cancel == nil {
		return nil
	}
	cancel()
	<-ended
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.runErr
}

// Err returns why the notifier stopped following the chain, nil while it
// runs or after Stop.
func (n *Notifier) Err() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.runErr
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
// over.
func (n *Notifier) dropConf(r *confReg) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.confs, r)
}

func (n *Notifier) dropSpend(r *spendReg) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.spends, r)
}

func (n *Notifier) dropEpoch(r *epochReg) {
	n.mu.Lock()
	defer n.mu.Unlock()
	delete(n.epochs, r)
}

func (n *Notifier) logf(format string, args ...any) {
	if n.opt.Log != nil {
		fmt.Fprintf(n.opt.Log, format+"\n", args...)
	}
}

// onEvent takes the rescan's events, in order, from its goroutine.
func (n *Notifier) onEvent(e client.Event) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch e.Kind {
	case client.EventMatch:
		n.pending = append(n.pending, *e.Match)
	case client.EventConnected:
		n.depth = 0
		n.view.connect(e.Height, e.BlockHash, int32(n.opt.ReorgSafety))
		matches := n.pending
		n.pending = nil
		tip := n.view.tip()
		for r := range n.confs {
			for _, m := range matches {
				r.seen(m, e.OnePeer)
			}
			if r.advance(tip) {
				delete(n.confs, r)
			}
		}
		for r := range n.spends {
			for _, m := range matches {
				r.seen(m, r.idx, e.OnePeer)
			}
			if r.advance(tip) {
				delete(n.spends, r)
			}
		}
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

// watch adds item to the rescan and scans the history below what the
// rescan scans with it, from hint, giving each match on the chain to
// found. Called with regMu held.
func (n *Notifier) watch(item client.WatchItem, hint uint32, found func(m client.Match, tip int32)) error {
	n.mu.Lock()
	r, ctx, running := n.r, n.ctx, n.running
	n.mu.Unlock()
	if !running {
		return ErrStopped
	}
	err := r.UpdateWait(ctx, []client.WatchItem{item}, -1)
	// The item is queued even when the wait fails: the indexes of the
	// items after it count it.
	n.mu.Lock()
	n.items++
	n.mu.Unlock()
	if err != nil {
		if errors.Is(err, client.ErrRescanEnded) || ctx.Err() != nil {
			return ErrStopped
		}
		return fmt.Errorf("notify: %w", err)
	}
	to := r.Height() - 1
	if int32(hint) > to {
		return nil
	}
	res, err := n.c.ScanBIP157(ctx, client.ScanRequest{Watch: []client.WatchItem{item}, From: int32(hint), To: to})
	if err != nil {
		if ctx.Err() != nil {
			return ErrStopped
		}
		return fmt.Errorf("notify: the history from height %d: %w", hint, err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, m := range res.Matches {
		if !m.FalsePositive && n.view.holds(n.c, m.Height, m.BlockHash) {
			found(m, n.view.tip())
		}
	}
	return nil
}
