package simulate

import (
	"fmt"
	"math"

	"github.com/spvfilter/spvfilter/bip37"
)

// Sizing names the rules that turn an element count and a false-positive
// rate into a filter's size and hash-function count.
type Sizing string

// The sizings.
const (
	// SizingCore is Bitcoin Core's CBloomFilter: the hash count from an
	// integer division of bits by elements (bip37.OptimalSize).
	SizingCore Sizing = "core"
	// SizingBitcoinj is bitcoinj's BloomFilter (and python-bitcoinlib's):
	// the hash count from a floating-point division, so at many sizes one
	// hash function more than Core, and at least one byte and one hash
	// function.
	SizingBitcoinj Sizing = "bitcoinj"
)

// ParseSizing reads "core" or "bitcoinj".
func ParseSizing(s string) (Sizing, error) {
	switch z := Sizing(s); z {
	case SizingCore, SizingBitcoinj:
		return z, nil
	}
	return "", fmt.Errorf("%w: sizing %q: want %s or %s", ErrBadOptions, s, SizingCore, SizingBitcoinj)
}

// filterSize returns the filter's size in bytes and its hash functions
// for elements elements at rate under the sizing.
//
// bitcoinj (core/src/main/java/org/bitcoinj/core/BloomFilter.java)
// computes, with Java's truncating int conversion:
//
//	size = (int)(-1 / pow(log(2), 2) * elements * log(rate))
//	size = max(1, min(size, 36000*8) / 8)
//	k    = max(1, min((int)(size*8 / (double)elements * log(2)), 50))
func filterSize(elements uint32, rate float64, s Sizing) (size, hashFuncs uint32) {
	if s != SizingBitcoinj {
		return bip37.OptimalSize(elements, rate)
	}
	ln2 := math.Log(2)
	bits := javaInt(-1 / (ln2 * ln2) * float64(elements) * math.Log(rate))
	bits = min(bits, bip37.MaxFilterSize*8)
	size = uint32(max(1, bits/8))
	if elements == 0 {
		return size, 1
	}
	k := javaInt(float64(size*8) / float64(elements) * ln2)
	return size, uint32(max(1, min(k, bip37.MaxHashFuncs)))
}

// javaInt converts like Java's (int) cast of a double: NaN is 0, values
// beyond int's range saturate, others truncate toward zero.
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
