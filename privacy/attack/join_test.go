package attack

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/bip37"
)

// splitGroups cuts groups into consecutive parts of the given sizes (the
// rest in a last part).
func splitGroups(groups [][]*bip37.Filter, sizes []int) [][][]*bip37.Filter {
	var parts [][][]*bip37.Filter
	for _, n := range sizes {
		parts, groups = append(parts, groups[:n]), groups[n:]
	}
	if len(groups) > 0 {
		parts = append(parts, groups)
	}
	return parts
}

// TestJoinEqualsOnePass is the differential test of a capture split by
// its sessions: each part of the groups reads the universe (in pieces,
// merged, and sent as JSON, as the workers of a distributed run do), and
// the parts joined give the reports, the links and the intersections of
// one accumulator of all the groups.
func TestJoinEqualsOnePass(t *testing.T) {
	mixedText, mixed := mergeFixture(t)
	sc := newSyntheticCapture(12, 12, 20_000, 0.002)
	for _, tc := range []struct {
		name      string
		groups    [][]*bip37.Filter
		universe  string
		opts      AnalyzeOptions
		parts     []int // sizes of the parts but the last
		pieces    []int // sizes of the universe's pieces but the last
		intersect []int
	}{
		{"mixed groups, three parts", mixed, mixedText, AnalyzeOptions{}, []int{2, 3}, []int{150_000}, []int{0, 5}},
		{"mixed groups, pair test, parts of one", mixed, mixedText, AnalyzeOptions{PairTest: true, Workers: 2}, []int{1, 1, 1, 1, 1}, []int{100_000, 200_000}, []int{1, 3, 4}},
		{"mixed groups, lists cut short", mixed, mixedText, AnalyzeOptions{MaxMatches: 7}, []int{4}, nil, []int{3, 0}},
		{"wallets' sessions, split between them", sc.groups, string(sc.universe), AnalyzeOptions{}, []int{5, 8}, []int{300_000}, []int{4, 5}},
		{"one part", sc.groups, string(sc.universe), AnalyzeOptions{}, nil, nil, []int{0, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			one, want := accumulate(t, tc.groups, []byte(tc.universe), tc.opts)
			var parts []*Accumulator
			for _, groups := range splitGroups(tc.groups, tc.parts) {
				parts = append(parts, readInPieces(t, groups, cut(tc.universe, tc.pieces, false), tc.opts))
			}
			joined, err := Join(parts...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := joined.Reports()
			if err != nil {
				t.Fatal(err)
			}
			for g := range want {
				if !reflect.DeepEqual(got[g], want[g]) {
					t.Errorf("group %d: %+v\none pass: %+v", g+1, got[g], want[g])
				}
			}
			gl, err1 := joined.Link(nil, LinkOptions{})
			wl, err2 := one.Link(nil, LinkOptions{})
			gi, err3 := joined.Intersect(tc.intersect)
			wi, err4 := one.Intersect(tc.intersect)
			if err := errors.Join(err1, err2, err3, err4); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gl, wl) {
				t.Errorf("links differ from one pass:\n%+v\n%+v", gl, wl)
			}
			if !reflect.DeepEqual(gi, wi) {
				t.Errorf("intersection differs from one pass:\n%+v\n%+v", gi, wi)
			}
			// Something to compare: matches, and links between parts.
			if len(wl.Pairs) == 0 || wi.Intersection[0].Matched == 0 {
				t.Fatalf("too little to compare: %d pairs, %d matches", len(wl.Pairs), wi.Intersection[0].Matched)
			}
			// The parts are left as they were.
			for i, p := range parts {
				reps, err := p.Reports()
				if err != nil {
					t.Fatal(err)
				}
				if len(reps) != len(splitGroups(tc.groups, tc.parts)[i]) {
					t.Errorf("part %d: %d reports", i+1, len(reps))
				}
			}
		})
	}
}

// readInPieces reads the pieces of a universe each into an accumulator of
// the groups, sends each as JSON and merges them in order.
func readInPieces(t *testing.T, groups [][]*bip37.Filter, pieces []string, opts AnalyzeOptions) *Accumulator {
	t.Helper()
	merged, err := NewAccumulator(groups, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pieces {
		part, _ := accumulate(t, groups, []byte(p), opts)
		b, err := json.Marshal(part)
		if err != nil {
			t.Fatal(err)
		}
		sent, _ := NewAccumulator(groups, opts)
		if err := json.Unmarshal(b, sent); err != nil {
			t.Fatal(err)
		}
		if err := merged.Merge(sent); err != nil {
			t.Fatal(err)
		}
	}
	return merged
}

// TestJoinRefuses: parts of other options, or that read another universe
// or only part of it, are not joined.
func TestJoinRefuses(t *testing.T) {
	text, groups := mergeFixture(t)
	pieces := cut(text, []int{100_000}, false)
	read := func(groups [][]*bip37.Filter, text string, opts AnalyzeOptions) *Accumulator {
		a, _ := accumulate(t, groups, []byte(text), opts)
		return a
	}
	base := read(groups[:3], text, AnalyzeOptions{})
	skipped := strings.Replace(text, "\n", "\nnot a candidate\n", 1)
	shuffled := pieces[1] + pieces[0]
	tests := []struct {
		name  string
		other *Accumulator
	}{
		{"pair test", read(groups[3:], text, AnalyzeOptions{PairTest: true})},
		{"another match cap", read(groups[3:], text, AnalyzeOptions{MaxMatches: 3})},
		{"part of the universe", read(groups[3:], pieces[0], AnalyzeOptions{})},
		{"a line skipped", read(groups[3:], skipped, AnalyzeOptions{})},
		{"the lines in another order, its skipped lines elsewhere", read(groups[3:], shuffled, AnalyzeOptions{})},
		{"nothing read", func() *Accumulator { a, _ := NewAccumulator(groups[3:], AnalyzeOptions{}); return a }()},
	}
	for _, tc := range tests {
		if _, err := Join(base, tc.other); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: %v, want ErrMismatch", tc.name, err)
		}
		if _, err := Join(tc.other, base); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s, first: %v, want ErrMismatch", tc.name, err)
		}
	}
	if _, err := Join(); !errors.Is(err, ErrNoFilters) {
		t.Errorf("nothing to join: %v, want ErrNoFilters", err)
	}
}
