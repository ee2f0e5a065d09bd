package attack

import (
	"math/bits"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// batchCandidates turns the batched testing of one-element candidates on;
// tests turn it off to compare with the candidate-at-a-time loop.
var batchCandidates = true

// reader tests the candidates one goroutine of ReadUniverse parses, with
// its own copies of the filters (a Filter is not safe for concurrent use),
// into its own tally.
type reader struct {
	set      *groupSet
	t        *tally
	matchers [][]*bip37.Filter
	// Candidates of one short element, the bulk of a universe, are held
	// back and tested bip37.PreparedBatch at a time: each element's hash
	// blocks are scrambled once for every filter, and each filter's bits
	// stay in cache for the whole batch. Any other candidate first tests
	// the batch, so that matches are still found in the order of the
	// lines.
	batch *candidateBatch
}

func (s *groupSet) newReader() *reader {
	rd := &reader{set: s, t: s.newTally(), matchers: make([][]*bip37.Filter, len(s.filters)), batch: newCandidateBatch()}
	for g, filters := range s.filters {
		rd.matchers[g] = make([]*bip37.Filter, len(filters))
		for i, f := range filters {
			rd.matchers[g][i] = f.Clone()
		}
	}
	return rd
}

// Visit tests one candidate, or holds it back in the batch.
func (rd *reader) Visit(line int, c *universe.Candidate) error {
	pair := rd.set.opts.PairTest && c.Pair()
	cls := min(len(c.Elems), maxClassElems)
	if pair {
		cls = 0
	}
	rd.t.classes[cls]++
	if batchCandidates && c.PairAddress == nil && len(c.Elems) == 1 && len(c.Elems[0]) <= bip37.MaxPreparedLen {
		if rd.batch.add(line, c, pair, cls) {
			rd.Flush()
		}
		return nil
	}
	rd.Flush()
	rd.testOne(line, c, pair, cls)
	return nil
}

// Flush tests the candidates held back.
func (rd *reader) Flush() {
	b := rd.batch
	if len(b.ps) == 0 {
		return
	}
	for g, ms := range rd.matchers {
		b.testGroup(&rd.t.groups[g], ms)
		full := rd.set.full[g]
		for _, j := range b.touched {
			if b.masks[j] == full {
				c := universe.Candidate{Kind: b.kinds[j], Text: b.text[b.textAt[j]:b.textAt[j+1]]}
				rd.found(g, b.lines[j], &c, b.pair[j], int(b.cls[j]))
			}
		}
		b.clearMasks()
	}
	b.reset()
}

// testOne tests a candidate against every group.
func (rd *reader) testOne(line int, c *universe.Candidate, pair bool, cls int) {
	if c.PairAddress != nil {
		rd.t.pairs++
		rd.t.undoLines += uint64(len(c.Listed))
	}
	for g, ms := range rd.matchers {
		tg := &rd.t.groups[g]
		var mask uint64
		if c.PairAddress != nil {
			mask = tg.markedPair(ms, c, pair, rd.set.full[g])
		} else {
			for i, m := range ms {
				if matchCandidate(m, c, pair) {
					mask |= 1 << i
					tg.alone[i]++
				}
			}
		}
		tg.depth[bits.TrailingZeros64(^mask)]++
		if mask == rd.set.full[g] {
			rd.found(g, line, c, pair, cls)
		}
	}
}

// found lists a candidate that matched every filter of group g, up to the
// group's limit; it is off the hot path.
func (rd *reader) found(g, line int, c *universe.Candidate, pair bool, cls int) {
	tg := &rd.t.groups[g]
	if len(tg.matches) >= rd.set.limit[g] {
		tg.truncated = true
		return
	}
	m := MatchedCandidate{Line: line, Candidate: string(c.Text), Kind: c.Kind, PairTested: pair, class: cls}
	if c.PairAddress != nil {
		m.Kind, m.PubKey, m.Candidate = universe.KindAddress, m.Candidate, string(c.PairAddress)
		if len(c.Listed) > 0 {
			m.Candidate = string(c.Listed[0])
		}
	}
	tg.matches = append(tg.matches, m)
}

// matchCandidate tests a candidate against one filter: every element of a
// pair under the pair test, else any element.
func matchCandidate(f *bip37.Filter, c *universe.Candidate, all bool) bool {
	if all {
		for _, e := range c.Elems {
			if !f.Contains(e) {
				return false
			}
		}
		return true
	}
	for _, e := range c.Elems {
		if f.Contains(e) {
			return true
		}
	}
	return false
}
