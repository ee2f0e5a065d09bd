package attack

import (
	"math"
	"math/bits"
	"slices"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/model"
)

// filterRate returns a filter's size in bytes, its bits set, their
// fraction X, X^k and the element count estimated from X.
func filterRate(f *bip37.Filter) (size int, setBits uint64, density, fpr, est float64) {
	b := f.Bits()
	size = len(b)
	for _, x := range b {
		setBits += uint64(bits.OnesCount8(x))
	}
	m := float64(len(b) * 8)
	k := float64(f.HashFuncs())
	if m == 0 {
		return 0, 0, 1, 1, 0
	}
	density = float64(setBits) / m
	fpr = math.Pow(density, k)
	if k > 0 {
		if density < 1 {
			est = -m / k * math.Log1p(-density)
		}
	}
	return size, setBits, density, fpr, est
}

// classRate is the chance a candidate of class cls matches a filter of
// per-element rate f: class 0 is a pair under the pair test (both must
// match: f²), class t ≥ 1 a candidate of t elements (any may match).
func classRate(cls int, f float64) float64 {
	if cls == 0 {
		return f * f
	}
	return -math.Expm1(float64(cls) * math.Log1p(-f))
}

// matchesAll reports whether f matches every element: no bytes, no hash
// function, or every bit set.
func matchesAll(f *bip37.Filter) bool {
	if f.Size() == 0 || f.HashFuncs() == 0 {
		return true
	}
	_, set, _, _, _ := filterRate(f)
	return set == uint64(8*f.Size())
}

// jointRates is the chance that an element outside the wallet matches every
// filter so far: per hashing (size, hash count and tweak), X^k for X the
// fraction of bits set in all its filters, the hashings taken as
// independent (see the package documentation); model.JointFalsePositiveRate
// is the same of a set of filters at once.
type jointRates struct {
	keys  []hashingKey
	and   [][]byte
	rates []float64 // per group
}

type hashingKey struct {
	size     int
	k, tweak uint32
}

// with returns j with filter f intersected (j may be nil).
func (j *jointRates) with(f *bip37.Filter) *jointRates {
	if j == nil {
		j = &jointRates{}
	}
	b := f.Bits()
	key := hashingKey{len(b), f.HashFuncs(), f.Tweak()}
	g := slices.Index(j.keys, key)
	if g < 0 {
		j.keys = append(j.keys, key)
		j.and = append(j.and, b)
		j.rates = append(j.rates, 0)
		g = len(j.keys) - 1
	} else {
		for i := range b {
			j.and[g][i] &= b[i]
		}
	}
	j.rates[g] = model.HashingRate(j.and[g], key.k)
	return j
}

// classRate is the chance that a candidate of class cls matches every
// filter so far by accident.
func (j *jointRates) classRate(cls int) float64 {
	p := 1.0
	for _, f := range j.rates {
		p *= classRate(cls, f)
	}
	return p
}
