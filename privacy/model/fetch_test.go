package model

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// TestDecoysMeasured measures how much decoy blocks buy: a year of blocks
// (52,560), a wallet of 20 scripts of 2 appearances each, 10^6 other
// scripts, and d = 0, 1, 3, 10 random decoys per real block. The spurious
// matches of 8 trials must lie in the 99% range of the model's
// (U-N)·C(B-k, F-k)/C(B, F).
func TestDecoysMeasured(t *testing.T) {
	if testing.Short() {
		t.Skip("simulates 3·10^7 scripts")
	}
	const blocks, n, others, k, trials = 52560, 20, 1_000_000, 2, 8
	rng := rand.New(rand.NewPCG(11, 12))
	t.Logf("| d | blocks fetched F | model spurious | measured spurious (mean of %d) | P(match is the wallet's), measured |", trials)
	prevMeasured := -1.0
	for _, d := range []float64{0, 1, 3, 10} {
		total := 0
		for i := 0; i < trials; i++ {
			total += simulateFetches(rng, blocks, n, others, k, d).Spurious
		}
		// The wallet's 40 appearances fall in about 40 distinct blocks.
		f := 40 * (1 + d)
		model := others * ChanceAllFetched(blocks, uint64(f), k)
		mean := float64(total) / trials
		lo, hi := poisson99(model * trials)
		if float64(total) < lo || float64(total) > hi {
			t.Errorf("d=%v: %d spurious in %d trials, model %.3g each (99%%: %.3g..%.3g in all)", d, total, trials, model, lo, hi)
		}
		if mean < prevMeasured {
			t.Errorf("d=%v: decoys bought fewer spurious matches (%.3g) than fewer decoys (%.3g)", d, mean, prevMeasured)
		}
		prevMeasured = mean
		t.Logf("| %v | %.0f | %.3g | %.3g | %.3f |", d, f, model, mean, n/(n+mean))
	}
}

func TestCompareFetches(t *testing.T) {
	p := DefaultCompareParams()
	c, err := Compare(p)
	if err != nil {
		t.Fatal(err)
	}
	x := c.Fetches
	f := float64(p.WalletBlocks) + c.BIP157.ExpectedFalsePositiveBlocks
	want := float64(p.Model.UniverseSize-uint64(p.Model.Addresses)) * binomialRatio(int64(p.Blocks), int64(math.Round(f)), 2)
	if math.Abs(x.ExpectedFalsePositives-want)/want > 1e-9 || x.WalletExposed != float64(p.Model.Addresses) {
		t.Fatalf("fetches %+v, want %g spurious", x, want)
	}
	// Decoys and peers lower the attacker's confidence.
	p.Decoys = 3
	withDecoys, _ := Compare(p)
	p.Decoys, p.Peers = 0, 4
	withPeers, _ := Compare(p)
	if !(withDecoys.Fetches.PH1 < x.PH1) || !(withPeers.Fetches.WalletExposed < x.WalletExposed) {
		t.Errorf("P_h(1) %g, with decoys %g; wallet exposed %g, over 4 peers %g", x.PH1, withDecoys.Fetches.PH1, x.WalletExposed, withPeers.Fetches.WalletExposed)
	}
	for _, bad := range []func(*CompareParams){
		func(p *CompareParams) { p.Appearances = 0 },
		func(p *CompareParams) { p.Decoys = -1 },
		func(p *CompareParams) { p.Decoys = math.NaN() },
		func(p *CompareParams) { p.Peers = 0 },
	} {
		q := DefaultCompareParams()
		bad(&q)
		if _, err := Compare(q); err == nil {
			t.Errorf("%+v accepted", q)
		}
	}
}

// fetchTrial is what one simulated block-download attack found.
type fetchTrial struct {
	WalletMatched int // the wallet's scripts matched: all of them
	Spurious      int // other scripts with every block fetched
}

// simulateFetches measures the block-download attack on a synthetic chain:
// B blocks, a wallet of n scripts each in k distinct random blocks, others
// more scripts each in k random blocks, and a client that fetches the
// wallet's blocks and decoys random other blocks per real one (rounded
// down). It counts the scripts whose every block was fetched.
func simulateFetches(rng *rand.Rand, blocks, n, others, k int, decoys float64) fetchTrial {
	fetched := make([]bool, blocks)
	pick := func(dst []int) []int {
		dst = dst[:0]
		for len(dst) < k {
			h := rng.IntN(blocks)
			dup := false
			for _, x := range dst {
				dup = dup || x == h
			}
			if !dup {
				dst = append(dst, h)
			}
		}
		return dst
	}
	var hs []int
	real := 0
	for i := 0; i < n; i++ {
		for _, h := range pick(hs) {
			if !fetched[h] {
				fetched[h] = true
				real++
			}
		}
	}
	want := real + int(float64(real)*decoys)
	if want > blocks {
		want = blocks
	}
	for got := real; got < want; {
		if h := rng.IntN(blocks); !fetched[h] {
			fetched[h] = true
			got++
		}
	}
	tr := fetchTrial{WalletMatched: n}
	for i := 0; i < others; i++ {
		all := true
		for _, h := range pick(hs) {
			all = all && fetched[h]
		}
		if all {
			tr.Spurious++
		}
	}
	return tr
}

// binomialRatio is C(b-k, f-k)/C(b, f) in exact rational arithmetic.
func binomialRatio(b, f, k int64) float64 {
	if k > f {
		return 0
	}
	num := new(big.Int).Binomial(b-k, f-k)
	den := new(big.Int).Binomial(b, f)
	r, _ := new(big.Rat).SetFrac(num, den).Float64()
	return r
}

func TestChanceAllFetchedExact(t *testing.T) {
	for _, c := range []struct{ b, f, k int64 }{
		{10, 3, 0}, {10, 3, 1}, {10, 3, 2}, {10, 3, 3}, {10, 3, 4}, {10, 10, 5},
		{800, 100, 2}, {52560, 40, 2}, {52560, 440, 3}, {1000, 900, 100}, {5000, 2500, 70}, {5000, 2500, 300},
	} {
		got := ChanceAllFetched(uint64(c.b), uint64(c.f), uint64(c.k))
		want := binomialRatio(c.b, c.f, c.k)
		if want == 0 && got != 0 || want != 0 && math.Abs(got-want)/want > 1e-9 {
			t.Errorf("B=%d F=%d k=%d: %g, want %g", c.b, c.f, c.k, got, want)
		}
	}
	// The approximation f^k overstates chance: the fetched blocks are
	// drawn without replacement.
	b, f := uint64(100), uint64(10)
	if exact, approx := ChanceAllFetched(b, f, 3), math.Pow(0.1, 3); !(exact < approx) {
		t.Errorf("exact %g not below f^k %g", exact, approx)
	}
}

// poisson99 is a 99% range for a Poisson count of mean m (normal
// approximation, widened for small means).
func poisson99(m float64) (float64, float64) {
	d := 2.576*math.Sqrt(m) + 3
	return math.Max(0, m-d), m + d
}
