package notify

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// DefaultMaxReaderWait is how long a notification waits for its reader
// when Options.MaxReaderWait is zero.
const DefaultMaxReaderWait = time.Minute

// StallKind says what held a notification up.
type StallKind int

const (
	// StallReader: the registration's reader has not taken a
	// notification waiting for it (or let maxPending of them pile up).
	StallReader StallKind = iota + 1
	// StallHistory: the registration's history scan (the blocks from
	// its height hint up to where the rescan watches it) has not
	// completed: it failed and is retried (a peer that stalls its
	// filters, none left), or waits for a worker behind others that do.
	StallHistory
	// StallChain: the rescan following the chain fails, or has not
	// reported blocks the client's chain holds (every registration waits
	// for it): Err is its last failure, or says how far it is behind.
	StallChain
)

func (k StallKind) String() string {
	switch k {
	case StallReader:
		return "reader"
	case StallHistory:
		return "history"
	case StallChain:
		return "chain"
	}
	return fmt.Sprintf("StallKind(%d)", int(k))
}

// The Err of a history scan under way that has not failed: what it waits
// for.
var (
	errHistoryQueued   = fmt.Errorf("waiting for one of the %d history workers", maxHistoryWorkers)
	errHistoryAwaiting = errors.New("waiting for the rescan to watch the item (its step under way has not ended)")
	errHistoryScanning = errors.New("scanning")
	errHistoryOnePeer  = errors.New("its last scan rested on one peer while others were set aside: scanning again for peers to cross-check it")
)

// StallError is a notification held up: which registration, by what,
// and since when. Notifier.Stalls lists those under way; the Err of a
// registration's event returns one when its reader stalled it past the
// bounds (Options.MaxReaderWait, maxPending notifications) and it was
// cancelled. Test with errors.As.
type StallError struct {
	// Registration names the registration: what it watches ("" for
	// StallChain, which holds every registration up).
	Registration string
	Kind         StallKind
	// Since is when the notification began to wait for the reader
	// (StallReader), when the history scan was queued (StallHistory),
	// or when the rescan began to fail or fell behind the client's chain
	// (StallChain); At is when the stall was seen (listed, or its
	// registration cancelled).
	Since, At time.Time
	// Pending is how many notifications waited for the reader.
	Pending int
	// Err is what the history scan waits for, or its last failure
	// (StallHistory); the rescan's last failure (StallChain).
	Err error
}

func (e *StallError) Error() string {
	held := e.At.Sub(e.Since).Round(time.Millisecond)
	since := e.Since.UTC().Format("15:04:05.000")
	switch e.Kind {
	case StallReader:
		return fmt.Sprintf("notify: %s: its reader has not taken a notification since %s UTC (%v; %d waiting)", e.Registration, since, held, e.Pending)
	case StallHistory:
		return fmt.Sprintf("notify: %s: its history scan has not completed since %s UTC (%v): %v", e.Registration, since, held, e.Err)
	case StallChain:
		return fmt.Sprintf("notify: following the chain stalled since %s UTC (%v), every registration waits: %v", since, held, e.Err)
	}
	return fmt.Sprintf("notify: %s: stalled (%v) since %s UTC", e.Registration, e.Kind, since)
}

// Unwrap returns the history scan's last failure, if any.
func (e *StallError) Unwrap() error { return e.Err }

// Stalls lists the notifications held up now for longer than d: a
// registration whose reader has not taken a notification (a block epoch
// registration's too, whose reader delays only its own epochs, and which
// is not cancelled), a history scan not completed (Err says what it waits
// for, or its last failure, retried), and the rescan following the chain
// while it fails (as Err says). A reader of confirmations or spends held
// past Options.MaxReaderWait has its registration cancelled (its event's
// Err says so) and is no longer listed.
func (n *Notifier) Stalls(d time.Duration) []*StallError {
	n.mu.Lock()
	defer n.mu.Unlock()
	var out []*StallError
	now := time.Now()
	add := func(e *StallError) {
		if e != nil && now.Sub(e.Since) > d {
			e.At = now
			out = append(out, e)
		}
	}
	add(n.chainStallLocked())
	for r := range n.confs {
		add(r.box.held())
	}
	for r := range n.spends {
		add(r.box.held())
	}
	for r := range n.epochs {
		add(r.held())
	}
	for _, j := range n.jobs {
		if j.ctx.Err() == nil {
			add(&StallError{Registration: j.name, Kind: StallHistory, Since: j.since, Err: errHistoryQueued})
		}
	}
	for j := range n.scanning {
		add(&StallError{Registration: j.name, Kind: StallHistory, Since: j.since, Err: j.err})
	}
	return out
}

// asError returns e as an error: nil for a nil e.
func (e *StallError) asError() error {
	if e == nil {
		return nil
	}
	return e
}

// chainCheck is how often watchChain compares the client's chain with
// what the rescan reported.
const chainCheck = 250 * time.Millisecond

// watchChain notes, until ctx ends, since when the client's chain has
// held a block the rescan has not reported (a rescan whose step waits
// for a peer, or fails), for Stalls; and queues again the history scans
// that rested on one peer once another holds their blocks
// (requeueUnsure), and those whose filter headers were verified anew
// (requeueRevised).
func (n *Notifier) watchChain(ctx context.Context) {
	defer n.wg.Done()
	tick := time.NewTicker(chainCheck)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		height := n.c.Chain().Height()
		n.mu.Lock()
		switch behind := height > n.view.tip(); {
		case behind && n.behindSince.IsZero():
			n.behindSince = time.Now()
		case !behind:
			n.behindSince = time.Time{}
		}
		unsure := len(n.unsure) > 0
		n.mu.Unlock()
		if unsure {
			n.requeueUnsure(n.c.Peers())
		}
		n.requeueRevised()
	}
}

// chainStallLocked returns the stall of the rescan following the chain:
// failing, or behind the client's chain, since the earlier of the two;
// nil if neither. Called with mu held.
func (n *Notifier) chainStallLocked() *StallError {
	var since time.Time
	err := n.lastErr
	if err != nil {
		since = n.failingSince
	}
	if !n.behindSince.IsZero() && (since.IsZero() || n.behindSince.Before(since)) {
		since = n.behindSince
		if err == nil {
			err = fmt.Errorf("the client's chain holds blocks above %d, the last the rescan reported", n.view.tip())
		}
	}
	if since.IsZero() {
		return nil
	}
	return &StallError{Kind: StallChain, Since: since, Err: err}
}
