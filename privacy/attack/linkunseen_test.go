package attack

import (
	"math"
	"testing"
)

// TestUnseenShare checks the prior of one wallet for unseen sessions:
// groups of 2 and 4 sessions make a session's wallet hold (4+16)/6
// sessions on average, so two of 11 unseen sessions share a wallet with
// probability (20/6-1)/10; without a group, or with one unseen session,
// nothing is said; many sessions to few unseen are capped at 1. Taken z
// deviations up, E rises by z·sqrt(k/(k-1)·Σ(n²-E·n)²)/Σn: for groups of
// 2 and 4 (E = 10/3), sqrt(2·((4-20/3)² + (16-40/3)²))/6 = sqrt(2·128/9)/6
// per deviation; groups all of one size leave E as it is.
func TestUnseenShare(t *testing.T) {
	for _, tc := range []struct {
		name   string
		groups []float64
		unseen float64
		z      float64
		want   float64
	}{
		{"two groups", []float64{2, 4}, 11, 0, (20.0/6 - 1) / 10},
		{"pairs only", []float64{2, 2, 2}, 5, 0, 0.25},
		{"no group", nil, 10, 0, 0},
		{"one unseen", []float64{3}, 1, 0, 0},
		{"capped", []float64{50}, 2, 0, 1},
		{"two groups, two deviations up", []float64{2, 4}, 11, 2, (20.0/6 + 2*math.Sqrt(2*128.0/9)/6 - 1) / 10},
		{"one size, two deviations up", []float64{3, 3, 3}, 5, 2, 0.5},
		{"one group, two deviations up", []float64{3}, 5, 2, 0.5},
	} {
		if got := unseenShare(tc.groups, tc.unseen, tc.z); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestUnseenReach checks that a pair's upper end reaches the unseen
// sessions' prior only when one of its sessions is unseen and its
// probability lies below that prior, and for a pair of two unseen
// sessions the share of one wallet among the listed pairs of unseen
// sessions.
func TestUnseenReach(t *testing.T) {
	u := unseenPriors{unseen: []bool{true, false, false, true}, prior: 0.08, listed: 0.2}
	for _, tc := range []struct {
		name     string
		x, y     int
		p, hi    float64
		wantHigh float64
	}{
		{"unseen member below the prior", 0, 1, 0.01, 0.02, 0.08},
		{"unseen member above the prior", 0, 1, 0.2, 0.3, 0.3},
		{"upper end already above", 0, 2, 0.01, 0.5, 0.5},
		{"both seen", 1, 2, 0.01, 0.02, 0.02},
		{"both unseen, listed share", 0, 3, 0.01, 0.02, 0.2},
		{"both unseen, above the listed share", 0, 3, 0.25, 0.3, 0.3},
	} {
		if got := u.reach(tc.x, tc.y, tc.p, tc.hi); got != tc.wantHigh {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.wantHigh)
		}
	}
	none := unseenPriors{unseen: []bool{true, true}}
	if got := none.reach(0, 1, 0.01, 0.02); got != 0.02 {
		t.Errorf("no prior: %v, want 0.02", got)
	}
}

// TestListedShare checks the share of one wallet among the listed pairs
// of unseen sessions: 10 unseen sessions make 45 pairs, of which a prior
// of 0.1 is 4.5 of one wallet, all among the 15 listed (0.3); with every
// pair listed, or none, the prior; many pairs of one wallet to few listed
// are capped at 1.
func TestListedShare(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		prior, unseen, listed float64
		want                  float64
	}{
		{"a third listed", 0.1, 10, 15, 0.3},
		{"all listed", 0.1, 10, 45, 0.1},
		{"none listed", 0.1, 10, 0, 0.1},
		{"no prior", 0, 10, 15, 0},
		{"capped", 0.5, 10, 5, 1},
	} {
		if got := listedShare(tc.prior, tc.unseen, tc.listed); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
