package model

import (
	"fmt"
	"math"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
)

// SizingRule names the arithmetic that turns an element count and a
// false-positive rate into a filter's size in bytes and its number of hash
// functions. The zero value means SizingCore.
type SizingRule string

const (
	// SizingCore is Bitcoin Core's CBloomFilter constructor, which
	// bip37.OptimalSize reproduces: the hash-function count divides the
	// filter's bits by the elements in integers before multiplying by
	// ln 2.
	SizingCore SizingRule = "core"
	// SizingBitcoinj is bitcoinj's BloomFilter constructor: the same bit
	// count, but the hash-function count divides in floating point, so it
	// is one more than Core's at most sizes (16 instead of 15 for 632
	// elements at 0.00001); the filter has at least 1 byte and 1 hash
	// function; ln 2 squared is computed as Math.pow(Math.log(2), 2), one
	// unit in the last place below Core's constant. python-bitcoinlib's
	// CBloomFilter divides in floating point too and builds the same
	// filters, except that it keeps Core's constant and Core's 0-byte and
	// 0-function filters.
	SizingBitcoinj SizingRule = "bitcoinj"
)

// SizingRules lists the rules ParseSizingRule accepts.
var SizingRules = []SizingRule{SizingCore, SizingBitcoinj}

// ParseSizingRule returns the rule named s: "core" or "bitcoinj".
func ParseSizingRule(s string) (SizingRule, error) {
	for _, r := range SizingRules {
		if string(r) == s {
			return r, nil
		}
	}
	return "", badField("sizing", fmt.Sprintf("%q", s), "not core or bitcoinj")
}

// orCore returns the rule, SizingCore for the zero value.
func (r SizingRule) orCore() SizingRule {
	if r == "" {
		return SizingCore
	}
	return r
}

// check reports a rule ParseSizingRule would refuse.
func (r SizingRule) check() error {
	_, err := ParseSizingRule(string(r.orCore()))
	return err
}

// Implementation names who builds filters by the rule, for messages.
func (r SizingRule) Implementation() string {
	if r.orCore() == SizingBitcoinj {
		return "bitcoinj"
	}
	return "Bitcoin Core"
}

// Size returns the filter size in bytes and the number of hash functions
// the rule chooses for elements elements at false-positive rate fpRate.
// An unknown rule sizes as Core does.
func (r SizingRule) Size(elements uint32, fpRate float64) (sizeBytes, hashFuncs uint32) {
	if r.orCore() == SizingBitcoinj {
		return bitcoinjSize(elements, fpRate)
	}
	return bip37.OptimalSize(elements, fpRate)
}

// NewFilter returns an empty filter sized by the rule for elements
// elements at fpRate, with the given tweak and flags.
func (r SizingRule) NewFilter(elements uint32, fpRate float64, tweak uint32, flags wire.BloomUpdateType) *bip37.Filter {
	size, k := r.Size(elements, fpRate)
	f, err := bip37.NewFilterFromParams(make([]byte, size), k, tweak, flags)
	if err != nil {
		// Both rules stay within 36,000 bytes and 50 hash functions.
		panic(fmt.Sprintf("model: %s sized %d bytes and %d hash functions: %v", r.orCore(), size, k, err))
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
	size := max(1, min(bits, bip37.MaxFilterSize*8)/8)
	k := javaInt(float64(size*8) / float64(elements) * ln2)
	return uint32(size), uint32(max(1, min(k, bip37.MaxHashFuncs)))
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
