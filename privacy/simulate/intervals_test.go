package simulate

import "testing"

// TestHoldingSureClaims: claims given P = 1 with point intervals, all
// right, hold the rate of the claims like them, as do claims given P = 0,
// none right: the rate's Wilson interval reaches 1 (or 0) however its
// rounding falls.
func TestHoldingSureClaims(t *testing.T) {
	for _, tc := range []struct {
		name  string
		p     float64
		right bool
	}{
		{"sure, all right", 1, true},
		{"sure, nearly", 1 - 1e-15, true},
		{"impossible, none right", 0, false},
	} {
		for _, n := range []int{1, 3, 7, 48, 113, 1000} {
			claims := make([]probClaim, n)
			for i := range claims {
				claims[i] = probClaim{p: tc.p, low: tc.p, high: tc.p, right: tc.right}
			}
			held := 0
			for _, h := range holdingClaims(claims) {
				if h {
					held++
				}
			}
			if held != n {
				t.Errorf("%s, %d claims: %d hold", tc.name, n, held)
			}
		}
	}
}
