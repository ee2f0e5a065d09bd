package attack

import (
	"math/bits"
	"slices"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// candidateBatch holds up to bip37.PreparedBatch candidates of one short
// element each, prepared for testing, with what a match report needs.
// Its buffers are reused from batch to batch.
type candidateBatch struct {
	ps     []bip37.Prepared
	lines  []int
	kinds  []universe.Kind
	cls    []uint8
	pair   []bool
	text   []byte // the candidates' texts, one after the other
	textAt []int  // candidate j's text is text[textAt[j]:textAt[j+1]]

	// masks[j] has bit i set when candidate j matches filter i of the
	// group under test; it is zero but for the touched candidates, the
	// ones that match some filter of the group (in increasing order).
	masks   *[bip37.PreparedBatch]uint64
	touched []int32
	matched []int32
}

func newCandidateBatch() *candidateBatch {
	const n = bip37.PreparedBatch
	return &candidateBatch{
		ps: make([]bip37.Prepared, 0, n), lines: make([]int, 0, n), kinds: make([]universe.Kind, 0, n),
		cls: make([]uint8, 0, n), pair: make([]bool, 0, n), textAt: append(make([]int, 0, n+1), 0),
		masks: new([n]uint64), touched: make([]int32, 0, n), matched: make([]int32, 0, n),
	}
}

// add appends a candidate of one element of at most bip37.MaxPreparedLen
// bytes and reports whether the batch is full.
func (b *candidateBatch) add(line int, c *universe.Candidate, pair bool, cls int) bool {
	j := len(b.ps)
	b.ps = b.ps[:j+1]
	b.ps[j].Set(c.Elems[0])
	b.lines = append(b.lines, line)
	b.kinds = append(b.kinds, c.Kind)
	b.cls = append(b.cls, uint8(cls)) // at most maxClassElems
	b.pair = append(b.pair, pair)
	b.text = append(b.text, c.Text...)
	b.textAt = append(b.textAt, len(b.text))
	return len(b.ps) == bip37.PreparedBatch
}

// testGroup tests the batch against the filters of one group, counting
// into tg what the per-candidate loop counts: the matches of each filter
// alone and the depth of each candidate (how many leading filters it
// matches). It leaves the masks of the touched candidates set.
func (b *candidateBatch) testGroup(tg *groupTally, filters []*bip37.Filter) {
	b.touched = b.touched[:0]
	for i, f := range filters {
		b.matched = f.ContainsBatch(b.ps, b.matched[:0])
		tg.alone[i] += uint64(len(b.matched))
		for _, j := range b.matched {
			if b.masks[j] == 0 {
				b.touched = append(b.touched, j)
			}
			b.masks[j] |= 1 << i
		}
	}
	if len(filters) > 1 {
		slices.Sort(b.touched)
	}
	// A candidate no filter matches has depth 0.
	tg.depth[0] += uint64(len(b.ps) - len(b.touched))
	for _, j := range b.touched {
		tg.depth[bits.TrailingZeros64(^b.masks[j])]++
	}
}

// clearMasks zeroes the masks testGroup set.
func (b *candidateBatch) clearMasks() {
	for _, j := range b.touched {
		b.masks[j] = 0
	}
}

// reset empties the batch.
func (b *candidateBatch) reset() {
	b.ps = b.ps[:0]
	b.lines = b.lines[:0]
	b.kinds = b.kinds[:0]
	b.cls = b.cls[:0]
	b.pair = b.pair[:0]
	b.text = b.text[:0]
	b.textAt = b.textAt[:1]
}
