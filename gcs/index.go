package gcs

// checkpoint locates the start of a block of batchLen values: its bit
// offset in the stream and the value before it, the last of the previous
// block. Decoding may start at any checkpoint.
type checkpoint struct {
	bit  uint64
	last uint64
}

// numCheckpoints is the number of blocks after the first.
func numCheckpoints(n uint32) int {
	if n == 0 {
		return 0
	}
	return int((n - 1) / batchLen)
}

// blockFor returns the first block at or after from that may hold a value
// >= target: every block before it ends below target.
func (f *Filter) blockFor(from int, target uint64) int {
	// ck[i] starts block i+1, so ck[i].last is the last value of block i.
	lo, hi := from, len(f.ck)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if f.ck[mid].last < target {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}

// decodeBlock decodes block b into batch with r and returns its values.
// With seek set, r is first moved to the block's start; otherwise r must
// have just decoded block b-1.
func (f *Filter) decodeBlock(r *bitReader, b int, seek bool, batch *[batchLen]uint64) []uint64 {
	var v uint64
	if b > 0 {
		c := f.ck[b-1]
		v = c.last
		if seek {
			r.seek(c.bit)
		}
	}
	vals := batch[:min(int(f.n)-b*batchLen, batchLen)]
	r.decodeBatch(uint(f.p), v, vals) // validated at construction: no error
	return vals
}

// decodePair decodes blocks b and b+1 at once, interleaved, which nearly
// halves the time per value: each block's decoding is one long chain of
// dependent operations, and two independent chains overlap.
func (f *Filter) decodePair(b int, batch1, batch2 *[batchLen]uint64) ([]uint64, []uint64) {
	r1 := bitReader{data: f.enc[f.off:]}
	r2 := r1
	var v1 uint64
	if b > 0 {
		r1.seek(f.ck[b-1].bit)
		v1 = f.ck[b-1].last
	}
	r2.seek(f.ck[b].bit)
	v2 := f.ck[b].last
	vals1 := batch1[:batchLen] // block b is full: a block follows it
	vals2 := batch2[:min(int(f.n)-(b+1)*batchLen, batchLen)]
	k, v1, v2 := decodeFast2(&r1, &r2, uint(f.p), v1, v2, vals1, vals2)
	// Finish each block alone (slow codes, or the shorter last block).
	r1.decodeBatch(uint(f.p), v1, vals1[k:])
	r2.decodeBatch(uint(f.p), v2, vals2[k:])
	return vals1, vals2
}
