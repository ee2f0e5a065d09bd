package gcs

// sumAll hashes in the vector lanes described in the package
// documentation (sip8, where the processor has them); what is left in the
// groups at the end, and elements shorter than 8 bytes or longer than
// laneBlocks blocks, are hashed two at a time by sum64x2.

// laneBlocks is the longest message, in 8-byte SipHash blocks counting
// the final one, that the lanes take: elements of 8 to 63 bytes, every
// standard output script but bare multisig and P2PK with an uncompressed
// key.
const laneBlocks = 8

// laneMin is the fewest elements for which sumAll uses the lanes.
const laneMin = 16

// laneGroup holds the indexes of up to eight elements of one length in
// blocks, waiting for a full group.
type laneGroup struct {
	n   int
	idx [8]int
}

// lanes is the working state of sumAll: a group per block count and the
// sums of one group.
type lanes struct {
	groups [laneBlocks]laneGroup
	out    [8]uint64
}

// sumAll stores SipHash-2-4 of elements[i] in dst[i], for every i.
func (k sipKey) sumAll(dst []uint64, elements [][]byte) {
	dst = dst[:len(elements)]
	if !haveSip8 || len(elements) < laneMin {
		k.sumPairs(dst, elements, nil)
		return
	}
	var ls lanes
	for i, e := range elements {
		blocks := len(e)>>3 + 1
		if len(e) < 8 || blocks > laneBlocks {
			dst[i] = k.sum64(e)
			continue
		}
		g := &ls.groups[blocks-1]
		g.idx[g.n] = i
		g.n++
		if g.n == 8 {
			k.sumGroup(dst, elements, blocks, &ls)
			g.n = 0
		}
	}
	for b := range ls.groups {
		g := &ls.groups[b]
		k.sumPairs(dst, elements, g.idx[:g.n])
	}
}

// sumGroup hashes the eight elements of the full group of blocks-block
// elements in the lanes.
func (k sipKey) sumGroup(dst []uint64, elements [][]byte, blocks int, ls *lanes) {
	g := &ls.groups[blocks-1]
	sip8(k.k0, k.k1, &elements[0], &g.idx, blocks, &ls.out)
	for l, i := range g.idx {
		dst[i] = ls.out[l]
	}
}

// sumPairs stores the sums of the elements named by idx (every element
// for nil) in dst, two at a time.
func (k sipKey) sumPairs(dst []uint64, elements [][]byte, idx []int) {
	if idx == nil {
		i := 0
		for ; i+1 < len(elements); i += 2 {
			dst[i], dst[i+1] = k.sum64x2(elements[i], elements[i+1])
		}
		if i < len(elements) {
			dst[i] = k.sum64(elements[i])
		}
		return
	}
	j := 0
	for ; j+1 < len(idx); j += 2 {
		a, b := idx[j], idx[j+1]
		dst[a], dst[b] = k.sum64x2(elements[a], elements[b])
	}
	if j < len(idx) {
		dst[idx[j]] = k.sum64(elements[idx[j]])
	}
}
