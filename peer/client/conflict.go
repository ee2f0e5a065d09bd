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
// cannot decide: no side's filter does consensus contradict. Nobody is
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
	// Undecided says why the block cannot decide: what consensus leaves
	// open of the scripts its inputs spend and, if the outputs they spend
	// were standard, which side it favours (evidence, not proof).
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

// undecidedOf says why the block cannot decide between the sides, given
// the checks of their filters (nil where a side's was not checked): what
// consensus leaves open of what its inputs spend and, if the outputs they
// spend were standard, which side the block favours: evidence, no proof.
func undecidedOf(sides [][]string, checks []*gcs.BasicCheck) string {
	var checked *gcs.BasicCheck
	var fit, unfit []string
	var miss gcs.StandardMiss
	for i, k := range checks {
		switch {
		case k == nil:
			continue
		case k.NoProof != nil:
			return fmt.Sprintf("the block proves nothing: %v", k.NoProof)
		case len(k.IfStandard) == 0:
			fit = append(fit, strings.Join(sides[i], ", "))
		default:
			unfit = append(unfit, strings.Join(sides[i], ", "))
			miss = k.IfStandard[0]
		}
		checked = k
	}
	if checked == nil {
		return "no side's filter was checked"
	}
	var open []string
	for t, n := range checked.Inputs {
		if n > 0 && !gcs.InputType(t).Certain() {
			open = append(open, fmt.Sprintf("%s %d", gcs.InputType(t), n))
		}
	}
	why := "consensus does not fix the scripts its inputs spend (" + strings.Join(open, ", ") + ")"
	if len(open) == 0 {
		why = "every filter holds all the block fixes by consensus: a false positive hides what they differ in"
	}
	if len(unfit) == 0 {
		return why
	}
	favours := ""
	if len(fit) > 0 {
		favours = " the block favours " + strings.Join(fit, " and ") + ":"
	}
	return fmt.Sprintf("%s; if the outputs they spend were standard,%s the filter of %s leaves out what input %d of transaction %d, a %s spend, would then spend; but consensus does not require that they were, so it is no proof",
		why, favours, strings.Join(unfit, " and "), miss.Index, miss.Tx, miss.Input)
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
