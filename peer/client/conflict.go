package client

import (
	"fmt"
	"slices"
	"strings"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
)

// Conflict is a disagreement about the filter of a block that the block
// cannot decide: every side's filter holds what the block shows. Nobody is
// banned for it (being in a majority buys no trust); the block is
// downloaded and scanned whole, so that what it holds is found whichever
// side is right, and the peers of every side are still asked.
type Conflict struct {
	Height    int32
	BlockHash chainhash.Hash
	// Sides lists, for each filter, the peers that state it (the data
	// directory is named as a side when its stored filter headers are
	// disputed).
	Sides [][]string
	// Undecided says what the filters may differ in: the inputs of the
	// block that show nothing of the scripts they spend, by kind.
	Undecided string
}

func (c Conflict) String() string {
	sides := make([]string, len(c.Sides))
	for i, s := range c.Sides {
		sides[i] = strings.Join(s, ", ")
	}
	return fmt.Sprintf("peers disagree on the filter of block %v (height %d): %s; the block cannot decide (%s), so nobody was banned: the block was scanned whole and every side is still asked",
		c.BlockHash, c.Height, strings.Join(sides, " against "), c.Undecided)
}

// conflict is a Conflict with the filter hashes the block could not
// decide between.
type conflict struct {
	Conflict
	hashes []chainhash.Hash
}

// maxConflicts bounds the conflicts a client keeps at once: each costs a
// block download per scan of its height, and peers that disagree beyond
// it fail the verification with a *ConflictError.
const maxConflicts = 64

// undecidedOf describes the inputs of a block that show nothing of the
// scripts they spend.
func undecidedOf(check gcs.BasicCheck) string {
	var parts []string
	for t, n := range check.Inputs {
		if n > 0 && !gcs.InputType(t).Reveals() {
			parts = append(parts, fmt.Sprintf("%s %d", gcs.InputType(t), n))
		}
	}
	if len(parts) == 0 {
		return "every input shows what it spends, yet more than one filter holds all of it: a false positive, or spends of non-standard outputs"
	}
	return "its inputs that show nothing of the scripts they spend: " + strings.Join(parts, ", ")
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
	if old, ok := c.conflicts[h]; ok && old.BlockHash == hash {
		for i, fh := range hashes {
			if !slices.Contains(old.hashes, fh) {
				old.hashes = append(old.hashes, fh)
				old.Sides = append(old.Sides, sides[i])
			}
		}
		return nil
	}
	if len(c.conflicts) >= maxConflicts {
		return &ConflictError{Height: h, BlockHash: hash, Sides: sides,
			Why: fmt.Sprintf("the peers disagree on the filters of more than %d blocks their blocks cannot decide", maxConflicts)}
	}
	if c.conflicts == nil {
		c.conflicts = map[int32]*conflict{}
	}
	c.conflicts[h] = &conflict{Conflict: Conflict{Height: h, BlockHash: hash, Sides: sides, Undecided: undecided}, hashes: hashes}
	c.blocks.put(hash, block)
	// What was verified from h on rests on one side's filter: it is
	// verified again, with every side.
	c.verifiedTo = min(c.verifiedTo, h-1)
	c.mem.dropAbove(h - 1)
	c.logf("%v", c.conflicts[h].Conflict)
	return nil
}

// settled reports whether the groups at height h differ only by filters
// the block there could not decide between. Called with opMu held.
func (c *Client) settled(h int32, gs []group) bool {
	k, ok := c.conflicts[h]
	if !ok || k.BlockHash != c.chain.Hash(h) {
		return false
	}
	for _, g := range gs {
		if !slices.Contains(k.hashes, g.hash) {
			return false
		}
	}
	return true
}

// undecidedAt returns the filter hashes the block at height h could not
// decide between, if peers disagree there. Called with opMu held.
func (c *Client) undecidedAt(h int32) ([]chainhash.Hash, bool) {
	k, ok := c.conflicts[h]
	if !ok || k.BlockHash != c.chain.Hash(h) {
		return nil, false
	}
	return k.hashes, true
}

// firstConflict returns the lowest height of a conflict at or above from,
// or -1. Called with opMu held.
func (c *Client) firstConflict(from int32) int32 {
	first := int32(-1)
	for h := range c.conflicts {
		if h >= from && (first < 0 || h < first) {
			first = h
		}
	}
	return first
}

// conflictsIn returns the conflicts of heights from..to, lowest first.
// Called with opMu held.
func (c *Client) conflictsIn(from, to int32) []Conflict {
	var out []Conflict
	for h, k := range c.conflicts {
		if from <= h && h <= to && k.BlockHash == c.chain.Hash(h) {
			out = append(out, k.Conflict)
		}
	}
	slices.SortFunc(out, func(a, b Conflict) int { return int(a.Height - b.Height) })
	return out
}

// takeStoreConflicts returns, and forgets, the differences with the
// stored filter headers at heights from..to that their blocks could not
// decide (found by a scan or by the service's verification): a scan
// scans those blocks whole once. Called with opMu held.
func (c *Client) takeStoreConflicts(from, to int32) []Conflict {
	var out, kept []Conflict
	for _, k := range c.storeConflicts {
		switch {
		case k.BlockHash != c.chain.Hash(k.Height):
			// Gone with a reorganization.
		case from <= k.Height && k.Height <= to:
			out = append(out, k)
		default:
			kept = append(kept, k)
		}
	}
	c.storeConflicts = kept
	return out
}

// dropConflictsAbove forgets the conflicts above height, whose blocks
// left the chain. Called with mu held.
func (c *Client) dropConflictsAbove(height int32) {
	for h := range c.conflicts {
		if h > height {
			delete(c.conflicts, h)
		}
	}
}
