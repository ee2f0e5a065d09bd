package privacy

import (
	"math"
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
			total += SimulateFetches(rng, blocks, n, others, k, d).Spurious
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
