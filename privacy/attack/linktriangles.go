package attack

import (
	"fmt"
	"math"
	"slices"
)

const (
	// triangleTail is how far above chance the matches three sessions
	// share must lie for the three to be weighed: their number is at most
	// this probable by chance.
	triangleTail = 0.001
	// maxTriangleWork bounds the triples of sessions counted over the
	// matched lines in one Link call.
	maxTriangleWork = 2_000_000
)

// countTriangles counts, for every three sessions, the candidates all
// three match, from the sessions matching each line (in increasing
// order).
func (lk *linker) countTriangles(byLine map[int][]int) {
	lk.trios = map[[3]int]uint64{}
	work := 0
	for _, ss := range byLine {
		if len(ss) < 3 {
			continue
		}
		for a := range ss {
			for b := a + 1; b < len(ss); b++ {
				for c := b + 1; c < len(ss); c++ {
					lk.trios[[3]int{ss[a], ss[b], ss[c]}]++
				}
			}
		}
		if work += len(ss) * len(ss) * len(ss) / 6; work > maxTriangleWork {
			lk.warnings = append(lk.warnings, fmt.Sprintf("more than %d triples of sessions share a match: the rest are not weighed", maxTriangleWork))
			lk.triosCut = true
			return
		}
	}
}

// triangles weighs the matches three sessions all share, for every three
// that share more than chance gives all three: a wallet of a few
// candidates behind filters of many false positives shows in no pair (its
// candidates are lost among the chance matches two sessions share) but
// shows in three, whose chance matches together are far fewer. The
// hypotheses are those of a pair, over the candidates all three match
// (see trianglePrior for their priors). A pair whose triangle makes it
// more probable takes the triangle's probability, and Third names the
// third session, but only when the pair's own matches support one wallet
// (more likely under it than under either other hypothesis): three
// sessions may not create a link their pairs do not support.
func (lk *linker) triangles(fit *linkFit, pairs []SessionLink, threshold float64) {
	at := map[[2]int]int{} // by indexes among sessions
	for i := range pairs {
		at[[2]int{lk.index[pairs[i].A], lk.index[pairs[i].B]}] = i
	}
	tri := linkFit{est: trianglePrior(fit.est)}
	for _, q := range fit.boot {
		tri.boot = append(tri.boot, trianglePrior(q))
	}
	trios := make([][3]int, 0, len(lk.trios))
	for t := range lk.trios {
		trios = append(trios, t)
	}
	slices.SortFunc(trios, func(a, b [3]int) int { return slices.Compare(a[:], b[:]) })
	for _, trio := range trios {
		x, y, z := trio[0], trio[1], trio[2]
		ix, okx := at[[2]int{x, y}]
		iy, oky := at[[2]int{x, z}]
		iz, okz := at[[2]int{y, z}]
		if !okx || !oky || !okz {
			continue
		}
		sides := [3]*SessionLink{&pairs[ix], &pairs[iy], &pairs[iz]}
		if sides[0].Probability > threshold && sides[1].Probability > threshold && sides[2].Probability > threshold {
			continue
		}
		ev, ok := lk.triangle(trio, lk.trios[trio])
		if !ok {
			continue
		}
		p, lo, hi := tri.interval(&ev)
		for k, side := range sides {
			if p <= side.Probability || !lk.supported(side, &fit.est) {
				continue
			}
			side.Probability, side.ProbabilityLow, side.ProbabilityHigh = p, lo, hi
			side.ProbabilityShared = tri.est.posterior(&ev)[sharedAddress]
			side.Third = lk.sessions[trio[2-k]].group
		}
	}
}

// supported reports whether a pair's own matches are more likely under
// one wallet than under either other hypothesis.
func (lk *linker) supported(side *SessionLink, q *linkParams) bool {
	ev := lk.pairOf(side.A, side.B)
	if ev == nil {
		return false
	}
	l := q.logLikes(ev)
	return l[sameWallet] > l[otherWallets] && l[sameWallet] > l[sharedAddress]
}

// trianglePrior is the parameters of three sessions from those of two,
// for priors s of one wallet and p of a payment: one wallet for all three
// s² (a third session joining two); three sessions that share addresses
// without being one wallet's 3sp + 3p² (two of them one wallet's and the
// third paying it or paid by it, the third any of the three; or a payee
// and two payers, or a payer and two payees, of the same addresses).
func trianglePrior(q linkParams) linkParams {
	p := q.priors
	same := p[sameWallet] * p[sameWallet]
	shared := 3*p[sameWallet]*p[sharedAddress] + 3*p[sharedAddress]*p[sharedAddress]
	q.priors = [hypotheses]float64{sameWallet: same, otherWallets: 1 - same - shared, sharedAddress: shared}
	return q
}

// triangle weighs the joint candidates the three sessions all match; ok
// is false when chance explains them.
func (lk *linker) triangle(trio [3]int, joint uint64) (pairEvidence, bool) {
	members := []*linkSession{&lk.sessions[trio[0]], &lk.sessions[trio[1]], &lk.sessions[trio[2]]}
	var both, cross, spread float64
	for i, n := range lk.counts {
		both += n * members[0].rates[i] * members[1].rates[i] * members[2].rates[i]
	}
	if lk.sharesHashing(members) {
		both = lk.jointChance(members)
	}
	for k, m := range members {
		// The other two, and the pair they make.
		a, b := members[(k+1)%3], members[(k+2)%3]
		cross += m.exposedMatching(a, b)
		spread += a.rho * a.rho * b.rho * b.rho * m.chance
		if ev := lk.pairOf(a.group, b.group); ev != nil {
			// Two of them one wallet, the third's filters matching it
			// by chance.
			cross += math.Max(float64(ev.shared)-ev.both, 0) * m.rho
			spread += m.rho * m.rho * float64(ev.shared)
		}
	}
	if poissonCDF(float64(joint)-1, both+cross) < 1-triangleTail {
		return pairEvidence{}, false
	}
	ev := lk.prior.weigh(members, joint, both, cross, spread)
	for k := range members {
		a, b := members[(k+1)%3], members[(k+2)%3]
		side := lk.pairOf(a.group, b.group)
		if side == nil {
			return pairEvidence{}, false
		}
		excess := math.Max(float64(side.shared)-float64(joint), 0)
		chance := math.Max(side.chance-(both+cross), 0)
		ev.sides = append(ev.sides, lk.prior.sideTerms(excess, chance, math.Max(float64(joint)-both, 0)))
	}
	return ev, true
}

// sharesHashing reports whether two of the sessions have filters of one
// hashing (the same size, hash count and tweak).
func (lk *linker) sharesHashing(members []*linkSession) bool {
	for i, a := range members {
		for _, b := range members[i+1:] {
			if slices.ContainsFunc(a.keys, func(k hashingKey) bool { return slices.Contains(b.keys, k) }) {
				return true
			}
		}
	}
	return false
}

// jointChance is the number of candidates expected to match every filter
// of the sessions by chance.
func (lk *linker) jointChance(members []*linkSession) float64 {
	var joint *jointRates
	for _, m := range members {
		for _, f := range lk.acc.set.filters[m.group] {
			joint = joint.with(f)
		}
	}
	var both float64
	for i, cls := range lk.classes {
		both += lk.counts[i] * joint.classRate(cls)
	}
	return both
}
