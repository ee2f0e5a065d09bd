package lab

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/spvfilter/spvfilter/gcs"
)

// BasicRate is BIP 158's false-positive rate, 1/784931.
const BasicRate = 1.0 / gcs.BasicM

// DefaultDesigns are the designs Run measures in full by default: BIP
// 158's GCS and a Bloom filter at its rate; the binary fuse and xor
// filters, each with the GCS and the Bloom filter at its rate; and the
// GCS and the Bloom filter at 1%.
func DefaultDesigns() []Design {
	return []Design{
		BasicGCS(), Bloom(BasicRate),
		BinaryFuse8(), Xor8(), GCSAt(1.0 / 256), Bloom(1.0 / 256),
		BinaryFuse16(), GCSAt(1.0 / 65536), Bloom(1.0 / 65536),
		GCSAt(0.01), Bloom(0.01),
	}
}

// DefaultWallets are the wallet sizes, in scripts, of the cost table.
var DefaultWallets = []int{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}

// DefaultWatched are the watch list sizes whose matching is timed.
var DefaultWatched = []int{1, 100, 1000}

// DefaultProbes is the number of probes per design of the command.
const DefaultProbes = 10_000_000

// Config says what Run measures.
type Config struct {
	Options
	// Designs are measured in full (DefaultDesigns if nil).
	Designs []Design
	// Wallets are the wallet sizes of the cost table (DefaultWallets if
	// nil).
	Wallets []int
	// PMin and PMax bound the sweep of P (DefaultPMin, DefaultPMax if
	// zero).
	PMin, PMax uint8
	// Progress, if set, is told what is measured next.
	Progress func(step, steps int, what string)
}

// ErrNoBlocks reports a chain without blocks.
var ErrNoBlocks = errors.New("lab: no blocks")

// Report is what Run found on a chain.
type Report struct {
	Blocks     int
	Elements   int
	BlockBytes int
	// Results are the measured designs', Missing the designs not
	// measured here.
	Results []*Result
	Missing []Missing
	// Sweep holds the GCS at each P of the sweep (sizes and rates, no
	// probes or timing).
	Sweep []SweepPoint
	// Costs is the cost table, one row per wallet size; Curve the same
	// at ten wallet sizes per decade from 1 to 10,000, for the plot.
	Costs []CostRow
	Curve []CostRow
	// BasicOptimalFrom and BasicOptimalTo bound the wallet sizes for
	// which P = 19 is the cheapest P of the sweep (NaN if none is).
	BasicOptimalFrom, BasicOptimalTo float64
}

// SweepPoint is the GCS at one P of the sweep, M = SweepM(P).
type SweepPoint struct {
	P      uint8
	M      uint64
	Result *Result
}

// Run measures cfg's designs on blocks, sweeps P and the other families'
// variants, and computes what a client pays per block at each wallet
// size.
func Run(blocks []Block, cfg Config) (*Report, error) {
	if len(blocks) == 0 {
		return nil, ErrNoBlocks
	}
	designs, wallets := cfg.Designs, cfg.Wallets
	if designs == nil {
		designs = DefaultDesigns()
	}
	if wallets == nil {
		wallets = DefaultWallets
	}
	pmin, pmax := cfg.PMin, cfg.PMax
	if pmin == 0 && pmax == 0 {
		pmin, pmax = DefaultPMin, DefaultPMax
	}
	if pmin < 1 || pmax > 32 || pmin > pmax {
		return nil, fmt.Errorf("lab: sweep of P from %d to %d: want 1 <= from <= to <= 32", pmin, pmax)
	}
	rep := &Report{Blocks: len(blocks), Missing: MissingDesigns}
	for _, b := range blocks {
		rep.Elements += len(b.Elements)
		rep.BlockBytes += b.Size
	}
	families := Families(pmin, pmax)
	var err error
	if rep.Results, err = measureAll(blocks, designs, cfg); err != nil {
		return nil, err
	}
	if cfg.Progress != nil {
		cfg.Progress(len(designs), len(designs)+1, "the sweep of P and of the other families")
	}
	sweeps, err := sweepFamilies(blocks, families)
	if err != nil {
		return nil, err
	}
	basic := sweeps[0][0]
	for _, s := range sweeps[0] {
		rep.Sweep = append(rep.Sweep, SweepPoint{P: s.p, M: SweepM(s.p), Result: s.r})
		if s.p == gcs.BasicP {
			basic = s
		}
	}
	if basic.p != gcs.BasicP { // P = 19 outside the sweep
		if basic.r, err = Measure(blocks, BasicGCS(), Options{}); err != nil {
			return nil, err
		}
	}
	rc := rowCoster{blocks: blocks, results: rep.Results, families: families, sweeps: sweeps, basic: basic.r}
	for _, w := range wallets {
		rep.Costs = append(rep.Costs, rc.row(w))
	}
	for _, w := range curveWallets() {
		rep.Curve = append(rep.Curve, rc.row(w))
	}
	rep.BasicOptimalFrom, rep.BasicOptimalTo = basicRange(blocks, sweeps[0])
	return rep, nil
}

// measureAll measures each design in full, telling cfg.Progress.
func measureAll(blocks []Block, designs []Design, cfg Config) ([]*Result, error) {
	var results []*Result
	for i, d := range designs {
		if cfg.Progress != nil {
			cfg.Progress(i, len(designs)+1, d.Name()+" "+d.Params())
		}
		r, err := Measure(blocks, d, cfg.Options)
		if err != nil {
			return nil, err
		}
		results = append(results, r)
	}
	return results, nil
}

// sweepFamilies measures the sizes and rates of every variant of the
// families, the GCS first.
func sweepFamilies(blocks []Block, families []Family) ([][]sweepResult, error) {
	var sweeps [][]sweepResult
	for _, fam := range families {
		var rs []sweepResult
		for _, v := range fam.Variants {
			r, err := Measure(blocks, v, Options{})
			if err != nil {
				return nil, err
			}
			s := sweepResult{family: fam.Name, r: r}
			if g, ok := v.(gcsDesign); ok {
				s.p = g.p
			}
			rs = append(rs, s)
		}
		sweeps = append(sweeps, rs)
	}
	return sweeps, nil
}

// rowCoster computes cost rows.
type rowCoster struct {
	blocks   []Block
	results  []*Result
	families []Family
	sweeps   [][]sweepResult // by family; the GCS first
	basic    *Result
}

// row is the cost row of wallets of w scripts.
func (rc *rowCoster) row(w int) CostRow {
	row := CostRow{Watched: w}
	best, cost := cheapest(rc.blocks, rc.sweeps[0], float64(w))
	row.BestP, row.BestBytes = best.p, cost
	row.BasicBytes = BytesPerBlock(rc.blocks, rc.basic, float64(w))
	row.BasicExcessPercent = 100 * (row.BasicBytes/row.BestBytes - 1)
	for _, r := range rc.results {
		row.Designs = append(row.Designs, Choice{r.Name, r.Params, BytesPerBlock(rc.blocks, r, float64(w))})
	}
	for i, rs := range rc.sweeps {
		b, c := cheapest(rc.blocks, rs, float64(w))
		row.Best = append(row.Best, Choice{rc.families[i].Name, variantName(b), c})
	}
	return row
}

// curveWallets are the wallet sizes of the plot's curves: ten per decade
// from 1 to 10,000, rounded, each once.
func curveWallets() []int {
	var ws []int
	for k := 0; k <= 40; k++ {
		w := int(math.Round(math.Pow(10, float64(k)/10)))
		if len(ws) == 0 || w != ws[len(ws)-1] {
			ws = append(ws, w)
		}
	}
	return ws
}

// variantName names a family's variant by what tells it from the others.
func variantName(s sweepResult) string {
	switch {
	case s.p != 0:
		return fmt.Sprintf("P=%d", s.p)
	case s.family == "bloom":
		return fmt.Sprintf("at 2^%d", int(math.Round(math.Log2(s.r.Rate))))
	}
	return s.r.Params
}

// defaultTiming is the least time each timing takes in the command.
const defaultTiming = 200 * time.Millisecond

// DefaultOptions are the command's measurements: DefaultProbes probes,
// the DefaultWatched watch lists, defaultTiming per timing.
func DefaultOptions() Options {
	return Options{Probes: DefaultProbes, Watched: DefaultWatched, Timing: defaultTiming, Seed: 1}
}
