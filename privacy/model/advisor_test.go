package model

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
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

// meetsBoth reports whether the model's confidence at rate, its average
// over real fills and what 95% of real fills stay below all meet the
// targets.
func meetsBoth(t *testing.T, p AdviceParams, rate float64, b uint32) bool {
	r, st := exactConfidence(t, p.Model, rate, b)
	if !meetsTarget(p, st) {
		return false
	}
	fs := filterSizing{bytes: r.FilterBytes, hashFuncs: r.HashFuncs, pf: r.Pf}
	return p.meets(p.confidenceOverFills(fs, b)) && p.meets(p.confidenceForMostFills(fs, b))
}

// checkAdvice verifies every row of a against the model: the advised
// rate, its printed text and every number that rounds to that text build
// the filter claimed, which meets the target; so does the smallest rate of
// the interval, and the next smaller float64 rate (the next sizing) does
// not, nor does any rate of a log grid below it, nor half the advised
// rate; an unreachable row is the most private working filter and fails,
// and so does every rate below it.
func checkAdvice(t *testing.T, p AdviceParams, a *Advice) {
	t.Helper()
	if len(a.Rows) == 0 {
		t.Fatalf("%+v: no rows (warnings %q)", p, a.Warnings)
	}
	for _, row := range a.Rows {
		checkRobustRate(t, p, row)
		r, st := exactConfidence(t, p.Model, row.FPRate, row.Filters)
		if r.FilterBytes != row.FilterBytes || r.HashFuncs != row.HashFuncs || r.Pf != row.Pf {
			t.Fatalf("%+v B=%d: rate %v builds %d bytes k=%d pf %v, advice says %d, %d, %v",
				p, row.Filters, row.FPRate, r.FilterBytes, r.HashFuncs, r.Pf, row.FilterBytes, row.HashFuncs, row.Pf)
		}
		for _, edge := range []float64{row.FPRateMin, row.FPRateMax} {
			if e, _ := exactConfidence(t, p.Model, edge, row.Filters); e.FilterBytes != row.FilterBytes || e.HashFuncs != row.HashFuncs {
				t.Fatalf("%+v B=%d: interval end %v builds %d bytes k=%d, not the advised filter", p, row.Filters, edge, e.FilterBytes, e.HashFuncs)
			}
		}
		if st.PH1Exact != row.PH1Exact || st.PHAllExact != row.PHAllExact {
			t.Fatalf("%+v B=%d: confidence %v %v, model says %v %v", p, row.Filters, row.PH1Exact, row.PHAllExact, st.PH1Exact, st.PHAllExact)
		}
		want := float64(p.BlockTxs) * anyOfMatches(r.Pf, p.TxElements)
		if !relClose(row.FalsePositiveTxsPerBlock, want, 1e-9) {
			t.Fatalf("%+v: %v false-positive transactions per block, want %v", p, row.FalsePositiveTxsPerBlock, want)
		}
		if meetsBoth(t, p, row.FPRate, row.Filters) != row.Reachable ||
			(meetsTarget(p, st) && p.meets(row.PH1OverFills, row.PHAllOverFills) && p.meets(row.PH1MostFills, row.PHAllMostFills)) != row.Reachable {
			t.Fatalf("%+v B=%d: reachable %v but the model's confidence %v %v, over fills %v %v",
				p, row.Filters, row.Reachable, st.PH1Exact, st.PHAllExact, row.PH1OverFills, row.PHAllOverFills)
		}
		if !row.Reachable {
			// More private than the most private working filter is no
			// filter at all: the next larger rate matches everything.
			next := math.Nextafter(row.FPRateMax, 1)
			if next >= 1 {
				continue // bitcoinj's 1-byte filter, built up to rate 1
			}
			if n, _ := exactConfidence(t, p.Model, next, row.Filters); n.FilterBytes != 0 && n.HashFuncs != 0 {
				t.Fatalf("%+v: rate above %v still builds %d bytes k=%d, a more private filter", p, row.FPRateMax, n.FilterBytes, n.HashFuncs)
			}
			continue
		}
		if row.CoreLargest {
			if row.FPRateMin != math.SmallestNonzeroFloat64 {
				t.Fatalf("%+v: the largest filter starts at rate %v", p, row.FPRateMin)
			}
			continue
		}
		below := math.Nextafter(row.FPRateMin, 0)
		if nb, _ := exactConfidence(t, p.Model, below, row.Filters); nb.FilterBytes == row.FilterBytes || meetsBoth(t, p, below, row.Filters) {
			t.Fatalf("%+v B=%d: the rate %v just below the interval %v builds %d bytes and meets the target", p, row.Filters, below, row.FPRateMin, nb.FilterBytes)
		}
		for i := 0; i <= 16; i++ {
			rate := row.FPRateMin * math.Pow(10, -float64(i)/2)
			if i == 0 {
				rate = row.FPRate / 2
			}
			if meetsBoth(t, p, rate, row.Filters) {
				t.Fatalf("%+v B=%d: the smaller rate %v meets the target, the answer was %v", p, row.Filters, rate, row.FPRate)
			}
		}
	}
}

// checkRobustRate: the advised rate's text parses back to it, lies in the
// middle half of its interval on a log scale, and the numbers that round
// to it at its printed digits (both ends of its rounding cell), and the
// same rate printed to 4 significant digits, build the advised filter.
func checkRobustRate(t *testing.T, p AdviceParams, row AdviceRow) {
	t.Helper()
	if row.FPRateText == "" {
		t.Fatalf("%+v B=%d: no robust rate in [%v, %v]", p, row.Filters, row.FPRateMin, row.FPRateMax)
	}
	parsed, err := strconv.ParseFloat(row.FPRateText, 64)
	if err != nil || parsed != row.FPRate {
		t.Fatalf("%+v: text %q parses to %v (%v), rate %v", p, row.FPRateText, parsed, err, row.FPRate)
	}
	lo := max(row.FPRateMin, row.FPRateMax/100)
	if q := math.Log(row.FPRate/lo) / math.Log(row.FPRateMax/lo); !(q >= 0.25 && q <= 0.75) {
		t.Fatalf("%+v: rate %v at %.3f of its interval [%v, %v] on a log scale", p, row.FPRate, q, lo, row.FPRateMax)
	}
	digits := len(strings.TrimLeft(strings.ReplaceAll(strings.Split(strings.ToLower(row.FPRateText), "e")[0], ".", ""), "0"))
	h := 0.5 * math.Pow(10, math.Floor(math.Log10(row.FPRate))-float64(digits-1))
	printed4, _ := strconv.ParseFloat(fmt.Sprintf("%.4g", row.FPRate), 64)
	elements := p.Model.Addresses*p.Model.ElementsPerAddress + p.Model.ExtraElements
	for _, rate := range []float64{row.FPRate - h, row.FPRate + h, printed4} {
		if b, k := p.Model.Sizing.Size(elements, rate); b != row.FilterBytes || k != row.HashFuncs {
			t.Fatalf("%+v B=%d: %v, which rounds to the printed %s, builds %d bytes k=%d, not %d, %d",
				p, row.Filters, rate, row.FPRateText, b, k, row.FilterBytes, row.HashFuncs)
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
				Filters: uint32(1 + rng.IntN(4)), PairTest: rng.IntN(2) == 0, Sizing: SizingRules[i%2]},
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

// sizings lists each filter once, from the largest, with rate intervals
// that tile (0, 1) up to the first match-everything rate (Core) or to 1
// (bitcoinj), and the independent recomputation of each rule agrees at
// both ends of every interval. pf never falls as the rate grows.
func TestSizingsTileTheRates(t *testing.T) {
	refs := map[SizingRule]func(uint32, float64) (uint32, uint32){SizingCore: coreSize, SizingBitcoinj: bitcoinjSizeRef}
	for _, rule := range SizingRules {
		for _, tc := range []struct{ sizing, inserted uint32 }{{140, 40}, {2, 2}, {300, 200}, {40100, 40000}, {1, 1}} {
			s := sizings(rule, tc.sizing, uint64(tc.inserted))
			if len(s) == 0 || s[0].rateLo != math.SmallestNonzeroFloat64 {
				t.Fatalf("%s %v: %d sizings", rule, tc, len(s))
			}
			for i, z := range s {
				for _, rate := range []float64{z.rateLo, z.rateHi} {
					if b, k := refs[rule](tc.sizing, rate); b != z.bytes || k != z.hashFuncs {
						t.Fatalf("%s %v: rate %v: the rule sizes %d bytes k=%d, enumeration %d, %d", rule, tc, rate, b, k, z.bytes, z.hashFuncs)
					}
				}
				if i > 0 {
					prev := s[i-1]
					if math.Nextafter(prev.rateHi, 1) != z.rateLo || z.bytes >= prev.bytes || z.pf < prev.pf {
						t.Fatalf("%s %v: %+v follows %+v", rule, tc, z, prev)
					}
				}
			}
			last := s[len(s)-1]
			next := math.Nextafter(last.rateHi, 1)
			switch b, k := refs[rule](tc.sizing, next); {
			case rule == SizingBitcoinj && (next != 1 || last.bytes != 1):
				t.Fatalf("%v: bitcoinj's last filter %+v ends below 1", tc, last)
			case rule == SizingCore && b != 0 && k != 0:
				t.Fatalf("%v: rate above the last sizing builds %d bytes k=%d", tc, b, k)
			}
		}
	}
}

// TestAdviceWarningsCountInSingular: a warning names a filter of one hash
// function as such, not "1 hash functions".
func TestAdviceWarningsCountInSingular(t *testing.T) {
	m := DefaultParams()
	m.Addresses, m.UniverseSize, m.Filters = 5, 6, 1
	a, err := Advise(AdviceParams{Model: m, TargetPH1: 0.01, BlockTxs: 3000, TxElements: 9})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(a.Warnings, "\n")
	if !strings.Contains(text, ", 1 hash function, rate ") || strings.Contains(text, "1 hash functions") {
		t.Errorf("warnings %q: want the most private filter's 1 hash function in the singular", a.Warnings)
	}
	if got := filterShape(1, 2); got != "1 byte, 2 hash functions" {
		t.Errorf("filterShape(1, 2) = %q", got)
	}
}
