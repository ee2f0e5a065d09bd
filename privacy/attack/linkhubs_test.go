package attack

import (
	"math"
	"testing"
)

// TestTransitiveLinks: a session linked to two sessions that are not one
// wallet's cannot be of both wallets, so where the two are surely apart
// its links share one probability between them; where they may be one
// wallet's, or the second link is weak, its link keeps its probability.
func TestTransitiveLinks(t *testing.T) {
	const prior = 0.02
	for _, tc := range []struct {
		name          string
		pxy, pxz, pyz float64
		min, max      float64
	}{
		{"two sure links to sessions surely apart", 0.998, 0.998, 1e-6, 0.45, 0.55},
		{"a sure link beside a stronger one", 0.99, 0.9999, 1e-6, 0, 0.02},
		{"a weak second link", 0.998, 0.01, 1e-6, 0.997, 0.9981},
		{"two sessions apart by their prior alone", 0.998, 0.998, prior, 0.99, 0.9981},
		{"all three one wallet's", 0.9, 0.9, 0.9, 0.9, 1},
	} {
		p := transitive(tc.pxy, tc.pxz, tc.pyz, prior)
		if !(p >= tc.min && p <= tc.max) || math.IsNaN(p) {
			t.Errorf("%s: %.4g, want %g..%g", tc.name, p, tc.min, tc.max)
		}
	}
}
