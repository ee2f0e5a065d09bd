package client

import (
	"math"
	"testing"
)

// TestKeepChances: askedLike keeps candidate chains of a length the
// wallet's chains have so that those kept have the wallet's mixture of
// blocks asked before; other lengths are left out of the map (kept).
func TestKeepChances(t *testing.T) {
	for _, tc := range []struct {
		name          string
		wallet, cands map[askedKey]int
		want          map[askedKey]float64
	}{
		{
			name:   "the mixture the wallet's",
			wallet: map[askedKey]int{{2, 1}: 5, {2, 2}: 5},
			cands:  map[askedKey]int{{2, 1}: 90, {2, 2}: 10},
			// Ratios 0.5/0.9 and 0.5/0.1: the rare count kept for sure.
			want: map[askedKey]float64{{2, 1}: (0.5 / 0.9) / 5, {2, 2}: 1},
		},
		{
			name:   "a count the wallet's chains lack",
			wallet: map[askedKey]int{{3, 1}: 4},
			cands:  map[askedKey]int{{3, 1}: 10, {3, 2}: 10},
			want:   map[askedKey]float64{{3, 1}: 1, {3, 2}: 0},
		},
		{
			name:   "a length the wallet's chains lack",
			wallet: map[askedKey]int{{2, 1}: 4},
			cands:  map[askedKey]int{{1, 1}: 50, {2, 1}: 3},
			want:   map[askedKey]float64{{2, 1}: 1},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := keepChances(tc.wallet, tc.cands)
			if len(got) != len(tc.want) {
				t.Fatalf("chances %v, want %v", got, tc.want)
			}
			for k, w := range tc.want {
				if g, ok := got[k]; !ok || math.Abs(g-w) > 1e-9 {
					t.Errorf("chance of %v: %v, want %v", k, got[k], w)
				}
			}
		})
	}
}
