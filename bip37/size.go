package bip37

import "math"

// Protocol limits, as in Bitcoin Core (src/common/bloom.h and
// src/script/script.h) and btcd's wire package.
const (
	// MaxFilterSize is the largest filter bit array in bytes that a node
	// accepts in filterload (Core MAX_BLOOM_FILTER_SIZE).
	MaxFilterSize = 36000

	// MaxHashFuncs is the largest number of hash functions a node accepts
	// in filterload (Core MAX_HASH_FUNCS).
	MaxHashFuncs = 50

	// MaxFilterAddDataSize is the largest element a filteradd message may
	// carry (Core MAX_SCRIPT_ELEMENT_SIZE).
	MaxFilterAddDataSize = 520
)

// Core's constants, spelled as in src/common/bloom.cpp so that they round to
// the same float64 values. They are variables so that the arithmetic below
// runs in float64, step by step, like the C++ code, rather than as exact
// constant arithmetic.
var (
	ln2Squared = 0.4804530139182014246671025263266649717305529515945455
	ln2        = 0.6931471805599453094172321214581765680755001343602552
)

// OptimalSize returns the filter size in bytes and the number of hash
// functions that Bitcoin Core's CBloomFilter constructor chooses for
// elements elements at false-positive rate fpRate.
//
// The arithmetic is Core's, step for step:
//
//	bits      = (unsigned int)(-1 / LN2SQUARED * elements * log(fpRate))
//	sizeBytes = min(bits, 36000*8) / 8
//	hashFuncs = min((unsigned int)(sizeBytes*8 / elements * LN2), 50)
//
// Note that sizeBytes*8/elements is an integer division, so the number of
// hash functions often differs from btcutil's, which divides in floating
// point (n=2100, fp=0.1: Core 2, btcutil 3).
//
// Degenerate inputs give what Core's arithmetic gives on x86-64, where a
// double is converted to unsigned int through a 64-bit signed conversion
// that yields 0x8000000000000000 for NaN and out-of-range values:
//
//   - fpRate >= 1: log is >= 0, the bit count is 0 or wraps to a huge value,
//     so the size is 0 (fpRate == 1) or the 36,000-byte cap (fpRate > 1);
//   - fpRate == 0 or fpRate < 0 or NaN: the bit count is +Inf or NaN, which
//     converts to 0: size 0;
//   - elements == 0: Core divides by zero (a crash); OptimalSize returns
//     size 0 and 0 hash functions instead.
//
// A size of 0 bytes is a "match everything" filter in Core.
func OptimalSize(elements uint32, fpRate float64) (sizeBytes, hashFuncs uint32) {
	x := -1 / ln2Squared
	x *= float64(elements)
	x *= math.Log(fpRate)
	nbits := cDoubleToUint(x)
	if nbits > MaxFilterSize*8 {
		nbits = MaxFilterSize * 8
	}
	sizeBytes = nbits / 8
	if elements == 0 {
		return sizeBytes, 0
	}
	hashFuncs = cDoubleToUint(float64(sizeBytes*8/elements) * ln2)
	if hashFuncs > MaxHashFuncs {
		hashFuncs = MaxHashFuncs
	}
	return sizeBytes, hashFuncs
}

// cDoubleToUint converts like (unsigned int)x compiled for x86-64: truncate
// to a signed 64-bit integer (cvttsd2si, which gives 1<<63 for NaN and
// values out of range) and keep the low 32 bits. Go's own conversion of an
// out-of-range value is implementation-specific, hence the explicit checks.
func cDoubleToUint(x float64) uint32 {
	if math.IsNaN(x) || x >= 0x1p63 || x < -0x1p63 {
		return 0 // low 32 bits of 0x8000000000000000
	}
	return uint32(int64(x))
}
