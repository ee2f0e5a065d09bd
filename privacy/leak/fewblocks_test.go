package leak_test

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"

	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestFewBlocksLowered: a session that fetched 6 blocks or fewer and
// gives a group 0.5 to 0.8 is warned (leak.FewBlocks), and a match alone
// of two or more appearances so given has 0.75 of the probability and
// interval the class gives (such matches were right 2 of 46 times at
// 0.61 said), while the group of several matches and its members keep
// theirs (such groups were right 88 of 158 times at 0.60 said); a session
// of 7 blocks keeps them all whole and is not warned. The wallet's group
// is w (blocks 10 and 20) with rider pc (10, in w's transaction), the
// match alone v (30 and 40); 900 scripts of two appearances seven blocks
// apart elsewhere give the class of two groups a chance count of 0.68 (6
// blocks) or 0.95 (7) (random placement: no shifts).
func TestFewBlocksLowered(t *testing.T) {
	const factor = 0.75
	tests := []struct {
		name    string
		fetched []int32
		few     bool
	}{
		{"6 blocks", []int32{10, 20, 30, 40, 100, 120}, true},
		{"7 blocks", []int32{10, 20, 30, 40, 100, 120, 160}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := fewBlocksSource()
			view := leak.View{ID: "s", Client: "127.0.0.1:1", Scanned: []leak.HeightRange{{From: 0, To: 199}}, Fetched: tc.fetched}
			reps, err := leak.Analyze([]leak.View{view}, src, leak.Options{Shifts: -1})
			if err != nil {
				t.Fatal(err)
			}
			r := reps[0]
			var class leak.Class
			for _, c := range r.ByAppearances {
				if c.Appearances == 2 {
					class = c
				}
			}
			whole := math.Max(float64(class.Groups)-class.ExpectedByChance, 0) / float64(class.Groups)
			if whole < 0.5 || whole >= 0.8 {
				t.Fatalf("class 2: %d groups, %.3f by chance: gives %.3f, want it in [0.5, 0.8) for the test", class.Groups, class.ExpectedByChance, whole)
			}
			alone := whole
			if tc.few {
				alone = whole * factor
			}
			warned := slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, leak.FewBlocks) })
			if warned != tc.few {
				t.Errorf("warned of few blocks %v, want %v: %q", warned, tc.few, r.Warnings)
			}
			if len(r.Groups) != 1 || r.Groups[0].Members[0] != "w" {
				t.Fatalf("groups %+v, want w's alone", r.Groups)
			}
			g := r.Groups[0]
			if math.Abs(g.Probability-whole) > 1e-9 {
				t.Errorf("group: P %.4f [%.4f, %.4f], want its class's %.4f", g.Probability, g.ProbabilityLow, g.ProbabilityHigh, whole)
			}
			for _, m := range r.Matched {
				var wantM float64
				switch m.Candidate {
				case "w":
					wantM = whole
				case "v":
					wantM = alone
				case "pc":
					wantM = whole / 2 // a rider of one appearance: half its group's
				default:
					continue
				}
				if math.Abs(m.Probability-wantM) > 1e-9 || m.ProbabilityLow > m.Probability || m.ProbabilityHigh < m.Probability {
					t.Errorf("%s: P %.4f [%.4f, %.4f], want %.4f", m.Candidate, m.Probability, m.ProbabilityLow, m.ProbabilityHigh, wantM)
				}
				if tc.few && m.Candidate == "v" && m.ProbabilityHigh > factor {
					t.Errorf("%s: interval reaches %.4f, want it lowered, at most %.2f", m.Candidate, m.ProbabilityHigh, factor)
				}
			}
		})
	}
}

// TestFewBlocksLabelledWarnedNotLowered: a labelled report (Options.Own,
// a client's account of its own downloads) of a session that fetched 6
// blocks or fewer and gives a group 0.5 to 0.8 is warned
// (leak.FewBlocks) that the attack on that session would give its
// matches alone of two or more appearances less, and keeps its
// probabilities: the client's account is held
// to say no less than the attack. The wallet's w (blocks 10 and 20,
// rider pc) is the only own group of two appearances beside five others'
// (v, x, y1, y2, y3) in the 6 fetched blocks, which the class's labelled
// chance count (the lower end of 5's 95% interval) gives about 0.73;
// fetched with a seventh block, which adds no group of two appearances,
// the report is not warned and gives w the same.
func TestFewBlocksLabelledWarnedNotLowered(t *testing.T) {
	own := map[string]bool{"w": true, "pc": true}
	// analyze gives w's group's probability and the few-blocks warning
	// of the labelled report of a session that fetched the given blocks.
	analyze := func(fetched []int32) (float64, string) {
		src := fewBlocksSource()
		src.entries = append(src.entries,
			&universe.IndexEntry{Candidate: "x", Heights: []int32{100, 120}, Txs: [][]uint32{{3}, {3}}},
			&universe.IndexEntry{Candidate: "y1", Heights: []int32{30, 100}, Txs: [][]uint32{{4}, {4}}},
			&universe.IndexEntry{Candidate: "y2", Heights: []int32{40, 120}, Txs: [][]uint32{{5}, {5}}},
			&universe.IndexEntry{Candidate: "y3", Heights: []int32{10, 30}, Txs: [][]uint32{{6}, {6}}},
		)
		view := leak.View{ID: "s", Client: "127.0.0.1:1", Scanned: []leak.HeightRange{{From: 0, To: 199}}, Fetched: fetched}
		reps, err := leak.Analyze([]leak.View{view}, src, leak.Options{Shifts: -1, Own: func(c string) bool { return own[c] }})
		if err != nil {
			t.Fatal(err)
		}
		r := reps[0]
		i := slices.IndexFunc(r.Groups, func(g leak.Group) bool { return slices.Contains(g.Members, "w") })
		if i < 0 {
			t.Fatalf("%d blocks: no group holds w: %+v", len(fetched), r.Groups)
		}
		var warning string
		for _, w := range r.Warnings {
			if strings.HasPrefix(w, leak.FewBlocks) {
				warning = w
			}
		}
		return r.Groups[i].Probability, warning
	}
	few, warning := analyze([]int32{10, 20, 30, 40, 100, 120})
	more, moreWarning := analyze([]int32{10, 20, 30, 40, 100, 120, 160})
	if more < 0.5 || more >= 0.8 {
		t.Fatalf("7 blocks: w's group given %.4f, want it in [0.5, 0.8) for the test", more)
	}
	if math.Abs(few-more) > 1e-9 {
		t.Errorf("6 blocks: w's group given %.4f, want %.4f as with 7 blocks: a labelled report is not lowered", few, more)
	}
	if moreWarning != "" {
		t.Errorf("7 blocks: warned of few blocks: %q", moreWarning)
	}
	if !strings.Contains(warning, "the attack on this session") {
		t.Errorf("6 blocks: warning of few blocks %q, want it to say what the attack on the session gives", warning)
	}
}

// fewBlocksSource is an index of 200 blocks: 900 background candidates
// of two appearances each, w of two appearances, pc of one in w's first
// transaction, and v of two elsewhere.
func fewBlocksSource() *entrySource {
	src := &entrySource{hd: &universe.IndexHeader{Version: universe.IndexVersion, Hashes: make([]chainhash.Hash, 200)}}
	for i := range 900 {
		h := int32(i % 190)
		src.entries = append(src.entries, &universe.IndexEntry{Candidate: fmt.Sprintf("bg%04d", i), Heights: []int32{h, h + 7}, Txs: [][]uint32{{50}, {51}}})
	}
	src.entries = append(src.entries,
		&universe.IndexEntry{Candidate: "pc", Heights: []int32{10}, Txs: [][]uint32{{1}}},
		&universe.IndexEntry{Candidate: "v", Heights: []int32{30, 40}, Txs: [][]uint32{{2}, {2}}},
		&universe.IndexEntry{Candidate: "w", Heights: []int32{10, 20}, Txs: [][]uint32{{1}, {1}}},
	)
	return src
}
