package bip37

import (
	"errors"
	"fmt"
	"math"

	"github.com/btcsuite/btcd/wire"
)

// Sizing names the arithmetic that turns an element count and a
// false-positive rate into a filter's size in bytes and its number of
// hash functions. The zero value means SizingCore.
type Sizing string

const (
	// SizingCore is Bitcoin Core's CBloomFilter constructor (OptimalSize):
	// the hash-function count divides the filter's bits by the elements
	// in integers before multiplying by ln 2.
	SizingCore Sizing = "core"
	// SizingBitcoinj is bitcoinj's BloomFilter constructor: the same bit
	// count, but the hash-function count divides in floating point, so it
	// is one more than Core's at most sizes (16 instead of 15 for 632
	// elements at 0.00001); the filter has at least 1 byte and 1 hash
	// function; ln 2 squared is computed as Math.pow(Math.log(2), 2), one
	// unit in the last place below Core's constant. python-bitcoinlib's
	// CBloomFilter divides in floating point too and builds the same
	// filters, except that it keeps Core's constant and Core's 0-byte and
	// 0-function filters.
	SizingBitcoinj Sizing = "bitcoinj"
)

// Sizings lists the rules ParseSizing accepts.
var Sizings = []Sizing{SizingCore, SizingBitcoinj}

// ErrBadSizing reports a sizing rule other than "core" and "bitcoinj"
// (ParseSizing).
var ErrBadSizing = errors.New("unknown sizing rule")

// ParseSizing returns the rule named s: "core" or "bitcoinj".
func ParseSizing(s string) (Sizing, error) {
	for _, r := range Sizings {
		if string(r) == s {
			return r, nil
		}
	}
	return "", fmt.Errorf("%w: %q (want core or bitcoinj)", ErrBadSizing, s)
}

// OrCore returns the rule, SizingCore for the zero value.
func (r Sizing) OrCore() Sizing {
	if r == "" {
		return SizingCore
	}
	return r
}

// Implementation names who builds filters by the rule, for messages.
func (r Sizing) Implementation() string {
	if r.OrCore() == SizingBitcoinj {
		return "bitcoinj"
	}
	return "Bitcoin Core"
}

// Size returns the filter size in bytes and the number of hash functions
// the rule chooses for elements elements at false-positive rate fpRate.
// An unknown rule sizes as Core does.
func (r Sizing) Size(elements uint32, fpRate float64) (sizeBytes, hashFuncs uint32) {
	if r.OrCore() == SizingBitcoinj {
		return bitcoinjSize(elements, fpRate)
	}
	return OptimalSize(elements, fpRate)
}

// NewFilter returns an empty filter sized by the rule for elements
// elements at fpRate, with the given tweak and flags.
func (r Sizing) NewFilter(elements uint32, fpRate float64, tweak uint32, flags wire.BloomUpdateType) *Filter {
	size, k := r.Size(elements, fpRate)
	f, err := NewFilterFromParams(make([]byte, size), k, tweak, flags)
	if err != nil {
		// Both rules stay within MaxFilterSize and MaxHashFuncs.
		panic(fmt.Sprintf("bip37: %s sized %d bytes and %d hash functions: %v", r.OrCore(), size, k, err))
	}
	return f
}

// bitcoinjSize is bitcoinj's BloomFilter(int elements, double
// falsePositiveRate, ...) constructor (core/src/main/java/org/bitcoinj/
// core/BloomFilter.java), step by step in float64 as the JVM computes it:
//
//	size      = (int)(-1 / pow(log(2), 2) * elements * log(fpRate))
//	size      = max(1, min(size, 36000*8) / 8)        (bytes)
//	hashFuncs = (int)(size*8 / (double)elements * log(2))
//	hashFuncs = max(1, min(hashFuncs, 50))
//
// pow(log(2), 2) is the float64 square of ln 2 (0.48045301391820139),
// where Core's constant is the nearest float64 to ln² 2
// (0.48045301391820144).
func bitcoinjSize(elements uint32, fpRate float64) (sizeBytes, hashFuncs uint32) {
	ln2 := javaLn2
	bits := javaInt(-1 / (ln2 * ln2) * float64(elements) * math.Log(fpRate))
	size := max(1, min(bits, MaxFilterSize*8)/8)
	k := javaInt(float64(size*8) / float64(elements) * ln2)
	return uint32(size), uint32(max(1, min(k, MaxHashFuncs)))
}

// javaLn2 is Java's Math.log(2), the float64 nearest ln 2.
var javaLn2 = math.Log(2)

// javaInt converts like Java's (int) cast of a double: NaN is 0, values
// beyond the int range saturate, others truncate toward zero.
func javaInt(x float64) int64 {
	switch {
	case math.IsNaN(x):
		return 0
	case x >= math.MaxInt32:
		return math.MaxInt32
	case x <= math.MinInt32:
		return math.MinInt32
	}
	return int64(x)
}

// FalsePositiveRate is the probability that an element not in a filter
// of bits bits and hashFuncs hash functions holding elements elements
// matches it, for hash values uniform and independent:
// (1-(1-1/m)^(k*n))^k, computed without cancellation for large m. A
// filter of zero bits matches everything, as in Bitcoin Core.
func FalsePositiveRate(bits uint64, hashFuncs uint32, elements uint64) float64 {
	if bits == 0 {
		return 1
	}
	// 1-(1-1/m)^(kn) = -expm1(kn*log1p(-1/m)).
	fill := -math.Expm1(float64(hashFuncs) * float64(elements) * math.Log1p(-1/float64(bits)))
	return math.Pow(fill, float64(hashFuncs))
}

// Capacity is how many elements a filter of bits bits holds at
// false-positive rate fpRate by Core's formula, bits = -n ln(p) / ln² 2,
// before rounding: Capacity(MaxFilterSize*8, p) is the most a filter of
// the protocol's largest size holds at p.
func Capacity(bits uint64, fpRate float64) float64 {
	return float64(bits) * math.Ln2 * math.Ln2 / -math.Log(fpRate)
}
