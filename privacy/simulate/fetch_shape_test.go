package simulate_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// shapeBinEdges are the edges of a shapeTally's bins: the calibration's
// with [0, 0.5) split at 0.2, so that the few claims given 0.2 to 0.5 are
// not lost among the many near zero.
var shapeBinEdges = []float64{0, 0.2, 0.5, 0.8, 0.95, 0.99, 1}

// The shapes of a block-download script: a match alone, or a member of a
// group of matches that cannot be told apart.
const (
	shapeAlone = "scripts alone"
	shapeGroup = "scripts in groups"
)

// shapeTally gathers the block-download attack's scripts over captures by
// shape (a match alone or a member of a group), each in its bin of
// shapeBinEdges: how many, how many right, and the sum of their
// probabilities.
type shapeTally map[string]*[6]struct {
	n, right int
	sumP     float64
}

// addReports counts the scripts of a capture's reports, right where the
// labels (fetch) give the script to the session's wallet.
func (s shapeTally) addReports(fetch *simulate.FetchLabels, reps []*attack.FetchReport) {
	owns := sessionOwners(fetch)
	for _, rep := range reps {
		own := owns[rep.Session]
		for _, m := range rep.Matched {
			shape := shapeAlone
			if m.Group > 0 {
				shape = shapeGroup
			}
			bins := s[shape]
			if bins == nil {
				bins = new([6]struct {
					n, right int
					sumP     float64
				})
				s[shape] = bins
			}
			i := 0
			for i < len(bins)-1 && m.Probability >= shapeBinEdges[i+1] {
				i++
			}
			bins[i].n++
			bins[i].sumP += m.Probability
			if own[m.Candidate] {
				bins[i].right++
			}
		}
	}
}

// merge adds o's counts.
func (s shapeTally) merge(o shapeTally) {
	for shape, ob := range o {
		bins := s[shape]
		if bins == nil {
			bins = new([6]struct {
				n, right int
				sumP     float64
			})
			s[shape] = bins
		}
		for i := range bins {
			bins[i].n += ob[i].n
			bins[i].right += ob[i].right
			bins[i].sumP += ob[i].sumP
		}
	}
}

// binScores scores a shape's bins that hold a claim, as claimTally's
// binScores does.
func (s shapeTally) binScores(shape string) []binScore {
	var out []binScore
	bins := s[shape]
	if bins == nil {
		return nil
	}
	for i, bin := range bins {
		if bin.n == 0 {
			continue
		}
		out = append(out, scoreBin(shapeBinEdges, i, bin.n, bin.right, bin.sumP))
	}
	return out
}

// shapeShortfalls are the over-confident bins of the block-download
// scripts by shape (shapeTally), pooled over the captures the regime's
// scripts are pooled over (checkPooled), each a regime, "fetches:", the
// shape and the bin, stated in privacy/README.md, "Scores of the
// attacks", as targets not met. A shortfall elsewhere fails the test, as
// does one here that no longer falls short. Matches alone given 0.2 to
// 0.5, almost never the wallet's, were over-confident in eight regimes
// (standard 0.315 said, 0.000 right of 38; payments 0.296, 0.000 of 165)
// until their odds were lowered where their class holds a group
// (leak's lowerAlone): none is left in that bin but heavy-tail's 2 and
// reuse's 1, none right, too few to tell.
var shapeShortfalls = map[string]bool{
	// Matches alone given [0.8, 0.95): reuse 0.907 / 0.500 (2), its wrong
	// one, in a class holding no group, at 0.975 in [0.95, 0.99) (0.800 of
	// 5) before groups were weighed as claims of co-fetched units; four
	// captures. (Change's one, wrong, at 0.883 is at 0.550 since a capture
	// of 6.5% contested is warned that its wallets pay each other;
	// standard's group members given [0.2, 0.5), 0.311 / 0.258 of 356, are
	// met since: 0.314 / 0.286 of 402.)
	"reuse fetches: scripts alone: [0.8, 0.95)": true,
}

// holdShapes holds each shape's bins of a regime's scripts pooled over
// captures to the target on bins (see holdPooled): none whose
// mean probability lies above its Wilson interval and more than
// simulate.TargetBinSlack above the share right, unless stated in
// shapeShortfalls. It returns the keys of the shortfalls and the shapes'
// bins as a sentence of the regime's table.
func holdShapes(t *testing.T, r simulate.Regime, s shapeTally, captures int) (short []string, figure string) {
	var parts []string
	for _, shape := range []string{shapeAlone, shapeGroup} {
		kind := string(r) + " fetches: " + shape
		var bins []string
		for _, b := range s.binScores(shape) {
			mark := ""
			if b.over || b.under {
				mark = " (!)"
			}
			bins = append(bins, fmt.Sprintf("%s %.3f said, %.3f right of %d%s", b.name, b.said, b.right, b.n, mark))
			switch {
			case b.over:
				key := kind + ": " + b.name
				short = append(short, key)
				if shapeShortfalls[key] {
					t.Logf("%s: said %.3f, right %.3f [%.3f, %.3f] of %d over %d captures: over-confident (a stated target not met)", key, b.said, b.right, b.lo, b.hi, b.n, captures)
				} else {
					t.Errorf("%s: said %.3f, right %.3f [%.3f, %.3f] of %d over %d captures: over-confident", key, b.said, b.right, b.lo, b.hi, b.n, captures)
				}
			case b.under:
				t.Logf("%s: %s: said %.3f, right %.3f [%.3f, %.3f] of %d: under-confident (a target not met)", kind, b.name, b.said, b.right, b.lo, b.hi, b.n)
			}
		}
		if len(bins) == 0 {
			bins = []string{"none"}
		}
		parts = append(parts, shape+": "+strings.Join(bins, "; "))
	}
	figure = fmt.Sprintf("Fetch scripts by shape over %s: %s.", plural(captures, "capture"), strings.Join(parts, ". "))
	t.Logf("%s %s", r, figure)
	return short, figure
}

// TestShapeTallyBins checks that shapeTally puts each script in its bin of
// shapeBinEdges by shape and marks a bin over- or under-confident only
// where what it says lies outside its Wilson interval and more than
// simulate.TargetBinSlack from the share right.
func TestShapeTallyBins(t *testing.T) {
	labels := &simulate.FetchLabels{
		Wallets:  []simulate.FetchWallet{{ID: "w", Scripts: []string{"mine"}}},
		Sessions: []simulate.FetchSession{{ID: "s", Wallet: "w"}},
	}
	tests := []struct {
		name     string
		p        float64
		group    int
		mine     int // of 40 scripts, how many are the wallet's
		shape    string
		bin      string
		over     bool
		under    bool
		absentIn string
	}{
		{name: "near zero, none right", p: 0.01, mine: 0, shape: shapeAlone, bin: "[0, 0.2)", absentIn: shapeGroup},
		{name: "0.3 alone, none right", p: 0.3, mine: 0, shape: shapeAlone, bin: "[0.2, 0.5)", over: true, absentIn: shapeGroup},
		{name: "0.2 is the split's upper bin", p: 0.2, mine: 8, shape: shapeAlone, bin: "[0.2, 0.5)", absentIn: shapeGroup},
		{name: "0.3 in a group, a third right", p: 0.3, group: 1, mine: 13, shape: shapeGroup, bin: "[0.2, 0.5)", absentIn: shapeAlone},
		{name: "0.6 in a group, all right", p: 0.6, group: 1, mine: 40, shape: shapeGroup, bin: "[0.5, 0.8)", under: true, absentIn: shapeAlone},
		{name: "1 is the last bin", p: 1, mine: 40, shape: shapeAlone, bin: "[0.99, 1]", absentIn: shapeGroup},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := &attack.FetchReport{Session: "s"}
			for i := range 40 {
				c := fmt.Sprint("other", i)
				if i < tc.mine {
					c = "mine"
				}
				rep.Matched = append(rep.Matched, attack.FetchMatch{Candidate: c, Probability: tc.p, Group: tc.group})
			}
			s := shapeTally{}
			s.addReports(labels, []*attack.FetchReport{rep})
			if got := s.binScores(tc.absentIn); len(got) != 0 {
				t.Errorf("%s: %d bins, want none", tc.absentIn, len(got))
			}
			got := s.binScores(tc.shape)
			if len(got) != 1 {
				t.Fatalf("%s: %d bins, want 1", tc.shape, len(got))
			}
			b := got[0]
			if b.name != tc.bin || b.n != 40 || b.over != tc.over || b.under != tc.under {
				t.Errorf("%s: bin %s n=%d over %v under %v, want %s n=40 over %v under %v", tc.shape, b.name, b.n, b.over, b.under, tc.bin, tc.over, tc.under)
			}
			if want := float64(tc.mine) / 40; math.Abs(b.right-want) > 1e-9 || math.Abs(b.said-tc.p) > 1e-9 {
				t.Errorf("%s: said %g right %g, want %g and %g", tc.shape, b.said, b.right, tc.p, want)
			}
		})
	}
}
