package gcs

import "math/bits"

// A watch list at least half as long as the filter is better turned
// around: decode the filter's values once (validating them all) and look
// each watched element up in them, instead of hashing and sorting the
// whole list first. A table of bucket starts (a bucket holds the values
// with the same high bits, one to four on average) makes a lookup one or
// two loads. Since the filter is validated in full before any lookup, the
// lookups stop at the first element found, in the strict mode too.
// Hashing the watch list still dominates.

// hashJoinMin reports whether a watch list of w elements against a filter
// of n values is matched by lookups (at least n/2 elements).
func hashJoinMin(n uint32, w int) bool {
	return n > 0 && uint64(w) >= uint64(n)/2
}

// decodeChecked decodes the n values of an untrusted stream into dst
// (len(dst) >= n) and reports whether the stream is valid exactly as
// validate judges it.
func decodeChecked(data []byte, n uint32, p uint, modulus uint64, dst []uint64) bool {
	if uint64(n)*uint64(p+1) > 8*uint64(len(data)) {
		return false
	}
	r := bitReader{data: data}
	var v uint64
	vals := dst[:n]
	for done := 0; done < len(vals); {
		k := min(len(vals)-done, batchLen)
		var err error
		if v, err = r.decodeBatch(p, v, vals[done:done+k]); err != nil {
			return false
		}
		done += k
	}
	// A sum that overflowed 64 bits shows as a decrease; without one the
	// values rise, so the last is the largest.
	prev := uint64(0)
	for _, x := range vals {
		if x < prev {
			return false
		}
		prev = x
	}
	if n > 0 && prev >= modulus {
		return false
	}
	left := r.remaining()
	return left < 8 && (left == 0 || r.buf>>(64-left) == 0)
}

// bucketShift returns the shift that maps a value below modulus to its
// bucket, giving more than n/4 and at most n buckets (at least one).
func bucketShift(n uint32, modulus uint64) uint {
	vbits := uint(bits.Len64(modulus - 1))
	bbits := uint(bits.Len32(n)) - 1 // 2^bbits <= n
	if bbits >= vbits {
		return 0
	}
	return vbits - bbits
}

// bucketStarts fills starts (len >= buckets+1) so that the values of
// bucket b are vals[starts[b]:starts[b+1]], and returns it.
func bucketStarts(vals []uint64, shift uint, buckets int, starts []uint32) []uint32 {
	starts = starts[:buckets+1]
	i := 0
	for b := range buckets {
		starts[b] = uint32(i)
		for i < len(vals) && int(vals[i]>>shift) == b {
			i++
		}
	}
	starts[buckets] = uint32(len(vals))
	return starts
}

// matchLookup validates the filter and looks every element up in it; see
// the comment above. vals and starts are scratch of at least n and of
// numBuckets+1 elements.
func matchLookup(data []byte, n uint32, p uint, modulus uint64, key [16]byte, elems [][]byte,
	vals []uint64, starts []uint32) (found, valid bool) {
	if !decodeChecked(data, n, p, modulus, vals) {
		return false, false
	}
	vals = vals[:n]
	shift := bucketShift(n, modulus)
	starts = bucketStarts(vals, shift, numBuckets(n, modulus), starts)
	k := newSipKey(&key)
	var hashes [lookupChunk]uint64
	for len(elems) > 0 {
		chunk := elems[:min(lookupChunk, len(elems))]
		elems = elems[len(chunk):]
		k.sumAll(hashes[:len(chunk)], chunk)
		for _, h := range hashes[:len(chunk)] {
			if inBucket(vals, starts, shift, reduce(h, modulus)) {
				return true, true
			}
		}
	}
	return false, true
}

// lookupChunk is how many watched elements matchLookup hashes at once,
// in the vector lanes where there are some, before looking them up: a
// match stops it within one chunk.
const lookupChunk = 256

// inBucket reports whether h is one of the sorted values, looking in its
// bucket only.
func inBucket(vals []uint64, starts []uint32, shift uint, h uint64) bool {
	b := h >> shift
	for _, x := range vals[starts[b]:starts[b+1]] {
		if x >= h {
			return x == h
		}
	}
	return false
}

// numBuckets is the number of buckets of a filter's values.
func numBuckets(n uint32, modulus uint64) int {
	return int((modulus-1)>>bucketShift(n, modulus)) + 1
}
