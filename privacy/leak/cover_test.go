package leak_test

import (
	"bytes"
	"math"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// TestCoverTargetCaps: with a cover target every group's probability and
// interval is the attack's without it, capped at the target, and so is
// every match's (a member riding in the others' transactions has its
// share of its group's capped figures, a batched or escorted match three
// quarters of its capped figure, so at most that); a target outside (0, 1) is an error; Compute with a target
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
			// A member riding in others' transactions has its share of its
			// group's capped figures, a batched or escorted match three
			// quarters of its capped figure: at most the cap.
			exact := !m.CoLocated && !m.Batched && !m.Escorted
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

// TestCoverShare: with the covers labelled (Options.Cover), each class's
// probabilities are the labelled ones times the share of the class's own
// groups that hold a watched script (checked on every match alone of two
// or more appearances), so that they fall where covers share a class.
func TestCoverShare(t *testing.T) {
	c := newTestChain(t, chainSpec{blocks: 300, txs: 12, wallet: 10, covers: 10, seed: 12})
	index := c.index(t)
	own, cover := map[string]bool{}, map[string]bool{}
	for _, s := range c.watched {
		own[universe.ScriptCandidate(s, c.params)] = true
	}
	for _, s := range c.covers {
		name := universe.ScriptCandidate(s, c.params)
		own[name], cover[name] = true, true
	}
	analyze := func(opt leak.Options) *leak.Report {
		ir, err := universe.NewIndexReader(bytes.NewReader(index))
		if err != nil {
			t.Fatal(err)
		}
		opt.Own, opt.Collude = func(x string) bool { return own[x] }, true
		reps, err := leak.Analyze(c.views, ir, opt)
		if err != nil {
			t.Fatal(err)
		}
		return reps[len(reps)-1]
	}
	labelled := analyze(leak.Options{})
	shared := analyze(leak.Options{Cover: func(x string) bool { return cover[x] }})
	// The share per class, from the labels: the class's own groups (a
	// match alone is a group) with a watched script, over its own groups.
	type tally struct{ watched, own float64 }
	by := map[uint64]*tally{}
	count := func(k uint64, members []string) {
		o, w := false, false
		for _, x := range members {
			o = o || own[x]
			w = w || own[x] && !cover[x]
		}
		if by[k] == nil {
			by[k] = &tally{}
		}
		if o {
			by[k].own++
		}
		if w {
			by[k].watched++
		}
	}
	for _, m := range labelled.Matched {
		if m.Group == 0 {
			count(m.Appearances, []string{m.Candidate})
		}
	}
	for _, g := range labelled.Groups {
		count(g.Appearances, g.Members)
	}
	fell, checked := 0, 0
	for i, m := range labelled.Matched {
		g := shared.Matched[i]
		if g.Probability < m.Probability-1e-12 {
			fell++
		}
		if tl := by[m.Appearances]; m.Appearances >= 2 && m.Group == 0 && tl.own > 0 {
			checked++
			if want := m.Probability * tl.watched / tl.own; math.Abs(g.Probability-want) > 1e-9 {
				t.Errorf("%s (k=%d): %.6f with covers labelled, want %.6f × %g/%g", m.Candidate, m.Appearances, g.Probability, m.Probability, tl.watched, tl.own)
			}
		}
	}
	if checked == 0 {
		t.Errorf("no match alone of two or more appearances to check")
	}
	if fell == 0 {
		t.Errorf("no probability fell: covers share no class with the wallet here")
	}
}
