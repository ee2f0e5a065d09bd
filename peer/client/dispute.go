package client

import (
	"context"
	"fmt"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// group is the peers that state one filter hash at a disputed height, with
// the one asked for the filter.
type group struct {
	members []*pool.Member
	rep     *pool.Member
	hash    chainhash.Hash
}

// settleAt decides a disagreement at height h between groups of peers
// that agree below it: each group's representative serves its filter of
// the block, which must hash to the group's filter hash, and the block
// checks it (gcs.CheckBasic). Peers whose filter the block proves false
// are banned, with the proof. What the block cannot decide is a Conflict:
// nobody is banned, however many peers take a side; the conflict is
// recorded, so that the block is scanned whole and the sides are passed
// over at h (firstSplit) and still asked above it.
func (c *Client) settleAt(ctx context.Context, h int32, groups []group) error {
	hash := c.chain.Hash(h)
	c.logf("peers disagree on the filter of block %v (height %d): checking it against the block", hash, h)
	block, err := c.disputedBlock(ctx, h)
	if err != nil {
		return err
	}
	var standing []group
	var sides [][]string
	var checks []*gcs.BasicCheck
	for _, g := range groups {
		data, err := c.evidence(ctx, h, g)
		if err != nil {
			return err
		}
		if data == nil {
			continue // nobody in the group would serve its filter
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
func (c *Client) noteConflict(h int32, block *wire.MsgBlock, groups []group, undecided string) error {
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
	c.verifiedTo = min(c.verifiedTo, h-1)
	c.mem.dropAbove(h - 1)
	k, _ := c.conflicts.at(h, hash)
	c.logf("%v", k.Conflict)
	return nil
}

// settled reports whether the groups at height h differ only by filters
// the block there could not decide between. Called with opMu held.
func (c *Client) settled(h int32, gs []group) bool {
	stated := make([]chainhash.Hash, len(gs))
	for i, g := range gs {
		stated[i] = g.hash
	}
	return c.conflicts.settled(h, c.chain.Hash(h), stated)
}

// disputedBlock returns the block at height h for a dispute: the one kept
// since an earlier dispute, or downloaded from a peer that has it.
func (c *Client) disputedBlock(ctx context.Context, h int32) (*wire.MsgBlock, error) {
	if b, ok := c.blocks.get(c.chain.Hash(h)); ok {
		return b, nil
	}
	return c.fetchBlock(ctx, h)
}

// evidence gets a group's filter of the block at height h, which must
// hash to the filter hash the group states: from its representative, or
// from the next member when one fails. A member that cannot serve the
// filter it stated, during a dispute about it, is banned: an honest node
// always can, and a liar that hangs up must not have the dispute replayed
// for ever. It returns nil when no member served it; a request ended by
// ctx is an error.
func (c *Client) evidence(ctx context.Context, h int32, g group) ([]byte, error) {
	hash := c.chain.Hash(h)
	for _, m := range append([]*pool.Member{g.rep}, slices.DeleteFunc(slices.Clone(g.members), func(o *pool.Member) bool { return o == g.rep })...) {
		var data []byte
		err := c.pool.Conn(m).GetCFilters(ctx, h, []chainhash.Hash{hash}, func(_ int, d []byte) error {
			data = d
			return nil
		})
		if err == nil && chainhash.DoubleHashH(data) != g.hash {
			err = peerErr(m, "getcfilters", fmt.Errorf("%w: filter for block %v (height %d) does not hash to the filter header it sent itself",
				peer.ErrBadFilter, hash, h))
		}
		if err == nil {
			return data, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if c.chain.Err() != nil {
			return nil, &pool.Failure{Member: m, Err: err}
		}
		// A stall may be an honest node's whose chain changed (the scan
		// checks for a reorganization before it blames anyone): the
		// second time, it is not.
		if !isLie(err) && c.views.strike(m) < maxDisputeStrikes {
			return nil, &pool.Failure{Member: m, Err: err}
		}
		c.pool.Ban(m, peerErr(m, "getcfilters", fmt.Errorf("%w: did not serve the filter of block %v (height %d) it stated, during a dispute about it: %v",
			peer.ErrBadFilter, hash, h, err)))
	}
	return nil, nil
}

// maxDisputeStrikes is how many times a peer may fail to serve the filter
// it stated during a dispute before it is banned for it.
const maxDisputeStrikes = 2
