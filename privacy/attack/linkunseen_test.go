package attack

import (
	"math"
	"testing"
)

// TestUnseenShare checks the prior of one wallet for unseen sessions:
// groups of 2 and 4 sessions make a session's wallet hold (4+16)/6
// sessions on average, so two of 11 unseen sessions share a wallet with
// probability (20/6-1)/10; without a group, or with one unseen session,
// nothing is said; many sessions to few unseen are capped at 1.
func TestUnseenShare(t *testing.T) {
	for _, tc := range []struct {
		name   string
		groups []float64
		unseen float64
		want   float64
	}{
		{"two groups", []float64{2, 4}, 11, (20.0/6 - 1) / 10},
		{"pairs only", []float64{2, 2, 2}, 5, 0.25},
		{"no group", nil, 10, 0},
		{"one unseen", []float64{3}, 1, 0},
		{"capped", []float64{50}, 2, 1},
	} {
		if got := unseenShare(tc.groups, tc.unseen); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestUnseenReach checks that a pair's upper end reaches the unseen
// sessions' prior only when one of its sessions is unseen and its
// probability lies below that prior.
func TestUnseenReach(t *testing.T) {
	u := unseenPriors{unseen: []bool{true, false, false}, prior: 0.08}
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
