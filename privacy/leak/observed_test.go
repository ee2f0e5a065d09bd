package leak

import (
	"math"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// TestObservedCount: a session's interval on its wallet's groups is its
// observed groups less the range of its chance count given that the
// count is no more than observed, from its 3.5% quantile to its 98.5%
// one, and its level that range's mass under the count so conditioned.
func TestObservedCount(t *testing.T) {
	for _, c := range []struct {
		name              string
		observed, m, v    float64
		n, lo, hi         float64
		levelLow, levelUp float64
	}{
		// Far from the observed groups the condition changes nothing:
		// Poisson(8)'s range is 3 to 15 (its central one 3 to 14).
		{name: "unconditioned", observed: 40, m: 8, v: 8, n: 32, lo: 25, hi: 37, levelLow: 0.95, levelUp: 0.99},
		// A chance mean above the groups observed (the shifts matched
		// more than the fetched set did): its law on 0..10 puts the
		// count near 10, and the wallet's groups near 0 but not at it.
		{name: "above", observed: 10, m: 16, v: 16, n: 0, lo: 0, hi: 4, levelLow: 0.95, levelUp: 1},
		// Few groups: the whole range of 0..2 holds more than 95%.
		{name: "few", observed: 2, m: 1, v: 1, n: 1, lo: 0, hi: 2, levelLow: 1, levelUp: 1},
		{name: "none observed", observed: 0, m: 3, v: 3, levelLow: 1, levelUp: 1},
		{name: "no chance", observed: 5, m: 0, v: 0, n: 5, lo: 5, hi: 5, levelLow: 1, levelUp: 1},
	} {
		n, lo, hi, level := observedCount(c.observed, c.m, c.v)
		if n != c.n || lo != c.lo || hi != c.hi || level < c.levelLow-1e-12 || level > c.levelUp+1e-12 {
			t.Errorf("%s: %g [%g, %g] at %g, want %g [%g, %g] at [%g, %g]", c.name, n, lo, hi, level, c.n, c.lo, c.hi, c.levelLow, c.levelUp)
		}
	}
	// Chance may explain every group (its central range reaches the 615
	// observed): the interval reaches none of the wallet's, whatever
	// the law's tail below 615.
	if n, lo, hi, _ := observedCount(615, 605.7, 2000); lo != 0 || n < 9.2 || n > 9.4 || hi < 50 {
		t.Errorf("615 observed, chance 605.7 of variance 2000: %g [%g, %g], want 9.3 [0, 50 or more]", n, lo, hi)
	}
	// Unconditioned, the level is the Poisson mass of 3 to 15, and
	// less goes above the range than below it.
	_, _, _, level := observedCount(40, 8, 8)
	var want, above float64
	for x := 0.0; x <= 60; x++ {
		p := math.Exp(model.LogPoisson(x, 8))
		switch {
		case x >= 3 && x <= 15:
			want += p
		case x > 15:
			above += p
		}
	}
	if math.Abs(level-want) > 1e-9 {
		t.Errorf("level %g, want the Poisson mass of 3 to 15, %g", level, want)
	}
	if above > chanceAboveTail {
		t.Errorf("Poisson(8): %g above the range, want at most %g", above, chanceAboveTail)
	}
}
