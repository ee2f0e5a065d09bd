package attack

import (
	"math"
	"slices"
)

// apart lowers the pairs above the threshold that the groups leave
// apart where the two sessions' groups (a session in none a group of
// itself) together do not hold what their pairs and members are sure of,
// as consistent tells: their odds are multiplied by collapseTail (see the
// package documentation). Two sessions alone are never so weighed.
func (lk *linker) apart(pairs []SessionLink, groups [][]int, threshold float64) {
	of := map[int][]int{}
	for _, g := range groups {
		for _, s := range g {
			of[s] = g
		}
	}
	groupOf := func(s int) []int {
		if g, ok := of[s]; ok {
			return g
		}
		return []int{s}
	}
	for i := range pairs {
		p := &pairs[i]
		if p.Linked || p.Probability <= threshold {
			continue
		}
		union := append(slices.Clone(groupOf(p.A)), groupOf(p.B)...)
		slices.Sort(union)
		union = slices.Compact(union)
		if len(union) < 3 || lk.jointMatches(union) >= lk.lowerBound(union)/2 {
			continue
		}
		q := math.Min(p.Probability, 1-1e-12)
		odds := q / (1 - q) * collapseTail
		p.Probability = odds / (1 + odds)
		p.ProbabilityLow = math.Min(p.ProbabilityLow, p.Probability)
	}
}
