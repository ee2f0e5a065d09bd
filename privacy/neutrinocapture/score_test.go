package neutrinocapture

import (
	"fmt"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// holdFetchTargets holds the score of the block-download attack on a
// real client's capture, made by "privacy evaluate", to the targets of
// package simulate that a capture of its size can measure, and logs its
// rows of privacy/README.md, "Scores of the attacks":
//
//   - of the scripts and of the groups given P >= 0.95, not measurably
//     fewer than 95% right (the upper end of their Wilson interval
//     reaches it);
//   - no bin says more than the upper end of its Wilson interval and
//     0.05 beyond (over-confident); one that says less than its lower
//     end and 0.05 below is logged as a target not met;
//   - of the groups and of the scripts given P >= 0.95, a Wilson lower
//     bound of 0.93 or more (the capture's 28 wallets give enough
//     claims: 51 right of 51 reach it; the scripts given so are the
//     wallets' addresses paid again and spent, each the most appearing
//     member of its group, 96 of them: package leak's documentation,
//     Members);
//   - sessions of several wallets behind one client address (every
//     wallet's neutrino connects from the loopback address) are warned
//     of it (leak.SeveralWallets): at least one session per wallet.
func holdFetchTargets(t *testing.T, score *simulate.Score, reps []*attack.FetchReport) {
	t.Helper()
	var rows strings.Builder
	for _, k := range []struct {
		name string
		c    *simulate.ClaimScore
	}{{"scripts", score.Candidates}, {"groups", score.CandidateGroups}} {
		if k.c == nil {
			t.Errorf("the score has no %s", k.name)
			continue
		}
		fmt.Fprintf(&rows, "| fetches: %s |", k.name)
		for i, b := range k.c.Calibration {
			fmt.Fprintf(&rows, " %s |", binCell(b))
			switch said, high, low := binSaid(b); {
			case b.Count == 0:
			case said > high+simulate.TargetBinSlack:
				t.Errorf("%s: bin %d says %.3f, right %d of %d (Wilson high %.3f): over-confident", k.name, i, said, b.Right, b.Count, high)
			case i > 0 && said < low-simulate.TargetBinSlack:
				t.Logf("NOT MET: %s: bin %d says %.3f, right %d of %d (Wilson low %.3f): under-confident", k.name, i, said, b.Right, b.Count, low)
			}
		}
		cb := k.c.Confident
		if cb.Count == 0 {
			rows.WriteString(" none |\n")
			t.Errorf("%s: none given P >= 0.95", k.name)
			continue
		}
		fmt.Fprintf(&rows, " %d of %d (%.3f), %.3f |\n", cb.Right, cb.Count, *cb.FractionRight, *cb.WilsonLow)
		if *cb.WilsonHigh < simulate.TargetRight {
			t.Errorf("%s given P >= 0.95: %d of %d right, measurably below 95%%", k.name, cb.Right, cb.Count)
		}
		if *cb.WilsonLow < simulate.TargetWilsonLow {
			// The capture's wallets are enough for it (56 groups, 96 scripts).
			t.Errorf("%s given P >= 0.95: %d of %d right, Wilson lower bound %.3f < %g", k.name, cb.Right, cb.Count, *cb.WilsonLow, simulate.TargetWilsonLow)
		}
	}
	t.Logf("rows of privacy/README.md:\n%s", rows.String())
	warned := 0
	for _, r := range reps {
		if strings.Contains(strings.Join(r.Warnings, "\n"), leak.SeveralWallets) {
			warned++
		}
	}
	t.Logf("%d of %d sessions warned of several wallets behind one address", warned, len(reps))
	if warned < wallets {
		t.Errorf("%d sessions warned of several wallets behind one address, want at least one per wallet (%d): every wallet's client connects from one address", warned, wallets)
	}
	for _, r := range reps {
		// Its wallets do not pay each other.
		if w := strings.Join(r.Warnings, "\n"); strings.Contains(w, leak.PayEachOther) {
			t.Errorf("session %s warned that %s, whose wallets do not pay each other: %s", r.Session, leak.PayEachOther, w)
		}
	}
}

// binSaid is a bin's mean probability and the ends of its fraction
// right's Wilson interval.
func binSaid(b simulate.Bin) (said, high, low float64) {
	if b.Count == 0 {
		return 0, 0, 0
	}
	return *b.MeanProbability, *b.WilsonHigh, *b.WilsonLow
}

// binCell is a bin as privacy/README.md's tables give it: said against
// observed, the Wilson interval and the count.
func binCell(b simulate.Bin) string {
	if b.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f / %.3f [%.2f, %.2f] n=%d", *b.MeanProbability, *b.FractionRight, *b.WilsonLow, *b.WilsonHigh, b.Count)
}
