package simulate

import (
	"math"
	"testing"
)

// TestBinPool: two bins scored apart pool to the bin of all their claims
// scored together; an empty one changes nothing.
func TestBinPool(t *testing.T) {
	claims := []struct {
		p     float64
		right bool
	}{{0.6, true}, {0.7, false}, {0.65, true}, {0.75, true}, {0.55, false}}
	var whole, a, b, empty Bin
	for i, c := range claims {
		whole.add(c.p, c.right)
		if i < 2 {
			a.add(c.p, c.right)
		} else {
			b.add(c.p, c.right)
		}
	}
	whole.finish()
	a.finish()
	b.finish()
	var pooled Bin
	for _, o := range []Bin{a, empty, b} {
		pooled.Pool(o)
	}
	near := func(x, y *float64) bool { return x != nil && y != nil && math.Abs(*x-*y) < 1e-12 }
	if pooled.Count != whole.Count || pooled.Right != whole.Right || !near(pooled.MeanProbability, whole.MeanProbability) ||
		!near(pooled.FractionRight, whole.FractionRight) || !near(pooled.WilsonLow, whole.WilsonLow) || !near(pooled.WilsonHigh, whole.WilsonHigh) {
		t.Errorf("pooled %+v, want the bin of all the claims %+v", pooled, whole)
	}
}
