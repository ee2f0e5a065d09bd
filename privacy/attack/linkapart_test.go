package attack

import (
	"slices"
	"testing"
)

// TestApartLowersPairsGroupsRuleOut: sessions 0, 1 and 2 hold one
// wallet's 23 lines, session 3 a payee's five of them and two lines of
// its own, session 4 those two and one more. Grouping joins 3 with 4 and
// the wallet's three sessions apart; 3's pairs with the wallet's
// sessions, above the threshold but left apart, are lowered, as the two
// groups together hold only 5 of the 21 their pairs are sure of; the
// pair 3-4, in one group, and a pair left apart whose groups together
// hold what they are sure of keep their probabilities.
func TestApartLowersPairsGroupsRuleOut(t *testing.T) {
	var wallet []int
	for i := range 23 {
		wallet = append(wallet, 1+i)
	}
	lines := [][]int{
		append(slices.Clone(wallet), 100, 101),
		append(slices.Clone(wallet), 200, 201),
		append(slices.Clone(wallet), 300),
		{1, 2, 3, 4, 5, 500, 501},
		{500, 501, 502},
		append(slices.Clone(wallet[:20]), 600),
	}
	probability := map[[2]int]float64{{0, 1}: 0.999, {0, 2}: 0.999, {1, 2}: 0.999, {0, 3}: 0.99, {1, 3}: 0.99, {2, 3}: 0.99,
		{3, 4}: 0.999, {0, 5}: 0.98, {1, 5}: 0.3, {2, 5}: 0.3}
	lk, pairs := linesLinker(lines, 0.1, func(x, y int) SessionLink {
		p := probability[[2]int{x, y}]
		return SessionLink{Probability: p, ProbabilityLow: p, ProbabilityHigh: 1}
	})
	groups := lk.group(pairs, 0.5)
	if !slices.EqualFunc(groups, [][]int{{0, 1, 2}, {3, 4}}, slices.Equal) {
		t.Fatalf("groups %v, want {0, 1, 2} and {3, 4}", groups)
	}
	lk.apart(pairs, groups, 0.5)
	for _, p := range pairs {
		was := probability[[2]int{p.A, p.B}]
		lowered := p.B == 3 && p.A <= 2
		switch {
		case lowered && !(p.Probability < 0.5 && p.Probability > 0.4 && p.ProbabilityLow == p.Probability):
			t.Errorf("pair %d-%d: %.4g [%.4g, %.4g], want near 0.497 (odds of 0.99 times %g)", p.A, p.B, p.Probability, p.ProbabilityLow, p.ProbabilityHigh, collapseTail)
		case !lowered && p.Probability != was:
			t.Errorf("pair %d-%d: %.4g, want %.4g kept", p.A, p.B, p.Probability, was)
		}
	}
}
