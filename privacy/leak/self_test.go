package leak

import (
	"math"
	"testing"
)

// TestSelfCorrected: the null's count of a class's groups less the
// wallet's share of the shifts' groups the fetched set matches too (see
// the package documentation), never above the shifts' mean, and the
// mean itself where nothing is to be taken out or nothing can be told.
func TestSelfCorrected(t *testing.T) {
	for _, c := range []struct {
		name    string
		m, x, g float64
		want    float64
	}{
		{"no self hits", 8, 0, 20, 8},
		{"no groups", 8, 3, 0, 8},
		{"null at or above the groups", 20, 5, 20, 20},
		{"hits reach the groups", 8, 20, 20, 8},
		// h = 0.25: 8 - 0.25·1.25·12 = 4.25.
		{"a quarter hit", 8, 5, 20, 4.25},
		// h = 0.5: 2 - 0.5·1.5·18 < 0.
		{"never below 0", 2, 10, 20, 0},
		// h = 5.47/6 near 1: every group hit, little taken out.
		{"almost every block fetched", 5.47, 5.47, 6, 5.47 - 5.47/6*(1+5.47/6)*(6-5.47)},
	} {
		got := selfCorrected(c.m, c.x, c.g)
		if math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: selfCorrected(%g, %g, %g) = %g, want %g", c.name, c.m, c.x, c.g, got, c.want)
		}
		if got > c.m || got < 0 {
			t.Errorf("%s: %g outside [0, %g]", c.name, got, c.m)
		}
	}
}
