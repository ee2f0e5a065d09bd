package leak_test

import (
	"bytes"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestCoverTargetCaps: with a cover target every group's probability and
// interval is the attack's without it, capped at the target, and so is
// every match's (a member riding in the others' transactions has its
// share of its group's capped figures, so at most that); a target outside (0, 1) is an error; Compute with a target
// caps the same way.
func TestCoverTargetCaps(t *testing.T) {
	c := newTestChain(t, chainSpec{blocks: 300, txs: 12, wallet: 10, covers: 10, seed: 12})
	index := c.index(t)
	analyze := func(opt leak.Options) ([]*leak.Report, error) {
		ir, err := universe.NewIndexReader(bytes.NewReader(index))
		if err != nil {
			t.Fatal(err)
		}
		return leak.Analyze(c.views, ir, opt)
	}
	const target = 0.5
	plain, err := analyze(leak.Options{Collude: true})
	if err != nil {
		t.Fatal(err)
	}
	capped, err := analyze(leak.Options{Collude: true, CoverTarget: target})
	if err != nil {
		t.Fatal(err)
	}
	above := 0
	for i, r := range plain {
		for j, m := range r.Matched {
			g := capped[i].Matched[j]
			exact := !m.CoLocated // a member riding in others' transactions has its share of its group's capped figures
			if g.Candidate != m.Candidate || g.Probability > min(m.Probability, target) || g.ProbabilityLow > min(m.ProbabilityLow, target) || g.ProbabilityHigh > min(m.ProbabilityHigh, target) ||
				exact && (g.Probability != min(m.Probability, target) || g.ProbabilityHigh != min(m.ProbabilityHigh, target)) {
				t.Fatalf("report %d: %+v capped gives %+v", i, m, g)
			}
			if m.Probability > target {
				above++
			}
		}
		for j, gr := range r.Groups {
			if g := capped[i].Groups[j]; g.Probability != min(gr.Probability, target) || g.ProbabilityHigh != min(gr.ProbabilityHigh, target) {
				t.Fatalf("report %d group %d: %+v capped gives %+v", i, j, gr, g)
			}
		}
		if capped[i].Confident != 0 {
			t.Errorf("report %d: %d confident under a target of %g", i, capped[i].Confident, target)
		}
	}
	if above == 0 {
		t.Errorf("no match above the target: the cap was not exercised")
	}
	for _, bad := range []float64{-0.1, 1, 1.5} {
		if _, err := analyze(leak.Options{CoverTarget: bad}); err == nil {
			t.Errorf("cover target %g: no error", bad)
		}
	}
	in := c.input(nil)
	in.Target = target
	l, err := leak.Compute(in, leak.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if l.Collusion.Highest == nil || *l.Collusion.Highest > target || *l.Collusion.HighestHigh > target || l.Collusion.Confident != 0 {
		t.Errorf("Compute with a target: %+v", l.Collusion)
	}
}
