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
// m's own word on its height (agreed holds the agreed filter headers of
// the height and the one before): lie if m states another filter hash,
// or the agreed header itself; else a disagreement (errDisputedHeader),
// with the lowest height to verify again.
func (c *Client) ownWord(ctx context.Context, m *pool.Member, off *offHeaderError, agreed [2]chainhash.Hash, lie error) (int32, error) {
	lastCheckpoint := c.chain.Height() / wire.CFCheckptInterval * wire.CFCheckptInterval
	if off.height <= lastCheckpoint {
		return -1, lie
	}
	// The failed answer dropped the connection.
	if err := c.pool.Redial(ctx, m); err != nil {
		return -1, peerErr(m, "getcfheaders", err)
	}
	prev, hashes, err := c.conn(m).GetCFHeaders(ctx, off.height, c.chain.Hash(off.height), 1)
	if err != nil {
		return -1, peerErr(m, "getcfheaders", err)
	}
	if len(hashes) != 1 || hashes[0] != off.hash {
		return -1, lie
	}
	stated := gcs.MakeHeader(&hashes[0], &prev)
	if stated == agreed[1] {
		return -1, lie
	}
	from := off.height
	if prev != agreed[0] {
		from = lastCheckpoint + 1
	}
	return from, peerErr(m, "getcfilters", fmt.Errorf("%w: its filter of height %d leads to the filter header it states, %v",
		errDisputedHeader, off.height, stated))
}
