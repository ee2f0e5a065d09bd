package model

import (
	"math"
	"testing"
)

// occupancy returns the exact distribution of the number of bits set when
// t hash positions fall uniformly on m bits: P(X = x) for x = 0..m.
func occupancy(m, t int) []float64 {
	p := make([]float64, m+1)
	p[0] = 1
	for range t {
		next := make([]float64, m+1)
		for x, w := range p {
			if w == 0 {
				continue
			}
			next[x] += w * float64(x) / float64(m)
			if x < m {
				next[x+1] += w * float64(m-x) / float64(m)
			}
		}
		p = next
	}
	return p
}

// TestConfidenceOverFillsExact sets the advisor's average over filter
// fills against the exact occupancy distribution of one small filter:
// the mean and spread of ln q, and E[P_h(1)], E[P_h(N)] summed over every
// fill (96 bits: 0.2455 exact, 0.2460 over fills, 0.2327 at the expected
// fill).
func TestConfidenceOverFillsExact(t *testing.T) {
	for _, c := range []struct {
		bytes, k, addresses uint32
		universe            uint64
		pair                bool
	}{
		{25, 5, 10, 1000, false},
		{60, 4, 20, 3000, false},
		{87, 2, 20, 1700, false},
		{40, 3, 10, 400_000, true},
		{25, 5, 5, 2000, false},
		{12, 6, 4, 500, false},
	} {
		m, inserted := int(8*c.bytes), int(2*c.addresses)
		dist := occupancy(m, int(c.k)*inserted)
		exp := float64(c.k)
		if c.pair {
			exp *= 2
		}
		var mean, sq, ph1, phAll float64
		p := AdviceParams{Model: Params{Addresses: c.addresses, UniverseSize: c.universe, ElementsPerAddress: 2, PairTest: c.pair}}
		n, others := float64(c.addresses), float64(c.universe-uint64(c.addresses))
		for x, w := range dist {
			if w < 1e-300 || x == 0 {
				continue
			}
			l := exp * math.Log(float64(x)/float64(m))
			mean += w * l
			sq += w * l * l
			a, all := expectedPH(n, others, math.Exp(l))
			ph1 += w * a
			phAll += w * all
		}
		sd := math.Sqrt(sq - mean*mean)
		gotMean, gotSD := logRateOverFills(c.bytes, c.k, uint64(inserted), 1, c.pair)
		if math.Abs(gotMean-mean) > 2e-3*math.Abs(mean) || math.Abs(gotSD-sd) > 0.03*sd {
			t.Errorf("%+v: ln q mean %v sd %v, exact %v, %v", c, gotMean, gotSD, mean, sd)
		}
		s := filterSizing{bytes: c.bytes, hashFuncs: c.k, pf: falsePositiveRate(uint64(m), c.k, uint64(inserted))}
		got1, gotAll := p.confidenceOverFills(s, 1)
		if math.Abs(got1-ph1) > 1e-3 || math.Abs(gotAll-phAll) > 1e-3 {
			t.Errorf("%+v: over fills %v, %v; exact %v, %v", c, got1, gotAll, ph1, phAll)
		}
		// Where the figure at the expected fill is off, the average over
		// fills is closer.
		at1, atAll := p.confidence(s.pf, 1)
		for _, f := range [][3]float64{{at1, got1, ph1}, {atAll, gotAll, phAll}} {
			if math.Abs(f[0]-f[2]) > 2e-3 && math.Abs(f[1]-f[2]) > math.Abs(f[0]-f[2])/4 {
				t.Errorf("%+v: at the expected fill %v, over fills %v, exact %v", c, f[0], f[1], f[2])
			}
		}
		t.Logf("%+v: E[P_h(1)], E[P_h(N)] at the expected fill %.4f, %.4f; over fills %.4f, %.4f (exact %.4f, %.4f)", c, at1, atAll, got1, gotAll, ph1, phAll)
	}
}
