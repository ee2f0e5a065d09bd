package client

import (
	"fmt"
	"slices"
	"strings"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
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
// the checks of their filters (nil where a side did not serve its
// filter): the sides that did not, what consensus leaves open of what its
// inputs spend and, if the outputs they spend were standard, which side
// the block favours: evidence, no proof.
func undecidedOf(sides [][]string, checks []*gcs.BasicCheck) string {
	var unserved []string
	for i, k := range checks {
		if k == nil {
			unserved = append(unserved, strings.Join(sides[i], ", "))
		}
	}
	why := checkedUndecided(sides, checks)
	if len(unserved) == 0 {
		return why
	}
	return fmt.Sprintf("%s did not serve the filter it stated, which proves nothing (its connection may have failed); %s", strings.Join(unserved, " and "), why)
}

// checkedUndecided is undecidedOf for the sides whose filter was checked.
func checkedUndecided(sides [][]string, checks []*gcs.BasicCheck) string {
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
		return "no side's filter could be checked"
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

// conflicts are the disagreements about filters that their blocks could
// not decide, by height (at most maxConflicts), and the differences with
// the stored filter headers that the blocks could not decide (see
// settleStored), until a scan of their heights reports them. A conflict
// counts only while its block is the chain's at its height: hashAt gives
// the chain's block hash of a height.
type conflicts struct {
	by     map[int32]*conflict
	stored []Conflict
}

// add records that the block hash at height h cannot decide between the
// filters of hashes, each stated by one side of sides; a side new to a
// known conflict joins it. It reports whether the conflict is new, and
// fails with a *ConflictError beyond maxConflicts.
func (k *conflicts) add(h int32, hash chainhash.Hash, sides [][]string, hashes []chainhash.Hash, undecided string) (bool, error) {
	if old, ok := k.by[h]; ok && old.BlockHash == hash {
		for i, fh := range hashes {
			if !slices.Contains(old.hashes, fh) {
				old.hashes = append(old.hashes, fh)
				old.Sides = append(old.Sides, sides[i])
			}
		}
		return false, nil
	}
	if len(k.by) >= maxConflicts {
		return false, &ConflictError{Height: h, BlockHash: hash, Sides: sides,
			Why: fmt.Sprintf("the peers disagree on the filters of more than %d blocks their blocks cannot decide", maxConflicts)}
	}
	if k.by == nil {
		k.by = map[int32]*conflict{}
	}
	k.by[h] = &conflict{Conflict: Conflict{Height: h, BlockHash: hash, Sides: sides, Undecided: undecided}, hashes: hashes}
	return true, nil
}

// at returns the conflict at height h, if its block is hash.
func (k *conflicts) at(h int32, hash chainhash.Hash) (*conflict, bool) {
	c, ok := k.by[h]
	if !ok || c.BlockHash != hash {
		return nil, false
	}
	return c, true
}

// settled reports whether the filter hashes stated at height h, whose
// block is hash, differ only by filters the block could not decide
// between.
func (k *conflicts) settled(h int32, hash chainhash.Hash, stated []chainhash.Hash) bool {
	c, ok := k.at(h, hash)
	if !ok {
		return false
	}
	for _, fh := range stated {
		if !slices.Contains(c.hashes, fh) {
			return false
		}
	}
	return true
}

// undecided returns, by height, the filter hashes the blocks of the
// conflicts of from..to could not decide between.
func (k *conflicts) undecided(from, to int32, hashAt func(int32) chainhash.Hash) map[int32][]chainhash.Hash {
	var out map[int32][]chainhash.Hash
	for h := range k.by {
		if c, ok := k.at(h, hashAt(h)); ok && from <= h && h <= to {
			if out == nil {
				out = map[int32][]chainhash.Hash{}
			}
			out[h] = c.hashes
		}
	}
	return out
}

// first returns the lowest height of a conflict at or above from, or -1.
func (k *conflicts) first(from int32) int32 {
	first := int32(-1)
	for h := range k.by {
		if h >= from && (first < 0 || h < first) {
			first = h
		}
	}
	return first
}

// in returns the conflicts of heights from..to, lowest first.
func (k *conflicts) in(from, to int32, hashAt func(int32) chainhash.Hash) []Conflict {
	var out []Conflict
	for h, c := range k.by {
		if from <= h && h <= to && c.BlockHash == hashAt(h) {
			out = append(out, c.Conflict)
		}
	}
	slices.SortFunc(out, func(a, b Conflict) int { return int(a.Height - b.Height) })
	return out
}

// addStored records a difference with the stored filter headers that its
// block could not decide.
func (k *conflicts) addStored(c Conflict) { k.stored = append(k.stored, c) }

// takeStored returns, and forgets, the differences with the stored
// filter headers at heights from..to that their blocks could not decide
// (found by a scan or by the service's verification): a scan scans those
// blocks whole once.
func (k *conflicts) takeStored(from, to int32, hashAt func(int32) chainhash.Hash) []Conflict {
	var out, kept []Conflict
	for _, c := range k.stored {
		switch {
		case c.BlockHash != hashAt(c.Height):
			// Gone with a reorganization.
		case from <= c.Height && c.Height <= to:
			out = append(out, c)
		default:
			kept = append(kept, c)
		}
	}
	k.stored = kept
	return out
}

// dropAbove forgets the conflicts above height, whose blocks left the
// chain.
func (k *conflicts) dropAbove(height int32) {
	for h := range k.by {
		if h > height {
			delete(k.by, h)
		}
	}
}
