package lab

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"time"
)

// ErrFalseNegative reports a member of a block's set that its filter does
// not contain: a broken design.
var ErrFalseNegative = errors.New("lab: false negative")

// probeLen is the length of a probe: a P2PKH script's.
const probeLen = 25

// Options say how much Measure measures.
type Options struct {
	// Probes is the number of random elements, spread evenly over the
	// blocks, whose matches give the false-positive rate (none if 0).
	Probes int
	// Watched are the watch list sizes whose matching is timed (none if
	// empty).
	Watched []int
	// Timing is the least time spent timing the builds, and the matching
	// of each watch list; every timing takes at least one pass over the
	// chain and at most maxPasses.
	Timing time.Duration
	// Seed seeds the probes and the watch lists.
	Seed uint64
}

// maxPasses bounds the passes of one timing.
const maxPasses = 1000

// BlockFilter is what one block's filter of a design costs and promises.
type BlockFilter struct {
	Bytes int     // serialized size
	Rate  float64 // the filter's expected false-positive rate
}

// MatchTime is the time to match a watch list against a block's filter.
type MatchTime struct {
	Watched    int
	NsPerBlock float64
}

// Result is what Measure found for one design on a chain.
type Result struct {
	Name   string
	Params string
	Rate   float64 // the rate the design is sized for
	// Elements is the number of elements over all blocks, Bytes the
	// filters' serialized bytes.
	Elements int
	Bytes    int
	// BitsPerElement is Bytes*8/Elements; BoundBitsPerElement the
	// information-theoretic bound at each filter's own rate, log2(1/ε),
	// averaged over the elements; OverheadPercent how far above the bound
	// the filters are. All NaN for a chain without elements.
	BitsPerElement      float64
	BoundBitsPerElement float64
	OverheadPercent     float64
	// ExpectedRate is the mean of the blocks' filters' expected rates,
	// weighted as the probes are spread: evenly over the blocks.
	ExpectedRate float64
	// Probes is the number of probes, FalsePositives how many matched,
	// ExpectedFalsePositives how many were expected and Interval the
	// 99.9% interval of the count.
	Probes                 int
	FalsePositives         int
	ExpectedFalsePositives float64
	Interval               [2]int
	// BuildNsPerElement is the fastest pass's time to build every
	// block's filter, per element; BuildAllocBytesPerElement the bytes it
	// allocated, per element. NaN if not timed or without elements.
	BuildNsPerElement         float64
	BuildAllocBytesPerElement float64
	// Match holds the match times of Options.Watched.
	Match []MatchTime
	// Blocks holds each block's filter size and rate.
	Blocks []BlockFilter
}

// MeasuredRate is the share of probes that matched, NaN without probes.
func (r *Result) MeasuredRate() float64 {
	if r.Probes == 0 {
		return math.NaN()
	}
	return float64(r.FalsePositives) / float64(r.Probes)
}

// WithinInterval reports whether the false positives counted lie within
// the 99.9% interval of the count expected.
func (r *Result) WithinInterval() bool {
	return r.FalsePositives >= r.Interval[0] && r.FalsePositives <= r.Interval[1]
}

// Measure builds d's filter of every block and measures it as opt says
// (see the package documentation). A member of a block's set that its
// filter does not contain is an error wrapping ErrFalseNegative.
func Measure(blocks []Block, d Design, opt Options) (*Result, error) {
	r := &Result{Name: d.Name(), Params: d.Params(), Rate: d.Rate()}
	filters, err := buildAll(blocks, d)
	if err != nil {
		return nil, err
	}
	bound := 0.0
	for i, f := range filters {
		b := &blocks[i]
		bf := BlockFilter{Bytes: f.Size(), Rate: f.ExpectedRate()}
		r.Blocks = append(r.Blocks, bf)
		r.Elements += len(b.Elements)
		r.Bytes += bf.Bytes
		r.ExpectedRate += bf.Rate / float64(len(filters))
		if bf.Rate > 0 {
			bound += float64(len(b.Elements)) * -math.Log2(bf.Rate)
		}
		for _, e := range b.Elements {
			if !f.Contains(e) {
				return nil, fmt.Errorf("%w: %s %s: block %d (%v): member %x", ErrFalseNegative, d.Name(), d.Params(), b.Height, b.Hash, e)
			}
		}
	}
	r.BitsPerElement, r.BoundBitsPerElement, r.OverheadPercent = math.NaN(), math.NaN(), math.NaN()
	if r.Elements > 0 {
		r.BitsPerElement = 8 * float64(r.Bytes) / float64(r.Elements)
		r.BoundBitsPerElement = bound / float64(r.Elements)
		r.OverheadPercent = 100 * (r.BitsPerElement/r.BoundBitsPerElement - 1)
	}
	rng := rand.New(rand.NewPCG(opt.Seed, 0x1ab))
	r.probe(filters, opt.Probes, rng)
	r.BuildNsPerElement, r.BuildAllocBytesPerElement = math.NaN(), math.NaN()
	if opt.Timing > 0 && r.Elements > 0 {
		if err := r.timeBuilds(blocks, d, opt.Timing); err != nil {
			return nil, err
		}
	}
	for _, w := range opt.Watched {
		mt, err := timeMatch(filters, d, randomElements(rng, w), opt.Timing)
		if err != nil {
			return nil, err
		}
		r.Match = append(r.Match, mt)
	}
	return r, nil
}

// buildAll builds every block's filter.
func buildAll(blocks []Block, d Design) ([]Filter, error) {
	filters := make([]Filter, len(blocks))
	for i := range blocks {
		f, err := d.Build(blocks[i].Key(), blocks[i].Elements)
		if err != nil {
			return nil, fmt.Errorf("%s %s: block %d (%v): %w", d.Name(), d.Params(), blocks[i].Height, blocks[i].Hash, err)
		}
		filters[i] = f
	}
	return filters, nil
}

// probe matches probes random elements, spread evenly over the filters,
// and counts the matches against the count the filters' rates expect.
func (r *Result) probe(filters []Filter, probes int, rng *rand.Rand) {
	if probes <= 0 || len(filters) == 0 {
		return
	}
	var e [probeLen]byte
	variance := 0.0
	for i, f := range filters {
		n := probes / len(filters)
		if i < probes%len(filters) {
			n++
		}
		rate := r.Blocks[i].Rate
		r.ExpectedFalsePositives += float64(n) * rate
		variance += float64(n) * rate * (1 - rate)
		for range n {
			fillRandom(rng, e[:])
			if f.Contains(e[:]) {
				r.FalsePositives++
			}
		}
	}
	r.Probes = probes
	r.Interval[0], r.Interval[1] = countInterval(r.ExpectedFalsePositives, variance)
}

// timeBuilds times passes of building every block's filter, keeping the
// fastest, and counts the bytes one pass allocates.
func (r *Result) timeBuilds(blocks []Block, d Design, budget time.Duration) error {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	best := time.Duration(math.MaxInt64)
	start := time.Now()
	for pass := 0; pass < maxPasses && (pass == 0 || time.Since(start) < budget); pass++ {
		t0 := time.Now()
		if _, err := buildAll(blocks, d); err != nil {
			return err
		}
		best = min(best, time.Since(t0))
		if pass == 0 {
			runtime.ReadMemStats(&after)
		}
	}
	r.BuildNsPerElement = float64(best.Nanoseconds()) / float64(r.Elements)
	r.BuildAllocBytesPerElement = float64(after.TotalAlloc-before.TotalAlloc) / float64(r.Elements)
	return nil
}

// timeMatch times passes of matching watch against every filter and
// returns the fastest pass's time per block.
func timeMatch(filters []Filter, d Design, watch [][]byte, budget time.Duration) (MatchTime, error) {
	m := d.NewMatcher(watch)
	best := time.Duration(math.MaxInt64)
	start := time.Now()
	for pass := 0; pass < maxPasses && (pass == 0 || time.Since(start) < budget); pass++ {
		t0 := time.Now()
		for _, f := range filters {
			if _, err := m.Match(f); err != nil {
				return MatchTime{}, fmt.Errorf("%s %s: matching: %w", d.Name(), d.Params(), err)
			}
		}
		best = min(best, time.Since(t0))
	}
	mt := MatchTime{Watched: len(watch), NsPerBlock: math.NaN()}
	if len(filters) > 0 {
		mt.NsPerBlock = float64(best.Nanoseconds()) / float64(len(filters))
	}
	return mt, nil
}

// randomElements returns n random probe-length elements.
func randomElements(rng *rand.Rand, n int) [][]byte {
	out := make([][]byte, n)
	for i := range out {
		out[i] = make([]byte, probeLen)
		fillRandom(rng, out[i])
	}
	return out
}

// fillRandom fills b with random bytes.
func fillRandom(rng *rand.Rand, b []byte) {
	for i := 0; i < len(b); i += 8 {
		v := rng.Uint64()
		for j := i; j < min(i+8, len(b)); j++ {
			b[j] = byte(v)
			v >>= 8
		}
	}
}
