package client

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// settleAt decides a disagreement at height h between groups of peers
// that agree below it: each group's representative serves its filter of
// the block, which must hash to the group's filter hash, and the block
// checks it (gcs.CheckBasic). Peers whose filter the block proves false
// are banned, with the proof. What the block cannot decide is a Conflict:
// nobody is banned, however many peers take a side; the conflict is
// recorded, so that the block is scanned whole and the sides are passed
// over at h (firstSplit) and still asked above it. The block's download
// notes go to log, the operation's.
func (c *Client) settleAt(ctx context.Context, log *scanLog, h int32, groups []hashGroup) error {
	hash := c.chain.Hash(h)
	c.logf("peers disagree on the filter of block %v (height %d): checking it against the block", hash, h)
	block, err := c.disputedBlock(ctx, log, h)
	if err != nil {
		return err
	}
	var standing []hashGroup
	var sides [][]string
	var checks []*gcs.BasicCheck
	for _, g := range groups {
		data, err := c.evidence(ctx, h, g)
		if err != nil {
			return err
		}
		if data == nil && c.provenFalse(g) {
			continue
		}
		if data == nil {
			// Nobody in the group served its filter: the side still
			// stands (a dropped connection is no proof), and what it
			// holds is unknown, so the block is scanned whole.
			standing = append(standing, g)
			sides, checks = append(sides, addrs(g.members)), append(checks, nil)
			continue
		}
		check := gcs.CheckBasicBytes(block, data)
		if proof := check.Contradiction; proof != nil {
			for _, m := range g.members {
				c.pool.Ban(m, peerErr(m, "getcfilters", fmt.Errorf("%w: filter for block %v (height %d): the block proves it false: %v",
					peer.ErrBadFilter, hash, h, proof)))
			}
			continue
		}
		standing = append(standing, g)
		sides, checks = append(sides, addrs(g.members)), append(checks, &check)
	}
	if len(standing) <= 1 {
		return nil
	}
	return c.noteConflict(h, block, standing, undecidedOf(sides, checks))
}

// noteConflict records that the block at height h cannot decide between
// the groups' filters. Called with opMu held.
func (c *Client) noteConflict(h int32, block *wire.MsgBlock, groups []hashGroup, undecided string) error {
	hash := block.BlockHash()
	var sides [][]string
	var hashes []chainhash.Hash
	for _, g := range groups {
		sides = append(sides, addrs(g.members))
		hashes = append(hashes, g.hash)
	}
	added, err := c.conflicts.add(h, hash, sides, hashes, undecided)
	if !added || err != nil {
		return err
	}
	c.blocks.put(hash, block)
	// What was verified from h on rests on one side's filter: it is
	// verified again, with every side.
	c.giveUpVerified(h - 1)
	k, _ := c.conflicts.at(h, hash)
	c.logf("%v", k.Conflict)
	return nil
}

// settled reports whether the groups at height h differ only by filters
// the block there could not decide between. Called with opMu held.
func (c *Client) settled(h int32, gs []hashGroup) bool {
	stated := make([]chainhash.Hash, len(gs))
	for i, g := range gs {
		stated[i] = g.hash
	}
	return c.conflicts.settled(h, c.chain.Hash(h), stated)
}

// disputedBlock returns the block at height h for a dispute: the one kept
// since an earlier dispute, or downloaded from a peer that has it, the
// download's notes going to log (see fetchBlock).
func (c *Client) disputedBlock(ctx context.Context, log *scanLog, h int32) (*wire.MsgBlock, error) {
	if b, ok := c.blocks.get(c.chain.Hash(h)); ok {
		return b, nil
	}
	return c.fetchBlock(ctx, log, h)
}

// evidence gets a group's filter of the block at height h, which must
// hash to the filter hash the group states: from its representative, or
// from the next member when one fails. A member that serves a filter
// hashing to another is banned, with its own two answers as the proof. A
// member that fails to serve (a dropped connection, a stall) proves
// nothing: it is struck, and at maxDisputeStrikes in a row banned without
// proof (kept out of this client's life and, unless the user gave it, of
// later runs for the ban's time), so that a liar hanging up cannot have
// the dispute replayed for ever. It returns nil when no member served
// it; a request ended by ctx is an error.
func (c *Client) evidence(ctx context.Context, h int32, g hashGroup) ([]byte, error) {
	hash := c.chain.Hash(h)
	for _, m := range append([]*pool.Member{g.rep}, slices.DeleteFunc(slices.Clone(g.members), func(o *pool.Member) bool { return o == g.rep })...) {
		var data []byte
		// Checked inside fn, where a filter damaged on the way is told
		// from a lie (peer.ErrDamaged). m is dialled again first if its
		// connection ended (see askingConn).
		err := c.conn(m).GetCFilters(ctx, h, []chainhash.Hash{hash}, func(_ int, d []byte) error {
			if chainhash.DoubleHashH(d) != g.hash {
				return peerErr(m, "getcfilters", fmt.Errorf("%w: filter for block %v (height %d) does not hash to the filter header it sent itself",
					peer.ErrBadFilter, hash, h))
			}
			data = d
			return nil
		})
		if err == nil {
			c.views.strike(m, false)
			return data, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if c.chain.Err() != nil {
			return nil, &pool.Failure{Member: m, Err: err}
		}
		if isLie(err) {
			c.pool.Ban(m, err)
			continue
		}
		if errors.Is(err, peer.ErrAbandoned) {
			// Dropped by this client itself (see askingConn): no strike.
			c.logf("%s: the filter of height %d asked during a dispute: %v", m.Addr(), h, err)
			continue
		}
		why := peerErr(m, "getcfilters", fmt.Errorf("did not serve the filter of block %v (height %d) it stated, during a dispute about it: %w", hash, h, err))
		if c.views.strike(m, true) < maxDisputeStrikes {
			c.logf("%v", why)
			continue
		}
		c.pool.BanWithoutProof(m, fmt.Errorf("%w, %d times in a row", why, maxDisputeStrikes))
	}
	return nil, nil
}

// maxDisputeStrikes is how many times in a row a peer may fail to serve
// the filter it stated during a dispute before it is banned, without
// proof, for it.
const maxDisputeStrikes = 2

// provenFalse reports whether every peer of g is banned with a proof of a
// lie (a filter that does not hash to what it stated, say): then g's side
// of a dispute no longer stands, and is no conflict.
func (c *Client) provenFalse(g hashGroup) bool {
	for _, m := range g.members {
		if st := c.pool.Status(m); !st.Banned || !isLie(st.Err) {
			return false
		}
	}
	return true
}
