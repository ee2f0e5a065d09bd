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
// gives a group 0.5 to 0.8 is warned (leak.FewBlocks), and that group,
// its members and a match alone of two or more appearances so given have
// 0.75 of the probability and interval the class gives (chosen where the
// groups of such sessions were right 44 of 96 times at 0.599 said); a
// session of 7 blocks keeps them whole and is not warned. The wallet's
// group is w (blocks 10 and 20) with rider pc (10, in w's transaction),
// the match alone v (30 and 40); 900 scripts of two appearances seven
// blocks apart elsewhere give the class of two groups a chance count of
// 0.68 (6 blocks) or 0.95 (7) (random placement: no shifts).
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
			want := whole
			if tc.few {
				want = whole * factor
			}
			warned := slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, leak.FewBlocks) })
			if warned != tc.few {
				t.Errorf("warned of few blocks %v, want %v: %q", warned, tc.few, r.Warnings)
			}
			if len(r.Groups) != 1 || r.Groups[0].Members[0] != "w" {
				t.Fatalf("groups %+v, want w's alone", r.Groups)
			}
			g := r.Groups[0]
			if math.Abs(g.Probability-want) > 1e-9 || tc.few && g.ProbabilityHigh > factor {
				t.Errorf("group: P %.4f [%.4f, %.4f], want %.4f (its class gives %.4f)", g.Probability, g.ProbabilityLow, g.ProbabilityHigh, want, whole)
			}
			for _, m := range r.Matched {
				var wantM float64
				switch m.Candidate {
				case "w", "v":
					wantM = want
				case "pc":
					wantM = want / 2 // a rider of one appearance: half its group's
				default:
					continue
				}
				if math.Abs(m.Probability-wantM) > 1e-9 || m.ProbabilityLow > m.Probability || m.ProbabilityHigh < m.Probability {
					t.Errorf("%s: P %.4f [%.4f, %.4f], want %.4f", m.Candidate, m.Probability, m.ProbabilityLow, m.ProbabilityHigh, wantM)
				}
				if tc.few && m.ProbabilityHigh > factor {
					t.Errorf("%s: interval reaches %.4f, want it lowered, at most %.2f", m.Candidate, m.ProbabilityHigh, factor)
				}
			}
		})
	}
}
