package attack

import (
	"bytes"
	"encoding/json"
	"math"
	"sync"
	"testing"

	"github.com/spvfilter/spvfilter/bip37"
)

// freshReports is what an accumulator of groups gives having read each of
// universes in turn and nothing else: the reference a reused accumulator
// must give again.
func freshReports(t *testing.T, groups [][]*bip37.Filter, universes ...[]byte) (*Accumulator, []*Report) {
	t.Helper()
	acc, err := NewAccumulator(groups, AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range universes {
		if err := acc.ReadUniverse(bytes.NewReader(u)); err != nil {
			t.Fatal(err)
		}
	}
	reps, err := acc.Reports()
	if err != nil {
		t.Fatal(err)
	}
	return acc, reps
}

// sameProbabilities fails unless got and want list the same matches with
// the same probabilities, each report and the prior it was weighed under.
func sameProbabilities(t *testing.T, what string, got, want []*Report) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d reports, want %d", what, len(got), len(want))
	}
	for g := range want {
		if got[g].sizes.public() != want[g].sizes.public() {
			t.Errorf("%s: session %d weighed under the size prior %+v, a fresh accumulator under %+v", what, g, got[g].sizes.public(), want[g].sizes.public())
		}
		if len(got[g].Matched) != len(want[g].Matched) {
			t.Fatalf("%s: session %d: %d matches, want %d", what, g, len(got[g].Matched), len(want[g].Matched))
		}
		for i, w := range want[g].Matched {
			if m := got[g].Matched[i]; m.Line != w.Line || m.Probability != w.Probability {
				t.Fatalf("%s: session %d, match %d: line %d P %v, a fresh accumulator line %d P %v", what, g, i, m.Line, m.Probability, w.Line, w.Probability)
			}
		}
	}
}

// TestPriorsStaleAfterState holds the priors kept on an accumulator to
// its counts when a saved state replaces them (UnmarshalJSON): the
// reports, intersections and links that follow are those of a fresh
// accumulator of the state's counts, not weighed under the priors fitted
// on what was read before.
func TestPriorsStaleAfterState(t *testing.T) {
	groups, small := sessionsCapture(5, 20, 3_000)
	_, large := sessionsCapture(6, 0, 40_000)
	saved, want := freshReports(t, groups, small, large)
	state, err := json.Marshal(saved)
	if err != nil {
		t.Fatal(err)
	}

	acc, _ := freshReports(t, groups, small) // priors of the small reading kept
	if err := json.Unmarshal(state, acc); err != nil {
		t.Fatal(err)
	}
	got, err := acc.Reports()
	if err != nil {
		t.Fatal(err)
	}
	sameProbabilities(t, "Reports after a state replaced the counts", got, want)

	ri, err := acc.Intersect([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	wi, err := saved.Intersect([]int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if ri.sizes.public() != wi.sizes.public() {
		t.Errorf("Intersect after a state: size prior %+v, a fresh accumulator's %+v", ri.sizes.public(), wi.sizes.public())
	}
}

// TestPriorsMergeOrders holds the kept priors to what was merged, in any
// order, into itself or from an empty accumulator: each gives the
// reports of a fresh accumulator that read the same lines in the same
// order.
func TestPriorsMergeOrders(t *testing.T) {
	groups, a := sessionsCapture(7, 15, 4_000)
	_, b := sessionsCapture(8, 0, 30_000)
	read := func(univ []byte) *Accumulator {
		acc, _ := freshReports(t, groups, univ) // priors fitted and kept
		return acc
	}
	empty := func() *Accumulator {
		acc, err := NewAccumulator(groups, AnalyzeOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return acc
	}
	for _, tc := range []struct {
		name  string
		merge func() *Accumulator
		lines [][]byte
	}{
		{"a then b", func() *Accumulator {
			x := read(a)
			if err := x.Merge(read(b)); err != nil {
				t.Fatal(err)
			}
			return x
		}, [][]byte{a, b}},
		{"b then a", func() *Accumulator {
			x := read(b)
			if err := x.Merge(read(a)); err != nil {
				t.Fatal(err)
			}
			return x
		}, [][]byte{b, a}},
		{"a into itself", func() *Accumulator {
			x := read(a)
			if err := x.Merge(x); err != nil {
				t.Fatal(err)
			}
			return x
		}, [][]byte{a, a}},
		{"a into an empty one", func() *Accumulator {
			x := empty()
			if err := x.Merge(read(a)); err != nil {
				t.Fatal(err)
			}
			return x
		}, [][]byte{a}},
		{"an empty one into a", func() *Accumulator {
			x := read(a)
			if err := x.Merge(empty()); err != nil {
				t.Fatal(err)
			}
			return x
		}, [][]byte{a}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, want := freshReports(t, groups, tc.lines...)
			got, err := tc.merge().Reports()
			if err != nil {
				t.Fatal(err)
			}
			sameProbabilities(t, tc.name, got, want)
		})
	}
}

// TestIntersectSessionOrder holds an intersection's probabilities to its
// members, not their order nor that of the accumulator's groups.
func TestIntersectSessionOrder(t *testing.T) {
	groups, univ := sessionsCapture(9, 12, 5_000)
	// A session sent twice: the first group's filter again, so that
	// the pair shares every match.
	groups = append(groups, groups[0])
	rev := make([][]*bip37.Filter, len(groups))
	for g := range groups {
		rev[len(groups)-1-g] = groups[g]
	}
	acc, _ := freshReports(t, groups, univ)
	racc, _ := freshReports(t, rev, univ)
	n := len(groups) - 1
	byLine := func(r *Report) map[int]float64 {
		m := map[int]float64{}
		for _, mc := range r.Matched {
			m[mc.Line] = mc.Probability
		}
		return m
	}
	var want map[int]float64
	for _, tc := range []struct {
		name    string
		acc     *Accumulator
		members []int
	}{
		{"in order", acc, []int{0, n}},
		{"members reversed", acc, []int{n, 0}},
		{"groups reversed", racc, []int{n, 0}},
		{"groups and members reversed", racc, []int{0, n}},
	} {
		r, err := tc.acc.Intersect(tc.members)
		if err != nil {
			t.Fatal(err)
		}
		got := byLine(r)
		if len(got) == 0 {
			t.Fatalf("%s: no joint match", tc.name)
		}
		if want == nil {
			want = got
			continue
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d joint matches, in order %d", tc.name, len(got), len(want))
		}
		for line, p := range want {
			if q, ok := got[line]; !ok || math.Abs(q-p) > 1e-9 || math.IsNaN(q) {
				t.Errorf("%s: line %d P %v, in order %v", tc.name, line, q, p)
			}
		}
	}
}

// TestPriorsConcurrentReaders calls what only reads what was read,
// Reports, Intersect and Link, from several goroutines at once on an
// accumulator whose priors are not fitted yet: each fits or takes the
// priors kept without a race (go test -race), and all give what one call
// alone gives.
func TestPriorsConcurrentReaders(t *testing.T) {
	groups, univ := sessionsCapture(12, 8, 3_000)
	_, want := freshReports(t, groups, univ)
	acc, err := NewAccumulator(groups, AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := acc.ReadUniverse(bytes.NewReader(univ)); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 12)
	got := make([][]*Report, 4)
	for i := range 4 {
		wg.Add(3)
		go func() {
			defer wg.Done()
			reps, err := acc.Reports()
			got[i] = reps
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := acc.Intersect([]int{0, 1 + i})
			errs <- err
		}()
		go func() {
			defer wg.Done()
			_, err := acc.Link(nil, LinkOptions{})
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, reps := range got {
		sameProbabilities(t, "Reports called alongside Intersect and Link", reps, want)
	}
}
