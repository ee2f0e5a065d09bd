package attack

import (
	"fmt"
	"math"
	"slices"
)

// linker compares the sessions of one Link call.
type linker struct {
	acc      *Accumulator
	u        *universeCounts
	prior    *sizePrior
	sessions []linkSession
	// classes are the universe's classes that hold candidates, counts
	// how many each holds.
	classes []int
	counts  []float64
	shared  map[[2]int]uint64 // by pair of indexes among sessions
	index   map[int]int       // the accumulator's group -> index among sessions
	mix     mixture
	pairAt  map[[2]int]int    // pair of indexes -> index in mix.pairs
	trios   map[[3]int]uint64 // three indexes -> candidates all three match
	// triosCut is true when the triples were not all counted.
	triosCut bool
	blind    [][2]int // pairs with an unlinkable session
	// warnings of the linking, and of the grouping.
	warnings []string
}

// newLinker gathers what the sessions (the accumulator's groups) need.
func (a *Accumulator) newLinker(groups []int, u *universeCounts) *linker {
	lk := &linker{acc: a, u: u, shared: map[[2]int]uint64{}, index: map[int]int{},
		mix: mixture{binned: map[int32]float64{}}, pairAt: map[[2]int]int{}}
	for cls, n := range u.classes {
		if n > 0 {
			lk.classes = append(lk.classes, cls)
			lk.counts = append(lk.counts, float64(n))
		}
	}
	lk.sessions = make([]linkSession, len(groups))
	for i, g := range groups {
		lk.sessions[i] = lk.session(g)
		lk.index[g] = i
	}
	lk.prior = a.linkPrior(lk.sessions, u.size)
	for i := range lk.sessions {
		s := &lk.sessions[i]
		s.logAny = lk.prior.anySize(s.matched, s.chance)
	}
	return lk
}

// session gathers what linking needs of group g.
func (lk *linker) session(g int) linkSession {
	r := lk.acc.report(g, lk.u)
	s := linkSession{group: g, matched: float64(r.MatchedCount), chance: r.ExpectedFalsePositives,
		exposed: r.EstimatedWallet, blind: lk.acc.set.limit[g] == 0, truncated: r.MatchedTruncated,
		copies: lk.acc.set.copies[g]}
	var joint *jointRates
	for _, f := range lk.acc.set.filters[g] {
		joint = joint.with(f)
	}
	s.keys = joint.keys
	s.rho = joint.classRate(1)
	s.rates = make([]float64, len(lk.classes))
	for i, cls := range lk.classes {
		s.rates[i] = joint.classRate(cls)
	}
	if !s.truncated {
		s.exposedBy = make([]float64, len(lk.classes))
	}
	for _, m := range r.Matched {
		s.lines = append(s.lines, m.Line)
		if i := slices.Index(lk.classes, m.class); i >= 0 && s.exposedBy != nil {
			s.exposedBy[i]++
		}
	}
	for i := range s.exposedBy {
		s.exposedBy[i] = math.Max(s.exposedBy[i]-lk.counts[i]*s.rates[i], 0)
	}
	slices.Sort(s.lines)
	return s
}

// bothByChance is the number of candidates expected to match the filters
// of both sessions x and y by chance: over the universe's classes, the
// product of the sessions' rates, or where they share a hashing (the same
// size, hash count and tweak) the rate of their filters together.
func (lk *linker) bothByChance(x, y int) float64 {
	pair := []*linkSession{&lk.sessions[x], &lk.sessions[y]}
	if lk.sharesHashing(pair) {
		return lk.jointChance(pair)
	}
	var both float64
	for i, n := range lk.counts {
		both += n * pair[0].rates[i] * pair[1].rates[i]
	}
	return both
}

// weigh counts the matches every pair of sessions shares and weighs them;
// with all, the pairs that share none are kept one by one (to be listed),
// else gathered by their likelihood ratios.
func (lk *linker) weigh(all bool) {
	byLine := map[int][]int{}
	for i := range lk.sessions {
		s := &lk.sessions[i]
		if s.unlinkable() {
			continue
		}
		for _, line := range s.lines {
			byLine[line] = append(byLine[line], i)
		}
	}
	for _, ss := range byLine {
		for x := range ss {
			for y := x + 1; y < len(ss); y++ {
				lk.shared[[2]int{ss[x], ss[y]}]++
			}
		}
	}
	lk.countTriangles(byLine)
	for x := range lk.sessions {
		switch s := &lk.sessions[x]; {
		case s.blind:
			lk.warnings = append(lk.warnings, fmt.Sprintf("session %d: its filters match every candidate, so nothing links it to another; its pairs keep the prior", s.group+1))
		case s.truncated:
			// Its shared matches would be undercounted, and chance would
			// then seem to give more than they share.
			lk.warnings = append(lk.warnings, fmt.Sprintf("session %d: its match list is truncated (--max-matches), so nothing links it to another; its pairs keep the prior", s.group+1))
		}
		for y := x + 1; y < len(lk.sessions); y++ {
			lk.weighPair(x, y, all)
		}
	}
	lk.weighBeyond()
}

// hiddenTail is how often chance alone must give at least a session's
// own matches for its wallet to count as hidden from them (see
// weighBeyond).
const hiddenTail = 0.05

// partner is a session z whose matches shared with a session x lie far
// above chance: x holds at least shared - quantile of its candidates
// (quantile the count chance exceeds with probability at most
// beyondTail over the sessions).
type partner struct {
	z        int
	shared   uint64
	quantile float64
}

// weighBeyond weighs again every pair that shares matches with what the
// other sessions show of each member (see the package documentation): a
// member holding, with a third session, candidates far above chance that
// the pair does not share holds at least that many beyond the pair's
// shared part, which its own matches cannot show where its filters
// match so many candidates by chance that its wallet is lost among
// them. So a payer whose own matches hide its wallet and its payee,
// sharing the payment, no longer read as one wallet whose sessions hold
// nothing else: the payer holds its own wallet (shared with its other
// sessions), the payee its other addresses. A member whose own matches
// show a wallet is not held to it: the pair's own matches weigh that
// wallet already. The fit reads the pairs so weighed. Nothing is
// weighed again when the triples were not all counted.
func (lk *linker) weighBeyond() {
	if lk.triosCut {
		return
	}
	tail := beyondTail / float64(max(len(lk.sessions), 1))
	partners := make([][]partner, len(lk.sessions))
	for i := range lk.mix.pairs {
		ev := &lk.mix.pairs[i]
		if ev.binned || ev.shared == 0 {
			continue
		}
		q := poissonQuantile(1-tail, ev.chance)
		if float64(ev.shared)-q < 1 {
			continue
		}
		partners[ev.x] = append(partners[ev.x], partner{z: ev.y, shared: ev.shared, quantile: q})
		partners[ev.y] = append(partners[ev.y], partner{z: ev.x, shared: ev.shared, quantile: q})
	}
	for i := range lk.mix.pairs {
		ev := &lk.mix.pairs[i]
		if ev.binned || ev.shared == 0 {
			continue
		}
		x, y := ev.x, ev.y
		beyond := [2]float64{lk.beyond(x, y, partners[x]), lk.beyond(y, x, partners[y])}
		for k, m := range []*linkSession{&lk.sessions[x], &lk.sessions[y]} {
			// Only a member whose own matches do not show a wallet
			// (chance gives as many at least hiddenTail of the time) is
			// held to the bound: where they show one, the pair's own
			// matches already weigh it.
			only, chance := math.Max(m.matched-float64(ev.shared), 0), math.Max(m.chance-ev.both, 0)
			if only >= 1 && poissonCDF(only-1, chance) > 1-hiddenTail {
				beyond[k] = 0
			}
		}
		if beyond[0] < 1 && beyond[1] < 1 {
			continue
		}
		next := lk.prior.evidenceBeyond(&lk.sessions[x], &lk.sessions[y], ev.shared, ev.both, beyond)
		next.x, next.y = x, y
		*ev = next
	}
}

// beyond is the number of candidates session x holds beyond what it
// shares with y, as its partners show: the most, over its partners z
// but y, of the matches x and z share that y does not match, less the
// quantile of their chance count.
func (lk *linker) beyond(x, y int, partners []partner) float64 {
	var most float64
	for _, p := range partners {
		if p.z == y {
			continue
		}
		t := [3]int{x, y, p.z}
		slices.Sort(t[:])
		most = math.Max(most, float64(p.shared)-float64(lk.trios[t])-p.quantile)
	}
	return most
}

// weighPair weighs the evidence of one pair of sessions.
func (lk *linker) weighPair(x, y int, all bool) {
	sx, sy := &lk.sessions[x], &lk.sessions[y]
	if sx.unlinkable() || sy.unlinkable() {
		if all {
			lk.blind = append(lk.blind, [2]int{x, y})
		}
		return
	}
	shared := lk.shared[[2]int{x, y}]
	ev := lk.prior.evidence(sx, sy, shared, lk.bothByChance(x, y))
	ev.x, ev.y = x, y
	if shared == 0 {
		// Its terms depend on no parameter but the priors: the fit counts
		// it among the binned pairs, listed or not.
		lk.mix.addBinned(&ev)
		ev.binned = true
		if !all {
			return
		}
	}
	lk.pairAt[[2]int{x, y}] = len(lk.mix.pairs)
	lk.mix.pairs = append(lk.mix.pairs, ev)
}

// fitPriors estimates the parameters from every pair, starting from one
// other session of a session's wallet among the rest (and as many pairs
// of wallets that paid each other), with the weight of as many pairs as
// there are sessions; fixed > 0 holds the priors.
func (lk *linker) fitPriors(fixed float64) linkFit {
	n := float64(len(lk.sessions))
	p := 1.0 / 3
	if n > 4 {
		p = 1 / (n - 1)
	}
	start := startParams(p)
	if fixed == 0 && len(lk.mix.pairs) == 0 && len(lk.mix.binned) == 0 {
		return linkFit{est: start}
	}
	return lk.mix.fitAll(start, n, fixed)
}

// links lists the pairs weighed one by one, and those with an unlinkable
// session at the prior, in order of their sessions.
func (lk *linker) links(fit *linkFit) []SessionLink {
	out := make([]SessionLink, 0, len(lk.mix.pairs)+len(lk.blind))
	unseen := lk.unseenPrior(fit)
	for i := range lk.mix.pairs {
		ev := &lk.mix.pairs[i]
		sl := SessionLink{A: lk.sessions[ev.x].group, B: lk.sessions[ev.y].group, Shared: ev.shared,
			ExpectedByChance: ev.chance, ExpectedIfSameWallet: ev.ifSame, Third: -1}
		sl.Probability, sl.ProbabilityLow, sl.ProbabilityHigh = fit.interval(ev)
		sl.ProbabilityHigh = unseen.reach(ev.x, ev.y, sl.Probability, sl.ProbabilityHigh)
		sl.ProbabilityShared = fit.est.posterior(ev)[sharedAddress]
		out = append(out, sl)
	}
	// A pair with an unlinkable session keeps the prior, which is that of
	// two sessions of wallets: its interval reaches down to none, as the
	// session may be of no wallet at all (its filters tell nothing).
	p, _, hi := fit.spread(func(q *linkParams) float64 { return q.priors[sameWallet] })
	for _, b := range lk.blind {
		out = append(out, SessionLink{A: lk.sessions[b[0]].group, B: lk.sessions[b[1]].group, Third: -1, Probability: p,
			ProbabilityHigh: hi, ProbabilityShared: fit.est.priors[sharedAddress]})
	}
	slices.SortFunc(out, func(p, q SessionLink) int {
		if p.A != q.A {
			return p.A - q.A
		}
		return p.B - q.B
	})
	return out
}

// unlistedMax is the highest probability of one wallet among the pairs
// gathered by their likelihood ratios (0 without any).
func (lk *linker) unlistedMax(fit *linkFit) float64 {
	top := 0.0
	for k := range lk.mix.binned {
		top = math.Max(top, posteriorOf(fit.est.priors, binnedEvidence(k))[sameWallet])
	}
	return top
}
