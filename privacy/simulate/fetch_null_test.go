package simulate_test

import (
	"bytes"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// TestFetchNullGiantGroup: on heavy-tail seed 4007 (TestCalibrationRegimes'
// capture of that regime) a session of no wallet fetched 356 of the 468
// blocks it scanned, so that the scripts riding in each other's
// transactions join thousands of matches into one group, whose most
// appearing member has four appearances. Counted in the class of four
// appearances, where the shifts, blind to the scripts seen once beside
// their matches, gave 0.2 groups, that group had P 0.8 and its 16,339
// members 0.34 on average, none right (the regime's scripts in [0, 0.5)
// said 0.259 where 0.002 were right). The shifts now count the scripts
// seen once in their matches' transactions and groups of more than 64
// members apart, whatever their appearances: no script of a session of
// no wallet is given 0.05 or more, and the bin [0, 0.5) says within
// 0.05 of what it gets.
func TestFetchNullGiantGroup(t *testing.T) {
	sc := regimeScenario(t, simulate.RegimeHeavyTail, calibrationSeed+6)
	var index, fcapt bytes.Buffer
	if err := sc.WriteIndex(&index); err != nil {
		t.Fatal(err)
	}
	if err := sc.WriteFetchCapture(&fcapt); err != nil {
		t.Fatal(err)
	}
	score, reps := attackFetches(t, sc, &fcapt, &index, attack.FetchOptions{})
	noise := map[string]bool{}
	for _, s := range sc.Labels.Fetch.Sessions {
		noise[s.ID] = s.Wallet == "" && len(s.Wallets) == 0
	}
	giant := false
	for _, rep := range reps {
		if !noise[rep.Session] {
			continue
		}
		n, high := 0, 0.0
		for _, m := range rep.Matched {
			n++
			high = max(high, m.Probability)
		}
		for _, g := range rep.Groups {
			giant = giant || len(g.Members) > 1000
		}
		t.Logf("session of no wallet %s: %d of %d blocks fetched, %d matches, highest P %.3f", rep.Session, rep.FetchedBlocks, rep.ScannedBlocks, n, high)
		if high >= 0.05 {
			t.Errorf("session of no wallet %s: a script given %.3f", rep.Session, high)
		}
	}
	if !giant {
		t.Fatal("no session of no wallet holds a group of more than 1,000 members: the capture no longer shows what this test is about")
	}
	b := score.Candidates.Calibration[0]
	t.Logf("scripts in [0, 0.5): %s", binCell(b))
	if b.MeanProbability == nil || b.FractionRight == nil || *b.MeanProbability-*b.FractionRight > 0.05 {
		t.Errorf("scripts in [0, 0.5): %s, said more than 0.05 above what is right", binCell(b))
	}
}
