package leak_test

import (
	"testing"

	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// ownOf is each session's own candidates by the labels: the scripts of
// the wallets it scans for.
func ownOf(sc *simulate.Scenario) map[string]map[string]bool {
	scripts := map[string][]string{}
	for _, w := range sc.Labels.Fetch.Wallets {
		scripts[w.ID] = w.Scripts
	}
	own := map[string]map[string]bool{}
	for _, s := range sc.Labels.Fetch.Sessions {
		set := map[string]bool{}
		for _, w := range append([]string{s.Wallet}, s.Wallets...) {
			for _, c := range scripts[w] {
				set[c] = true
			}
		}
		own[s.ID] = set
	}
	return own
}

// labelledView is one session of a simulated regime as the attacker
// (shifted: the shift null) and the client (labelled: Options.Own, its
// own candidates own) analyze it.
type labelledView struct {
	regime            simulate.Regime
	id                string
	shifted, labelled *leak.Report
	own               map[string]bool
}

// labelledViews analyzes every session of the simulated regimes with
// the shift null and with the session's labels.
func labelledViews(t *testing.T) []labelledView {
	t.Helper()
	var out []labelledView
	for i, r := range []simulate.Regime{simulate.RegimeStandard, simulate.RegimeChange, simulate.RegimeClustered, simulate.RegimePayments} {
		sc, sessions, index := simulatedFetches(t, r, uint64(40+i))
		own := ownOf(sc)
		views := viewsOf(t, sessions, readAll(t, index).hd)
		shifted, err := leak.Analyze(views, readAll(t, index), leak.Options{})
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range views {
			set := own[v.ID]
			labelled, err := leak.Analyze([]leak.View{v}, readAll(t, index), leak.Options{Own: func(c string) bool { return set[c] }})
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, labelledView{r, v.ID, shifted[j], labelled[0], set})
		}
	}
	return out
}

// TestLabelledNullAgreesWithShifts: the labelled null (the groups of a
// class that hold none of the session's own scripts, which only the
// client knows) is what the attacker's shift null estimates. On simulated
// chains of several regimes, the labelled count lies inside the central
// 95% range of a Poisson count of the shifts' mean (narrower than the
// shifts' own range when their variance exceeds their mean) in at least
// 95% of the classes of two or more appearances, with the Wilson
// interval of that share printed.
func TestLabelledNullAgreesWithShifts(t *testing.T) {
	inside, total := 0, 0
	for _, lv := range labelledViews(t) {
		byK := map[uint64]float64{}
		for _, c := range lv.labelled.ByAppearances {
			byK[c.Appearances] = c.LabelledChanceGroups
		}
		for _, c := range lv.shifted.ByAppearances {
			if c.Appearances < 2 || c.Groups == 0 {
				continue
			}
			lo, hi := model.PoissonRange(c.ExpectedGroupsByShifts)
			total++
			if x := byK[c.Appearances]; x >= lo && x <= hi {
				inside++
			} else {
				t.Logf("%s %s k=%d: labelled %g, shifts %.3g (%g..%g), %d groups", lv.regime, lv.id, c.Appearances, x, c.ExpectedGroupsByShifts, lo, hi, c.Groups)
			}
		}
	}
	lo, hi := simulate.Wilson(inside, total)
	t.Logf("labelled null inside the shifts' range in %d of %d classes (%.3f, Wilson 95%% %.3f..%.3f)", inside, total, float64(inside)/float64(total), lo, hi)
	if total < 20 || float64(inside) < 0.95*float64(total) {
		t.Errorf("labelled null inside the shifts' range in %d of %d classes, want at least 95%% of at least 20", inside, total)
	}
}

// TestLabelledNotBelowShifts: a client's report (the labelled null) must
// not give its own script a lower probability than the attacker's (the
// shift null) on the same downloads, since the report is what the
// attacker concludes, not what the client knows. The labelled count is
// one draw of what the shifts' mean estimates (TestLabelledNullAgreesWithShifts)
// and lies above it about half the time; the labelled chance count of a
// class of two or more appearances therefore enters at the lower end of
// its 95% interval, and a script's group probability falls below the
// attacker's in at most 5% of the own scripts matched in such classes
// over the simulated regimes (the Wilson interval of that share printed).
func TestLabelledNotBelowShifts(t *testing.T) {
	below, total := 0, 0
	for _, lv := range labelledViews(t) {
		attack := groupProbabilities(lv.shifted)
		for c, p := range groupProbabilities(lv.labelled) {
			a, ok := attack[c]
			if !lv.own[c] || !ok || a.k < 2 {
				continue
			}
			total++
			if p.p < a.p-1e-9 {
				below++
				t.Logf("%s %s %s k=%d: labelled %.4f, shifts %.4f", lv.regime, lv.id, c, a.k, p.p, a.p)
			}
		}
	}
	lo, hi := simulate.Wilson(below, total)
	t.Logf("own scripts of two or more appearances below the attacker's group probability: %d of %d (%.3f, Wilson 95%% %.3f..%.3f)", below, total, float64(below)/float64(total), lo, hi)
	if total < 50 || float64(below) > 0.05*float64(total) {
		t.Errorf("%d of %d own scripts below the attacker's probability, want at most 5%% of at least 50", below, total)
	}
}

// classProb is a match's group probability and its group's appearances.
type classProb struct {
	p float64
	k uint64
}

// groupProbabilities gives each match of a report its group's
// probability (its own when alone) and the group's appearances.
func groupProbabilities(r *leak.Report) map[string]classProb {
	out := map[string]classProb{}
	for _, m := range r.Matched {
		p := classProb{m.Probability, m.Appearances}
		if m.Group > 0 {
			g := r.Groups[m.Group-1]
			p = classProb{g.Probability, g.Appearances}
		}
		out[m.Candidate] = p
	}
	return out
}
