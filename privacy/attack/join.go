package attack

import (
	"fmt"
	"slices"
)

// Join returns one accumulator of the groups of all the parts, in their
// order, for parts that read the same universe, each for groups of its
// own: a capture whose sessions were split over machines. Its reports,
// links and intersections are those of one accumulator of all the groups
// that read the universe once (Merge, by contrast, adds the readings of
// successive pieces of a universe for the same groups).
//
// The parts must be of the same pair test and match limit and have read
// the same lines:
// the same counts of lines read, skipped and tested, the same skipped
// lines named, candidates by class and key lines marked as pairs
// (ErrMismatch otherwise). These are checks, not a proof: two universes
// of the same shape pass them. A part whose last groups are a capture
// report's intersections (see NewCaptureReport), not sessions, is
// refused (ErrMismatch): joined, they would be sessions of the priors'
// fit again. The parts are not changed; the joined
// accumulator shares their filters, which the caller must not change.
func Join(parts ...*Accumulator) (*Accumulator, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: no accumulator to join", ErrNoFilters)
	}
	first := parts[0]
	s := &groupSet{opts: first.set.opts}
	for i, p := range parts {
		if err := first.sameUniverse(p); err != nil {
			return nil, fmt.Errorf("%w: joining part %d: %w", ErrMismatch, i+1, err)
		}
		if p.sessionGroups() < len(p.set.filters) {
			return nil, fmt.Errorf("%w: joining part %d: its last %d groups are a capture report's intersections, not sessions", ErrMismatch, i+1, len(p.set.filters)-p.sessionGroups())
		}
		s.filters = append(s.filters, p.set.filters...)
		s.full = append(s.full, p.set.full...)
		s.limit = append(s.limit, p.set.limit...)
	}
	s.copies = countCopies(s.filters) // copies may lie in two parts
	scan := first.scan
	scan.BadLines = slices.Clone(first.scan.BadLines)
	j := &Accumulator{set: s, scan: scan, t: s.newTally()}
	j.t.classes = first.t.classes
	j.t.pairs, j.t.undoLines = first.t.pairs, first.t.undoLines
	g := 0
	for _, p := range parts {
		for i := range p.t.groups {
			j.t.groups[g].copyFrom(&p.t.groups[i])
			g++
		}
	}
	return j, nil
}

// sameUniverse says how o's options or reading differ from a's, if they
// do.
func (a *Accumulator) sameUniverse(o *Accumulator) error {
	ao, oo := a.set.opts, o.set.opts
	switch {
	case ao.PairTest != oo.PairTest || ao.MaxMatches != oo.MaxMatches:
		return fmt.Errorf("other options (pair test %v, %d matches listed; want %v, %d)",
			oo.PairTest, oo.MaxMatches, ao.PairTest, ao.MaxMatches)
	case a.scan.LinesRead != o.scan.LinesRead || a.scan.LinesSkipped != o.scan.LinesSkipped ||
		a.scan.CandidatesTested != o.scan.CandidatesTested || !slices.Equal(a.scan.BadLines, o.scan.BadLines):
		return fmt.Errorf("another universe read (%d lines, %d skipped, %d candidates; want %d, %d, %d)",
			o.scan.LinesRead, o.scan.LinesSkipped, o.scan.CandidatesTested, a.scan.LinesRead, a.scan.LinesSkipped, a.scan.CandidatesTested)
	case a.t.classes != o.t.classes || a.t.pairs != o.t.pairs || a.t.undoLines != o.t.undoLines:
		return fmt.Errorf("another universe read (other candidates by class, or %d key lines marked as pairs taking over %d, want %d and %d)",
			o.t.pairs, o.t.undoLines, a.t.pairs, a.t.undoLines)
	}
	return nil
}

// copyFrom copies o's counts and matches into tg, a tally of as many
// filters.
func (tg *groupTally) copyFrom(o *groupTally) {
	*tg.depth = *o.depth
	copy(tg.undoDepth, o.undoDepth)
	copy(tg.alone, o.alone)
	copy(tg.undoAlone, o.undoAlone)
	tg.matches = slices.Clone(o.matches)
	tg.truncated = o.truncated
	tg.delist = slices.Clone(o.delist)
}
