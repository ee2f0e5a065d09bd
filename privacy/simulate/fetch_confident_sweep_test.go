package simulate_test

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// TestFetchConfidentRegimes pools the block-download attack's claims
// given P >= 0.95 (scripts and groups) over SPVFILTER_FETCH_SWEEP
// captures of every regime TestCalibrationRegimes scores (skipped
// without it), made as that test makes them (regimeScenario) from the
// seeds it pools (calibrationSeed + 100k + i for capture k from 0, i the
// regime's index), and logs per regime the claims, how many are right,
// their Wilson interval and the verdict on the target (a Wilson
// lower bound of simulate.TargetWilsonLow), with the scripts alone by bin
// (shapeTally). SPVFILTER_FETCH_SWEEP_REGIMES (comma separated) keeps
// the regimes it lists; SPVFILTER_FETCH_SWEEP_SEEDS ("FROM-TO") captures
// every regime from those seeds instead (held-out seeds):
//
//	SPVFILTER_FETCH_SWEEP=16 go test ./privacy/simulate -run TestFetchConfidentRegimes -v -timeout 60m
//	SPVFILTER_FETCH_SWEEP=8 SPVFILTER_FETCH_SWEEP_SEEDS=9941-9948 go test ./privacy/simulate -run TestFetchConfidentRegimes -v -timeout 60m
//
// It fails where a regime's claims given P >= 0.95 are measurably below
// 95% right (the upper end of their Wilson interval below it): the
// figures privacy/README.md gives under "Block-download claims at
// P ≥ 0.95 over more captures".
func TestFetchConfidentRegimes(t *testing.T) {
	v := os.Getenv("SPVFILTER_FETCH_SWEEP")
	if v == "" {
		t.Skip("set SPVFILTER_FETCH_SWEEP=CAPTURES to pool the block-download attack's confident claims over more captures of every regime")
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("SPVFILTER_FETCH_SWEEP=%q: want a count of captures", v)
	}
	keep := os.Getenv("SPVFILTER_FETCH_SWEEP_REGIMES")
	held := envSeeds(t, "SPVFILTER_FETCH_SWEEP_SEEDS")
	if held != nil && len(held) != n {
		t.Fatalf("SPVFILTER_FETCH_SWEEP_SEEDS gives %d seeds, SPVFILTER_FETCH_SWEEP %d captures", len(held), n)
	}
	var mu sync.Mutex
	lines := map[simulate.Regime]string{}
	t.Run("regimes", func(t *testing.T) {
		for i, ri := range simulate.Regimes() {
			r := ri.Regime
			if r == simulate.RegimeCovered || keep != "" && !slices.Contains(strings.Split(keep, ","), string(r)) {
				continue
			}
			t.Run(string(r), func(t *testing.T) {
				t.Parallel()
				seeds := held
				if seeds == nil {
					for k := range n {
						seeds = append(seeds, calibrationSeed+100*uint64(k)+uint64(i))
					}
				}
				line := sweepRegime(t, r, seeds)
				mu.Lock()
				lines[r] = line
				mu.Unlock()
			})
		}
	})
	var table strings.Builder
	table.WriteString("| regime | captures (seeds) | scripts P ≥ 0.95: right of n [Wilson] | verdict | groups P ≥ 0.95: right of n [Wilson] | verdict |\n|---|---|---|---|---|---|\n")
	for _, ri := range simulate.Regimes() {
		if l, ok := lines[ri.Regime]; ok {
			table.WriteString(l + "\n")
		}
	}
	t.Logf("block-download claims given P >= 0.95 over %d captures a regime:\n%s", n, table.String())
}

// sweepRegime pools the captures of regime r from seeds for
// TestFetchConfidentRegimes, fails where the scripts or groups given
// P >= 0.95 are measurably below 95% right, and returns the regime's row.
func sweepRegime(t *testing.T, r simulate.Regime, seeds []uint64) string {
	var scripts, groups claimTally
	shapes := shapeTally{}
	n := len(seeds)
	for _, seed := range seeds {
		sc, fcapt, index := heldOutCapture(t, r, seed, false)
		score, reps := attackFetches(t, sc, fcapt, index, attack.FetchOptions{})
		scripts.addScore(score.Candidates)
		groups.addScore(score.CandidateGroups)
		shapes.addReports(sc.Labels.Fetch, reps)
		owns := sessionOwners(sc.Labels.Fetch)
		for _, rep := range reps {
			for _, m := range rep.Matched {
				if m.Probability >= simulate.ConfidentP && !owns[rep.Session][m.Candidate] {
					t.Logf("%s seed %d, session %s (%d of %d blocks): wrong at P >= 0.95: %s", r, seed, rep.Session, rep.FetchedBlocks, rep.ScannedBlocks, describeWrong(rep, &m))
				}
			}
		}
	}
	step := uint64(1)
	if n > 1 {
		step = seeds[1] - seeds[0]
	}
	row := fmt.Sprintf("| %s | %d (%d to %d, step %d) |", r, n, seeds[0], seeds[n-1], step)
	for _, k := range []struct {
		name string
		c    *claimTally
	}{{"scripts", &scripts}, {"groups", &groups}} {
		lo, hi := simulate.Wilson(k.c.confidentRight, k.c.confident)
		verdict := k.c.verdict()
		row += fmt.Sprintf(" %d of %d [%.3f, %.3f] | %s |", k.c.confidentRight, k.c.confident, lo, hi, verdict)
		if verdict == verdictBelow {
			t.Errorf("%s fetches: %s given P >= 0.95: %d of %d right over %d captures, Wilson interval [%.3f, %.3f]: measurably below 95%% right", r, k.name, k.c.confidentRight, k.c.confident, n, lo, hi)
		}
		t.Logf("%s fetches: %s over %d captures: %s (%s)%s", r, k.name, n, k.c.confidentFigure(), verdict, k.c.binsFigure())
	}
	for _, shape := range []string{shapeAlone, shapeGroup} {
		var bins []string
		for _, b := range shapes.binScores(shape) {
			bins = append(bins, fmt.Sprintf("%s %.3f said, %.3f right [%.3f, %.3f] of %d", b.name, b.said, b.right, b.lo, b.hi, b.n))
		}
		t.Logf("%s fetches: %s over %d captures: %s", r, shape, n, strings.Join(bins, "; "))
	}
	return row
}
