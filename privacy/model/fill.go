package model

import "math"

// fillGridStep and fillGridWidth are the step and half-width, in standard
// deviations, of the grid over which the confidence is averaged across
// filter fills.
const (
	fillGridStep  = 0.5
	fillGridWidth = 6
)

// logRateOverFills returns the mean and standard deviation of ln q, where
// q is the chance that a candidate outside the wallet matches b filters of
// bytes bytes and k hash functions, each holding inserted elements with
// its own tweak (per filter (X/m)^k for X of its m bits set, squared under
// the pair test).
//
// The model takes q at the expected fill, pf = (E[X]/m)^k; a real filter's
// fill varies from one tweak to the next. The kn hash positions of the
// elements fall on m bits, so the number Z = m - X of bits left clear has
// E[Z] = m(1-1/m)^(kn) and E[Z(Z-1)] = m(m-1)(1-2/m)^(kn) (the occupancy
// moments); ln(X/m) has, to second order, mean ln(E[X]/m) - Var X/(2E[X]²)
// and variance Var X/E[X]², and the b filters' fills are independent.
func logRateOverFills(bytes, k uint32, inserted uint64, b uint32, pair bool) (mean, sd float64) {
	m := float64(bytes) * 8
	t := float64(k) * float64(inserted)
	clear := m * math.Exp(t*math.Log1p(-1/m))
	clearPairs := m * (m - 1) * math.Exp(t*math.Log1p(-2/m))
	varX := math.Max(clearPairs+clear-clear*clear, 0)
	set := m - clear
	c := float64(k)
	if pair {
		c *= 2
	}
	rel := varX / (set * set)
	return float64(b) * c * (math.Log(set/m) - rel/2), c * math.Sqrt(float64(b)*rel)
}

// confidenceOverFills is E[P_h(1)] and E[P_h(N)] averaged over the
// binomial number of false positives and over the fills of b filters of
// sizing s: ln q taken as normal with the moments of logRateOverFills, on
// a grid of half standard deviations to six either side.
func (p AdviceParams) confidenceOverFills(s filterSizing, b uint32) (ph1, phAll float64) {
	m := p.Model
	inserted := uint64(m.Addresses) * uint64(m.ElementsPerAddress)
	mean, sd := logRateOverFills(s.bytes, s.hashFuncs, inserted, b, m.PairTest)
	n, others := float64(m.Addresses), float64(m.UniverseSize-uint64(m.Addresses))
	if sd == 0 {
		return expectedPH(n, others, math.Exp(mean))
	}
	var mass float64
	for i := -fillGridWidth / fillGridStep; i <= fillGridWidth/fillGridStep; i++ {
		z := float64(i) * fillGridStep
		w := math.Exp(-z * z / 2)
		a, all := expectedPH(n, others, math.Min(math.Exp(mean+sd*z), 1))
		mass += w
		ph1 += w * a
		phAll += w * all
	}
	return ph1 / mass, phAll / mass
}

// marginZ is the standard normal's 5% quantile, negated: 95% of real
// filters have a rate above exp(mean - marginZ·sd) of ln q's law.
const marginZ = 1.6448536269514722

// confidenceForMostFills is E[P_h(1)] and E[P_h(N)] over the binomial
// number of false positives for the filters of sizing s whose rate is
// the 5% quantile of real fills' (ln q normal, as in confidenceOverFills):
// the confidence falls as the rate grows, so that 95% of real filters
// built of s give the attacker less.
func (p AdviceParams) confidenceForMostFills(s filterSizing, b uint32) (ph1, phAll float64) {
	m := p.Model
	inserted := uint64(m.Addresses) * uint64(m.ElementsPerAddress)
	mean, sd := logRateOverFills(s.bytes, s.hashFuncs, inserted, b, m.PairTest)
	return expectedPH(float64(m.Addresses), float64(m.UniverseSize-uint64(m.Addresses)), math.Min(math.Exp(mean-marginZ*sd), 1))
}
