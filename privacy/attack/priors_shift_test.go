package attack

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/bip37"
)

// smallSessions are k filters each holding 1 to 3 of the candidates
// cands and about chance chance matches over a universe of size: the
// sessions of tiny wallets, as a node could inject by the thousand.
func smallSessions(rng *rand.Rand, k int, cands [][]byte, chance float64, size int) [][]*bip37.Filter {
	var out [][]*bip37.Filter
	for i := range k {
		n := 1 + rng.IntN(3)
		f := bip37.NewFilter(uint32(n), chance/float64(size), uint32(i), 0)
		for range n {
			f.Add(cands[rng.IntN(len(cands))])
		}
		out = append(out, []*bip37.Filter{f})
	}
	return out
}

// hasShiftWarning reports whether warnings hold priorShift.warning's.
func hasShiftWarning(warnings []string) bool {
	return slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "their probabilities rest on those sessions") })
}

// universeLines are the candidates of a universe of hex lines.
func universeLines(t *testing.T, univ []byte) [][]byte {
	t.Helper()
	var lines [][]byte
	for _, l := range bytes.Fields(univ) {
		b, err := hex.DecodeString(string(l))
		if err != nil {
			t.Fatal(err)
		}
		lines = append(lines, b)
	}
	return lines
}

// TestSmallSessionsPriorWarned injects k sessions of 1 to 3 candidates
// of the universe each (about 0.02 chance matches) beside 30 honest
// wallets and 0 or 300 empty ones (knownCapture), or 30 honest sessions
// (sessionsCapture). They pull the size prior towards tiny wallets
// (median 2 where the honest fit says 30 to 50), and on some seeds the
// honest matches at P >= 0.95 fall to none: 607 -> 0 on seed 5 beside
// no empty wallet, 214 -> 0 on seed 3 beside 300; nothing warned
// before. Every capture whose honest matches at P >= 0.95 fell by more
// than a tenth must warn (priorShift.warning), with the matches the fit
// without the small sessions would lift at least the honest ones lost;
// the honest captures (k = 0) must not.
func TestSmallSessionsPriorWarned(t *testing.T) {
	const honest, random = 30, 20_000
	type capture struct {
		name   string
		groups [][]*bip37.Filter
		univ   []byte
		cands  [][]byte
	}
	var captures []capture
	for _, seed := range []uint64{3, 5, 7} {
		for _, empty := range []int{0, 300} {
			c := newKnownCapture(seed, honest, empty, random)
			captures = append(captures, capture{fmt.Sprintf("known %d, %d empty", seed, empty), c.groups, c.univ, c.randoms})
		}
		groups, univ := sessionsCapture(seed, honest, random)
		captures = append(captures, capture{fmt.Sprintf("sessions %d", seed), groups, univ, universeLines(t, univ)})
	}
	var warned, damaged int
	for _, c := range captures {
		var base int
		for _, k := range []int{0, 300, 1000} {
			groups := slices.Clone(c.groups)
			groups = append(groups, smallSessions(rand.New(rand.NewPCG(uint64(len(c.name)), uint64(k))), k, c.cands, 0.02, len(c.cands))...)
			acc, err := NewAccumulator(groups, AnalyzeOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := acc.ReadUniverse(bytes.NewReader(c.univ)); err != nil {
				t.Fatal(err)
			}
			reps, warns, err := acc.finishReports()
			if err != nil {
				t.Fatal(err)
			}
			var high int
			for _, r := range reps[:honest] {
				high += r.Confident
			}
			if k == 0 {
				base = high
			}
			sh := measurePriorShift(reps, reportSessions(reps, acc.set), reps[0].UniverseSize, acc.fit.sizes)
			isWarned := hasShiftWarning(warns)
			t.Logf("%s, %4d small: honest P>=0.95 %3d (%3d alone); prior median %.1f, without the %d small %.1f; %d would rise, %d fall; warned %v",
				c.name, k, high, base, sh.fitted.Median, sh.few, sh.apart.Median, sh.up, sh.down, isWarned)
			for g, r := range reps {
				if hasShiftWarning(r.Warnings) != isWarned {
					t.Fatalf("%s, %d small: report %d warnings %q, the capture's %q", c.name, k, g, r.Warnings, warns)
				}
			}
			lost := base - high
			if 10*lost > base {
				damaged++
			}
			switch {
			case k == 0 && isWarned:
				t.Errorf("%s: an honest capture warned: %q", c.name, warns)
			case 10*lost > base && !isWarned:
				t.Errorf("%s, %d small: honest matches at P >= 0.95 %d -> %d, not warned", c.name, k, base, high)
			case 10*lost > base && sh.up < lost:
				t.Errorf("%s, %d small: %d honest matches lost, the warning says %d would rise", c.name, k, lost, sh.up)
			}
			if isWarned {
				warned++
			}
		}
	}
	if damaged == 0 {
		t.Errorf("no capture's honest matches fell: the test tests nothing")
	}
	t.Logf("%d captures damaged, %d warned", damaged, warned)
}

// TestPriorShiftWarning holds priorShift.warning to its thresholds:
// at least fragileMatches crossings, and a tenth of the matches at
// P >= 0.95.
func TestPriorShiftWarning(t *testing.T) {
	tests := []struct {
		name string
		sh   priorShift
		want bool
	}{
		{"none", priorShift{few: 900, counted: 1000, confident: 200}, false},
		{"few crossings", priorShift{few: 900, counted: 1000, confident: 0, up: 9}, false},
		{"a small share", priorShift{few: 900, counted: 1000, confident: 2000, up: 150, down: 40}, false},
		{"honest lost", priorShift{few: 900, counted: 1000, confident: 60, up: 600}, true},
		{"lifted", priorShift{few: 900, counted: 1000, confident: 100, down: 10}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := tt.sh.warning()
			if (w != "") != tt.want {
				t.Fatalf("warning %q, want one: %v", w, tt.want)
			}
			if w != "" && !strings.Contains(w, fmt.Sprintf("%d of %d sessions", tt.sh.few, tt.sh.counted)) {
				t.Errorf("warning %q does not name the sessions", w)
			}
		})
	}
}
