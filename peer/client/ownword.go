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
// The header may have been agreed without it: near the tip, stated by
// faster peers before it announced the block, and kept since; below the
// chain's last checkpoint too, by the peers there were when it was
// verified (being in a majority, or first, proves nothing). So the
// server is asked for its own word on the height first: a filter whose
// hash it does not state, or which leads to the agreed header, is a lie.
// A filter that leads to the header it states is a disagreement about
// the header, unless, below the last checkpoint, the server's own filter
// headers after it do not reach the checkpoint it states itself at the
// end of the segment (a proof: it contradicts itself). A disagreement
// is settled by the verification, asked again of every peer from the
// height (or from the last checkpoint, if the server's previous header
// differs too; below it, from the segment's start, whose checkpoints it
// compares), with the block (see dispute.go).

// offHeaderError is a filter of height whose hash leads to another filter
// header than the agreed one.
type offHeaderError struct {
	height int32
	hash   chainhash.Hash // the filter's hash
	data   []byte         // the filter, as served
	msg    string
}

func (e *offHeaderError) Error() string { return e.msg }

// Unwrap makes the error a peer.ErrBadFilter until the server's own word
// clears it (see ownWord).
func (e *offHeaderError) Unwrap() error { return peer.ErrBadFilter }

// ownWord returns what m's filter off the agreed header proves, given
// m's own word on its height (agreed holds the agreed filter headers of
// the height and the one before): lie if m states another filter hash,
// or the agreed header itself; else a disagreement (errDisputedHeader),
// with the lowest height to verify again. The notes of the block's
// download (see blockProof) go to notes, the operation's log.
func (c *Client) ownWord(ctx context.Context, notes *scanLog, m *pool.Member, off *offHeaderError, agreed [2]chainhash.Hash, lie error) (int32, error) {
	lastCheckpoint := c.chain.Height() / wire.CFCheckptInterval * wire.CFCheckptInterval
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
	if proof := c.blockProof(ctx, notes, m, off); proof != nil {
		return -1, proof
	}
	from := off.height
	switch {
	case off.height <= lastCheckpoint:
		if err := c.ownCheckpoint(ctx, m, off.height, stated); err != nil {
			return -1, err
		}
		from = segmentFirst(segmentOf(off.height))
	case prev != agreed[0]:
		from = lastCheckpoint + 1
	}
	return from, peerErr(m, "getcfilters", fmt.Errorf("%w: its filter of height %d leads to the filter header it states, %v",
		errDisputedHeader, off.height, stated))
}

// ownCheckpoint checks that m's own filter headers lead from stated, the
// one it states at height (below the chain's last checkpoint), to the
// checkpoint it states at the end of height's segment: the error is the
// proof that they do not (it contradicts itself), or the failure of a
// request. A peer whose headers do reach its checkpoint disputes the
// agreed one there, which proves nothing yet. It costs a getcfcheckpt
// and the filter hashes up to the segment's end, a thousand at most.
func (c *Client) ownCheckpoint(ctx context.Context, m *pool.Member, height int32, stated chainhash.Hash) error {
	j := segmentOf(height)
	end := int32(j+1) * wire.CFCheckptInterval
	cps, err := c.conn(m).GetCFCheckpt(ctx, c.chain.Hash(end), j+1)
	if err != nil {
		return peerErr(m, "getcfcheckpt", err)
	}
	last := stated
	if height < end {
		prev, hashes, err := c.conn(m).GetCFHeaders(ctx, height+1, c.chain.Hash(end), int(end-height))
		if err != nil {
			return peerErr(m, "getcfheaders", err)
		}
		if prev != stated {
			return peerErr(m, "getcfheaders", fmt.Errorf("%w: it states filter header %v at height %d, and %v before height %d",
				peer.ErrBadFilterHeader, stated, height, prev, height+1))
		}
		last = chainHeaders(stated, hashes)
	}
	if last != cps[j] {
		return peerErr(m, "getcfheaders", fmt.Errorf("%w: its filter headers from its word on height %d do not reach the checkpoint it sent itself at %d",
			peer.ErrBadFilterHeader, height, end))
	}
	// Its word and its checkpoint are held against the checkpoints it
	// sends when the heights are verified again (see holdToCheckpoints):
	// another one there is its own contradiction.
	c.holdWords([]headerWord{
		{m: m, height: height, block: c.chain.Hash(height), header: stated},
		{m: m, height: end, block: c.chain.Hash(end), header: cps[j]},
	})
	return nil
}

// blockProof returns the proof that m's filter off is false, when its
// block proves it (gcs.CheckBasic): a filter that leads to the filter
// header m states disagrees with the agreed one, but the block may decide
// it at once, for a block's download. Nil when the block does not prove
// it, or cannot be had (the disagreement then stands, see ownWord). The
// download's notes (the peers that refused or hung up, see fetchBlock)
// go to notes, the operation's log, unless it is nil, as does its
// failure, which does not name them again (see refusalsNamed). A peer
// whose lie (or flood) ended the download is judged by it as a scan's
// download judges one (see Client.blame): banned, with its answer as the
// proof, which is returned when the peer is m; one that hung up, refused
// or stalled is only named.
func (c *Client) blockProof(ctx context.Context, notes *scanLog, m *pool.Member, off *offHeaderError) error {
	if off.data == nil {
		return nil
	}
	block, err := c.disputedBlock(ctx, notes, off.height)
	if f := (*pool.Failure)(nil); errors.As(err, &f) && earnsBan(f.Err) {
		c.blame(f.Member, f.Err)
		if f.Member == m && isLie(f.Err) {
			// m's own answer ended the download: the proof against it.
			return f.Err
		}
	}
	if err != nil {
		named, why := refusalsNamed(err)
		n := fmt.Sprintf("the block of height %d, to check %s's filter off the agreed filter header: %v", off.height, m.Addr(), why)
		switch {
		case named == 1:
			n += " (after a request refused or cut off, noted on its own)"
		case named > 1:
			n += fmt.Sprintf(" (after %d requests refused or cut off, each noted on its own)", named)
		}
		c.logf("%s", n)
		if notes != nil {
			notes.note(n)
		}
		return nil
	}
	proof := gcs.CheckBasicBytes(block, off.data).Contradiction
	if proof == nil {
		return nil
	}
	return peerErr(m, "getcfilters", fmt.Errorf("%w: filter for block %v (height %d): the block proves it false: %v",
		peer.ErrBadFilter, c.chain.Hash(off.height), off.height, proof))
}
