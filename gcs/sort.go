package gcs

import (
	"math/bits"
	"slices"
	"sort"
)

// radixMin is the length from which sortHashes uses an LSD radix sort
// rather than sort.Sort.
const radixMin = 512

// radixBits is the digit width: 11 bits sort a 32-bit key space (the basic
// filter of any block under 5,000 items) in three passes.
const radixBits = 11

// Hashed values are sorted by buckets and an insertion sort (see the
// package documentation). It beats slices.Sort from bucketMin values and
// is used up to bucketMax (measured by BenchmarkSort); beyond, the buckets
// (at most 2^bucketBits) fill up and the LSD radix sort takes over. A
// bucket of more than bucketCrowd values (inputs that are not evenly
// spread) hands the slice to slices.Sort instead, so that no input makes
// the insertion sort quadratic.
const (
	bucketMin   = 64
	bucketBits  = 12
	bucketMax   = 1 << 14
	bucketCrowd = 32
)

// sortValues sorts v, whose elements are all below limit. scratch, when at
// least as long as v, is used as the second buffer of the bucket and
// radix sorts.
func sortValues(v []uint64, limit uint64, scratch []uint64) {
	switch {
	case len(v) < bucketMin || len(scratch) < len(v):
		slices.Sort(v)
	case len(v) <= bucketMax:
		if !bucketSort(v, scratch[:len(v)], limit) {
			slices.Sort(v)
		}
	default:
		radixSort(v, scratch[:len(v)], bits.Len64(limit))
	}
}

// bucketSort sorts v (values below limit, len(v) >= 2) through tmp, as
// described above, and reports whether it did: false, with v unchanged,
// if a bucket holds more than bucketCrowd values.
func bucketSort(v, tmp []uint64, limit uint64) bool {
	var count [1 << bucketBits]uint32
	b := min(uint(bits.Len(uint(len(v))))-1, bucketBits)
	vbits := uint(bits.Len64(limit - 1))
	if vbits < b {
		return false // fewer values possible than buckets: not spread
	}
	shift := vbits - b
	for _, x := range v {
		count[x>>shift]++
	}
	sum := uint32(0)
	for i, c := range count[:1<<b] {
		if c > bucketCrowd {
			return false
		}
		count[i] = sum
		sum += c
	}
	for _, x := range v {
		d := x >> shift
		tmp[count[d]] = x
		count[d]++
	}
	// Each value is out of place only among its bucket's few.
	for i, x := range tmp {
		j := i
		for j > 0 && v[j-1] > x {
			v[j] = v[j-1]
			j--
		}
		v[j] = x
	}
	return true
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

// sortHashes sorts 64-bit hashes with their element indexes: a radix sort
// on the top 32 bits, then a comparison sort within each run of equal top
// halves (rare and short for hashes), using tmp and tmpIdx as scratch.
func sortHashes(h []uint64, idx []int32, tmp []uint64, tmpIdx []int32) {
	if len(h) < radixMin {
		sort.Sort(hashRun{h, idx})
		return
	}
	const buckets = 1 << radixBits
	src, srcI, dst, dstI := h, idx, tmp, tmpIdx
	var count [buckets]int
	for shift := 32; shift < 64; shift += radixBits {
		clear(count[:])
		for _, x := range src {
			count[(x>>shift)&(buckets-1)]++
		}
		sum := 0
		for i, c := range count {
			count[i] = sum
			sum += c
		}
		for i, x := range src {
			d := (x >> shift) & (buckets - 1)
			dst[count[d]] = x
			dstI[count[d]] = srcI[i]
			count[d]++
		}
		src, srcI, dst, dstI = dst, dstI, src, srcI
	}
	// Three passes: the result is in tmp.
	copy(h, src)
	copy(idx, srcI)
	for i := 0; i < len(h); {
		j := i + 1
		for j < len(h) && h[j]>>32 == h[i]>>32 {
			j++
		}
		if j-i > 1 {
			sort.Sort(hashRun{h[i:j], idx[i:j]})
		}
		i = j
	}
}

// hashRun sorts hashes with their indexes.
type hashRun struct {
	h   []uint64
	idx []int32
}

func (r hashRun) Len() int           { return len(r.h) }
func (r hashRun) Less(i, j int) bool { return r.h[i] < r.h[j] }
func (r hashRun) Swap(i, j int) {
	r.h[i], r.h[j] = r.h[j], r.h[i]
	r.idx[i], r.idx[j] = r.idx[j], r.idx[i]
}
