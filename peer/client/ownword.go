package client

import (
	"context"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// A filter that does not lead to the agreed filter header of its height
// proves its server false only if the server stated that header itself.
// Up to the chain's last checkpoint height it did: every peer's
// checkpoints were compared, and a filter header a peer states below an
// agreed checkpoint it stated too is bound by it. Above, near the tip,
// the header may have been agreed without it: stated by faster peers
// before it announced the block, and kept since. So there the server is
// asked for its own word on the height first: a filter whose hash it does
// not state, or which leads to the agreed header, is a lie; a filter that
// leads to the header it states is a disagreement about the header,
// which the verification, asked again of every peer from the height (or
// from the last checkpoint, if the server's previous header differs too),
// settles with the block (see dispute.go).

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
	lastCheckpoint := d.c.chain.Height() / wire.CFCheckptInterval * wire.CFCheckptInterval
	if off.height <= lastCheckpoint {
		return lie
	}
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
	from := off.height
	if prev != d.headers[off.height-d.from] {
		from = lastCheckpoint + 1
	}
	d.mu.Lock()
	if d.disputed < 0 || from < d.disputed {
		d.disputed = from
	}
	d.mu.Unlock()
	return peerErr(m, "getcfilters", fmt.Errorf("%w: its filter of height %d leads to the filter header it states, %v",
		errDisputedHeader, off.height, gcs.MakeHeader(&hashes[0], &prev)))
}
