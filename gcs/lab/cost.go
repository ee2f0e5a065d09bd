package lab

import (
	"math"

	"github.com/spvfilter/spvfilter/gcs"
)

// BytesPerBlock returns what a client watching w scripts downloads per
// block on average with r's filters: each block's filter, and the block
// itself with the probability 1 - (1 - ε)^w that one of the w matches
// its filter by a false positive (ε the filter's own rate). r must come
// from Measure on blocks.
func BytesPerBlock(blocks []Block, r *Result, w float64) float64 {
	if len(blocks) == 0 {
		return math.NaN()
	}
	total := 0.0
	for i := range blocks {
		bf := r.Blocks[i]
		fp := -math.Expm1(w * math.Log1p(-bf.Rate)) // 1 - (1-ε)^w
		total += float64(bf.Bytes) + fp*float64(blocks[i].Size)
	}
	return total / float64(len(blocks))
}

// Family is a design family and the variants a client could choose from.
type Family struct {
	Name     string
	Variants []Design
}

// Default sweep bounds of the Golomb-Rice parameter.
const (
	DefaultPMin = 4
	DefaultPMax = 26
)

// Families returns the families whose cheapest variant per wallet size
// Run finds: the GCS at P = pmin..pmax with M = SweepM(P), the Bloom
// filter at rates 2^-2..2^-32, the binary fuse filter with 8-, 16- and
// 32-bit fingerprints, and the xor filter with 8-bit ones.
func Families(pmin, pmax uint8) []Family {
	fams := []Family{{Name: "gcs"}, {Name: "bloom"}, {Name: "binary fuse"}, {Name: "xor 8"}}
	for p := pmin; p <= pmax; p++ {
		fams[0].Variants = append(fams[0].Variants, GCS(p, SweepM(p)))
	}
	for b := 2; b <= 32; b++ {
		fams[1].Variants = append(fams[1].Variants, Bloom(math.Ldexp(1, -b)))
	}
	fams[2].Variants = []Design{BinaryFuse8(), BinaryFuse16(), BinaryFuse32()}
	fams[3].Variants = []Design{Xor8()}
	return fams
}

// Choice is a design's cost per block for one wallet size.
type Choice struct {
	Name          string
	Params        string
	BytesPerBlock float64
}

// CostRow is what a client of one wallet size pays per block.
type CostRow struct {
	Watched int
	// BestP is the Golomb-Rice parameter (of the sweep, M = SweepM(P))
	// that costs least, BestBytes its cost; BasicBytes is the cost of
	// BIP 158's P = 19, M = 784931, and BasicExcessPercent how much more
	// than the best it costs.
	BestP              uint8
	BestBytes          float64
	BasicBytes         float64
	BasicExcessPercent float64
	// Designs are the measured designs' costs, Best each family's
	// cheapest variant.
	Designs []Choice
	Best    []Choice
}

// sweepResult is a family variant's filters on the chain.
type sweepResult struct {
	family string
	p      uint8 // the GCS's P, else 0
	r      *Result
}

// cheapest returns the variant of rs that costs least for w.
func cheapest(blocks []Block, rs []sweepResult, w float64) (sweepResult, float64) {
	best, bestCost := rs[0], math.Inf(1)
	for _, s := range rs {
		if c := BytesPerBlock(blocks, s.r, w); c < bestCost {
			best, bestCost = s, c
		}
	}
	return best, bestCost
}

// basicRange returns the range of wallet sizes, on a grid of 1% steps
// from 1 to 10^7, over which P = 19 is the cheapest P of the sweep (NaN,
// NaN if it never is on that grid).
func basicRange(blocks []Block, gcsSweep []sweepResult) (lo, hi float64) {
	lo, hi = math.NaN(), math.NaN()
	for k := 0; k <= 1620; k++ { // 1.01^1620 ≈ 10^7
		w := math.Round(math.Pow(1.01, float64(k)))
		if best, _ := cheapest(blocks, gcsSweep, w); best.p == gcs.BasicP {
			if math.IsNaN(lo) {
				lo = w
			}
			hi = w
		}
	}
	return lo, hi
}
