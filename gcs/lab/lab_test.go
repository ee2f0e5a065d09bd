package lab

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// syntheticBlocks returns n blocks of perBlock random distinct scripts
// (22 to 34 bytes, the lengths of the standard ones) and of size bytes.
func syntheticBlocks(seed uint64, n, perBlock, size int) []Block {
	rng := rand.New(rand.NewPCG(seed, 42))
	blocks := make([]Block, n)
	for i := range blocks {
		b := &blocks[i]
		b.Height = int32(i)
		fillRandom(rng, b.Hash[:])
		b.Size = size
		b.Elements = make([][]byte, perBlock)
		for j := range b.Elements {
			b.Elements[j] = make([]byte, 22+rng.IntN(13))
			fillRandom(rng, b.Elements[j])
		}
	}
	return blocks
}

// TestKnownValues holds the lab's sizes to the published ones: a Bloom
// filter at 1% spends about 9.6 bits per element (1.44·log2(100)); the
// GCS at P = 19 log2(M) plus about 1.5 bits (BIP 158's Golomb-Rice
// overhead, 21.05 bits); a binary fuse filter with 8-bit fingerprints
// about 9.0 bits per element on a large set (1.125·8; Graf and Lemire,
// 2022) at rate 2^-8 ≈ 0.39%.
func TestKnownValues(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		design     Design
		blocks     []Block
		lo, hi     float64 // bits per element
		boundLo    float64 // bound bits per element
		boundHi    float64
		overheadLo float64 // percent over the bound
		overheadHi float64
	}{
		// 20,000 elements a block stay under Core's 36,000-byte cap.
		{"bloom 1%", Bloom(0.01), syntheticBlocks(1, 5, 20000, 1e6), 9.5, 9.7, 6.5, 6.8, 40, 48},
		{"gcs P=19", BasicGCS(), syntheticBlocks(2, 20, 5000, 1e6), 20.95, 21.2, 19.58, 19.59, 6.9, 8.3},
		{"binary fuse 8", BinaryFuse8(), syntheticBlocks(3, 1, 1_000_000, 1e6), 8.95, 9.1, 8, 8, 11, 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := Measure(tt.blocks, tt.design, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%d elements: %.3f bits per element, bound %.3f, overhead %+.1f%%", r.Elements, r.BitsPerElement, r.BoundBitsPerElement, r.OverheadPercent)
			if r.BitsPerElement < tt.lo || r.BitsPerElement > tt.hi {
				t.Errorf("%.3f bits per element, want %.2f to %.2f", r.BitsPerElement, tt.lo, tt.hi)
			}
			if r.BoundBitsPerElement < tt.boundLo || r.BoundBitsPerElement > tt.boundHi {
				t.Errorf("bound %.3f bits per element, want %.2f to %.2f", r.BoundBitsPerElement, tt.boundLo, tt.boundHi)
			}
			if r.OverheadPercent < tt.overheadLo || r.OverheadPercent > tt.overheadHi {
				t.Errorf("overhead %.1f%%, want %.0f%% to %.0f%%", r.OverheadPercent, tt.overheadLo, tt.overheadHi)
			}
		})
	}
}

// TestFalsePositiveRates measures each design's false-positive rate with
// probes and requires the count inside the 99.9% interval of the count
// the filters promise, after every one of a million members was found
// (Measure fails on a false negative). The probes are fewer than the
// command's 10^7; the interval is computed for the count actually made,
// so it widens accordingly.
func TestFalsePositiveRates(t *testing.T) {
	t.Parallel()
	million := func(seed uint64, perBlock int) []Block {
		return syntheticBlocks(seed, 1_000_000/perBlock, perBlock, 1e6)
	}
	tests := []struct {
		design Design
		blocks []Block
		probes int
	}{
		{BasicGCS(), million(11, 5000), 2_000_000},
		{GCSAt(1.0 / 256), million(12, 5000), 200_000},
		{Bloom(BasicRate), million(13, 5000), 2_000_000},
		{Bloom(0.01), million(14, 20000), 100_000},
		{BinaryFuse8(), million(15, 5000), 200_000},
		{BinaryFuse16(), million(16, 5000), 2_000_000},
		{Xor8(), million(17, 5000), 200_000},
	}
	for _, tt := range tests {
		t.Run(tt.design.Name()+" "+tt.design.Params(), func(t *testing.T) {
			t.Parallel()
			r, err := Measure(tt.blocks, tt.design, Options{Probes: tt.probes, Seed: 7})
			if err != nil {
				t.Fatal(err)
			}
			if r.Elements != 1_000_000 {
				t.Fatalf("%d members, want 10^6", r.Elements)
			}
			t.Logf("%d probes: %d false positives, %.1f expected, interval [%d, %d]; rate %.3g, promised %.3g, sized for %.3g",
				r.Probes, r.FalsePositives, r.ExpectedFalsePositives, r.Interval[0], r.Interval[1], r.MeasuredRate(), r.ExpectedRate, r.Rate)
			if !r.WithinInterval() {
				t.Errorf("%d false positives, outside [%d, %d]", r.FalsePositives, r.Interval[0], r.Interval[1])
			}
			// The filters keep the rate they are sized for, to a few
			// percent (Core's integer sizing moves the Bloom filter's).
			if math.Abs(r.ExpectedRate/r.Rate-1) > 0.05 {
				t.Errorf("the filters promise %.4g, the design is sized for %.4g", r.ExpectedRate, r.Rate)
			}
		})
	}
}

// lossy is a design that loses its last element.
type lossy struct{ Design }

func (d lossy) Build(key [16]byte, elements [][]byte) (Filter, error) {
	return d.Design.Build(key, elements[:len(elements)-1])
}

// TestMeasureCatchesFalseNegatives: a design that loses a member fails
// the measurement, naming the block.
func TestMeasureCatchesFalseNegatives(t *testing.T) {
	blocks := syntheticBlocks(5, 3, 50, 1000)
	for _, d := range []Design{BasicGCS(), Bloom(0.01), BinaryFuse8(), Xor8()} {
		_, err := Measure(blocks, lossy{d}, Options{})
		if !errors.Is(err, ErrFalseNegative) {
			t.Errorf("%s: %v, want ErrFalseNegative", d.Name(), err)
		}
	}
}

// TestSweepParameters: the sweep's M at P = 19 is BIP 158's, and the best
// P for it is 19.
func TestSweepParameters(t *testing.T) {
	if m := SweepM(19); m != 784931 {
		t.Errorf("SweepM(19) = %d, want 784931", m)
	}
	for _, tt := range []struct {
		m    uint64
		want uint8
	}{{784931, 19}, {256, 7}, {65536, 15}, {100, 6}, {SweepM(10), 10}} {
		if got := BestP(tt.m); got != tt.want {
			t.Errorf("BestP(%d) = %d, want %d", tt.m, got, tt.want)
		}
	}
	// The expected bits of the basic filter: 21.05 (gcs.Stats' comment).
	if b := golombBits(19, 784931); math.Abs(b-21.05) > 0.01 {
		t.Errorf("golombBits(19, 784931) = %.3f, want 21.05", b)
	}
}

// TestCountInterval checks the interval against the Poisson law summed
// independently: at most 0.05% on each side, and no narrower interval
// would do; beyond poissonMax, the normal approximation.
func TestCountInterval(t *testing.T) {
	for _, mu := range []float64{0.01, 0.5, 1, 1.274, 5, 20, 100, 499} {
		lo, hi := countInterval(mu, mu)
		// P(X < lo) and P(X > hi), from the log of the probabilities.
		pmf := func(k int) float64 {
			lg, _ := math.Lgamma(float64(k) + 1)
			return math.Exp(float64(k)*math.Log(mu) - mu - lg)
		}
		below, upTo := 0.0, 0.0
		for k := 0; k <= hi; k++ {
			if k < lo {
				below += pmf(k)
			}
			upTo += pmf(k)
		}
		above := 1 - upTo
		if below > tail+1e-12 || above > tail+1e-12 {
			t.Errorf("mu %g: [%d, %d] leaves %.2g below and %.2g above", mu, lo, hi, below, above)
		}
		if lo > 0 && below+pmf(lo) <= tail {
			t.Errorf("mu %g: lo %d could be %d", mu, lo, lo+1)
		}
		if hi > 0 && above+pmf(hi) <= tail {
			t.Errorf("mu %g: hi %d could be %d", mu, hi, hi-1)
		}
	}
	if lo, hi := countInterval(0, 0); lo != 0 || hi != 0 {
		t.Errorf("mu 0: [%d, %d], want [0, 0]", lo, hi)
	}
	// 10^7 probes at 1%: 100,000 ± 3.29·sqrt(99,000).
	if lo, hi := countInterval(1e5, 1e5*0.99); lo != 98964 || hi != 101036 {
		t.Errorf("mu 10^5: [%d, %d], want [98964, 101036]", lo, hi)
	}
}

// TestBytesPerBlock computes the cost of two blocks by hand.
func TestBytesPerBlock(t *testing.T) {
	blocks := []Block{{Size: 1000}, {Size: 3000}}
	r := &Result{Blocks: []BlockFilter{{Bytes: 10, Rate: 0.01}, {Bytes: 30, Rate: 0}}}
	// Block 1: 10 + (1 - 0.99^5)·1000; block 2: 30.
	want := (10 + (1-math.Pow(0.99, 5))*1000 + 30) / 2
	if got := BytesPerBlock(blocks, r, 5); math.Abs(got-want) > 1e-9 {
		t.Errorf("BytesPerBlock = %v, want %v", got, want)
	}
	// A filter that matches everything costs the block whatever W.
	r.Blocks[1].Rate = 1
	if got, want := BytesPerBlock(blocks, r, 1), (10+0.01*1000+30+3000)/2.0; math.Abs(got-want) > 1e-9 {
		t.Errorf("rate 1: BytesPerBlock = %v, want %v", got, want)
	}
}

// TestCheapestP: on blocks of N elements and S bytes, the cheapest P for
// W watched scripts is where the filter's N/8 bytes per bit of P meet the
// halving of the expected download, 2^P ≈ 8·ln 2·W·S/(1.497·N): one P up
// for each doubling of W, and P = 19 for wallets of about 700 scripts
// (500 to 1,000) on blocks of 200 bytes an element.
func TestCheapestP(t *testing.T) {
	t.Parallel()
	const n, size = 2000, 400_000 // 200 bytes an element
	blocks := syntheticBlocks(21, 10, n, size)
	rep, err := Run(blocks, Config{Designs: []Design{BasicGCS()}, Wallets: []int{1, 10, 100, 1000, 10000}})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range rep.Costs {
		want := math.Log2(8 * math.Ln2 * float64(row.Watched) * size / (BasicSweepFactor * n))
		t.Logf("W=%d: cheapest P %d (%.1f bytes per block), formula %.2f; P=19 %+.1f%%", row.Watched, row.BestP, row.BestBytes, want, row.BasicExcessPercent)
		if math.Abs(float64(row.BestP)-want) > 1 {
			t.Errorf("W=%d: cheapest P %d, formula says %.2f", row.Watched, row.BestP, want)
		}
		if row.BasicExcessPercent < 0 {
			t.Errorf("W=%d: P=19 costs %.1f%% less than the cheapest", row.Watched, -row.BasicExcessPercent)
		}
	}
	// The formula's P is 19 at W = 2^19·1.497·N/(8·ln 2·S) = 707.
	if rep.BasicOptimalFrom > 707 || rep.BasicOptimalTo < 707 || rep.BasicOptimalFrom < 350 || rep.BasicOptimalTo > 1400 {
		t.Errorf("P=19 cheapest for %.0f to %.0f scripts, want a range around 707", rep.BasicOptimalFrom, rep.BasicOptimalTo)
	}
}

// TestRunReport runs the default designs on a small chain: every design
// measured, the costs computed for every wallet size and family.
func TestRunReport(t *testing.T) {
	blocks := syntheticBlocks(31, 4, 300, 50_000)
	blocks = append(blocks, Block{Height: 4, Hash: chainhash.Hash{4}, Size: 200}) // a block without elements
	rep, err := Run(blocks, Config{Options: Options{Probes: 20_000, Watched: []int{1, 10}, Seed: 1}, Wallets: []int{1, 50}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Results) != len(DefaultDesigns()) || rep.Elements != 1200 {
		t.Fatalf("%d results, %d elements", len(rep.Results), rep.Elements)
	}
	for _, r := range rep.Results {
		if !r.WithinInterval() || len(r.Match) != 2 || len(r.Blocks) != 5 {
			t.Errorf("%s %s: %d false positives in [%d, %d], %d match times, %d blocks", r.Name, r.Params,
				r.FalsePositives, r.Interval[0], r.Interval[1], len(r.Match), len(r.Blocks))
		}
	}
	if len(rep.Sweep) != DefaultPMax-DefaultPMin+1 || len(rep.Costs) != 2 || len(rep.Curve) < 30 {
		t.Fatalf("%d sweep results, %d cost rows, %d curve points", len(rep.Sweep), len(rep.Costs), len(rep.Curve))
	}
	for _, row := range rep.Costs {
		if len(row.Best) != len(Families(DefaultPMin, DefaultPMax)) || len(row.Designs) != len(rep.Results) {
			t.Errorf("W=%d: %d families, %d designs", row.Watched, len(row.Best), len(row.Designs))
		}
		if row.Best[0].BytesPerBlock != row.BestBytes {
			t.Errorf("W=%d: the gcs family's cheapest %v is not the cheapest P's %v", row.Watched, row.Best[0].BytesPerBlock, row.BestBytes)
		}
	}
	if _, err := Run(nil, Config{}); !errors.Is(err, ErrNoBlocks) {
		t.Errorf("no blocks: %v", err)
	}
	if _, err := Run(blocks, Config{PMin: 20, PMax: 10}); err == nil {
		t.Error("a sweep from P=20 to P=10 is accepted")
	}
}
