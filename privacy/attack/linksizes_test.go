package attack

import (
	"math"
	"testing"
)

// exactSomeSize is the likelihood of a count k of a wallet part of n
// candidates, each matching (n of the prior p, rounded to whole
// candidates, at least one), plus a Poisson count of mean base: the sum
// over n of the prior's mass on n times P(k-n; base). Parts of
// 64 candidates or more are left out: the cases below give
// them no weight.
func exactSomeSize(p *sizePrior, k, base float64) float64 {
	var sum float64
	for n := 1.0; n < 64 && n <= k; n++ {
		lo := 1.0
		if n > 1 {
			lo = p.massAbove(math.Log(n + 0.5))
		}
		mass := lo - p.massAbove(math.Log(n+1.5))
		sum += mass * math.Exp(logPoisson(k-n, base))
	}
	return math.Log(sum)
}

// TestSizeCountedExactly: the likelihood of what one wallet's sessions
// share, its n candidates beside chance, is that of n whole candidates
// matching every filter plus chance, P(shared - n; chance), and not of a
// Poisson count of mean n plus chance. The Poisson count gave a wallet
// of one candidate, whose sessions share it and nothing else by chance,
// a likelihood of 1/e of sharing one (and 1/e of sharing none), so that
// pairs of small wallets were given a fraction of the probability they
// had: on package simulate's heavy-tail regime (seeds 701 to 704),
// pairs given 0.01 to 0.03 were one wallet's 0.12 of the time.
func TestSizeCountedExactly(t *testing.T) {
	for _, tc := range []struct {
		name          string
		median, sigma float64 // of the wallet sizes
		shared, base  float64
	}{
		{"one candidate, no chance", 1, 0.2, 1, 0.001},
		{"one candidate, sharing two", 1, 0.2, 2, 0.001},
		{"a few candidates, some chance", 3, 0.5, 4, 0.5},
		{"a few candidates, sharing what chance gives", 3, 0.5, 3, 3},
		{"tens of candidates", 20, 0.4, 22, 1},
	} {
		p := newSizePrior(100_000)
		p.mu, p.sigma = math.Log1p(tc.median), tc.sigma
		got, want := p.someSize(tc.shared, tc.base, 0), exactSomeSize(p, tc.shared, tc.base)
		if math.Abs(got-want) > 0.01 {
			t.Errorf("%s: log likelihood of sharing %g (chance %g) %.4f, want %.4f", tc.name, tc.shared, tc.base, got, want)
		}
	}
}
