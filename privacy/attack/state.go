package attack

import (
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/spvfilter/spvfilter/privacy/universe"
)

// accState is an accumulator's counts as JSON: what one machine read, to
// be merged on another (see Accumulator.MarshalJSON).
type accState struct {
	// Groups is the hex of the fingerprint of the groups of filters and
	// the options (see groupSet.fingerprint).
	Groups    string         `json:"groups"`
	Universe  *universe.Scan `json:"universe"`
	Classes   []uint64       `json:"classes"`
	Pairs     uint64         `json:"pairs"`
	UndoLines uint64         `json:"merged_address_lines"`
	Tallies   []groupState   `json:"tallies"`
}

// groupState is a groupTally as JSON.
type groupState struct {
	Depth     []uint64     `json:"depth"`
	Alone     []uint64     `json:"alone"`
	UndoDepth []uint64     `json:"undo_depth"`
	UndoAlone []uint64     `json:"undo_alone"`
	Matches   []matchState `json:"matches"`
	Truncated bool         `json:"truncated,omitempty"`
	Delist    []string     `json:"delist,omitempty"`
}

// matchState is a match with its class, which a report does not show.
type matchState struct {
	MatchedCandidate
	Class int `json:"class"`
}

// MarshalJSON writes the accumulator's counts (not its filters): what a
// worker of a distributed run sends to the one that merges.
func (a *Accumulator) MarshalJSON() ([]byte, error) {
	id := a.set.fingerprint()
	st := accState{Groups: hex.EncodeToString(id[:]), Universe: &a.scan, Classes: a.t.classes[:],
		Pairs: a.t.pairs, UndoLines: a.t.undoLines, Tallies: make([]groupState, len(a.t.groups))}
	for g := range a.t.groups {
		tg := &a.t.groups[g]
		gs := groupState{Depth: tg.depth[:len(tg.undoDepth)], Alone: tg.alone, UndoDepth: tg.undoDepth,
			UndoAlone: tg.undoAlone, Matches: make([]matchState, len(tg.matches)), Truncated: tg.truncated, Delist: tg.delist}
		for i, m := range tg.matches {
			gs.Matches[i] = matchState{MatchedCandidate: m, Class: m.class}
		}
		st.Tallies[g] = gs
	}
	return json.Marshal(st)
}

// UnmarshalJSON replaces the accumulator's counts with those MarshalJSON
// wrote for an accumulator of the same groups of filters and options
// (ErrMismatch otherwise). Counts that do not add up are refused.
func (a *Accumulator) UnmarshalJSON(b []byte) error {
	if a.set == nil {
		return fmt.Errorf("%w: a state needs the accumulator of its filters (NewAccumulator)", ErrMismatch)
	}
	var st accState
	if err := json.Unmarshal(b, &st); err != nil {
		return fmt.Errorf("%w: %w", ErrBadState, err)
	}
	if id := a.set.fingerprint(); st.Groups != hex.EncodeToString(id[:]) {
		return fmt.Errorf("%w: a state of other filters or options", ErrMismatch)
	}
	t, err := a.set.tallyOf(&st)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrBadState, err)
	}
	a.scan, a.t = *st.Universe, t
	// The priors fitted on the counts replaced are not theirs.
	a.dropPriors()
	if a.scan.BadLines == nil {
		a.scan.BadLines = []universe.BadLine{}
	}
	return nil
}

// tallyOf checks a state's counts against each other and against the
// groups, and returns them as a tally.
func (s *groupSet) tallyOf(st *accState) (*tally, error) {
	u := st.Universe
	switch {
	case u == nil:
		return nil, fmt.Errorf("no universe")
	case len(st.Classes) != maxClassElems+1:
		return nil, fmt.Errorf("%d classes, want %d", len(st.Classes), maxClassElems+1)
	case len(st.Tallies) != len(s.filters):
		return nil, fmt.Errorf("%d groups, want %d", len(st.Tallies), len(s.filters))
	case u.LinesSkipped+u.CandidatesTested > u.LinesRead || uint64(len(u.BadLines)) > u.LinesSkipped:
		return nil, fmt.Errorf("%d lines read, %d skipped, %d candidates", u.LinesRead, u.LinesSkipped, u.CandidatesTested)
	case sum(st.Classes) != u.CandidatesTested || st.Pairs > u.CandidatesTested:
		return nil, fmt.Errorf("%d candidates by class, %d pairs, %d tested", sum(st.Classes), st.Pairs, u.CandidatesTested)
	case len(u.BadLines) > universe.MaxBadLines:
		return nil, fmt.Errorf("%d skipped lines named, at most %d", len(u.BadLines), universe.MaxBadLines)
	}
	prev := 0
	for _, b := range u.BadLines {
		if b.Line <= prev || uint64(b.Line) > u.LinesRead {
			return nil, fmt.Errorf("skipped line %d after %d, of %d", b.Line, prev, u.LinesRead)
		}
		prev = b.Line
	}
	t := s.newTally()
	copy(t.classes[:], st.Classes)
	t.pairs, t.undoLines = st.Pairs, st.UndoLines
	for g, gs := range st.Tallies {
		if err := t.groups[g].set(&gs, len(s.filters[g]), s.limit[g], u, st.Classes); err != nil {
			return nil, fmt.Errorf("group %d: %w", g+1, err)
		}
		if sum(gs.UndoDepth) != st.UndoLines {
			return nil, fmt.Errorf("group %d: %d taken-over lines, the universe %d", g+1, sum(gs.UndoDepth), st.UndoLines)
		}
	}
	return t, nil
}

// set fills tg from a state of a group of nf filters listing at most limit
// matches, over the universe u of classes candidates by class (see
// classRate): no more matches of a class than it holds.
func (tg *groupTally) set(gs *groupState, nf, limit int, u *universe.Scan, classes []uint64) error {
	switch {
	case len(gs.Depth) != nf+1 || len(gs.UndoDepth) != nf+1 || len(gs.Alone) != nf || len(gs.UndoAlone) != nf:
		return fmt.Errorf("counts of %d, %d, %d and %d filters, want %d", len(gs.Depth)-1, len(gs.UndoDepth)-1, len(gs.Alone), len(gs.UndoAlone), nf)
	case sum(gs.Depth) != u.CandidatesTested:
		return fmt.Errorf("%d candidates by depth, %d tested", sum(gs.Depth), u.CandidatesTested)
	case len(gs.Matches) > limit || uint64(len(gs.Matches)) > gs.Depth[nf]:
		return fmt.Errorf("%d matches listed, %d match every filter, at most %d are listed", len(gs.Matches), gs.Depth[nf], limit)
	case uint64(len(gs.Delist)) > gs.UndoDepth[nf]:
		return fmt.Errorf("%d taken-over lines delisted, %d match every filter", len(gs.Delist), gs.UndoDepth[nf])
	}
	for i := range gs.Alone {
		if gs.Alone[i] > u.CandidatesTested {
			return fmt.Errorf("filter %d matched %d of %d candidates", i+1, gs.Alone[i], u.CandidatesTested)
		}
	}
	copy(tg.depth[:], gs.Depth)
	copy(tg.undoDepth, gs.UndoDepth)
	copy(tg.alone, gs.Alone)
	copy(tg.undoAlone, gs.UndoAlone)
	tg.truncated, tg.delist = gs.Truncated, gs.Delist
	tg.matches = make([]MatchedCandidate, len(gs.Matches))
	var byClass [maxClassElems + 1]uint64
	prev := 0
	for i, m := range gs.Matches {
		if m.Line <= prev || uint64(m.Line) > u.LinesRead || m.Class < 0 || m.Class > maxClassElems || m.Kind == 0 {
			return fmt.Errorf("match %d: line %d (after %d, of %d), class %d, kind %v", i+1, m.Line, prev, u.LinesRead, m.Class, m.Kind)
		}
		if byClass[m.Class]++; byClass[m.Class] > classes[m.Class] {
			return fmt.Errorf("match %d: %d matches of class %d, which holds %d candidates", i+1, byClass[m.Class], m.Class, classes[m.Class])
		}
		prev = m.Line
		tg.matches[i] = m.MatchedCandidate
		tg.matches[i].class, tg.matches[i].Probability = m.Class, 0
	}
	return nil
}

// sum adds counts up.
func sum(xs []uint64) uint64 {
	var s uint64
	for _, x := range xs {
		s += x
	}
	return s
}
