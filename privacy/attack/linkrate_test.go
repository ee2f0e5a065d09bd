package attack

import (
	"math"
	"testing"
)

func TestUnlinkedRateKnots(t *testing.T) {
	k := unlinkedRate[:]
	for i := 1; i < len(k); i++ {
		if k[i].said <= k[i-1].said || k[i].right < k[i-1].right || k[i].se < 0 {
			t.Errorf("knot %d %+v after %+v: want log odds said rising, the rate not falling", i, k[i], k[i-1])
		}
	}
	if k[0].said != k[0].right || k[0].se != 0 {
		t.Errorf("first knot %+v: want the identity", k[0])
	}
}

func TestUnlinkedReach(t *testing.T) {
	expit := func(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
	tests := []struct {
		name string
		p    float64
		want float64
	}{
		{"none", 0, 0},
		{"below the first knot", expit(-9), expit(-9)},
		{"at a knot", expit(-4.002), expit(-2.829 + 1.96*0.030)},
		{"between knots", expit((-4.002 - 3.244) / 2), expit((-2.829-1.673)/2 + 1.96*(0.030+0.044)/2)},
		{"capped", 0.98, rateReachTop},
		{"above the cap", 0.995, 0.995},
		{"sure", 1, 1},
	}
	for _, tt := range tests {
		if got := unlinkedReach(tt.p); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: unlinkedReach(%.6g) = %.6g, want %.6g", tt.name, tt.p, got, tt.want)
		}
	}
	prev := 0.0
	for z := -12.0; z <= 6; z += 0.01 {
		p := expit(z)
		r := unlinkedReach(p)
		if r < p || r < prev || (p < rateReachTop && r > rateReachTop) {
			t.Fatalf("unlinkedReach(%.6g) = %.6g after %.6g: want at least p, not falling, at most %g", p, r, prev, rateReachTop)
		}
		prev = r
	}
}

func TestReachRatesUnlinkedOnly(t *testing.T) {
	pairs := []SessionLink{
		{A: 0, B: 1, Probability: 0.1, ProbabilityLow: 0.05, ProbabilityHigh: 0.2},
		{A: 0, B: 2, Probability: 0.6, ProbabilityLow: 0.5, ProbabilityHigh: 0.7, Linked: true},
		{A: 1, B: 2, Probability: 0.1, ProbabilityLow: 0.05, ProbabilityHigh: 0.95},
	}
	reachRates(pairs)
	if p := pairs[0]; p.Probability != 0.1 || p.ProbabilityLow != 0.05 || p.ProbabilityHigh != unlinkedReach(0.1) || p.ProbabilityHigh <= 0.2 {
		t.Errorf("unlinked pair: %+v, want only its upper end raised to %.4g", p, unlinkedReach(0.1))
	}
	if p := pairs[1]; p.ProbabilityHigh != 0.7 {
		t.Errorf("linked pair: upper end %.4g, want 0.7 kept", p.ProbabilityHigh)
	}
	if p := pairs[2]; p.ProbabilityHigh != 0.95 {
		t.Errorf("unlinked pair reaching higher already: upper end %.4g, want 0.95 kept", p.ProbabilityHigh)
	}
}

func TestShiftLinked(t *testing.T) {
	shifted := func(p, median float64) float64 {
		z := math.Log(p / (1 - p))
		z += linkedShift.a + linkedShift.b*z + linkedShift.c*math.Log1p(median)
		return 1 / (1 + math.Exp(-z))
	}
	tests := []struct {
		name          string
		in            SessionLink
		median        float64
		want, wantTop float64
	}{
		{"small wallets", SessionLink{Probability: 0.6, ProbabilityLow: 0.4, ProbabilityHigh: 0.7, Linked: true}, 5, shifted(0.6, 5), shifted(0.6, 5)},
		{"large wallets, to the top", SessionLink{Probability: 0.6, ProbabilityLow: 0.4, ProbabilityHigh: 0.7, Linked: true}, 50, linkedTop, linkedTop},
		{"upper end above", SessionLink{Probability: 0.6, ProbabilityLow: 0.4, ProbabilityHigh: 0.99, Linked: true}, 50, linkedTop, 0.99},
		{"at the top already", SessionLink{Probability: 0.97, ProbabilityLow: 0.9, ProbabilityHigh: 0.98, Linked: true}, 50, 0.97, 0.98},
		{"not linked", SessionLink{Probability: 0.6, ProbabilityLow: 0.4, ProbabilityHigh: 0.7}, 50, 0.6, 0.7},
	}
	for _, tt := range tests {
		pairs := []SessionLink{tt.in}
		shiftLinked(pairs, tt.median)
		p := pairs[0]
		if math.Abs(p.Probability-tt.want) > 1e-12 || math.Abs(p.ProbabilityHigh-tt.wantTop) > 1e-12 || p.ProbabilityLow != tt.in.ProbabilityLow {
			t.Errorf("%s: %.6g [%.6g, %.6g], want %.6g [%.6g, %.6g]", tt.name, p.Probability, p.ProbabilityLow, p.ProbabilityHigh, tt.want, tt.in.ProbabilityLow, tt.wantTop)
		}
		if p.Probability < tt.in.Probability || (tt.in.Probability < linkedTop && p.Probability > linkedTop) {
			t.Errorf("%s: %.6g from %.6g: want raised, at most %g", tt.name, p.Probability, tt.in.Probability, linkedTop)
		}
	}
	if s := shifted(0.6, 5); !(s > 0.6 && s < linkedTop) {
		t.Errorf("small wallets: shift gives %.4g, want a case between 0.6 and %g", s, linkedTop)
	}
}
