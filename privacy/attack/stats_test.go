package attack

import (
	"math"
	"testing"
)

// TestPoissonFunctions checks the special functions against sums of the
// Poisson probabilities and published values of the exact interval.
func TestPoissonFunctions(t *testing.T) {
	for _, tc := range []struct{ k, lambda float64 }{
		{0, 0.5}, {3, 0.5}, {10, 10}, {25, 10}, {100, 130}, {1000, 1000}, {5, 40}, {40000, 40400},
	} {
		var sum float64
		for i := 0.0; i <= tc.k; i++ {
			sum += math.Exp(logPoisson(i, tc.lambda))
		}
		if got := poissonCDF(tc.k, tc.lambda); math.Abs(got-sum) > 1e-9*math.Max(1, sum) && math.Abs(got-sum)/sum > 1e-7 {
			t.Errorf("P(X ≤ %g; %g) = %g, sum %g", tc.k, tc.lambda, got, sum)
		}
	}
	// Garwood's interval for 0 and 10 events (tables of the chi-square
	// quantiles): [0, 3.689] and [4.795, 18.390].
	for _, tc := range []struct{ k, lo, hi float64 }{{0, 0, 3.6889}, {10, 4.7954, 18.3904}, {1, 0.0253, 5.5716}} {
		lo, hi := garwood(tc.k)
		if math.Abs(lo-tc.lo) > 1e-3 || math.Abs(hi-tc.hi) > 1e-3 {
			t.Errorf("garwood(%g) = [%.4f, %.4f], want [%.4f, %.4f]", tc.k, lo, hi, tc.lo, tc.hi)
		}
	}
	for _, tc := range []struct{ lambda, lo, hi float64 }{{0.01, 0, 0}, {0.5, 0, 2}, {10, 4, 17}, {100, 81, 120},
		// Beyond 10^5, the normal approximation: 1e10 ± 1.96e5.
		{1e10, 1e10 - 195996, 1e10 + 195997}} {
		lo, hi := poissonRange(tc.lambda)
		if lo != tc.lo || hi != tc.hi {
			t.Errorf("range of Poisson(%g) = [%g, %g], want [%g, %g]", tc.lambda, lo, hi, tc.lo, tc.hi)
		}
	}
	// The approximation against the exact quantiles where both apply.
	for _, p := range []float64{0.025, 0.975} {
		exact, approx := float64(0), normalQuantile(p)
		for exact = 1e5 - 2000; poissonCDF(exact, 1e5) < p; exact++ {
		}
		approx = math.Round(1e5 + approx*math.Sqrt(1e5) + (approx*approx-1)/6)
		if math.Abs(exact-approx) > 1 {
			t.Errorf("quantile %g of Poisson(1e5): exact %g, approximation %g", p, exact, approx)
		}
	}
}

// TestPoissonIntegral compares the quadrature with a fine sum over the
// size, for counts below, at and far above their base.
func TestPoissonIntegral(t *testing.T) {
	for _, tc := range []struct{ k, base, decay, y0, y1 float64 }{
		{0, -0.99, 0, 0, math.Log(1e6)},
		{21, -0.922, 0, 0, math.Log(1e6)},
		{10, 9, 0, 0, math.Log(1e6)},
		{400, 9, 0, math.Log(2), math.Log(1e6)},
		{10000, 10005, 0, 0, math.Log(1e6)},
		{3, 0.01, 1, 0, 30},
		{130, 100, 1, 0, 30},
		{60, 0.2, 1, 0, 30},
	} {
		got, _, _ := poissonIntegral(tc.k, tc.base, yWeight{decay: tc.decay}, tc.y0, tc.y1)
		// A sum over 200,000 steps of y.
		const steps = 200_000
		h := (tc.y1 - tc.y0) / steps
		want := math.Inf(-1)
		for i := 0; i < steps; i++ {
			y := tc.y0 + (float64(i)+0.5)*h
			want = logAddExp(want, logPoisson(tc.k, tc.base+math.Exp(y))-tc.decay*y+math.Log(h))
		}
		if math.Abs(got-want) > 1e-3 {
			t.Errorf("%+v: log integral %.6f, sum %.6f", tc, got, want)
		}
	}
}

// TestPoissonIntegralMoments checks the posterior moments of y and a
// normal weight against a fine sum.
func TestPoissonIntegralMoments(t *testing.T) {
	w := yWeight{mu: 3.9, sigma: 1.3}
	for _, tc := range []struct{ k, base float64 }{{5, 3}, {60, 10}, {1000, 990}, {0, 0.5}} {
		got, m1, m2 := poissonIntegral(tc.k, tc.base-1, w, 0, 14)
		const steps = 200_000
		h := 14.0 / steps
		want, s1, s2 := math.Inf(-1), 0.0, 0.0
		var logs []float64
		for i := 0; i < steps; i++ {
			y := (float64(i) + 0.5) * h
			l := logPoisson(tc.k, tc.base-1+math.Exp(y)) + w.at(y) + math.Log(h)
			logs = append(logs, l)
			want = logAddExp(want, l)
		}
		for i, l := range logs {
			y := (float64(i) + 0.5) * h
			p := math.Exp(l - want)
			s1 += p * y
			s2 += p * y * y
		}
		if math.Abs(got-want) > 1e-3 || math.Abs(m1-s1) > 1e-3 || math.Abs(m2-s2) > 1e-2 {
			t.Errorf("k %g, base %g: log %.5f moments %.4f %.4f; sum %.5f %.4f %.4f", tc.k, tc.base, got, m1, m2, want, s1, s2)
		}
	}
}
