package attack

import "math"

// hubs weighs together the links of a session x whose matches lie
// within those of two sessions y and z that are not one wallet's (see
// the package documentation): one wallet's sessions are all one
// wallet's, so x cannot be of y's wallet and of z's both unless y and z
// are one wallet's too. The pairs' probabilities, taken as the evidence
// of each pair alone, are weighed over the ways three sessions can be
// one wallet's or not (none, one of the three pairs, all three), and a
// pair of x takes the least it gets over the sessions z. Only pairs
// given more than one half are weighed, and only where x holds nothing
// beyond what it shares with each (its own matches within what chance
// gives them 1-showTail of the time): a session of several wallets
// behind one client holds each of them, and is linked to sessions of
// either, but it holds more than each.
func (lk *linker) hubs(pairs []SessionLink, prior float64) {
	at := make(map[[2]int]int, len(pairs)) // by the accumulator's groups
	for i := range pairs {
		at[[2]int{min(pairs[i].A, pairs[i].B), max(pairs[i].A, pairs[i].B)}] = i
	}
	inside := map[int][]int{} // session (group) -> its pairs it lies within
	for i := range pairs {
		p := &pairs[i]
		ev := lk.pairOf(p.A, p.B)
		if p.Probability <= 0.5 || p.Shared == 0 || ev == nil {
			continue
		}
		for _, g := range []int{p.A, p.B} {
			s := &lk.sessions[lk.index[g]]
			only, chance := math.Max(s.matched-float64(p.Shared), 0), math.Max(s.chance-ev.both, 0)
			if only < 1 || poissonCDF(only-1, chance) <= 1-showTail {
				inside[g] = append(inside[g], i)
			}
		}
	}
	lowered := map[int]float64{}
	for x, list := range inside {
		for _, a := range list {
			for _, b := range list {
				if a == b {
					continue
				}
				y, z := pairs[a].other(x), pairs[b].other(x)
				var pyz float64
				if i, ok := at[[2]int{min(y, z), max(y, z)}]; ok {
					pyz = pairs[i].Probability
				}
				if pyz > 0.5 {
					continue
				}
				p := transitive(pairs[a].Probability, pairs[b].Probability, pyz, prior)
				if old, ok := lowered[a]; !ok || p < old {
					lowered[a] = p
				}
			}
		}
	}
	for i, p := range lowered {
		if s := &pairs[i]; p < s.Probability {
			s.Probability = p
			s.ProbabilityLow = math.Min(s.ProbabilityLow, p)
		}
	}
}

// other is the session of the pair that is not g.
func (s *SessionLink) other(g int) int {
	if s.A == g {
		return s.B
	}
	return s.A
}

// showTail is how rarely chance alone gives a session's own matches for
// them to show candidates beyond what a pair shares.
const showTail = 0.01

// transitive is the probability that x and y are one wallet's, of
// pairwise probabilities pxy, pxz and pyz at a prior of one wallet, over
// the partitions of three sessions into wallets: none together (of
// weight one), one pair together (each of the three, of weight its
// odds: the prior's odds times the pair's likelihood ratio), or all three
// (the prior's odds squared, a third session joining two, times the
// three pairs' likelihood ratios).
func transitive(pxy, pxz, pyz, prior float64) float64 {
	odds := func(p float64) float64 {
		p = math.Min(math.Max(p, 1e-12), 1-1e-12)
		return p / (1 - p)
	}
	a, b, c := odds(pxy), odds(pxz), odds(pyz)
	all := a * b * c / odds(prior)
	return (a + all) / (1 + a + b + c + all)
}
