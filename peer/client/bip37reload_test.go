package client

import "testing"

// TestOverRate checks when a BIP 37 filter's false positives call for a
// fresh one: far above the rate, over enough transactions, and more than
// the one or two a filter at its rate gives by chance.
func TestOverRate(t *testing.T) {
	for _, tc := range []struct {
		fps, txs int
		rate     float64
		want     bool
	}{
		{0, 1000, 0.0001, false},
		{1, 300, 0.0001, false},  // one by chance
		{2, 300, 0.0001, false},  // two by chance
		{3, 300, 0.0001, true},   // 3 > 10 × 0.03
		{3, 199, 0.0001, false},  // too few transactions
		{3, 3000, 0.0001, false}, // 3 = 10 × 0.3: at most ten times the rate
		{4, 3000, 0.0001, true},
		{30, 1000, 0.01, false}, // below ten times a high rate
		{101, 1000, 0.01, true},
	} {
		if got := overRate(tc.fps, tc.txs, tc.rate); got != tc.want {
			t.Errorf("overRate(%d, %d, %g) = %v, want %v", tc.fps, tc.txs, tc.rate, got, tc.want)
		}
	}
}
