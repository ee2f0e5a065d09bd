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
	blind   [][2]int          // pairs with an unlinkable session
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
	lk.prior = fitSizes(lk.sessions, u.size)
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
		exposed: r.EstimatedWallet, blind: lk.acc.set.limit[g] == 0, truncated: r.MatchedTruncated}
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
	for i := range lk.mix.pairs {
		ev := &lk.mix.pairs[i]
		sl := SessionLink{A: lk.sessions[ev.x].group, B: lk.sessions[ev.y].group, Shared: ev.shared,
			ExpectedByChance: ev.chance, ExpectedIfSameWallet: ev.ifSame, Third: -1}
		sl.Probability, sl.ProbabilityLow, sl.ProbabilityHigh = fit.interval(ev)
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
