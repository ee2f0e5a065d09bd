package model

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// probFirstRealRat is C(n, j)/C(n+s, j) in exact rationals for whole s.
func probFirstRealRat(n, s, j int64) *big.Rat {
	return new(big.Rat).SetFrac(new(big.Int).Binomial(n, j), new(big.Int).Binomial(n+s, j))
}

// TestPHjClosedForm checks P_h(j) at S against C(N, j)/C(N+S, j) in exact
// arithmetic for whole S, and between whole S it lies between its
// neighbours.
func TestPHjClosedForm(t *testing.T) {
	for _, c := range []struct{ n, s int64 }{{2, 1}, {5, 3}, {10, 0}, {15, 1}, {20, 7}, {50, 200}, {100, 3}, {12, 5000}} {
		for j := int64(1); j <= c.n; j++ {
			got := probFirstReal(float64(c.n), float64(c.s), uint32(j), lgammaRise(float64(c.n-j+1), float64(j)))
			want, _ := probFirstRealRat(c.n, c.s, j).Float64()
			if !relClose(got, want, 1e-10) {
				t.Errorf("N=%d S=%d j=%d: %v, want %v", c.n, c.s, j, got, want)
			}
			if c.s > 0 && j > 1 {
				mid := probFirstReal(float64(c.n), float64(c.s)-0.5, uint32(j), lgammaRise(float64(c.n-j+1), float64(j)))
				below, _ := probFirstRealRat(c.n, c.s-1, j).Float64()
				if !(mid < below && mid > want) {
					t.Errorf("N=%d S=%v j=%d: %v not between %v and %v", c.n, float64(c.s)-0.5, j, mid, below, want)
				}
			}
		}
	}
}

// curveOf is the P_h(j) curve of a wallet of n addresses among others
// outside candidates that each match with probability q.
func curveOf(n uint32, others uint64, q float64) []PHj {
	r := &Result{
		Params: Params{Addresses: n, UniverseSize: uint64(n) + others},
		Steps:  []Step{{Filters: 1, PfCandidate: q, ExpectedFalsePositives: float64(others) * q}},
	}
	return r.PHCurve(1)
}

// TestPHjExpectationExact checks E[P_h(j)] against the exact rational sum
// over the whole binomial distribution of false positives.
func TestPHjExpectationExact(t *testing.T) {
	for _, c := range []struct {
		n, others  int64
		pNum, pDen int64
	}{{5, 40, 1, 10}, {10, 200, 1, 100}, {20, 60, 3, 10}, {3, 1, 1, 2}} {
		p := big.NewRat(c.pNum, c.pDen)
		q := new(big.Rat).Sub(big.NewRat(1, 1), p)
		curve := curveOf(uint32(c.n), uint64(c.others), float64(c.pNum)/float64(c.pDen))
		if len(curve) != int(c.n) {
			t.Fatalf("%+v: %d points", c, len(curve))
		}
		weights := make([]*big.Rat, c.others+1)
		for fp := range weights {
			w := new(big.Rat).SetInt(new(big.Int).Binomial(c.others, int64(fp)))
			w.Mul(w, ratPow(p, int64(fp)))
			weights[fp] = w.Mul(w, ratPow(q, c.others-int64(fp)))
		}
		for _, pt := range curve {
			want := new(big.Rat)
			for fp, w := range weights {
				want.Add(want, new(big.Rat).Mul(w, probFirstRealRat(c.n, int64(fp), int64(pt.J))))
			}
			if w, _ := want.Float64(); !relClose(pt.PHExact, w, 1e-9) {
				t.Errorf("%+v j=%d: E[P_h(j)] %v, want %v", c, pt.J, pt.PHExact, w)
			}
		}
	}
}

// TestPHjMonteCarlo plays the attack: the false positives drawn from the
// binomial, then j of the matching candidates picked at random; the
// fraction of draws where all j are the wallet's agrees with E[P_h(j)]
// within four standard errors for every j.
func TestPHjMonteCarlo(t *testing.T) {
	const n, others, q, trials = 12, 3000, 0.002, 40000
	curve := curveOf(n, others, q)
	rng := rand.New(rand.NewPCG(5, 12))
	hits := make([]int, n+1)
	for range trials {
		fp := 0
		for range others {
			if rng.Float64() < q {
				fp++
			}
		}
		// Pick the candidates one by one without replacement: the first
		// j are all the wallet's while no false one has come out.
		real, total := n, n+fp
		for j := 1; j <= n; j++ {
			if rng.IntN(total) >= real {
				break
			}
			hits[j]++
			real--
			total--
		}
	}
	for _, pt := range curve {
		got := float64(hits[pt.J]) / trials
		se := math.Sqrt(pt.PHExact * (1 - pt.PHExact) / trials)
		if math.Abs(got-pt.PHExact) > 4*se+1e-9 {
			t.Errorf("j=%d: %v of the draws, E[P_h(j)] = %v ± %v", pt.J, got, pt.PHExact, se)
		}
	}
}

// TestPHCurveEnds: the curve's ends are the model's P_h(1), P_h(N) and
// their expectations to the bit, for each number of filters; it never
// rises with j; past MaxPHjPoints addresses it is a grid from 1 to N.
func TestPHCurveEnds(t *testing.T) {
	for _, p := range []Params{
		{Addresses: 20, FPRate: 0.0005, UniverseSize: 10_000_000, ElementsPerAddress: 2, ExtraElements: 100, Filters: 3},
		{Addresses: 1, FPRate: 0.01, UniverseSize: 1000, ElementsPerAddress: 2},
		{Addresses: 100, FPRate: 0.001, UniverseSize: 1e9, ElementsPerAddress: 2, ExtraElements: 100, PairTest: true, Filters: 2},
		{Addresses: 266, FPRate: 0.00001, UniverseSize: 1e19, ElementsPerAddress: 2, ExtraElements: 100, Sizing: SizingBitcoinj},
		{Addresses: 2500, FPRate: 0.01, UniverseSize: 1e8, ElementsPerAddress: 2},
	} {
		r, err := Evaluate(p)
		if err != nil {
			t.Fatal(err)
		}
		for b := uint32(1); b <= r.Params.Filters; b++ {
			st, c := r.Steps[b-1], r.PHCurve(b)
			first, last := c[0], c[len(c)-1]
			if first.J != 1 || last.J != p.Addresses || first.PH != st.PH1 || first.PHExact != st.PH1Exact {
				t.Errorf("%+v B=%d: first %+v, step %+v", p, b, first, st)
			}
			// For one address P_h(1) is P_h(N), computed two ways.
			if p.Addresses > 1 && (last.PH != st.PHAll || last.PHExact != st.PHAllExact) ||
				!relClose(last.PH, st.PHAll, 1e-12) || !relClose(last.PHExact, st.PHAllExact, 1e-12) {
				t.Errorf("%+v B=%d: last %+v, step %+v", p, b, last, st)
			}
			if want := min(int(p.Addresses), MaxPHjPoints); len(c) != want {
				t.Errorf("%+v: %d points, want %d", p, len(c), want)
			}
			for i := 1; i < len(c); i++ {
				if c[i].J <= c[i-1].J || c[i].PH > c[i-1].PH || c[i].PHExact > c[i-1].PHExact*(1+1e-12) {
					t.Fatalf("%+v B=%d: %+v after %+v", p, b, c[i], c[i-1])
				}
			}
		}
		if r.PHCurve(r.Params.Filters+1) != nil || len(r.PHCurve(0)) == 0 {
			t.Errorf("%+v: curve past the filters, or none for all of them", p)
		}
	}
}

// TestGervaisPoints reproduces the two points the text of Gervais et al.
// quotes for one filter of a fresh wallet (Pt = 0.05%, sized for 2N + 100
// elements, P_h at the expected false positives): all N addresses guessed
// with probability 0.99 for N = 10 and close to 0.80 for N = 15. A
// universe of 3.2·10^7 addresses gives both (0.9906, 0.8002), by either
// sizing rule; the default 10^7 gives 0.9970 and 0.9320; P_h(15) = 0.80
// pins the universe between 3.19·10^7 and 3.21·10^7.
func TestGervaisPoints(t *testing.T) {
	ph := func(n uint32, u uint64, rule SizingRule) float64 {
		r, err := Evaluate(Params{Addresses: n, FPRate: 0.0005, UniverseSize: u, ElementsPerAddress: 2, ExtraElements: 100, Sizing: rule})
		if err != nil {
			t.Fatal(err)
		}
		c := r.PHCurve(1)
		return c[len(c)-1].PH
	}
	for _, rule := range SizingRules {
		for _, c := range []struct {
			n        uint32
			u        uint64
			lo, hi   float64
			paperMet bool
		}{
			{10, 32_000_000, 0.985, 0.995, true},
			{15, 32_000_000, 0.795, 0.805, true},
			{10, 10_000_000, 0.996, 0.998, false},
			{15, 10_000_000, 0.93, 0.934, false},
			{15, 32_100_000, 0.798, 0.8, true},
			{15, 31_900_000, 0.8, 0.802, true},
		} {
			if got := ph(c.n, c.u, rule); got < c.lo || got > c.hi {
				t.Errorf("%s N=%d U=%d: P_h(N) = %.4f, want [%v, %v]", rule, c.n, c.u, got, c.lo, c.hi)
			}
		}
	}
}
