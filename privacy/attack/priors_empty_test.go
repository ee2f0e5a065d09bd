package attack

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/spvfilter/spvfilter/bip37"
)

// knownCapture is a capture whose wallets are known: honest wallets
// of 1 to 300 hashes behind filters of 2 to 200 chance matches, empty
// wallets (new ones, as a client with no address yet loads) behind
// filters of a few hashes no candidate is and 0.05 to 3 chance matches,
// over a universe of the honest wallets and random hashes.
type knownCapture struct {
	groups [][]*bip37.Filter
	univ   []byte
	// owned is, per session, its wallet's candidates (hex).
	owned []map[string]bool
	// randoms are the universe's candidates of no wallet.
	randoms [][]byte
	honest  int
}

// newKnownCapture draws a knownCapture of honest and empty wallets and
// random candidates from seed.
func newKnownCapture(seed uint64, honest, empty, random int) *knownCapture {
	rng := rand.New(rand.NewPCG(seed, seed^0x5eed))
	c := &knownCapture{honest: honest}
	var b bytes.Buffer
	for range honest {
		size := int(logUniform(rng, 1, 300))
		f := bip37.NewFilter(uint32(size), logUniform(rng, 2, 200)/float64(random), rng.Uint32(), 0)
		own := map[string]bool{}
		for range size {
			e := randomElem(rng, 20)
			f.Add(e)
			own[hex.EncodeToString(e)] = true
			b.WriteString(hex.EncodeToString(e) + "\n")
		}
		c.groups = append(c.groups, []*bip37.Filter{f})
		c.owned = append(c.owned, own)
	}
	for range empty {
		f := bip37.NewFilter(5, logUniform(rng, 0.05, 3)/float64(random), rng.Uint32(), 0)
		for range 5 {
			f.Add(randomElem(rng, 20))
		}
		c.groups = append(c.groups, []*bip37.Filter{f})
		c.owned = append(c.owned, map[string]bool{})
	}
	for range random {
		e := randomElem(rng, 20)
		c.randoms = append(c.randoms, e)
		b.WriteString(hex.EncodeToString(e) + "\n")
	}
	c.univ = b.Bytes()
	return c
}

// calib is how the matches of some sessions fare at P >= 0.95.
type calib struct {
	matches, high, highRight int
	sumP                     float64
}

func (c *calib) add(r *Report, owned map[string]bool) {
	for _, m := range r.Matched {
		c.matches++
		c.sumP += m.Probability
		if m.Probability >= 0.95 {
			c.high++
			if owned[m.Candidate] {
				c.highRight++
			}
		}
	}
}

func (c calib) meanP() float64 { return c.sumP / float64(max(c.matches, 1)) }

func (c calib) share() float64 {
	if c.high == 0 {
		return math.NaN()
	}
	return float64(c.highRight) / float64(c.high)
}

// TestEmptyWalletsPrior measures, on captures of 30 honest wallets and
// 0, 30, 100 or 300 empty ones behind filters of few chance matches
// (most of which match nothing), the prior's empty share against the
// true share of empty wallets, and the calibration of every match at
// P >= 0.95, of the empty wallets' matches (all chance) apart. It fails
// when the empty share is off the true one by more than 0.1 (it was
// before sessions of no match were weighed together: 0.650 for 0.500,
// 0.884 for 0.769), when more than 5% of the empty wallets' chance
// matches are called P >= 0.95, or when fewer than 95% of all the
// seeds' matches at P >= 0.95 are right.
func TestEmptyWalletsPrior(t *testing.T) {
	const honest, random = 30, 20_000
	var pooled calib
	defer func() {
		if pooled.share() < 0.95 {
			t.Errorf("%d of %d matches at P >= 0.95 right", pooled.highRight, pooled.high)
		}
	}()
	for _, seed := range []uint64{3, 5, 7} {
		for _, empty := range []int{0, 30, 100, 300} {
			c := newKnownCapture(seed, honest, empty, random)
			acc, reps := accumulate(t, c.groups, c.univ, AnalyzeOptions{})
			var all, hon, emp calib
			zero := 0
			for g, r := range reps {
				all.add(r, c.owned[g])
				if g < honest {
					hon.add(r, c.owned[g])
				} else {
					emp.add(r, c.owned[g])
					if r.MatchedCount == 0 {
						zero++
					}
				}
			}
			warned := hasPriorWarning(reps[0].Warnings)
			trueEmpty := float64(empty) / float64(honest+empty)
			pr := acc.fit.sizes.public()
			t.Logf("seed %d, %3d empty (%3d matched nothing): prior empty %.3f (true %.3f); all P>=0.95 %d of %d right (%.3f); honest mean P %.4f; empty wallets' %d matches mean P %.4f, %d at P>=0.95; warned %v",
				seed, empty, zero, pr.Empty, trueEmpty, all.highRight, all.high, all.share(), hon.meanP(), emp.matches, emp.meanP(), emp.high, warned)
			pooled.high += all.high
			pooled.highRight += all.highRight
			if d := math.Abs(pr.Empty - trueEmpty); empty > 0 && d > 0.1 {
				t.Errorf("seed %d, %d empty wallets: prior empty share %.3f, true %.3f", seed, empty, pr.Empty, trueEmpty)
			}
			if emp.matches > 0 && float64(emp.high) > 0.05*float64(emp.matches) {
				t.Errorf("seed %d, %d empty wallets: %d of their %d chance matches at P >= 0.95", seed, empty, emp.high, emp.matches)
			}
		}
	}
}

// TestOddFiltersPriorFinite feeds the size prior's fit, the evidence
// weights and Join's recount of copies filters a capture file may hold
// (no byte, bytes but no hash function, every bit set, no bit set, and
// 2,000 copies of one filter split over two parts) beside 10 honest
// sessions, as one pass and as two joined, with and without the last
// group fitted apart (as a capture report's intersection): no panic,
// every weight in [0, 1], the prior and every probability finite and in
// range, and the two ways alike.
func TestOddFiltersPriorFinite(t *testing.T) {
	groups, univ := sessionsCapture(3, 10, 5_000)
	odd := func(bits []byte, funcs uint32) []*bip37.Filter {
		f, err := bip37.NewFilterFromParams(bits, funcs, 7, 0)
		if err != nil {
			t.Fatal(err)
		}
		return []*bip37.Filter{f}
	}
	groups = append(groups, odd(nil, 0), odd(nil, 50), odd([]byte{0x5a, 0xa5}, 0),
		odd([]byte{0xff, 0xff, 0xff}, 50), odd(make([]byte, 100), 11))
	copied := bip37.NewFilter(5, 5.0/5_000, 9, 0)
	for range 5 {
		copied.Add(randomElem(rand.New(rand.NewPCG(1, 2)), 20))
	}
	for range 2_000 {
		groups = append(groups, []*bip37.Filter{copied})
	}
	check := func(name string, acc *Accumulator, reps []*Report) {
		t.Helper()
		pr := acc.fit.sizes.public()
		for _, v := range []float64{pr.Empty, pr.LogMean, pr.LogDeviation, pr.Median} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				t.Fatalf("%s: prior %+v", name, pr)
			}
		}
		for i, w := range evidenceWeights(reportSessions(reps, acc.set)) {
			if !(w >= 0 && w <= 1) {
				t.Fatalf("%s: group %d weighs %v", name, i, w)
			}
		}
		for g, r := range reps {
			for _, m := range r.Matched {
				if !(m.Probability >= 0 && m.Probability <= 1) {
					t.Fatalf("%s: group %d candidate %s P %v", name, g, m.Candidate, m.Probability)
				}
			}
		}
	}
	for _, apart := range []bool{false, true} {
		one, reps := accumulate(t, groups, univ, AnalyzeOptions{})
		if apart {
			one.fitOnly(len(groups) - 1)
			var err error
			if reps, err = one.Reports(); err != nil {
				t.Fatal(err)
			}
		}
		check("one pass", one, reps)
		half := len(groups) - 1_000
		a, _ := accumulate(t, groups[:half], univ, AnalyzeOptions{})
		b, _ := accumulate(t, groups[half:], univ, AnalyzeOptions{})
		j, err := Join(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if apart {
			j.fitOnly(len(groups) - 1)
		}
		jr, err := j.Reports()
		if err != nil {
			t.Fatal(err)
		}
		check("joined", j, jr)
		if !slices.Equal(one.set.copies, j.set.copies) {
			t.Errorf("apart %v: copies counted %v in one pass, %v joined", apart, one.set.copies[len(one.set.copies)-3:], j.set.copies[len(j.set.copies)-3:])
		}
		if one.fit.sizes.public() != j.fit.sizes.public() {
			t.Errorf("apart %v: prior %+v in one pass, %+v joined", apart, one.fit.sizes.public(), j.fit.sizes.public())
		}
		t.Logf("apart %v: prior %+v, copies of the last group %d, warning %q", apart, one.fit.sizes.public(), one.set.copies[len(groups)-1], priorWarning(reportSessions(reps, one.set)))
	}
}
