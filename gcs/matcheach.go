package gcs

import (
	"math/bits"
	"slices"
)

// MatchEach reports, for each of elements, whether it may be in the
// filter (false positives at rate 1/M each; never a false negative), in
// dst[i] for elements[i]: dst is grown to len(elements) and returned. It
// hashes the elements, sorts them with their positions and merges them
// with the filter's values in one forward pass, as MatchAny does, but runs
// to the end instead of stopping at the first match. key must be the key
// the filter was built with.
func (f *Filter) MatchEach(key [16]byte, elements [][]byte, dst []bool) []bool {
	dst = slices.Grow(dst[:0], len(elements))[:len(elements)]
	clear(dst)
	if f.n == 0 || len(elements) == 0 {
		return dst
	}
	buf := getBuffer(2 * len(elements))
	defer putBuffer(buf)
	q := (*buf)[:len(elements)]
	hashInto(q, newSipKey(&key), f.modulus, elements)
	// Each reduced hash carries its element's position in its low bits,
	// so that sorting the values sorts the positions with them.
	shift := uint(bits.Len(uint(len(elements))))
	if bits.Len64(f.modulus)+int(shift) > 64 {
		f.matchEachWide(q, dst)
		return dst
	}
	for i := range q {
		q[i] = q[i]<<shift | uint64(i)
	}
	sortValues(q, f.modulus<<shift, (*buf)[len(elements):])
	f.mergeEach(q, shift, dst)
	return dst
}

// matchEachWide is MatchEach for a modulus too wide to share 64 bits with
// the positions: each value is looked up on its own.
func (f *Filter) matchEachWide(q []uint64, dst []bool) {
	for i, v := range q {
		dst[i] = f.hasValue(v)
	}
}

// mergeEach walks the filter's values against the sorted queries q (each
// a value shifted left by shift over its element's position), setting
// dst at the positions of those the filter holds. Blocks that end below
// the next query are skipped undecoded.
func (f *Filter) mergeEach(q []uint64, shift uint, dst []bool) {
	var batch [batchLen]uint64
	mask := uint64(1)<<shift - 1
	nblocks := len(f.ck) + 1
	r := bitReader{data: f.enc[f.off:]}
	next, j := 0, 0 // the block r is positioned at; the next query
	for b := 0; b < nblocks && j < len(q); b++ {
		if b < len(f.ck) && f.ck[b].last < q[j]>>shift {
			b = f.blockFor(b, q[j]>>shift)
		}
		vals := f.decodeBlock(&r, b, b != next, &batch)
		next = b + 1
		for _, x := range vals {
			for j < len(q) && q[j]>>shift < x {
				j++
			}
			for j < len(q) && q[j]>>shift == x {
				dst[q[j]&mask] = true
				j++
			}
			if j == len(q) {
				return
			}
		}
	}
}
