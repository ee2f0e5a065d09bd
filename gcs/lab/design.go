package lab

import (
	"fmt"
	"math"
	"strconv"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/gcs"
)

// Design is a way to build a block's filter. Its filters and matchers are
// used on one goroutine at a time.
type Design interface {
	// Name names the design's family: "gcs", "bloom", "binary fuse 8".
	Name() string
	// Params names its parameters ("P=19 M=784931"), "" if it has none.
	Params() string
	// Rate is the false-positive rate per query element it is sized for.
	Rate() float64
	// Build builds the filter of a block's distinct elements, keyed by
	// the block's key.
	Build(key [16]byte, elements [][]byte) (Filter, error)
	// NewMatcher returns a matcher of the watch list, for use filter
	// after filter as a client uses it.
	NewMatcher(watch [][]byte) Matcher
}

// Filter is one block's filter.
type Filter interface {
	// Size is the filter's serialized size in bytes (see the package
	// documentation for each design's serialization).
	Size() int
	// Contains reports whether element may be in the set.
	Contains(element []byte) bool
	// ExpectedRate is the probability that an element not in the set
	// matches, given the filter's state.
	ExpectedRate() float64
}

// Matcher matches a fixed watch list against filters of its design.
type Matcher interface {
	// Match reports whether any watched element may be in f.
	Match(f Filter) (bool, error)
}

// Missing names a design the lab does not measure here, and why.
type Missing struct {
	Name   string
	Reason string
}

// MissingDesigns are the designs this package does not measure.
var MissingDesigns = []Missing{
	{"cuckoo filter", "its library (github.com/seiflotfy/cuckoofilter) stays out of spvfilter's module: measured by the nested module gcs/lab/cuckoo"},
	{"ribbon filter", "no maintained Go implementation is served by the Go module proxy: the one found (github.com/RibbonFilter/ribbonGo) is refused"},
}

// formatRate prints a false-positive rate for a design's parameters.
func formatRate(r float64) string { return strconv.FormatFloat(r, 'g', 4, 64) }

// BasicSweepFactor is the ratio M/2^P of BIP 158's basic filter
// (784,931/2^19 = 1.497137): the M that makes a Golomb-Rice code shortest
// for its P.
const BasicSweepFactor = 1.497137

// SweepM returns the M of the sweep at p: round(1.497137 * 2^p).
func SweepM(p uint8) uint64 { return uint64(math.Round(BasicSweepFactor * math.Ldexp(1, int(p)))) }

// golombBits is the expected bits per element of a Golomb-Rice code with
// parameter p for a set with false-positive parameter m: p+1 bits, plus a
// unary part that averages 1/(e^(2^p/m) - 1).
func golombBits(p uint8, m uint64) float64 {
	return float64(p) + 1 + 1/math.Expm1(math.Ldexp(1, int(p))/float64(m))
}

// BestP returns the Golomb-Rice parameter that codes a set of
// false-positive parameter m in the fewest expected bits.
func BestP(m uint64) uint8 {
	best := uint8(1)
	for p := uint8(2); p <= 32; p++ {
		if golombBits(p, m) < golombBits(best, m) {
			best = p
		}
	}
	return best
}

// gcsDesign is a Golomb-coded set with parameters P and M.
type gcsDesign struct {
	p uint8
	m uint64
}

// GCS returns the Golomb-coded set design with Golomb-Rice parameter p
// (1..32) and false-positive parameter m (rate 1/m).
func GCS(p uint8, m uint64) Design { return gcsDesign{p, m} }

// BasicGCS is BIP 158's basic filter: GCS(19, 784931).
func BasicGCS() Design { return gcsDesign{gcs.BasicP, gcs.BasicM} }

// GCSAt returns the Golomb-coded set at false-positive rate rate: M the
// nearest integer to 1/rate, P the best for that M.
func GCSAt(rate float64) Design {
	m := uint64(math.Max(1, math.Round(1/rate)))
	return gcsDesign{BestP(m), m}
}

func (d gcsDesign) Name() string   { return "gcs" }
func (d gcsDesign) Params() string { return fmt.Sprintf("P=%d M=%d", d.p, d.m) }
func (d gcsDesign) Rate() float64  { return 1 / float64(d.m) }

func (d gcsDesign) Build(key [16]byte, elements [][]byte) (Filter, error) {
	f, err := gcs.Build(key, d.p, d.m, elements)
	if err != nil {
		return nil, err
	}
	return &gcsFilter{f: f, key: key, nbytes: f.NBytes()}, nil
}

func (d gcsDesign) NewMatcher(watch [][]byte) Matcher {
	return &gcsMatcher{m: gcs.NewMatcher(watch), p: d.p, mm: d.m}
}

// gcsFilter is a built Golomb-coded set and its serialization, the
// cfilter payload a client matches.
type gcsFilter struct {
	f      *gcs.Filter
	key    [16]byte
	nbytes []byte
}

func (f *gcsFilter) Size() int                    { return f.f.Stats().Bytes }
func (f *gcsFilter) Contains(element []byte) bool { return f.f.Match(f.key, element) }

// ExpectedRate is D/(N*M), D the distinct values among the N: the share
// of the value range a random element's value falls on.
func (f *gcsFilter) ExpectedRate() float64 {
	n := f.f.N()
	if n == 0 {
		return 0
	}
	vals := f.f.Values(nil)
	distinct := 0
	for i, v := range vals {
		if i == 0 || v != vals[i-1] {
			distinct++
		}
	}
	return float64(distinct) / (float64(n) * float64(f.f.M()))
}

// gcsMatcher matches the serialized filter in one pass, as a client that
// has checked the filter's hash against its header does
// (gcs.Matcher.MatchNBytes with verified true).
type gcsMatcher struct {
	m  *gcs.Matcher
	p  uint8
	mm uint64
}

func (m *gcsMatcher) Match(f Filter) (bool, error) {
	g := f.(*gcsFilter)
	return m.m.MatchNBytes(m.p, m.mm, g.nbytes, g.key, true)
}

// bloomDesign is a BIP 37 Bloom filter sized by Bitcoin Core's rule.
type bloomDesign struct{ rate float64 }

// Bloom returns the BIP 37 Bloom filter design sized by Bitcoin Core's
// rule (bip37.OptimalSize, 36,000 bytes and 50 hash functions at most)
// for each block's elements at false-positive rate rate. A block without
// elements gets a filter sized for one, since Core's 0-byte filter would
// match everything.
func Bloom(rate float64) Design { return bloomDesign{rate} }

func (d bloomDesign) Name() string   { return "bloom" }
func (d bloomDesign) Params() string { return "Core sizing at " + formatRate(d.rate) }
func (d bloomDesign) Rate() float64  { return d.rate }

func (d bloomDesign) Build(key [16]byte, elements [][]byte) (Filter, error) {
	tweak := uint32(key[0]) | uint32(key[1])<<8 | uint32(key[2])<<16 | uint32(key[3])<<24
	f := bip37.NewFilter(uint32(max(len(elements), 1)), d.rate, tweak, wire.BloomUpdateNone)
	for _, e := range elements {
		f.Add(e)
	}
	return bloomFilter{f}, nil
}

func (d bloomDesign) NewMatcher(watch [][]byte) Matcher {
	m := &bloomMatcher{ps: make([]bip37.Prepared, len(watch)), matched: make([]int32, 0, len(watch))}
	for i, w := range watch {
		m.ps[i].Set(w)
	}
	return m
}

// bloomFilter is a built Bloom filter.
type bloomFilter struct{ f *bip37.Filter }

// Size is the filterload payload's: the bit array with its CompactSize
// length, 4 bytes of hash function count, 4 of tweak, 1 of flags.
func (f bloomFilter) Size() int                    { return wire.VarIntSerializeSize(uint64(f.f.Size())) + f.f.Size() + 9 }
func (f bloomFilter) Contains(element []byte) bool { return f.f.Contains(element) }

// ExpectedRate is the fraction of set bits to the power of the number of
// hash functions.
func (f bloomFilter) ExpectedRate() float64 { return f.f.Stats().FalsePositiveRate }

// bloomMatcher tests prepared watched elements, a batch at a time beyond a
// few.
type bloomMatcher struct {
	ps      []bip37.Prepared
	matched []int32
}

func (m *bloomMatcher) Match(f Filter) (bool, error) {
	b := f.(bloomFilter).f
	if len(m.ps) <= 8 {
		for i := range m.ps {
			if b.ContainsPrepared(&m.ps[i]) {
				return true, nil
			}
		}
		return false, nil
	}
	m.matched = b.ContainsBatch(m.ps, m.matched[:0])
	return len(m.matched) > 0, nil
}
