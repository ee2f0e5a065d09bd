package attack

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// mergeFixture is a mixed universe (marked keys among their addresses, so
// that a key and the address line it takes over fall in different pieces
// once the universe is cut) and the mixed groups of filters.
func mergeFixture(t testing.TB) (string, [][]*bip37.Filter) {
	t.Helper()
	w := model.NewWallet(6, 30)
	return mixedUniverse(rand.New(rand.NewPCG(31, 32)), 20_000, w), mixedGroups(t, w)
}

// cut splits text at line ends into pieces of about the given sizes; with
// open, the pieces but the last lose their final newline, which reading
// them one after the other puts back.
func cut(text string, sizes []int, open bool) []string {
	var pieces []string
	for _, n := range sizes {
		i := strings.IndexByte(text[min(n, len(text)-1):], '\n') + min(n, len(text)-1) + 1
		p := text[:i]
		if open {
			p = strings.TrimSuffix(p, "\n")
		}
		pieces, text = append(pieces, p), text[i:]
	}
	return append(pieces, text)
}

// TestAccumulatorMergeEqualsOnePass is the differential test of a
// universe read in pieces: each piece read by its own accumulator, sent
// as JSON and merged in order (as the workers of a distributed run do),
// or read one after the other by one accumulator, gives the reports, links
// and intersections of one pass over the whole universe.
func TestAccumulatorMergeEqualsOnePass(t *testing.T) {
	text, groups := mergeFixture(t)
	for _, tc := range []struct {
		name  string
		opts  AnalyzeOptions
		sizes []int
		open  bool
	}{
		{"three pieces", AnalyzeOptions{}, []int{100_000, 400_000}, false},
		{"three pieces, pair test, two workers", AnalyzeOptions{PairTest: true, Workers: 2}, []int{300_000, 10_000}, false},
		{"lists cut short", AnalyzeOptions{MaxMatches: 7, Workers: 3}, []int{50_000, 50_000, 50_000}, false},
		{"pieces without a final newline", AnalyzeOptions{PairTest: true}, []int{200_000, 1000}, true},
		{"one line first", AnalyzeOptions{}, []int{1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pieces := cut(text, tc.sizes, tc.open)
			whole := strings.Join(pieces, map[bool]string{true: "\n", false: ""}[tc.open])
			one, want := accumulate(t, groups, []byte(whole), tc.opts)

			merged, err := NewAccumulator(groups, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			sequential, _ := NewAccumulator(groups, tc.opts)
			for _, p := range pieces {
				part, _ := accumulate(t, groups, []byte(p), tc.opts)
				b, err := json.Marshal(part)
				if err != nil {
					t.Fatal(err)
				}
				sent, _ := NewAccumulator(groups, tc.opts)
				if err := json.Unmarshal(b, sent); err != nil {
					t.Fatal(err)
				}
				if err := merged.Merge(sent); err != nil {
					t.Fatal(err)
				}
				if err := sequential.ReadUniverse(strings.NewReader(p)); err != nil {
					t.Fatal(err)
				}
			}
			for name, acc := range map[string]*Accumulator{"merged": merged, "read one after the other": sequential} {
				got, err := acc.Reports()
				if err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(got, want) {
					for g := range want {
						if !reflect.DeepEqual(got[g], want[g]) {
							t.Errorf("%s: group %d: %+v\none pass: %+v", name, g+1, got[g], want[g])
						}
					}
				}
				gl, err1 := acc.Link(nil, LinkOptions{})
				wl, err2 := one.Link(nil, LinkOptions{})
				gi, err3 := acc.Intersect([]int{0, 5})
				wi, err4 := one.Intersect([]int{0, 5})
				if err := errors.Join(err1, err2, err3, err4); err != nil {
					t.Fatal(err)
				}
				if !reflect.DeepEqual(gl, wl) || !reflect.DeepEqual(gi, wi) {
					t.Errorf("%s: links or intersection differ from one pass", name)
				}
			}
			if want[0].MatchedCount == 0 || want[3].MatchedCount < 50 || want[0].Pairs == 0 || want[0].MergedAddressLines == 0 {
				t.Fatalf("too little to compare: %d and %d matches, %d pairs, %d merged lines",
					want[0].MatchedCount, want[3].MatchedCount, want[0].Pairs, want[0].MergedAddressLines)
			}
			if tc.opts.MaxMatches > 0 && !want[0].MatchedTruncated {
				t.Fatal("match list not cut short")
			}
		})
	}
}

// TestAccumulatorRefuses: accumulators and states of other filters or
// options are not merged, states whose counts do not add up are refused,
// and a refused state leaves the accumulator as it was.
func TestAccumulatorRefuses(t *testing.T) {
	text, groups := mergeFixture(t)
	text = cut(text, []int{100_000}, false)[0]
	acc, _ := accumulate(t, groups, []byte(text), AnalyzeOptions{})
	good, err := json.Marshal(acc)
	if err != nil {
		t.Fatal(err)
	}
	others := map[string]func() (*Accumulator, error){
		"other filters":     func() (*Accumulator, error) { return NewAccumulator(groups[1:], AnalyzeOptions{}) },
		"pair test":         func() (*Accumulator, error) { return NewAccumulator(groups, AnalyzeOptions{PairTest: true}) },
		"another match cap": func() (*Accumulator, error) { return NewAccumulator(groups, AnalyzeOptions{MaxMatches: 3}) },
	}
	for name, other := range others {
		o, err := other()
		if err != nil {
			t.Fatal(err)
		}
		if err := acc.Merge(o); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: merge: %v, want ErrMismatch", name, err)
		}
		if err := json.Unmarshal(good, o); !errors.Is(err, ErrMismatch) {
			t.Errorf("%s: state: %v, want ErrMismatch", name, err)
		}
	}
	var st map[string]any
	json.Unmarshal(good, &st)
	tally := func(st map[string]any) map[string]any { return st["tallies"].([]any)[1].(map[string]any) }
	for name, lie := range map[string]func(st map[string]any){
		"no universe":  func(st map[string]any) { delete(st, "universe") },
		"classes":      func(st map[string]any) { st["classes"].([]any)[1] = 1.0 },
		"depth":        func(st map[string]any) { tally(st)["depth"].([]any)[0] = 0.0 },
		"depth length": func(st map[string]any) { tally(st)["depth"] = []any{1.0} },
		"match line":   func(st map[string]any) { tally(st)["matches"].([]any)[0].(map[string]any)["line"] = 1e9 },
		"match order":  func(st map[string]any) { m := tally(st)["matches"].([]any); m[0], m[1] = m[1], m[0] },
		"match class":  func(st map[string]any) { tally(st)["matches"].([]any)[0].(map[string]any)["class"] = 256.0 },
		"match kind":   func(st map[string]any) { tally(st)["matches"].([]any)[0].(map[string]any)["kind"] = "coin" },
		// A match of a class without candidates, which an
		// intersection's chance correction would take as holding more
		// than the universe.
		"match of no class": func(st map[string]any) {
			classes := st["classes"].([]any)
			empty := slices.IndexFunc(classes, func(n any) bool { return n.(float64) == 0 })
			tally(st)["matches"].([]any)[0].(map[string]any)["class"] = float64(empty)
		},
		"more taken over":  func(st map[string]any) { st["merged_address_lines"] = 1e6 },
		"skipped lines":    func(st map[string]any) { st["universe"].(map[string]any)["lines_skipped"] = 0.0 },
		"a filter too few": func(st map[string]any) { tally(st)["alone"] = tally(st)["alone"].([]any)[1:] },
	} {
		var c map[string]any
		json.Unmarshal(good, &c)
		lie(c)
		b, _ := json.Marshal(c)
		fresh, _ := NewAccumulator(groups, AnalyzeOptions{})
		before, _ := json.Marshal(fresh)
		if err := json.Unmarshal(b, fresh); !errors.Is(err, ErrBadState) {
			t.Errorf("%s: %v, want ErrBadState", name, err)
		}
		if after, _ := json.Marshal(fresh); !bytes.Equal(before, after) {
			t.Errorf("%s: a refused state changed the accumulator", name)
		}
	}
	// A state of no reading is an empty universe, as one pass over none.
	fresh, _ := NewAccumulator(groups, AnalyzeOptions{})
	if _, err := fresh.Reports(); !errors.Is(err, universe.ErrEmpty) {
		t.Errorf("no universe read: %v, want ErrEmpty", err)
	}
}

// FuzzAccumulatorState feeds arbitrary states to an accumulator: a state
// is refused or finishes into reports without a panic, and reads back as
// written.
func FuzzAccumulatorState(f *testing.F) {
	text, groups := mergeFixture(f)
	acc, _ := accumulate(f, groups, []byte(cut(text, []int{3000}, false)[0]), AnalyzeOptions{PairTest: true})
	good, err := json.Marshal(acc)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(bytes.Replace(good, []byte(`"line":`), []byte(`"line":-`), 1))
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"groups":"00","tallies":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, _ := NewAccumulator(groups, AnalyzeOptions{PairTest: true})
		if err := json.Unmarshal(data, a); err != nil {
			return
		}
		if _, err := a.Reports(); err != nil && !errors.Is(err, universe.ErrEmpty) {
			t.Fatalf("accepted state does not finish: %v", err)
		}
		b, err := json.Marshal(a)
		if err != nil {
			t.Fatal(err)
		}
		again, _ := NewAccumulator(groups, AnalyzeOptions{PairTest: true})
		if err := json.Unmarshal(b, again); err != nil {
			t.Fatalf("a state written from an accepted one is refused: %v", err)
		}
		if c, _ := json.Marshal(again); !bytes.Equal(b, c) {
			t.Fatal("state changed on its way back")
		}
	})
}
