package client

import (
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer/cover"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

// TestFewRidersFirst: the draw takes, of each shape, the chains every
// member of which sat beside at most walletRiders scripts an appearance
// in the blocks read, before the others, and takes the others only
// where those are too few; a chain with one member of more riders, or
// one never read, is not taken first.
func TestFewRidersFirst(t *testing.T) {
	set, _, err := cover.Open(t.TempDir(), &chaincfg.RegressionNetParams)
	if err != nil {
		t.Fatal(err)
	}
	d := &roundDraw{cs: &coverScan{set: set}, coverBy: map[string]cover.Cover{}}
	// Chains of two, group g: riders per appearance of each member.
	chains := map[uint64][2]uint32{1: {3, 2}, 2: {3, 5}, 3: {2, 2}, 4: {9, 9}, 5: {3, 0}}
	shape := leak.Profile{Class: 2, Chain: 2}
	for g := uint64(1); g <= 5; g++ {
		for m := range 2 {
			s := []byte{0x00, 0x14, byte(g), byte(m), 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}
			read := uint16(1)
			if chains[g][m] == 0 {
				read = 0 // never read
			}
			d.coverBy[string(s)] = cover.Cover{Script: s, Profile: cover.Profile{Group: g, Riders: chains[g][m], Read: read}}
			p := shape
			p.Group = int(g)
			d.cands = append(d.cands, leak.Profiled{Script: s, Profile: p})
		}
	}
	first := d.fewRiders()
	groupOf := func(s []byte) uint64 { return d.coverBy[string(s)].Profile.Group }
	for s := range first {
		if g := groupOf([]byte(s)); g != 1 && g != 3 {
			t.Errorf("chain %d taken first: its riders %v", g, chains[g])
		}
	}
	if len(first) != 4 {
		t.Errorf("%d scripts taken first, want the 4 of chains 1 and 3", len(first))
	}
	shape.Era, shape.Type = 0, 0
	for _, tc := range []struct {
		need   int
		chains []uint64 // any of these, need of them
	}{
		{2, []uint64{1, 3}},
		{3, []uint64{1, 3, 2, 4, 5}},
	} {
		got, _ := d.cs.drawPreferring(d.cands, map[leak.Profile]int{shape: tc.need}, first)
		taken := map[uint64]bool{}
		for _, c := range got {
			taken[groupOf(c.Script)] = true
		}
		if len(taken) != tc.need || len(got) != 2*tc.need {
			t.Fatalf("need %d: drew chains %v (%d scripts)", tc.need, taken, len(got))
		}
		if !taken[1] || !taken[3] {
			t.Errorf("need %d: drew chains %v, want 1 and 3 among them", tc.need, taken)
		}
	}
}

// TestImproveRiders: swapping chains of a class for others of it lowers
// the score where a swap can, keeps the count of each class, and never
// takes a chain twice.
func TestImproveRiders(t *testing.T) {
	cands := []riderChain{
		{class: 2, group: 6}, {class: 2, group: 4}, {class: 2, group: 4}, {class: 2, group: 3},
		{class: 3, group: 7}, {class: 3, group: 5},
	}
	wallet := []float64{4, 4, 5}
	score := func(sel []int) float64 {
		var g []float64
		for _, i := range sel {
			g = append(g, float64(cands[i].group))
		}
		return riderScore(wallet, g)
	}
	sel, sc := improveRiders([]int{0, 3, 4}, cands, score)
	if want := score([]int{1, 2, 5}); sc > want+1e-9 {
		t.Errorf("score %.3f after swaps (%v), want %.3f (chains 1, 2 and 5)", sc, sel, want)
	}
	seen, classes := map[int]bool{}, map[int]int{}
	for _, i := range sel {
		if seen[i] {
			t.Errorf("chain %d taken twice: %v", i, sel)
		}
		seen[i] = true
		classes[cands[i].class]++
	}
	if classes[2] != 2 || classes[3] != 1 {
		t.Errorf("classes after swaps %v, want two of class 2 and one of 3", classes)
	}
}
