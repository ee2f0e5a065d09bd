package model

import (
	"encoding/json"
	"math"
	"math/bits"
	"math/rand/v2"
	"strconv"
	"testing"
)

// realSetting is one wallet, universe and target of the real-filter test.
type realSetting struct {
	addresses uint32
	universe  uint64
	filters   uint32
	pair      bool
	ph1, phN  float64
}

// realSettings are twelve wallets, universes and targets: the example of
// a 20-address wallet whose printed rate used to build a larger filter,
// bitcoinj's fresh wallet (266 keys), large wallets, several filters and
// the pair test.
var realSettings = []realSetting{
	{20, 1e7, 1, false, 0.5, 0},
	{20, 1e7, 1, false, 0, 0.5},
	{20, 1e7, 3, false, 0, 0.5},
	{20, 1e9, 1, false, 0.1, 0},
	{100, 1e7, 1, false, 0.5, 0},
	{100, 1e9, 3, false, 0, 0.1},
	{100, 1e9, 1, false, 0.1, 0},
	{266, 1e7, 1, false, 0.5, 0},
	{266, 1e8, 2, false, 0, 0.5},
	{1000, 1e9, 1, false, 0.1, 0},
	{1000, 1e7, 2, true, 0.5, 0},
	{50, 1e8, 2, true, 0.5, 0},
}

func (s realSetting) params(rule SizingRule) AdviceParams {
	return AdviceParams{
		Model: Params{Addresses: s.addresses, UniverseSize: s.universe, ElementsPerAddress: 2, ExtraElements: 100,
			Filters: s.filters, PairTest: s.pair, Sizing: rule},
		TargetPH1: s.ph1, TargetPHAll: s.phN,
	}
}

// realMeasure is what real filters gave at one rate.
type realMeasure struct {
	ph1, phAll     float64   // means over the trials
	se1, seAll     float64   // their standard errors
	hits, expected float64   // sampled candidates that matched, and the number the filters' fills predict
	each1, eachAll []float64 // each trial's
}

// measureReal builds trials wallets of random elements (a 33-byte key and
// a 20-byte hash per address) and b real filters of each with bip37 by the
// rule, each with its own tweak. A candidate outside the wallet matches a
// filter with m bits, X of them set, and k hash functions with
// probability (X/m)^k; that rate is checked against sample random
// candidates per filter (a key and a hash both matching under the pair
// test), and the attacker's confidence for the trial is E[P_h(1)],
// E[P_h(N)] over the binomial number of false positives among the
// universe's outside candidates at the rate of the trial's filters.
func measureReal(p Params, rate float64, b uint32, trials, sample int, seed uint64) realMeasure {
	rng := rand.New(rand.NewPCG(seed, 0xad1ce))
	elements := p.Addresses*p.ElementsPerAddress + p.ExtraElements
	n, others := float64(p.Addresses), float64(p.UniverseSize-uint64(p.Addresses))
	var m realMeasure
	var sq1, sqAll float64
	key, hash := make([]byte, 33), make([]byte, 20)
	wallet := make([][]byte, 2*p.Addresses)
	for i := range wallet {
		wallet[i] = make([]byte, 20+13*(i%2))
	}
	for range trials {
		for _, e := range wallet {
			randomBytes(rng, e)
		}
		q := 1.0
		for range b {
			f := p.Sizing.NewFilter(elements, rate, rng.Uint32(), 0)
			for _, e := range wallet {
				f.Add(e)
			}
			set := 0
			for _, x := range f.Bits() {
				set += bits.OnesCount8(x)
			}
			qf := math.Pow(float64(set)/float64(8*f.Size()), float64(f.HashFuncs()))
			if p.PairTest {
				qf *= qf
			}
			q *= qf
			m.expected += qf * float64(sample)
			for range sample {
				randomBytes(rng, hash)
				match := f.Contains(hash)
				if p.PairTest {
					randomBytes(rng, key)
					match = match && f.Contains(key)
				}
				if match {
					m.hits++
				}
			}
		}
		a, all := expectedPH(n, others, q)
		m.each1, m.eachAll = append(m.each1, a), append(m.eachAll, all)
		m.ph1 += a
		m.phAll += all
		sq1 += a * a
		sqAll += all * all
	}
	T := float64(trials)
	m.ph1 /= T
	m.phAll /= T
	m.se1 = math.Sqrt(math.Max(sq1/T-m.ph1*m.ph1, 0) / T)
	m.seAll = math.Sqrt(math.Max(sqAll/T-m.phAll*m.phAll, 0) / T)
	return m
}

// targetOf returns the bound and the measured confidence it applies to.
func targetOf(p AdviceParams, m realMeasure) (target, got, se float64) {
	return pick(p, p.TargetPH1, p.TargetPHAll), pick(p, m.ph1, m.phAll), pick(p, m.se1, m.seAll)
}

// pick2 is pick for each trial's figures.
func pick2(p AdviceParams, ph1, phAll []float64) []float64 {
	if p.TargetPHAll != 0 {
		return phAll
	}
	return ph1
}

// pick returns the figure the target bounds: P_h(N)'s when there is a
// bound on it, else P_h(1)'s.
func pick(p AdviceParams, ph1, phAll float64) float64 {
	if p.TargetPHAll != 0 {
		return phAll
	}
	return ph1
}

// realZ is how many standard errors the measurement may stray.
const realZ = 4

// TestAdviceHoldsOnRealFilters: for twelve settings and both sizing
// rules, the rate the advisor prints and the rate its JSON gives (one
// float64) build real filters whose measured confidence agrees with the
// advisor's figure averaged over fills and stays below the target, and
// 95% of them (at least 92% of 300: 2.4 standard errors below) are each
// below it; half that rate builds filters whose measured confidence is
// above the target. The fill-based false-positive rate of the real
// filters is checked against random candidates.
func TestAdviceHoldsOnRealFilters(t *testing.T) {
	for _, rule := range SizingRules {
		t.Run(string(rule), func(t *testing.T) {
			t.Parallel()
			for i, s := range realSettings {
				p := s.params(rule)
				a, err := Advise(p)
				if err != nil {
					t.Fatal(err)
				}
				js := jsonRates(t, a)
				for j, row := range a.Rows {
					printed, err := strconv.ParseFloat(row.FPRateText, 64)
					if err != nil || printed != js[j] {
						t.Fatalf("%+v B=%d: printed %q, JSON %v", p, row.Filters, row.FPRateText, js[j])
					}
					at := measureReal(p.Model, printed, row.Filters, 300, 400, uint64(100*i+j))
					target, got, se := targetOf(p, at)
					want := pick(p, row.PH1OverFills, row.PHAllOverFills)
					if math.Abs(got-want) > realZ*se+1e-9 || got > target+realZ*se {
						t.Errorf("%+v B=%d rate %s: measured %.4f ± %.4f, advisor %.4f over fills, target %v",
							p, row.Filters, row.FPRateText, got, se, want, target)
					}
					below := 0
					for _, c := range pick2(p, at.each1, at.eachAll) {
						if c < target {
							below++
						}
					}
					if share := float64(below) / 300; share < 0.92 {
						t.Errorf("%+v B=%d rate %s: %d of 300 real filters below the target %v, want 95%%", p, row.Filters, row.FPRateText, below, target)
					}
					if d := at.hits - at.expected; d*d > 16*(at.expected+1) {
						t.Errorf("%+v B=%d: %v sampled candidates matched, the fills predict %.1f", p, row.Filters, at.hits, at.expected)
					}
					half := measureReal(p.Model, printed/2, row.Filters, 60, 0, uint64(100*i+j+50))
					if _, gotHalf, seHalf := targetOf(p, half); gotHalf-realZ*seHalf <= target {
						t.Errorf("%+v B=%d: at half the rate, %v, measured %.4f ± %.4f against the target %v",
							p, row.Filters, printed/2, gotHalf, seHalf, target)
					}
					kind := map[bool]string{false: "P_h(1)", true: "P_h(N)"}[p.TargetPHAll != 0]
					t.Logf("%s N=%d U=%g pair=%v B=%d target %s < %v: rate %s, %d bytes, k=%d: measured %.4f ± %.4f (model %.4f, over fills %.4f, 95%% of filters below %.4f); %d of 300 real filters below the target; half the rate %.4f ± %.4f",
						rule, s.addresses, float64(s.universe), s.pair, row.Filters, kind, target, row.FPRateText, row.FilterBytes, row.HashFuncs,
						got, se, pick(p, row.PH1Exact, row.PHAllExact), want, pick(p, row.PH1MostFills, row.PHAllMostFills), below,
						pick(p, half.ph1, half.phAll), pick(p, half.se1, half.seAll))
				}
			}
		})
	}
}

// jsonRates returns the fp_rate of each row of the advice's JSON.
func jsonRates(t *testing.T, a *Advice) []float64 {
	t.Helper()
	b, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Rows []struct {
			FPRate float64 `json:"fp_rate"`
		} `json:"rows"`
	}
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, len(back.Rows))
	for i, r := range back.Rows {
		out[i] = r.FPRate
	}
	return out
}
