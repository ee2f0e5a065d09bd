package model

import (
	"errors"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"
)

// coreSize recomputes Bitcoin Core's CBloomFilter sizing independently
// (src/common/bloom.cpp): bits = -1/ln(2)^2 * n * ln(p), capped at
// 36000*8, truncated to bytes; k = (bytes*8 / n) [integer division] * ln 2,
// truncated, capped at 50.
func coreSize(n uint32, p float64) (bytes, k uint32) {
	bits := uint64(-1 / (math.Ln2 * math.Ln2) * float64(n) * math.Log(p))
	bits = min(bits, 36000*8)
	bytes = uint32(bits / 8)
	k = uint32(float64(bytes*8/n) * math.Ln2)
	return bytes, min(k, 50)
}

// bitcoinjSizeRef recomputes bitcoinj's BloomFilter sizing independently
// (core/src/main/java/org/bitcoinj/core/BloomFilter.java): the same bits
// as Core but with ln² 2 as the JVM's pow(log(2), 2), at least one byte,
// and k = (bytes*8 / (double)n) * ln 2 in floating point, truncated, in
// [1, 50].
func bitcoinjSizeRef(n uint32, p float64) (bytes, k uint32) {
	ln2 := math.Log(2)
	bits := math.Trunc(-1 / math.Pow(ln2, 2) * float64(n) * math.Log(p))
	bytes = uint32(math.Max(1, math.Trunc(math.Min(bits, 36000*8)/8)))
	k = uint32(math.Trunc(float64(bytes*8) / float64(n) * ln2))
	return bytes, min(max(k, 1), 50)
}

// pythonBitcoinlibSize recomputes python-bitcoinlib's CBloomFilter sizing
// (bitcoin/bloom.py): Core's constants and bytes, and k =
// int(min(len*8/n*LN2, 50)) with true division.
func pythonBitcoinlibSize(n uint32, p float64) (bytes, k uint32) {
	const ln2Sq, ln2 = 0.4804530139182014246671025263266649717305529515945455, 0.6931471805599453094172321214581765680755001343602552
	x, l := ln2Sq, ln2 // float64 variables: the arithmetic runs in float64
	bytes = uint32(math.Trunc(math.Min(-1/x*float64(n)*math.Log(p), 36000*8) / 8))
	return bytes, uint32(math.Trunc(math.Min(float64(bytes*8)/float64(n)*l, 50)))
}

// TestSizingRules holds the two rules (bip37.Sizing, whose TestSizing
// pins them on known filters) to their recomputations over a grid, and
// the model to refusing an unknown rule.
func TestSizingRules(t *testing.T) {
	differ := 0
	for n := uint32(1); n <= 3000; n += 13 {
		for _, p := range []float64{1e-6, 1e-5, 1e-4, 0.0005, 0.001, 0.01, 0.1, 0.3} {
			cb, ck := SizingCore.Size(n, p)
			if wb, wk := coreSize(n, p); cb != wb || ck != wk {
				t.Fatalf("core n=%d p=%g: %d, %d; recomputed %d, %d", n, p, cb, ck, wb, wk)
			}
			jb, jk := SizingBitcoinj.Size(n, p)
			if wb, wk := bitcoinjSizeRef(n, p); jb != wb || jk != wk {
				t.Fatalf("bitcoinj n=%d p=%g: %d, %d; recomputed %d, %d", n, p, jb, jk, wb, wk)
			}
			if cb == 0 || ck == 0 {
				continue
			}
			// Where Core builds a working filter, bitcoinj and
			// python-bitcoinlib build one of the same size with the same
			// or one more hash function.
			if pb, pk := pythonBitcoinlibSize(n, p); pb != jb || pk != jk || jb != cb || (jk != ck && jk != ck+1) {
				t.Fatalf("n=%d p=%g: core %d, %d; bitcoinj %d, %d; python-bitcoinlib %d, %d", n, p, cb, ck, jb, jk, pb, pk)
			}
			if jk != ck {
				differ++
			}
		}
	}
	if differ == 0 {
		t.Error("bitcoinj never used one more hash function than Core")
	}
	if _, err := ParseSizingRule("electrum"); !errors.Is(err, ErrBadParams) {
		t.Errorf("unknown rule: %v", err)
	}
	p := DefaultParams()
	p.Sizing = "electrum"
	if _, err := Evaluate(p); !errors.Is(err, ErrBadParams) {
		t.Errorf("Evaluate with an unknown rule: %v", err)
	}
}

// pfByProduct computes (1-(1-1/m)^(kn))^k by repeated multiplication in
// big.Float, independent of the log1p/expm1 form under test.
func pfByProduct(m uint64, k uint32, n uint64) float64 {
	prec := uint(200)
	q := new(big.Float).SetPrec(prec).Quo(big.NewFloat(1).SetPrec(prec), new(big.Float).SetPrec(prec).SetUint64(m))
	base := new(big.Float).SetPrec(prec).Sub(big.NewFloat(1).SetPrec(prec), q) // 1-1/m
	pow := big.NewFloat(1).SetPrec(prec)
	// square-and-multiply for (1-1/m)^(kn)
	e := uint64(k) * n
	b := new(big.Float).SetPrec(prec).Set(base)
	for e > 0 {
		if e&1 == 1 {
			pow.Mul(pow, b)
		}
		b.Mul(b, b)
		e >>= 1
	}
	fill := new(big.Float).SetPrec(prec).Sub(big.NewFloat(1).SetPrec(prec), pow)
	out := big.NewFloat(1).SetPrec(prec)
	for i := uint32(0); i < k; i++ {
		out.Mul(out, fill)
	}
	f, _ := out.Float64()
	return f
}

// binomInv returns 1/C(a, b) exactly for whole numbers.
func binomInv(a, b int64) float64 {
	c := new(big.Int).Binomial(a, b)
	f, _ := new(big.Float).Quo(big.NewFloat(1), new(big.Float).SetInt(c)).Float64()
	return f
}

func relClose(a, b, tol float64) bool {
	if a == b {
		return true
	}
	return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b))
}

func TestEvaluateAgainstClosedForms(t *testing.T) {
	tests := []Params{
		{Addresses: 1, FPRate: 0.0005, UniverseSize: 1_000_000, ElementsPerAddress: 2, ExtraElements: 100},
		{Addresses: 10, FPRate: 0.001, UniverseSize: 10_000_000, ElementsPerAddress: 2, ExtraElements: 0},
		{Addresses: 266, FPRate: 0.00001, UniverseSize: 100_000_000, ElementsPerAddress: 2, ExtraElements: 100},
		{Addresses: 50, FPRate: 0.1, UniverseSize: 1000, ElementsPerAddress: 1, ExtraElements: 0, Filters: 3},
		{Addresses: 100, FPRate: 0.0005, UniverseSize: 50_000_000, ElementsPerAddress: 2, ExtraElements: 100, PairTest: true, Filters: 2},
		{Addresses: 20000, FPRate: 0.0001, UniverseSize: 30_000_000, ElementsPerAddress: 2, ExtraElements: 100}, // hits the 36000-byte cap
	}
	for _, p := range tests {
		r, err := Evaluate(p)
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		n := p.Addresses*p.ElementsPerAddress + p.ExtraElements
		bytes, k := coreSize(n, p.FPRate)
		if r.FilterBytes != bytes || r.HashFuncs != k || r.FilterBits != uint64(bytes)*8 {
			t.Errorf("%+v: size %d bytes k=%d, want %d bytes k=%d", p, r.FilterBytes, r.HashFuncs, bytes, k)
		}
		if r.Elements != uint64(p.Addresses*p.ElementsPerAddress) {
			t.Errorf("elements %d", r.Elements)
		}
		pf := pfByProduct(r.FilterBits, r.HashFuncs, r.Elements)
		if !relClose(r.Pf, pf, 1e-9) {
			t.Errorf("%+v: pf %g, want %g", p, r.Pf, pf)
		}
		approx := math.Pow(1-math.Exp(-float64(k)*float64(r.Elements)/float64(r.FilterBits)), float64(k))
		if !relClose(r.PfApprox, approx, 1e-9) {
			t.Errorf("pf approx %g, want %g", r.PfApprox, approx)
		}
		// The two forms differ by a relative O(k^2 n/m), about 1% for the
		// smallest filters here.
		if !relClose(r.Pf, r.PfApprox, 2e-2) {
			t.Errorf("exact %g and approximate %g too far apart", r.Pf, r.PfApprox)
		}
		b := max(p.Filters, 1)
		per := pf
		if p.PairTest {
			per = pf * pf
		}
		wantS := float64(p.UniverseSize-uint64(p.Addresses)) * math.Pow(per, float64(b))
		if !relClose(r.ExpectedFalsePositives, wantS, 1e-8) {
			t.Errorf("%+v: S %g, want %g", p, r.ExpectedFalsePositives, wantS)
		}
		if want := float64(p.Addresses) / (float64(p.Addresses) + wantS); !relClose(r.PH1, want, 1e-8) {
			t.Errorf("P_h(1) %g, want %g", r.PH1, want)
		}
		if len(r.Steps) != int(b) {
			t.Fatalf("%d steps, want %d", len(r.Steps), b)
		}
		for i := 1; i < len(r.Steps); i++ {
			if !(r.Steps[i].ExpectedFalsePositives <= r.Steps[i-1].ExpectedFalsePositives) {
				t.Errorf("step %d does not shrink S", i)
			}
		}
	}
}

// TestHashFuncRounding pins the effect the integer division in Core's
// sizing has: the hash count is rounded down twice.
func TestHashFuncRounding(t *testing.T) {
	// Core divides bits by elements in integers before multiplying by
	// ln 2, so k never exceeds the floating-point choice.
	for _, c := range []struct {
		n  uint32
		fp float64
	}{{632, 0.00001}, {300, 0.0005}, {2100, 0.1}, {3, 0.5}} {
		r, err := Evaluate(Params{Addresses: c.n, FPRate: c.fp, UniverseSize: uint64(c.n), ElementsPerAddress: 1})
		if err != nil {
			t.Fatal(err)
		}
		bytes, _ := coreSize(c.n, c.fp)
		floatK := uint32(float64(bytes*8) / float64(c.n) * math.Ln2)
		if r.HashFuncs > floatK {
			t.Errorf("n=%d fp=%g: k=%d above the float-division k=%d", c.n, c.fp, r.HashFuncs, floatK)
		}
	}
	// n=2100, fp=0.1: integer division gives k=2 where float gives 3.
	r, _ := Evaluate(Params{Addresses: 2100, FPRate: 0.1, UniverseSize: 2100, ElementsPerAddress: 1})
	if r.HashFuncs != 2 {
		t.Errorf("n=2100 fp=0.1: k=%d, want 2", r.HashFuncs)
	}
}

func TestProbAllReal(t *testing.T) {
	for _, c := range []struct{ n, s int64 }{{1, 0}, {1, 1}, {3, 2}, {10, 10}, {50, 7}, {266, 3}, {5, 40}} {
		got := ProbAllReal(float64(c.n), float64(c.s))
		want := binomInv(c.n+c.s, c.n)
		if !relClose(got, want, 1e-9) {
			t.Errorf("n=%d s=%d: %g, want %g", c.n, c.s, got, want)
		}
	}
	// Between whole numbers it interpolates monotonically.
	a, b, c := ProbAllReal(10, 2), ProbAllReal(10, 2.5), ProbAllReal(10, 3)
	if !(a > b && b > c) {
		t.Errorf("not monotone: %g %g %g", a, b, c)
	}
	if got := ProbAllReal(1, 4.5); !relClose(got, 1/5.5, 1e-12) {
		t.Errorf("n=1: %g, want 1/(1+s)", got)
	}
}

func TestEvaluateErrors(t *testing.T) {
	good := DefaultParams()
	// Each error names the field at fault by its JSON key.
	bad := []struct {
		field string
		set   func(*Params)
	}{
		{"addresses", func(p *Params) { p.Addresses = 0 }},
		{"fp_rate", func(p *Params) { p.FPRate = 0 }},
		{"fp_rate", func(p *Params) { p.FPRate = 1 }},
		{"fp_rate", func(p *Params) { p.FPRate = math.NaN() }},
		{"elements_per_address", func(p *Params) { p.ElementsPerAddress = 0 }},
		{"pair_test", func(p *Params) { p.PairTest, p.ElementsPerAddress = true, 1 }},
		{"universe_size", func(p *Params) { p.UniverseSize = 10 }},
		{"filters", func(p *Params) { p.Filters = 5000 }},
		{"sizing", func(p *Params) { p.Sizing = "electrum" }},
	}
	for i, tc := range bad {
		p := good
		tc.set(&p)
		_, err := Evaluate(p)
		var fe *FieldError
		if !errors.Is(err, ErrBadParams) || !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("case %d: error %v, want ErrBadParams naming %s", i, err, tc.field)
		}
	}
	if _, err := Evaluate(good); err != nil {
		t.Fatal(err)
	}
}

func TestFalsePositiveRateEdges(t *testing.T) {
	if falsePositiveRate(0, 3, 10) != 1 || falsePositiveRateApprox(0, 3, 10) != 1 {
		t.Error("zero-bit filter must match everything")
	}
	if falsePositiveRate(800, 0, 10) != 1 {
		t.Error("zero hash functions match everything")
	}
	if falsePositiveRate(800, 5, 0) != 0 {
		t.Error("empty filter matches nothing")
	}
}

// TestExpectedPH checks the expectations over the false-positive count
// against exact rational sums over the whole binomial distribution.
func TestExpectedPH(t *testing.T) {
	tests := []struct {
		n, others int64
		pNum      int64 // pf = pNum/pDen
		pDen      int64
	}{
		{2, 3, 1, 2},
		{20, 40, 1, 100},
		{5, 200, 3, 10},
		{1, 1, 1, 3},
	}
	for _, tt := range tests {
		p := big.NewRat(tt.pNum, tt.pDen)
		q := new(big.Rat).Sub(big.NewRat(1, 1), p)
		want1, wantAll := new(big.Rat), new(big.Rat)
		for j := int64(0); j <= tt.others; j++ {
			w := new(big.Rat).SetInt(new(big.Int).Binomial(tt.others, j))
			w.Mul(w, ratPow(p, j))
			w.Mul(w, ratPow(q, tt.others-j))
			want1.Add(want1, new(big.Rat).Mul(w, big.NewRat(tt.n, tt.n+j)))
			all := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Binomial(tt.n+j, tt.n))
			wantAll.Add(wantAll, new(big.Rat).Mul(w, all))
		}
		got1, gotAll := expectedPH(float64(tt.n), float64(tt.others), float64(tt.pNum)/float64(tt.pDen))
		w1, _ := want1.Float64()
		wAll, _ := wantAll.Float64()
		if !relClose(got1, w1, 1e-9) || !relClose(gotAll, wAll, 1e-9) {
			t.Errorf("%+v: got %g, %g; want %g, %g", tt, got1, gotAll, w1, wAll)
		}
	}
	// Small S: nearly every attack sees no false positive, so P_h(N) in
	// expectation is near e^-S, far above the value at the mean.
	ph1, phAll := expectedPH(20, 1e7, 1.56e-8)
	s := 1e7 * 1.56e-8
	if !(phAll > math.Exp(-s) && phAll < 1 && phAll > ProbAllReal(20, s)) || !(ph1 > 20/(20+s)) {
		t.Errorf("S=%g: P_h(1) %g, P_h(N) %g (at the mean %g)", s, ph1, phAll, ProbAllReal(20, s))
	}
}

func ratPow(x *big.Rat, e int64) *big.Rat {
	r := big.NewRat(1, 1)
	for ; e > 0; e-- {
		r.Mul(r, x)
	}
	return r
}

// TestProbAllRealLogSpace checks 1/C(n+s, n) against the direct Lgamma
// formula where that is exact enough, and against n·ln(s) for s far beyond
// n, where the direct formula cancels to nonsense.
func TestProbAllRealLogSpace(t *testing.T) {
	for _, c := range []struct{ n, s float64 }{{1, 0.5}, {20, 0.16}, {20, 3}, {100, 50}, {3, 1e4}, {1e4, 3}, {266, 1e5}, {9.5, 9.5}} {
		a, _ := math.Lgamma(c.n + 1)
		b, _ := math.Lgamma(c.s + 1)
		d, _ := math.Lgamma(c.n + c.s + 1)
		want := a + b - d
		if got := logProbAllReal(c.n, c.s); math.Abs(got-want) > 1e-9*math.Max(1, math.Abs(want)) {
			t.Errorf("logProbAllReal(%g, %g) = %.12g, want %.12g", c.n, c.s, got, want)
		}
	}
	// For s ≫ n: ln C(n+s, n) = n·ln(s) - ln(n!) + n(n+1)/(2s) + O(n³/s²).
	for _, c := range []struct{ n, s float64 }{{100, 1e19}, {1, 1e17}, {20, 1e12}, {1e6, 1e18}} {
		lf, _ := math.Lgamma(c.n + 1)
		want := lf - c.n*math.Log(c.s) - c.n*(c.n+1)/(2*c.s)
		if got := logProbAllReal(c.n, c.s); math.Abs(got-want) > 1e-9*math.Abs(want) {
			t.Errorf("logProbAllReal(%g, %g) = %.12g, want %.12g", c.n, c.s, got, want)
		}
		if p := ProbAllReal(c.n, c.s); p > c.n/(c.n+c.s) {
			t.Errorf("ProbAllReal(%g, %g) = %g above P_h(1) = %g", c.n, c.s, p, c.n/(c.n+c.s))
		}
	}
}

// TestEvaluateHugeUniverse: a universe of 10^19 addresses gives figures
// that agree with each other (P_h(N) ≤ P_h(1)), in bounded time, and a
// filter that matches everything is warned about.
func TestEvaluateHugeUniverse(t *testing.T) {
	for _, fp := range []float64{0.5, 0.001, 1e-9} {
		p := DefaultParams()
		p.FPRate, p.UniverseSize = fp, 10_000_000_000_000_000_000
		r, err := Evaluate(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, st := range r.Steps {
			if st.PHAll > st.PH1 || st.PHAllExact > st.PH1Exact+1e-12 || math.IsNaN(st.PH1Exact) || math.IsNaN(st.PHAllExact) {
				t.Errorf("fp %g: P_h(1) %g, P_h(N) %g, E: %g, %g", fp, st.PH1, st.PHAll, st.PH1Exact, st.PHAllExact)
			}
		}
		if fp == 0.5 && (r.HashFuncs != 0 || len(r.Warnings) == 0 || !strings.Contains(r.Warnings[0], "matches every candidate")) {
			t.Errorf("fp 0.5: %d hash functions, warnings %q", r.HashFuncs, r.Warnings)
		}
	}
	// A wallet whose few false positives make the papers' P_h at the mean
	// misleading is told so.
	r, err := Evaluate(Params{Addresses: 20, FPRate: 0.0005, UniverseSize: 10_000_000, ElementsPerAddress: 2, ExtraElements: 100, Filters: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.Contains(w, "averaged") }) {
		t.Errorf("P_h %g at the mean vs %g averaged, no warning: %q", r.PHAll, r.PHAllExact, r.Warnings)
	}
}
