package client

import (
	"maps"
	"slices"
	"testing"
)

// stratum is a cell of the choice: a chain's class and its group's
// size.
type stratum struct{ class, group int }

// TestStrataChoice: the chains chosen are of the wallet's group sizes of
// their class, in its shares less the covers in use of each size; a
// size no chain drawn has is left short, never filled from another.
func TestStrataChoice(t *testing.T) {
	chain := func(class, group int) riderChain {
		return riderChain{length: 2, class: class, group: group, sig: []float64{3, 3}}
	}
	wallet := []riderChain{chain(2, 4), chain(2, 4), chain(2, 4), chain(2, 5), chain(3, 5), chain(3, 5)}
	for _, tc := range []struct {
		name  string
		want  map[int]int
		inUse []riderChain
		cands []riderChain
		// got counts the chains chosen by class and size.
		got map[stratum]int
	}{
		{"the wallet's shares", map[int]int{2: 4, 3: 2}, nil,
			[]riderChain{chain(2, 3), chain(2, 4), chain(2, 4), chain(2, 4), chain(2, 4), chain(2, 5), chain(2, 5), chain(2, 6), chain(3, 5), chain(3, 5), chain(3, 6)},
			map[stratum]int{{2, 4}: 3, {2, 5}: 1, {3, 5}: 2}},
		{"a size short left short", map[int]int{2: 4}, nil,
			[]riderChain{chain(2, 3), chain(2, 3), chain(2, 4), chain(2, 5), chain(2, 6)},
			map[stratum]int{{2, 4}: 1, {2, 5}: 1}},
		{"the covers in use counted", map[int]int{2: 2}, []riderChain{chain(2, 4), chain(2, 4)},
			[]riderChain{chain(2, 4), chain(2, 4), chain(2, 5), chain(2, 5)},
			map[stratum]int{{2, 4}: 1, {2, 5}: 1}},
		{"a class the wallet has not, any size", map[int]int{4: 1}, nil,
			[]riderChain{chain(4, 6), chain(2, 4)}, map[stratum]int{{4, 6}: 1}},
	} {
		sel := newStrataChoice(tc.want, wallet, tc.inUse, tc.cands).choose()
		got := map[stratum]int{}
		for _, i := range sel {
			got[stratum{tc.cands[i].class, tc.cands[i].group}]++
		}
		if !maps.Equal(got, tc.got) {
			t.Errorf("%s: chose %v, want %v", tc.name, got, tc.got)
		}
		if len(slices.Compact(slices.Sorted(slices.Values(sel)))) != len(sel) {
			t.Errorf("%s: a chain chosen twice: %v", tc.name, sel)
		}
	}
}

// TestImproveSwapsWithin: swaps for a lower score keep each chain's
// cell (sameStratum), where swaps within a class do not.
func TestImproveSwapsWithin(t *testing.T) {
	cands := []riderChain{{class: 2, group: 4}, {class: 2, group: 5}, {class: 2, group: 4}}
	// The score prefers chain 1, then chain 2, to chain 0.
	score := func(sel []int) float64 {
		s := 0.0
		for _, i := range sel {
			s += []float64{2, 0, 1}[i]
		}
		return s
	}
	if sel, _ := improveSwaps([]int{0}, cands, score, sameStratum); !slices.Equal(sel, []int{2}) {
		t.Errorf("within the cell: %v, want [2]", sel)
	}
	if sel, _ := improveRiders([]int{0}, cands, score); !slices.Equal(sel, []int{1}) {
		t.Errorf("within the class: %v, want [1]", sel)
	}
}
