package model

import (
	"errors"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactConfidence recomputes the attacker's confidence for b filters with
// Evaluate at a given rate, independently of the advisor's search.
func exactConfidence(t *testing.T, m Params, rate float64, b uint32) (*Result, Step) {
	t.Helper()
	m.FPRate, m.Filters = rate, b
	r, err := Evaluate(m)
	if err != nil {
		t.Fatalf("Evaluate at %v: %v", rate, err)
	}
	return r, r.Step
}

// anyOfMatches is 1-(1-pf)^e by repeated multiplication in big.Float: the
// probability that one of e elements matches.
func anyOfMatches(pf float64, e uint32) float64 {
	one := big.NewFloat(1).SetPrec(200)
	q := new(big.Float).SetPrec(200).Sub(one, big.NewFloat(pf))
	pow := new(big.Float).SetPrec(200).Set(one)
	for range e {
		pow.Mul(pow, q)
	}
	f, _ := pow.Sub(one, pow).Float64()
	return f
}

func meetsTarget(p AdviceParams, st Step) bool {
	return (p.TargetPH1 == 0 || st.PH1Exact < p.TargetPH1) && (p.TargetPHAll == 0 || st.PHAllExact < p.TargetPHAll)
}

// checkAdvice verifies every row of a against the model: the answer's rate
// builds the filter claimed and meets the target, the next smaller float64
// rate (the next Core sizing) does not, nor does any rate of a log grid
// below it; an unreachable row is the most private working filter and
// fails, and so does every rate below it.
func checkAdvice(t *testing.T, p AdviceParams, a *Advice) {
	t.Helper()
	if len(a.Rows) == 0 {
		t.Fatalf("%+v: no rows (warnings %q)", p, a.Warnings)
	}
	for _, row := range a.Rows {
		r, st := exactConfidence(t, p.Model, row.FPRate, row.Filters)
		if r.FilterBytes != row.FilterBytes || r.HashFuncs != row.HashFuncs || r.Pf != row.Pf {
			t.Fatalf("%+v B=%d: rate %v builds %d bytes k=%d pf %v, advice says %d, %d, %v",
				p, row.Filters, row.FPRate, r.FilterBytes, r.HashFuncs, r.Pf, row.FilterBytes, row.HashFuncs, row.Pf)
		}
		if hi, _ := exactConfidence(t, p.Model, row.FPRateMax, row.Filters); hi.FilterBytes != row.FilterBytes || hi.HashFuncs != row.HashFuncs {
			t.Fatalf("%+v B=%d: fp_rate_max %v builds %d bytes k=%d, not the advised filter", p, row.Filters, row.FPRateMax, hi.FilterBytes, hi.HashFuncs)
		}
		if st.PH1Exact != row.PH1Exact || st.PHAllExact != row.PHAllExact {
			t.Fatalf("%+v B=%d: confidence %v %v, model says %v %v", p, row.Filters, row.PH1Exact, row.PHAllExact, st.PH1Exact, st.PHAllExact)
		}
		want := float64(p.BlockTxs) * anyOfMatches(r.Pf, p.TxElements)
		if !relClose(row.FalsePositiveTxsPerBlock, want, 1e-9) {
			t.Fatalf("%+v: %v false-positive transactions per block, want %v", p, row.FalsePositiveTxsPerBlock, want)
		}
		if meetsTarget(p, st) != row.Reachable {
			t.Fatalf("%+v B=%d: reachable %v but the model's confidence %v %v", p, row.Filters, row.Reachable, st.PH1Exact, st.PHAllExact)
		}
		if !row.Reachable {
			// More private than the most private working filter is no
			// filter at all: the next larger rate matches everything.
			if next, _ := exactConfidence(t, p.Model, math.Nextafter(row.FPRateMax, 1), row.Filters); next.FilterBytes != 0 && next.HashFuncs != 0 {
				t.Fatalf("%+v: rate above %v still builds %d bytes k=%d, a more private filter", p, row.FPRateMax, next.FilterBytes, next.HashFuncs)
			}
		}
		if row.CoreLargest {
			if row.FPRate != math.SmallestNonzeroFloat64 {
				t.Fatalf("%+v: the largest filter starts at rate %v", p, row.FPRate)
			}
			continue
		}
		below := math.Nextafter(row.FPRate, 0)
		if nb, st := exactConfidence(t, p.Model, below, row.Filters); nb.FilterBytes == row.FilterBytes || (row.Reachable && meetsTarget(p, st)) {
			t.Fatalf("%+v B=%d: the rate %v just below the answer %v builds %d bytes and meets the target (%v %v)",
				p, row.Filters, below, row.FPRate, nb.FilterBytes, st.PH1Exact, st.PHAllExact)
		}
		for i := 1; i <= 16; i++ {
			rate := row.FPRate * math.Pow(10, -float64(i)/2)
			if _, st := exactConfidence(t, p.Model, rate, row.Filters); meetsTarget(p, st) {
				t.Fatalf("%+v B=%d: the smaller rate %v meets the target (%v %v), the answer was %v", p, row.Filters, rate, st.PH1Exact, st.PHAllExact, row.FPRate)
			}
		}
	}
}

func TestAdviseMeetsTargetAndIsSmallest(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	for i := 0; i < 30; i++ {
		n := uint32(1 + rng.IntN(2000))
		u := uint64(n) + uint64(math.Pow(10, 2+8*rng.Float64()))
		x := 0.01 + 0.98*rng.Float64()
		p := AdviceParams{
			Model: Params{Addresses: n, UniverseSize: u, ElementsPerAddress: 2, ExtraElements: uint32(rng.IntN(2)) * 100,
				Filters: uint32(1 + rng.IntN(4)), PairTest: rng.IntN(2) == 0},
			BlockTxs: 3000, TxElements: 9,
		}
		switch rng.IntN(3) {
		case 0:
			p.TargetPH1 = x
		case 1:
			p.TargetPHAll = x
		default:
			p.TargetPH1, p.TargetPHAll = x, x*rng.Float64()
		}
		a, err := Advise(p)
		if err != nil {
			t.Fatalf("%+v: %v", p, err)
		}
		if want := min(p.Model.Filters, 2); uint32(len(a.Rows)) != want {
			t.Fatalf("%+v: %d rows, want %d", p, len(a.Rows), want)
		}
		checkAdvice(t, p, a)
	}
}

func TestAdviseCases(t *testing.T) {
	wallet := func(n uint32, u uint64, b uint32) Params {
		return Params{Addresses: n, UniverseSize: u, ElementsPerAddress: 2, ExtraElements: 100, Filters: b}
	}
	tests := []struct {
		name        string
		p           AdviceParams
		reachable   []bool
		coreLargest []bool
		warnings    int
	}{
		{"20 addresses, 1e7, P_h(N) < 0.5, 3 filters", AdviceParams{Model: wallet(20, 1e7, 3), TargetPHAll: 0.5}, []bool{true, true}, []bool{false, false}, 0},
		{"1000 addresses, 1e9, P_h(1) < 0.1", AdviceParams{Model: wallet(1000, 1e9, 1), TargetPH1: 0.1}, []bool{true}, []bool{false}, 0},
		// 100 addresses among 1000: P_h(1) >= 100/1000 for any filter.
		{"unreachable", AdviceParams{Model: wallet(100, 1000, 1), TargetPH1: 0.01}, []bool{false}, []bool{false}, 1},
		// Sized for 40,100 elements Core stops at 36,000 bytes; a universe
		// of 1e12 hides the wallet at any rate.
		{"every rate", AdviceParams{Model: wallet(20000, 1e12, 1), TargetPHAll: 0.5}, []bool{true}, []bool{true}, 1},
		{"pair test", AdviceParams{Model: Params{Addresses: 50, UniverseSize: 1e8, ElementsPerAddress: 2, Filters: 2, PairTest: true}, TargetPH1: 0.5}, []bool{true, true}, []bool{false, false}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			a, err := Advise(tc.p)
			if err != nil {
				t.Fatal(err)
			}
			if len(a.Rows) != len(tc.reachable) || len(a.Warnings) != tc.warnings {
				t.Fatalf("%d rows, warnings %q", len(a.Rows), a.Warnings)
			}
			for i, row := range a.Rows {
				if row.Reachable != tc.reachable[i] || row.CoreLargest != tc.coreLargest[i] {
					t.Errorf("row %d: reachable %v core largest %v", i, row.Reachable, row.CoreLargest)
				}
			}
			if a.Params.Model.FPRate != 0 || a.Params.BlockTxs != DefaultBlockTxs || a.Params.TxElements != DefaultTxElements {
				t.Errorf("params %+v", a.Params)
			}
			checkAdvice(t, a.Params, a)
			// More filters need a larger rate for the same target.
			if len(a.Rows) == 2 && a.Rows[1].Reachable && a.Rows[1].FPRate < a.Rows[0].FPRate {
				t.Errorf("%d filters need %v, one needs %v", a.Rows[1].Filters, a.Rows[1].FPRate, a.Rows[0].FPRate)
			}
		})
	}
}

func TestAdviseNoWorkingFilter(t *testing.T) {
	// 80,000 elements: Core's 288,000 bits are 3 per element, and
	// (3 * ln 2) truncates to 2 hash functions; 150,000 elements leave
	// one bit each and no hash function at any rate.
	a, err := Advise(AdviceParams{Model: Params{Addresses: 75_000, UniverseSize: 1e9, ElementsPerAddress: 2}, TargetPH1: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Rows) != 0 || a.SizingsSearched != 0 || len(a.Warnings) != 1 {
		t.Fatalf("%+v", a)
	}
}

func TestAdviseRefusesBadTargets(t *testing.T) {
	base := Params{Addresses: 20, UniverseSize: 1e7, ElementsPerAddress: 2, ExtraElements: 100}
	for _, p := range []AdviceParams{
		{Model: base},
		{Model: base, TargetPH1: 1},
		{Model: base, TargetPHAll: -0.1},
		{Model: base, TargetPHAll: math.NaN()},
		{Model: base, TargetPH1: 0.5, TargetPHAll: 1.5},
		{Model: Params{Addresses: 20, UniverseSize: 10, ElementsPerAddress: 2}, TargetPH1: 0.5},
	} {
		if _, err := Advise(p); !errors.Is(err, ErrBadParams) {
			t.Errorf("%+v: %v, want ErrBadParams", p, err)
		}
	}
}

// coreSizings lists each filter once, from the largest, with rate
// intervals that tile (0, 1) up to the first match-everything rate, and
// the independent recomputation of Core's sizing agrees at both ends of
// every interval. pf never falls as the rate grows.
func TestCoreSizingsTileTheRates(t *testing.T) {
	for _, tc := range []struct{ sizing, inserted uint32 }{{140, 40}, {2, 2}, {300, 200}, {40100, 40000}, {1, 1}} {
		s := coreSizings(tc.sizing, uint64(tc.inserted))
		if len(s) == 0 || s[0].rateLo != math.SmallestNonzeroFloat64 {
			t.Fatalf("%v: %d sizings", tc, len(s))
		}
		for i, z := range s {
			for _, rate := range []float64{z.rateLo, z.rateHi} {
				if b, k := coreSize(tc.sizing, rate); b != z.bytes || k != z.hashFuncs {
					t.Fatalf("%v: rate %v: Core sizes %d bytes k=%d, enumeration %d, %d", tc, rate, b, k, z.bytes, z.hashFuncs)
				}
			}
			if i > 0 {
				prev := s[i-1]
				if math.Nextafter(prev.rateHi, 1) != z.rateLo || z.bytes >= prev.bytes || z.pf < prev.pf {
					t.Fatalf("%v: %+v follows %+v", tc, z, prev)
				}
			} else if b, _ := coreSize(tc.sizing, math.Nextafter(z.rateLo, 0)); z.rateLo > math.SmallestNonzeroFloat64 && b == z.bytes {
				t.Fatalf("%v: first interval does not start where its filter does", tc)
			}
		}
		last := s[len(s)-1]
		if b, k := coreSize(tc.sizing, math.Nextafter(last.rateHi, 1)); b != 0 && k != 0 {
			t.Fatalf("%v: rate above the last sizing builds %d bytes k=%d", tc, b, k)
		}
	}
}
