package client

import (
	"math"
	"testing"
)

// TestRiderScore: covers whose riders per appearance are the wallet's
// score 0; covers all above the wallet's, or at values it has none of,
// score far from it; and the nearest choice keeps, per class, the chains
// nearest the wallet's, the same length first.
func TestRiderScore(t *testing.T) {
	wallet := []float64{3, 3, 3.5, 3.5, 3.67}
	for _, tc := range []struct {
		name     string
		covers   []float64
		min, max float64
	}{
		{"the wallet's own", []float64{3, 3.5, 3.67, 3, 3.5}, 0, 0.01},
		{"all above", []float64{4, 4, 6, 6}, 1.49, 1.51},
		{"either side, none the wallet's", []float64{2, 4, 2, 4}, 0.99, 1.01},
		{"half the wallet's", []float64{3, 3.5, 2, 4}, 0.54, 0.56}, // AUC 0.55, half apart
	} {
		if got := riderScore(wallet, tc.covers); got < tc.min || got > tc.max {
			t.Errorf("%s: score %.3f, want within [%g, %g]", tc.name, got, tc.min, tc.max)
		}
	}
	w := riderChain{length: 2, class: 2, sig: []float64{3, 3.5}}
	cands := []riderChain{
		{length: 2, class: 2, sig: []float64{2, 4}},
		{length: 3, class: 2, sig: []float64{3, 3.5, 3.5}},
		{length: 2, class: 2, sig: []float64{3, 3.5}},
		{length: 2, class: 3, sig: []float64{3, 3.5}},
		{length: 2, class: 2, sig: []float64{3, math.NaN()}},
	}
	got := nearestRiders(map[int]int{2: 2}, map[int][]riderChain{2: {w}}, cands)
	if len(got) != 2 || got[0] != 2 || got[1] != 4 {
		t.Errorf("nearest chains %v, want [2 4]: the same riders, then one rider unknown", got)
	}
	if r := randomRiders(map[int]int{2: 3, 3: 1}, cands); len(r) != 4 {
		t.Errorf("a random choice of %d chains, want 4", len(r))
	}
}

// TestClassedScore: a cover's value that only a wallet's script of
// another class has counts as apart, as the attack sees a script's
// appearances; one a wallet's script of its class has does not.
func TestClassedScore(t *testing.T) {
	wallet, wk := []float64{4, 4, 5}, []int{2, 2, 3}
	for _, tc := range []struct {
		name     string
		covers   []float64
		ck       []int
		min, max float64
	}{
		{"each class the wallet's", []float64{4, 4, 5}, []int{2, 2, 3}, 0, 0.01},
		{"a class's value taken from another", []float64{5, 5, 5}, []int{2, 2, 3}, 0.99, 1.01}, // AUC 0.17, two of three apart
		{"classes not given", []float64{5, 5, 5}, nil, 0.32, 0.35},
	} {
		if got := classedScore(wallet, tc.covers, wk, tc.ck); got < tc.min || got > tc.max {
			t.Errorf("%s: score %.3f, want within [%g, %g]", tc.name, got, tc.min, tc.max)
		}
	}
}
