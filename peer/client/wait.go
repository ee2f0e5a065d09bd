package client

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/wire"
)

// SyncWaitError is a query that gave up waiting for the client to sync
// with its peers: it says what it waited for, and for whom.
type SyncWaitError struct {
	// What the query needed: "the best block", "block <hash>", ...
	What string
	// Pending names the live peers whose header sync had not ended.
	Pending []string
	// Err is why the wait ended: ctx's error, a header sync's failure
	// (one wrapping ErrNoPeers, that says what each peer did, when the
	// sync ran out of peers), or one wrapping ErrNoPeers when no peer
	// offering the service is left.
	Err error
}

func (e *SyncWaitError) Error() string {
	msg := "client: " + e.What + ": waited for the headers of the peers"
	if len(e.Pending) > 0 {
		msg += " (" + strings.Join(e.Pending, ", ") + " not synced yet)"
	}
	return msg + ": " + e.Err.Error()
}

// Unwrap returns why the wait ended.
func (e *SyncWaitError) Unwrap() error { return e.Err }

// awaitSynced waits, within ctx, until the client is synced for a query
// of what, which needs peers offering need: at least one live peer
// offers it, and a header sync has ended with every live peer since it
// connected. A peer's own claim of its height (its version message)
// counts for nothing: only its headers, so a liar claiming a million
// blocks holds no query; one whose sync fails is dropped and no longer
// waited for. With the service running (Start), it waits for the
// service's syncs; without, it syncs the headers itself. It fails with a
// *SyncWaitError.
func (c *Client) awaitSynced(ctx context.Context, what string, need wire.ServiceFlag) error {
	synced := false
	for {
		moved := c.tip.changed()
		serving := c.pool.Serving(need)
		pending := c.views.unsynced(c.pool.Serving(0))
		switch {
		case len(serving) > 0 && len(pending) == 0:
			return nil
		case ctx.Err() != nil:
			return &SyncWaitError{What: what, Pending: addrs(pending), Err: ctx.Err()}
		case len(serving) == 0 && (synced || len(c.pool.Serving(0)) > 0 && len(pending) == 0):
			return &SyncWaitError{What: what, Err: fmt.Errorf("%w: no peer offers %s", ErrNoPeers, serviceName(need))}
		case !c.started():
			if _, err := c.SyncHeaders(ctx); err != nil && ctx.Err() == nil && (!errors.Is(err, ErrNoPeers) || len(c.pool.Serving(need)) == 0) {
				// A sync that ran out of peers says what each did.
				return &SyncWaitError{What: what, Pending: addrs(pending), Err: err}
			}
			synced = true
			continue
		}
		select {
		case <-ctx.Done():
		case <-moved:
		}
	}
}
