package client

import (
	"math"

	"github.com/spvfilter/spvfilter/privacy/leak"
)

// Span and era. A peer that keeps what it was asked sees each chain's
// blocks, so the span in height of a chain (its last block less its
// first, a share of the range) and its mean height tell the wallet's
// chains from the covers' unless the draw matches them: on the
// TestCoversAcrossSessions fixture, before, the wallet's chains of
// three or more blocks spanned 0.70 of the range against the covers'
// 0.49 to 0.50, within every client every one more (within-client AUC
// 0.996 to 1.000, TestCoversRequestShape), and the covers' mean height
// lay later (AUC 0.39 to 0.43), the era of a profile being matched only
// to a tenth of the range and given up first (relaxations). So the draw
// takes first, in each of its tiers, the candidate chains lying like a
// wallet's chain of as many blocks (spanLike: span and mean height each
// within spanTolerance of it), and matchRiders weighs both beside the
// riders (spanScore). A wallet's chain no candidate lies like is
// counted (coverScan.spanShort) and warned of: the covers fall short in
// span for it. On that fixture only 6% to 13% of the wallet's chains
// had, in a draw, a candidate of their shape lying like them, so the
// preference changed nothing measurable (chains of three or more
// blocks: AUC 0.994 to 1.000 after; mean height 0.42 to 0.44): what
// the reserve offers, not the choice, sets the span. Exploring more
// does not change what it can offer there: every block of that range
// read for candidates (TestCoversSpanInRange: 300 blocks, about 2,400
// candidates in 1,700 candidate chains) gives, for each of the wallet's
// four chains of three blocks (span 0.70, mean height 0.27 to 0.50),
// 12 candidate chains of its shape and as many blocks, none lying like
// it, none spanning 0.60 or more, the nearest 0.20 away (the larger of
// the span's and the mean height's distance). Each of those wallet
// chains holds a receive key paid twice 0.70 of the range apart, which
// no candidate chain of its shape there matches; exploring blocks near
// a wallet's chain's ends would find no more than every block does, and
// those blocks, asked beside the chain's, would point at it.

// spanTolerance is how far, as a share of the range, a candidate
// chain's span and mean height may lie from a wallet's chain's for
// spanLike to take it as lying like it.
const spanTolerance = 0.1

// chainPlace is where a chain lies in the range: its blocks (capped at
// maxAskedBlocks), its span and its mean height, both shares of the
// range.
type chainPlace struct {
	blocks     int
	span, mean float64
}

// placeOf is where the chain at heights hs lies in the scan's range.
func (cs *coverScan) placeOf(hs map[int32]bool) chainPlace {
	if len(hs) == 0 {
		return chainPlace{}
	}
	width := float64(max(cs.to-cs.from, 1))
	lo, hi, sum := int32(0), int32(0), 0.0
	first := true
	for h := range hs {
		if first || h < lo {
			lo = h
		}
		if first || h > hi {
			hi = h
		}
		first = false
		sum += float64(h - cs.from)
	}
	return chainPlace{
		blocks: min(len(hs), maxAskedBlocks),
		span:   float64(hi-lo) / width,
		mean:   sum / float64(len(hs)) / width,
	}
}

// shapedPlace is a chain's shape (its profile with Group 0) and where
// it lies (chainPlace).
type shapedPlace struct {
	shape leak.Profile
	place chainPlace
}

// shapedPlaces are the shape and place of each chain of ms (their
// profiles, coverScan.profiles, and their heights), one per chain.
func (cs *coverScan) shapedPlaces(ms []member) map[uint64]shapedPlace {
	profs := cs.profiles(ms)
	at := map[uint64]map[int32]bool{}
	shape := map[uint64]leak.Profile{}
	for i, m := range ms {
		g := m.group
		if g == 0 {
			g = uint64(1<<63) + uint64(i) // a script alone: a chain of its own
		}
		if at[g] == nil {
			at[g] = map[int32]bool{}
		}
		for _, h := range m.heights {
			at[g][h] = true
		}
		p := profs[i]
		p.Group, p.Era = 0, 0 // the place weighs the era finer
		shape[g] = p
	}
	out := make(map[uint64]shapedPlace, len(at))
	for g, hs := range at {
		out[g] = shapedPlace{shape[g], cs.placeOf(hs)}
	}
	return out
}

// lies reports whether c lies like w: as many blocks, span and mean
// height each within spanTolerance.
func (c chainPlace) lies(w chainPlace) bool {
	return c.blocks == w.blocks && math.Abs(c.span-w.span) <= spanTolerance && math.Abs(c.mean-w.mean) <= spanTolerance
}

// spanLike returns the scripts of the candidate chains that lie like
// (chainPlace.lies) a wallet's chain of their shape (its era left to
// the place, which weighs it finer). It keeps in coverScan.spanShort
// how many of the wallet's chains no candidate of their shape lies
// like, which warnDrawn warns of.
func (d *roundDraw) spanLike() map[string]bool {
	cs := d.cs
	wallet := cs.shapedPlaces(cs.walletMembers())
	if len(wallet) == 0 {
		return nil
	}
	var ms []member
	for _, c := range d.cands {
		ms = append(ms, member{script: c.Script, heights: d.heights[string(c.Script)], group: d.coverBy[string(c.Script)].Profile.Group})
	}
	cands := cs.shapedPlaces(ms)
	met := map[uint64]bool{}
	like := map[uint64]bool{}
	for cg, c := range cands {
		for wg, w := range wallet {
			if c.shape == w.shape && c.place.lies(w.place) {
				like[cg], met[wg] = true, true
			}
		}
	}
	out := map[string]bool{}
	for i, m := range ms {
		g := m.group
		if g == 0 {
			g = uint64(1<<63) + uint64(i)
		}
		if like[g] {
			out[string(m.script)] = true
		}
	}
	cs.spanShort, cs.spanChains = len(wallet)-len(met), len(wallet)
	return out
}

// spanKey is the key spanScore weighs a chain's span within: its
// blocks, those of three or more taken together.
func spanKey(blocks int) int { return min(blocks, 3) }

// spanScore is how well covers' values are told from the wallet's
// within each key (wk, ck: each value's key): the folded AUC's distance
// from a half within a key, summed over the keys both sides have,
// weighted by the covers' share of that key.
func spanScore(wallet, covers []float64, wk, ck []int) float64 {
	keys := map[int]bool{}
	for _, k := range ck {
		keys[k] = true
	}
	total := 0.0
	for k := range keys {
		var w, c []float64
		for i, v := range wallet {
			if wk[i] == k {
				w = append(w, v)
			}
		}
		for i, v := range covers {
			if ck[i] == k {
				c = append(c, v)
			}
		}
		if len(w) == 0 {
			continue
		}
		auc := 0.0
		for _, x := range c {
			for _, y := range w {
				switch {
				case math.Abs(x-y) < 1e-12:
					auc += 0.5
				case y > x:
					auc++
				}
			}
		}
		auc /= float64(len(w) * len(c))
		total += math.Abs(auc-0.5) * float64(len(c)) / float64(len(covers))
	}
	return total
}
