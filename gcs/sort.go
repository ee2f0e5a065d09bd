package gcs

import (
	"math/bits"
	"slices"
)

// radixMin is the length from which an LSD radix sort beats slices.Sort
// on hashed values (measured by BenchmarkSort).
const radixMin = 512

// radixBits is the digit width: 11 bits sort a 32-bit key space (the basic
// filter of any block under 5,000 items) in three passes.
const radixBits = 11

// sortValues sorts v, whose elements are all below limit. scratch, when at
// least as long as v, is used as the radix sort's second buffer.
func sortValues(v []uint64, limit uint64, scratch []uint64) {
	if len(v) < radixMin || len(scratch) < len(v) {
		slices.Sort(v)
		return
	}
	radixSort(v, scratch[:len(v)], bits.Len64(limit))
}

// radixSort sorts v by its low keyBits bits, using tmp (len(v)) as scratch.
// The result ends in v.
func radixSort(v, tmp []uint64, keyBits int) {
	const buckets = 1 << radixBits
	var count [buckets]int
	src, dst := v, tmp
	for shift := 0; shift < keyBits; shift += radixBits {
		clear(count[:])
		for _, x := range src {
			count[(x>>shift)&(buckets-1)]++
		}
		// Skip a pass whose digit is the same for every value.
		if count[(src[0]>>shift)&(buckets-1)] == len(src) {
			continue
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for _, x := range src {
			d := (x >> shift) & (buckets - 1)
			dst[count[d]] = x
			count[d]++
		}
		src, dst = dst, src
	}
	if &src[0] != &v[0] {
		copy(v, src)
	}
}
