package gcs

// Match reports whether element may be in the filter (false positives at
// rate 1/M; never a false negative). key must be the key the filter was
// built with. It does not allocate.
func (f *Filter) Match(key [16]byte, element []byte) bool {
	if f.n == 0 {
		return false
	}
	k := newSipKey(&key)
	return f.hasValue(reduce(k.sum64(element), f.modulus))
}

// hasValue reports whether target is one of the filter's values.
func (f *Filter) hasValue(target uint64) bool {
	// The first value >= target lies in the first block whose last value
	// is >= target (or in the last block): decode that block only.
	r := bitReader{data: f.enc[f.off:]}
	var batch [batchLen]uint64
	vals := f.decodeBlock(&r, f.blockFor(0, target), true, &batch)
	for _, x := range vals {
		if x >= target {
			return x == target
		}
	}
	return false
}

// stackQueries is the largest query set MatchAny hashes into a stack
// buffer; larger sets borrow a pooled buffer.
const stackQueries = 64

// MatchAny reports whether any of elements may be in the filter. It hashes
// and sorts the elements, then merges them with the filter's values in one
// forward pass, stopping at the first match or when the filter passes the
// largest element. With fewer elements than the filter has blocks of 64
// values, it skips undecoded the blocks that end below the next element;
// with more, it decodes every block, two at a time, interleaved. It does
// not allocate in steady state (large element sets reuse pooled buffers);
// a Matcher avoids even the pool for a fixed watch list.
func (f *Filter) MatchAny(key [16]byte, elements [][]byte) bool {
	if f.n == 0 || len(elements) == 0 {
		return false
	}
	k := newSipKey(&key)
	if len(elements) <= stackQueries {
		var arr [stackQueries]uint64
		q := arr[:len(elements)]
		hashInto(q, k, f.modulus, elements)
		sortValues(q, f.modulus, nil)
		return f.matchSorted(q)
	}
	buf := getBuffer(2 * len(elements))
	q := (*buf)[:len(elements)]
	hashInto(q, k, f.modulus, elements)
	sortValues(q, f.modulus, (*buf)[len(elements):])
	ok := f.matchSorted(q)
	putBuffer(buf)
	return ok
}

// hashInto stores the reduced hash of each element in dst.
func hashInto(dst []uint64, k sipKey, modulus uint64, elements [][]byte) {
	dst = dst[:len(elements)]
	k.sumAll(dst, elements)
	for i, h := range dst {
		dst[i] = reduce(h, modulus)
	}
}

// matchSorted merges the filter's values with the sorted, non-empty
// queries q and reports whether they share a value.
func (f *Filter) matchSorted(q []uint64) bool {
	var batch1, batch2 [batchLen]uint64
	nblocks := len(f.ck) + 1
	j := 0
	if len(q) >= nblocks {
		// Dense queries: nearly every block is needed, so decode them
		// all, two at a time.
		for b := 0; b < nblocks; b += 2 {
			var found, done bool
			if b+1 < nblocks {
				vals1, vals2 := f.decodePair(b, &batch1, &batch2)
				if j, found, done = merge(vals1, q, j); found || done {
					return found
				}
				j, found, done = merge(vals2, q, j)
			} else {
				r := bitReader{data: f.enc[f.off:]}
				j, found, done = merge(f.decodeBlock(&r, b, true, &batch1), q, j)
			}
			if found || done {
				return found
			}
		}
		return false
	}
	// Sparse queries: decode only the blocks that may hold one.
	r := bitReader{data: f.enc[f.off:]}
	next := 0 // the block r is positioned at
	for b := 0; b < nblocks; b++ {
		// Skip the blocks that end below the next query, undecoded.
		if b < len(f.ck) && f.ck[b].last < q[j] {
			b = f.blockFor(b, q[j])
		}
		vals := f.decodeBlock(&r, b, b != next, &batch1)
		next = b + 1
		var found, done bool
		if j, found, done = merge(vals, q, j); found || done {
			return found
		}
	}
	return false
}

// merge walks the sorted values vals against the sorted queries q from
// index j. It reports a shared value (found), or that the queries are
// exhausted (done), or else the index of the first query above vals.
func merge(vals, q []uint64, j int) (next int, found, done bool) {
	want := q[j]
	for _, x := range vals {
		for want < x {
			j++
			if j == len(q) {
				return j, false, true
			}
			want = q[j]
		}
		if want == x {
			return j, true, false
		}
	}
	return j, false, false
}
