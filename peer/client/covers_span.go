package client

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/spvfilter/spvfilter/privacy/leak"
)

// Span and era. A peer that keeps what it was asked sees each chain's
// blocks, so the span in height of a chain (its last block less its
// first, a share of the range) and its mean height tell the wallet's
// chains from the covers' unless the draw matches them: on the
// TestCoversAcrossSessions fixture, before, the wallet's chains of three
// or more blocks spanned 0.70 of the range against the covers' 0.49 to
// 0.50, within every client every one more (within-client AUC 0.996 to
// 1.000, TestCoversRequestShape), and the covers' mean height lay later
// (AUC 0.39 to 0.43), the era of a profile being matched only to a tenth
// of the range and given up first (relaxations). So the draw takes
// first, in each of its tiers, the candidate chains nearest a wallet's
// chain of their shape and as many blocks, as many longer as shorter
// (spanLike, nearestRanks), and matchRiders weighs span and mean height
// beside the riders (spanScore). A wallet's chain no candidate lies like
// (span and mean height each within spanTolerance) is counted
// (coverScan.spanShort) and warned of: the covers fall short in span for
// it.
//
// The shape spanLike compared was, until TestShapedPlacesChainShape, the
// profile of whichever member of a chain came last, not the chain's
// (leak.Shape, which the draw's need is keyed by), so it found a like
// candidate for few of the wallet's chains (6% to 13% on that fixture).
// On a chain whose other users pay keys again at spans around the
// wallet's (TestCoversSpanLikeWallet, 24 clients), the wallet's chains
// no candidate lay like went from 150 to 175 of 240 (five runs) to 2 to
// 32 of 240 (eight runs); but what a peer reads off the span did not
// fall (chains of three or more blocks, pooled AUC 0.773 to 0.832
// before, mean 0.816, each run's 95% interval about ±0.07; 0.775 to
// 0.942 after, mean 0.852; taking the nearest alone, or the nearest by
// span whatever the mean height, three runs each, 0.817 to 0.879; on the
// TestCoversAcrossSessions fixture, within a client, 0.981, 0.991 and
// 1.000 before, 0.982 and 0.994 after). In the two clients looked into,
// the reserve held 5 and 10 scripts of three appearances or more, every
// one sampled, 3 candidate chains of the wallet's chains' shape of three
// blocks among them, nearly all shorter, and the draw needed 4 chains of
// class 3: it takes nearly every candidate there is, so what exploring
// has put in the reserve, not the choice, sets the span. On the
// TestCoversAcrossSessions fixture the range holds none to offer: every
// block of it read for candidates (TestCoversSpanInRange: 300 blocks,
// 2,727 candidates in 2,025 candidate chains) gives, for each of the
// wallet's four chains of three blocks (span 0.70, mean height 0.27 to
// 0.50), 11 or 12 candidate chains of its shape and as many blocks,
// none lying like it, none spanning 0.60 or more, the nearest 0.20 away
// (the larger of the span's and the mean height's distance). Each of
// those wallet chains holds a receive key paid twice 0.70 of the range
// apart, which the other users' wallets there, paying theirs again half
// the range apart, never match; exploring blocks near a wallet's
// chain's ends would find no more than every block does, and those
// blocks, asked beside the chain's, would point at it.
//
// On TestCoversSpanLikeWallet's chain the range offers few longer
// either: every block of it read (TestCoversSpanInRange, 600 blocks),
// each of the wallet's four chains of three blocks (span 0.35 of the
// range) has 28 or 29 candidate chains of its shape and as many blocks
// (two runs), 13 to 21 lying like it, but only 4 to 6 spanning as much
// as it or more. The
// draw sees those of the blocks its scans read, 1 to 6 a client in the
// four looked into (and 2 or 3 more of its class and blocks lying
// alone, one script where the wallet's chains hold two: the block of
// their spend, with its change, not read); in the six looked into with
// more explored, it took every longer one it saw, 0 to 2, and the
// covers lie shorter: span AUC of the chains of three or more
// blocks 0.834, 0.843 and 0.868 (96 clients a run, 137 blocks asked a
// client over two sessions; 0.844 and 0.856, 150 blocks, once a first
// scan explored the room it held idle, exploreRoom). A trial, not kept, explored the whole room
// of the bound in each scan short: 0.794 and 0.818 with the bound
// doubled (1.7 times the blocks asked), 0.785 and 0.803 with it four
// times (3.1 times; 48 clients a run). An AUC near a half needs as many
// covers spanning more than the wallet's chains as less, and the range
// holds one for four to six shorter: no draw within the bound closes
// the tell there, and fetching the unread blocks of the lone candidates
// to join their change would ask more of a chain's blocks before it is
// drawn than of a wallet's (covers_asked.go).

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

// shapedPlace is a chain's shape (leak.Shape of its members' profiles,
// its era left to the place) and where it lies (chainPlace).
type shapedPlace struct {
	shape leak.Profile
	place chainPlace
}

// chainKey is the chain of m, the ith of its members: its group, or,
// for a script alone (group 0), a chain of its own, keyed by i above
// every group.
func chainKey(m member, i int) uint64 {
	if m.group == 0 {
		return uint64(1<<63) + uint64(i)
	}
	return m.group
}

// shapedPlaces are the shape and place of each chain of ms (leak.Shape
// of their profiles, coverScan.profiles, and their heights), one per
// chain: the chain's shape, as leak.Need and leak.Draw key it, not one
// member's profile, which told a chain's shape by whichever member came
// last and so matched few of the wallet's chains to any candidate.
func (cs *coverScan) shapedPlaces(ms []member) map[uint64]shapedPlace {
	profs := cs.profiles(ms)
	at := map[uint64]map[int32]bool{}
	members := map[uint64][]leak.Profile{}
	for i, m := range ms {
		g := chainKey(m, i)
		if at[g] == nil {
			at[g] = map[int32]bool{}
		}
		for _, h := range m.heights {
			at[g][h] = true
		}
		members[g] = append(members[g], profs[i])
	}
	out := make(map[uint64]shapedPlace, len(at))
	for g, hs := range at {
		shape := leak.Shape(members[g])
		shape.Era = 0 // the place weighs the era finer
		out[g] = shapedPlace{shape, cs.placeOf(hs)}
	}
	return out
}

// lies reports whether c lies like w: as many blocks, span and mean
// height each within spanTolerance.
func (c chainPlace) lies(w chainPlace) bool {
	return c.blocks == w.blocks && math.Abs(c.span-w.span) <= spanTolerance && math.Abs(c.mean-w.mean) <= spanTolerance
}

// spanNearest is how many candidate chains spanLike gives each of the
// wallet's chains, in rounds (nearestRanks): one as long as it or
// longer, one shorter.
const spanNearest = 2

// spanLike returns the scripts of the candidate chains nearest a
// wallet's chain of their shape (its era left to the place, which weighs
// it finer), by rank (nearestRanks): near[0] the nearest as long or
// longer (the first round), near[1] those and the nearest shorter (the
// second), so that the draw takes one of each side for each wallet's
// chain before the rest, not any lying within spanTolerance alike. It
// keeps in coverScan.spanShort how many of the wallet's chains no
// candidate of their shape lies like (chainPlace.lies), which warnDrawn
// warns of. Nil where the wallet has no chain.
func (d *roundDraw) spanLike() []map[string]bool {
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
	rank, met := nearestRanks(wallet, cands)
	near := make([]map[string]bool, spanNearest)
	for r := range near {
		near[r] = map[string]bool{}
	}
	for i, m := range ms {
		if r, ok := rank[chainKey(m, i)]; ok {
			for k := r; k < spanNearest; k++ {
				near[k][string(m.script)] = true
			}
		}
	}
	cs.spanShort, cs.spanChains = len(wallet)-met, len(wallet)
	return near
}

// nearestRanks ranks the candidate chains (cands, by chain) for the
// wallet's (wallet, by chain). The candidates of a wallet's chain are
// those of its shape and as many blocks whose mean height lies within
// spanTolerance of its; in each of spanNearest rounds every wallet's
// chain, in the order of its key, takes of them the one nearest its
// span that no chain took before, on the side of its span the round
// gives (even rounds as long or longer, odd ones shorter), whose rank is
// then the round (ties by key). The sides alternate since a peer ranks
// spans: covers all a little shorter than the wallet's chains tell them
// apart as well as covers far shorter do, and the chains a range holds
// of a wallet's shape lie shorter more often than not (a wallet's chain
// runs from its birth to the tip). met counts the wallet's chains some
// candidate lies like (chainPlace.lies).
func nearestRanks(wallet, cands map[uint64]shapedPlace) (rank map[uint64]int, met int) {
	wgs := slices.Sorted(maps.Keys(wallet))
	var longer, shorter [][]uint64
	for _, wg := range wgs {
		w := wallet[wg]
		var up, down []uint64
		lies := false
		for cg, c := range cands {
			if c.shape != w.shape || c.place.blocks != w.place.blocks || math.Abs(c.place.mean-w.place.mean) > spanTolerance {
				continue
			}
			lies = lies || c.place.lies(w.place)
			if c.place.span >= w.place.span {
				up = append(up, cg)
			} else {
				down = append(down, cg)
			}
		}
		if lies {
			met++
		}
		far := func(cg uint64) float64 { return math.Abs(cands[cg].place.span - w.place.span) }
		byNearness := func(a, b uint64) int { return cmp.Or(cmp.Compare(far(a), far(b)), cmp.Compare(a, b)) }
		slices.SortFunc(up, byNearness)
		slices.SortFunc(down, byNearness)
		longer, shorter = append(longer, up), append(shorter, down)
	}
	rank = map[uint64]int{}
	for r := range spanNearest {
		side := longer
		if r%2 == 1 {
			side = shorter
		}
		for i := range wgs {
			for _, cg := range side[i] {
				if _, ok := rank[cg]; !ok {
					rank[cg] = r
					break
				}
			}
		}
	}
	return rank, met
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
