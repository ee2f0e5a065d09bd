package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// A filter that does not lead to the agreed filter header of its height
// proves its server false only if the server stated that header itself.
// The header may have been agreed without it: kept from an earlier
// verification, or stated by faster peers before it announced the block.
// So the server is asked for its own word on the height first: a filter
// whose hash it does not state, or which its own stated header rules out,
// is a lie; a filter that leads to the header it states is a disagreement
// about the header, which the height's verification, asked again of
// every peer, settles with the block (see dispute.go).

// offHeaderError is a filter of height whose hash leads to another filter
// header than the agreed one.
type offHeaderError struct {
	height int32
	hash   chainhash.Hash // the filter's hash
	msg    string
}

func (e *offHeaderError) Error() string { return e.msg }

// Unwrap makes the error a peer.ErrBadFilter until the server's own word
// clears it (see ownWord).
func (e *offHeaderError) Unwrap() error { return peer.ErrBadFilter }

// errDisputedHeader is the error of a peer whose filter leads to the
// filter header it states, which is not the agreed one: the header is
// verified again, and nobody is blamed for it yet.
var errDisputedHeader = errors.New("the peer states another filter header than the agreed one")

// ownWord returns what m's filter off the agreed header proves, given
// m's own word on its height: lie if m states another filter hash, or
// the agreed header itself; else a disagreement (errDisputedHeader),
// noting the height to verify again.
func (d *filterDownload) ownWord(ctx context.Context, m *pool.Member, off *offHeaderError, lie error) error {
	// The failed answer dropped the connection.
	if err := d.c.pool.Redial(ctx, m); err != nil {
		return peerErr(m, "getcfheaders", err)
	}
	prev, hashes, err := d.c.conn(m).GetCFHeaders(ctx, off.height, d.c.chain.Hash(off.height), 1)
	if err != nil {
		return peerErr(m, "getcfheaders", err)
	}
	if len(hashes) != 1 || hashes[0] != off.hash || gcs.MakeHeader(&hashes[0], &prev) == d.headers[off.height-d.from+1] {
		return lie
	}
	d.mu.Lock()
	if d.disputed < 0 || off.height < d.disputed {
		d.disputed = off.height
	}
	d.mu.Unlock()
	return peerErr(m, "getcfilters", fmt.Errorf("%w: its filter of height %d leads to the filter header it states, %v",
		errDisputedHeader, off.height, gcs.MakeHeader(&hashes[0], &prev)))
}
