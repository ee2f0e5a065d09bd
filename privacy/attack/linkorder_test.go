package attack

import (
	"strings"
	"testing"
)

// orderCase builds a linker over sessions of the given matches (each
// with one expected by chance), the pairs' shared counts (every pair
// listed given p) and the triples' joint counts.
func orderCase(matched []float64, shared map[[2]int]uint64, trios map[[3]int]uint64, p float64) (*linker, []SessionLink) {
	lk := &linker{shared: shared, trios: trios, index: map[int]int{}, pairAt: map[[2]int]int{}}
	var pairs []SessionLink
	for i, m := range matched {
		lk.sessions = append(lk.sessions, linkSession{group: i, matched: m, chance: 1})
		lk.index[i] = i
	}
	for pair, n := range shared {
		pairs = append(pairs, SessionLink{A: pair[0], B: pair[1], Shared: n, Probability: p})
	}
	return lk, pairs
}

// nested adds a wallet of sessions from..from+n-1 whose sessions nest,
// session k holding 10(k+1) candidates.
func nested(matched []float64, shared map[[2]int]uint64, trios map[[3]int]uint64, n int) []float64 {
	from := len(matched)
	for k := range n {
		matched = append(matched, float64(10*(k+1)))
	}
	for a := range n {
		for b := a + 1; b < n; b++ {
			shared[[2]int{from + a, from + b}] = uint64(10 * (a + 1))
			for c := b + 1; c < n; c++ {
				trios[[3]int{from + a, from + b, from + c}] = uint64(10 * (a + 1))
			}
		}
	}
	return matched
}

func TestLinkOrder(t *testing.T) {
	tests := []struct {
		name string
		// own is what session 0 holds beyond the 33 it shares with
		// sessions 1 and 2 (which share 53), elsewhere what another
		// session shares of it, and nests how many sessions of another
		// wallet nest beside them.
		own, elsewhere float64
		nests          int
		p              float64
		want           string
	}{
		{name: "payer", own: 14, nests: 5, p: 0.999, want: "session 1 and session 2; session 1 and session 3"},
		{name: "nested", own: 0, nests: 5, p: 0.999},
		{name: "held elsewhere", own: 14, elsewhere: 14, nests: 5, p: 0.999},
		{name: "out of order everywhere", own: 14, nests: 0, p: 0.999},
		{name: "below the threshold", own: 14, nests: 5, p: 0.98},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			matched := []float64{33 + tc.own, 56, 54}
			shared := map[[2]int]uint64{{0, 1}: 33, {0, 2}: 33, {1, 2}: 53}
			trios := map[[3]int]uint64{{0, 1, 2}: 33}
			if tc.elsewhere > 0 {
				matched = append(matched, 20)
				shared[[2]int{0, 3}] = uint64(tc.elsewhere)
			}
			matched = nested(matched, shared, trios, tc.nests)
			lk, pairs := orderCase(matched, shared, trios, tc.p)
			got := lk.order(pairs)
			if tc.want == "" {
				if got != "" {
					t.Fatalf("warned: %s", got)
				}
				return
			}
			if !strings.Contains(got, "the pairs of "+tc.want+" are given more than") {
				t.Fatalf("warning %q does not name pairs %s", got, tc.want)
			}
		})
	}
}
