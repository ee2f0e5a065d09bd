package client

import (
	"maps"
	"math/rand/v2"
)

// Blocks asked before, a chain. A peer that keeps every session counts,
// for each chain a scan fetches, how many of its blocks were asked in
// an earlier session. A cover's chain has the block it was found in and
// those explored after; the wallet's chain the block asked once
// (covers_once.go) and, were it not for dropUnfound, every other block
// of it the sweep reached over the sessions short: 1.31 blocks asked
// before a chain of the wallet's against 1.15 a cover's (60 clients,
// TestCoversAcrossSessions), so that a peer would take the chains with
// more for the wallet's. With dropUnfound alone the wallet's fell below
// (1.07 against 1.16), the candidates of chains of three blocks found
// holding more blocks asked before than the wallet's. So the draw also
// weighs it: in each of its tiers it takes first the candidate chains
// kept so that, among those of as many blocks, as many have each count
// of blocks asked before as the wallet's chains (askedLike), and
// matchRiders weighs each chain's count beside its riders (1.06 to
// 1.08 against 1.10 to 1.13, four runs).

// maxAskedBlocks and maxAskedLevel cap a chain's blocks and, of them,
// those asked before that askedLike tells apart.
const (
	maxAskedBlocks = 8
	maxAskedLevel  = 3
)

// askedKey is a chain's blocks (capped at maxAskedBlocks) and, of
// them, those any peer was asked for before the scan (capped at
// maxAskedLevel).
type askedKey struct{ blocks, asked int }

// askedOf is the key of a chain at heights hs.
func (cs *coverScan) askedOf(hs map[int32]bool) askedKey {
	n := 0
	for h := range hs {
		if cs.before[h] {
			n++
		}
	}
	return askedKey{min(len(hs), maxAskedBlocks), min(n, maxAskedLevel)}
}

// walletAsked counts the wallet's chains by their keys (askedOf).
func (cs *coverScan) walletAsked() map[askedKey]int {
	out := map[askedKey]int{}
	for _, at := range cs.walletChainsAt() {
		hs := make(map[int32]bool, len(at))
		for h := range at {
			hs[h] = true
		}
		out[cs.askedOf(hs)]++
	}
	return out
}

// askedLike returns the scripts of the candidate chains the draw takes
// first so that the covers' chains have as many blocks asked before as
// the wallet's: of the candidate chains of b blocks, one with a of
// them asked before is kept with a chance in proportion to the share of
// the wallet's chains of b blocks with a over the candidates' (the
// highest ratio kept for sure), so that those kept have the wallet's
// mixture; those of a length no chain of the wallet's has are all kept.
// Nil where no peer was asked for a block of the range before the
// scan.
func (d *roundDraw) askedLike() map[string]bool {
	cs := d.cs
	if len(cs.before) == 0 {
		return nil
	}
	wallet := cs.walletAsked()
	chains := d.candChains()
	cands := map[askedKey]int{}
	keys := make([]askedKey, len(chains))
	for i, ch := range chains {
		keys[i] = cs.askedOf(ch.at)
		cands[keys[i]]++
	}
	keep := keepChances(wallet, cands)
	out := map[string]bool{}
	for i, ch := range chains {
		if p, ok := keep[keys[i]]; !ok || rand.Float64() < p {
			for _, s := range ch.scripts {
				out[s] = true
			}
		}
	}
	return out
}

// keepChances is, for each key of cands (candidate chains counted by
// key) whose length some chain of wallet has, the chance that
// askedLike keeps a candidate chain of it: w/c for the wallet's count w
// and the candidates' c of the key, over the highest such ratio among
// the keys of its length. Keys of a length none of the wallet's chains
// has are left out (kept for sure).
func keepChances(wallet, cands map[askedKey]int) map[askedKey]float64 {
	walletBy, candsBy := map[int]int{}, map[int]int{}
	for k, n := range wallet {
		walletBy[k.blocks] += n
	}
	for k, n := range cands {
		candsBy[k.blocks] += n
	}
	ratio := func(k askedKey) float64 {
		w := float64(wallet[k]) / float64(walletBy[k.blocks])
		return w / (float64(cands[k]) / float64(candsBy[k.blocks]))
	}
	top := map[int]float64{}
	for k := range cands {
		if walletBy[k.blocks] > 0 {
			top[k.blocks] = max(top[k.blocks], ratio(k))
		}
	}
	out := map[askedKey]float64{}
	for k := range cands {
		if walletBy[k.blocks] == 0 {
			continue
		}
		if t := top[k.blocks]; t > 0 {
			out[k] = ratio(k) / t
		} else {
			out[k] = 0
		}
	}
	return out
}

// candChain is a candidate chain of a draw: its scripts and its
// heights on the held filters.
type candChain struct {
	scripts []string
	at      map[int32]bool
}

// candChains joins the draw's candidates by chain (their group; a
// script of group 0 alone).
func (d *roundDraw) candChains() []candChain {
	var out []candChain
	at := map[uint64]int{}
	for _, c := range d.cands {
		s := string(c.Script)
		g := d.coverBy[s].Profile.Group
		i, ok := at[g]
		if !ok || g == 0 {
			i = len(out)
			at[g] = i
			out = append(out, candChain{at: map[int32]bool{}})
		}
		out[i].scripts = append(out[i].scripts, s)
		for _, h := range d.heights[s] {
			out[i].at[h] = true
		}
	}
	return out
}

// likeFirst returns tiers with, before each, its scripts in like.
func likeFirst(tiers []map[string]bool, like map[string]bool) []map[string]bool {
	var out []map[string]bool
	for _, t := range tiers {
		both := maps.Clone(t)
		maps.DeleteFunc(both, func(s string, _ bool) bool { return !like[s] })
		out = append(out, both, t)
	}
	return out
}
