package leak

import (
	"math"
	"testing"
)

// TestRecalMap: the map moves only claims in [0.5, 0.95), keeps them
// there (never below 0.5 nor at 0.95 and above), is monotone over the
// whole of [0, 1], and raises a leading member given 0.7 (right 0.89 of
// the time on the tuning seeds) to about 0.87.
func TestRecalMap(t *testing.T) {
	for _, c := range []struct {
		name string
		p    float64
		want func(float64) bool
	}{
		{"below 0.5 unchanged", 0.4, func(q float64) bool { return q == 0.4 }},
		{"0.95 unchanged", 0.95, func(q float64) bool { return q == 0.95 }},
		{"1 unchanged", 1, func(q float64) bool { return q == 1 }},
		{"0.5 stays at least 0.5", 0.5, func(q float64) bool { return q >= 0.5 && q < 0.95 }},
		{"0.7 raised to about 0.87", 0.7, func(q float64) bool { return math.Abs(q-0.869) < 0.005 }},
		{"0.94 stays below 0.95", 0.94, func(q float64) bool { return q == recalMax }},
	} {
		if q := recalMap(c.p, recalLeadA, recalLeadB); !c.want(q) {
			t.Errorf("%s: recalMap(%g) = %g", c.name, c.p, q)
		}
	}
	for _, ab := range [][2]float64{{recalLeadA, recalLeadB}, {recalSettledA, recalSettledB}} {
		prev := -1.0
		for i := 0; i <= 1000; i++ {
			p := float64(i) / 1000
			q := recalMap(p, ab[0], ab[1])
			if q < prev {
				t.Fatalf("map %v not monotone: %g gives %g, below %g", ab, p, q, prev)
			}
			prev = q
		}
	}
}

// TestRecalibrate: in a report warned of several wallets, a group's
// leading member and a settled rider of one appearance are recalibrated,
// their intervals through the same map; a chained settled rider, an
// ambiguous leader, a match alone and a claim at 0.95 or more are not;
// nor is anything in a report not so warned.
func TestRecalibrate(t *testing.T) {
	report := func(warned bool) *Report {
		return &Report{
			severalWallets: warned,
			Groups:         []Group{{Members: []string{"lead", "settled", "chained", "amb"}, Appearances: 3}, {Members: []string{"sure", "s2"}, Appearances: 2}},
			Matched: []Match{
				{Candidate: "lead", Appearances: 3, Group: 1, Probability: 0.7, ProbabilityLow: 0.4, ProbabilityHigh: 0.9},
				{Candidate: "settled", Appearances: 1, Group: 1, CoLocated: true, Settled: true, Probability: 0.9, ProbabilityLow: 0.6, ProbabilityHigh: 0.96},
				{Candidate: "chained", Appearances: 2, Group: 1, CoLocated: true, Settled: true, Probability: 0.6, ProbabilityLow: 0.4, ProbabilityHigh: 0.8},
				{Candidate: "amb", Appearances: 3, Group: 1, AmbiguousWith: []string{"x"}, Probability: 0.6, ProbabilityLow: 0.4, ProbabilityHigh: 0.8},
				{Candidate: "alone", Appearances: 2, Probability: 0.7, ProbabilityLow: 0.5, ProbabilityHigh: 0.9},
				{Candidate: "sure", Appearances: 2, Group: 2, Probability: 0.97, ProbabilityLow: 0.9, ProbabilityHigh: 0.99},
			},
		}
	}
	before := report(false)
	r := report(true)
	r.recalibrate()
	moved := map[string]bool{"lead": true, "settled": true}
	for i, m := range r.Matched {
		b := before.Matched[i]
		if !moved[m.Candidate] {
			if m.Probability != b.Probability || m.ProbabilityLow != b.ProbabilityLow || m.ProbabilityHigh != b.ProbabilityHigh {
				t.Errorf("%s moved: %+v, was %+v", m.Candidate, m, b)
			}
			continue
		}
		if !(m.Probability > b.Probability && m.Probability < 0.95) {
			t.Errorf("%s: %g, was %g: want raised, below 0.95", m.Candidate, m.Probability, b.Probability)
		}
		if !(m.ProbabilityLow <= m.Probability && m.Probability <= m.ProbabilityHigh) {
			t.Errorf("%s: interval [%g, %g] does not hold %g", m.Candidate, m.ProbabilityLow, m.ProbabilityHigh, m.Probability)
		}
		a, bb := recalLeadA, recalLeadB
		if m.Candidate == "settled" {
			a, bb = recalSettledA, recalSettledB
		}
		if m.ProbabilityLow != recalMap(b.ProbabilityLow, a, bb) || m.ProbabilityHigh != recalMap(b.ProbabilityHigh, a, bb) {
			t.Errorf("%s: interval [%g, %g] not carried through the map (was [%g, %g])", m.Candidate, m.ProbabilityLow, m.ProbabilityHigh, b.ProbabilityLow, b.ProbabilityHigh)
		}
	}
	unwarned := report(false)
	unwarned.recalibrate()
	for i, m := range unwarned.Matched {
		if m.Probability != before.Matched[i].Probability {
			t.Errorf("unwarned report: %s moved from %g to %g", m.Candidate, before.Matched[i].Probability, m.Probability)
		}
	}
}
