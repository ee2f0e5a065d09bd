package attack

import (
	"math"
	"testing"
)

func TestSpreadShiftsWiden(t *testing.T) {
	for row, shifts := range spreadShifts {
		for i, s := range shifts {
			if s.down > 0 || s.up < 0 {
				t.Errorf("row %d, unit %d: %+v, want down ≤ 0 ≤ up", row, i+spreadUnitLow, s)
			}
		}
	}
	if spreadLevel <= 0 || spreadLevel > 1 {
		t.Errorf("level %g, want a share in (0, 1]", spreadLevel)
	}
}

func TestSpreadUnit(t *testing.T) {
	for _, tc := range []struct {
		z    float64
		unit int
	}{
		{-30, spreadUnitLow}, {-14, -14}, {-4.6, -5}, {-0.1, -1}, {0, 0}, {2.5, 2}, {13.5, 13}, {40, spreadUnitHigh},
	} {
		if got := spreadUnit(tc.z) + spreadUnitLow; got != tc.unit {
			t.Errorf("spreadUnit(%g) is unit %d, want %d", tc.z, got, tc.unit)
		}
	}
}

func TestSpreadRates(t *testing.T) {
	expit := func(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
	unlinked := func(z float64) spreadShift { return spreadShifts[0][spreadUnit(z)] }
	linked := func(z float64) spreadShift { return spreadShifts[1][spreadUnit(z)] }
	z := math.Log(0.01 / 0.99)
	zl := math.Log(0.9 / 0.1)
	zero := math.Log(spreadFloor / (1 - spreadFloor))
	tests := []struct {
		name   string
		in     SessionLink
		lo, hi float64
	}{
		{"unlinked, raised", SessionLink{Probability: 0.01, ProbabilityLow: 0.005, ProbabilityHigh: 0.02},
			math.Min(0.005, expit(z+unlinked(z).down)), expit(z + unlinked(z).up)},
		{"unlinked, reaching higher already", SessionLink{Probability: 0.01, ProbabilityLow: 0.005, ProbabilityHigh: 0.9},
			math.Min(0.005, expit(z+unlinked(z).down)), 0.9},
		{"linked, lowered", SessionLink{Probability: 0.9, ProbabilityLow: 0.85, ProbabilityHigh: 0.92, Linked: true},
			math.Min(0.85, expit(zl+linked(zl).down)), math.Max(0.92, expit(zl+linked(zl).up))},
		{"given none", SessionLink{Probability: 0, ProbabilityHigh: 0}, 0, expit(zero + unlinked(zero).up)},
		{"above one half", SessionLink{Probability: 0.6, ProbabilityLow: 0.6, ProbabilityHigh: 0.6}, 0.6, math.Min(expit(math.Log(1.5)+unlinked(0.4).up), rateReachTop)},
		{"sure", SessionLink{Probability: 1, ProbabilityLow: 1, ProbabilityHigh: 1, Linked: true}, 1, 1},
	}
	for _, tc := range tests {
		pairs := []SessionLink{tc.in}
		spreadRates(pairs)
		p := pairs[0]
		if p.Probability != tc.in.Probability || p.Linked != tc.in.Linked || p.ProbabilityLevel != spreadLevel {
			t.Errorf("%s: %+v, want probability and link kept, level %g", tc.name, p, spreadLevel)
		}
		if math.Abs(p.ProbabilityLow-tc.lo) > 1e-12 || math.Abs(p.ProbabilityHigh-tc.hi) > 1e-12 {
			t.Errorf("%s: interval [%.6g, %.6g], want [%.6g, %.6g]", tc.name, p.ProbabilityLow, p.ProbabilityHigh, tc.lo, tc.hi)
		}
		if p.ProbabilityLow > p.Probability || p.ProbabilityHigh < p.Probability || p.ProbabilityLow > tc.in.ProbabilityLow || p.ProbabilityHigh < tc.in.ProbabilityHigh {
			t.Errorf("%s: interval [%.6g, %.6g] narrower than [%.6g, %.6g] or missing %.6g", tc.name, p.ProbabilityLow, p.ProbabilityHigh,
				tc.in.ProbabilityLow, tc.in.ProbabilityHigh, p.Probability)
		}
	}
}

// TestLinkStatesLevel checks that Link states its intervals' level where
// it takes the learned ends, and none where priors are given.
func TestLinkStatesLevel(t *testing.T) {
	sc := newSyntheticCapture(3, 2, 5000, 0.01)
	acc, _ := accumulate(t, sc.groups, sc.universe, AnalyzeOptions{})
	for _, tc := range []struct {
		name  string
		opts  LinkOptions
		level float64
	}{
		{"fitted", LinkOptions{}, spreadLevel},
		{"prior given", LinkOptions{Prior: 0.1}, 0},
		{"threshold given", LinkOptions{Threshold: 0.9}, 0},
	} {
		l, err := acc.Link(nil, tc.opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(l.Pairs) == 0 {
			t.Fatalf("%s: no pair", tc.name)
		}
		for _, p := range l.Pairs {
			if p.ProbabilityLevel != tc.level {
				t.Errorf("%s: pair %d-%d states level %g, want %g", tc.name, p.A, p.B, p.ProbabilityLevel, tc.level)
			}
		}
	}
}
