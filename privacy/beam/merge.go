package privacybeam

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// classRates holds, for one group of sessions, the chance that a candidate
// of each class matches by accident, as privacy computes it: the report of
// attack.AnalyzeGroups over a universe of a single candidate of the class,
// whose expected false positives are exactly that candidate's rates (each
// filter's and each intersection step's).
type classRates map[int][]*attack.Report

// probeLine is a universe line of one candidate of class cls: a public key
// for the pair class 0, a hash for one element, and a script of cls data
// pushes (an odd number of bytes starting 0x01: never a hash nor a key).
func probeLine(cls int) string {
	switch cls {
	case 0:
		return "02" + strings.Repeat("11", 32)
	case 1:
		return strings.Repeat("00", 20)
	}
	return strings.Repeat("0101", cls-1) + "020101"
}

// newClassRates computes the rates of the classes for the groups.
func newClassRates(groups [][]*bip37.Filter, classes []int, pairTest bool) (classRates, error) {
	rates := classRates{}
	var p universe.Parser
	for _, cls := range classes {
		if _, ok := rates[cls]; ok {
			continue
		}
		line := probeLine(cls)
		if c, err := p.Parse([]byte(line)); err != nil || c == nil || candidateClass(c, pairTest) != cls {
			return nil, fmt.Errorf("privacybeam: no probe candidate for class %d", cls)
		}
		reps, err := attack.AnalyzeGroups(groups, strings.NewReader(line+"\n"), attack.AnalyzeOptions{PairTest: pairTest, Workers: 1, MaxMatches: 1})
		if err != nil {
			return nil, fmt.Errorf("privacybeam: rates of class %d: %w", cls, err)
		}
		rates[cls] = reps
	}
	return rates, nil
}

// matchClass is the class of a matched candidate, from its text.
func matchClass(p *universe.Parser, m *attack.MatchedCandidate, pairTest bool) (int, error) {
	if m.PairTested {
		return 0, nil
	}
	text := m.Candidate
	if m.PubKey != "" {
		text = m.PubKey // a key line counted as its address: key and hash
	}
	c, err := p.Parse([]byte(text))
	if err != nil || c == nil {
		return 0, fmt.Errorf("privacybeam: matched candidate %q of line %d does not parse: %v", text, m.Line, err)
	}
	return candidateClass(c, pairTest), nil
}

// shardReports are one file's reports for a group's sessions (nil for a
// file without candidates), with what its listings add (see analyzeShard).
type shardReports struct {
	file     int
	reports  []*attack.Report
	undo     []shardCounts
	delisted [][]string
}

// mergeGroup merges the shards of one group of sessions (groups: the
// sessions' filters) into the reports one AnalyzeGroups pass over the
// concatenated files gives.
func mergeGroup(groups [][]*bip37.Filter, shards []shardReports, tot *universeTotals, opts attack.AnalyzeOptions) ([]*attack.Report, error) {
	maxMatches := opts.MaxMatches
	if maxMatches <= 0 {
		maxMatches = attack.DefaultMaxMatches
	}
	slices.SortFunc(shards, func(a, b shardReports) int { return a.file - b.file })
	out := make([]*attack.Report, len(groups))
	var p universe.Parser
	var needed []int
	for cls, n := range tot.classes {
		if n > 0 {
			needed = append(needed, cls)
		}
	}
	matchClasses := make([][]int, len(groups))
	fileOf := fileOfLine(tot.offsets)
	for g, filters := range groups {
		nf := len(filters)
		r := &attack.Report{UniverseSize: tot.size, Pairs: tot.pairs, MergedAddressLines: tot.listed, PairTest: opts.PairTest,
			Universe: tot.scan, Matched: []attack.MatchedCandidate{}, Warnings: []string{}}
		r.Filters = make([]attack.FilterReport, nf)
		r.Intersection = make([]attack.IntersectionStep, nf)
		counts := shardCounts{Alone: make([]uint64, nf), Depth: make([]uint64, nf+1)}
		undo := shardCounts{Alone: make([]uint64, nf), Depth: make([]uint64, nf+1)}
		listings := map[string][]int{} // the files of the listings that drop matched addresses
		seen := false
		for _, sh := range shards {
			if sh.reports == nil {
				continue
			}
			if len(sh.reports) != len(groups) {
				return nil, fmt.Errorf("privacybeam: universe file %d: %d reports for %d sessions", sh.file+1, len(sh.reports), len(groups))
			}
			part := sh.reports[g]
			if len(part.Filters) != nf || len(part.Intersection) != nf {
				return nil, fmt.Errorf("privacybeam: universe file %d, session %d: report of %d filters, want %d", sh.file+1, g+1, len(part.Filters), nf)
			}
			if !seen {
				copy(r.Filters, part.Filters) // the filters' own figures, the same in every shard
			}
			add(&counts, reportCounts(part))
			if sh.undo != nil {
				if len(sh.undo[g].Alone) != nf || len(sh.undo[g].Depth) != nf+1 {
					return nil, fmt.Errorf("privacybeam: universe file %d, session %d: listed counts of %d filters, want %d", sh.file+1, g+1, len(sh.undo[g].Alone), nf)
				}
				add(&undo, sh.undo[g])
				for _, a := range sh.delisted[g] {
					listings[a] = append(listings[a], sh.file)
				}
			}
			for _, m := range part.Matched {
				m.Line += tot.offsets[sh.file]
				r.Matched = append(r.Matched, m)
			}
			r.MatchedTruncated = r.MatchedTruncated || part.MatchedTruncated
			seen = true
		}
		if !seen {
			return nil, fmt.Errorf("privacybeam: session %d: no universe file analyzed", g+1)
		}
		// As privacy does at the end of its pass: the listed address
		// lines out, never below zero; the steps from the depths.
		for i := range r.Filters {
			r.Filters[i].Matched = counts.Alone[i] - min(counts.Alone[i], undo.Alone[i])
			r.Filters[i].ExpectedFalsePositives = 0
		}
		var atLeast uint64
		for d := nf; d >= 1; d-- {
			atLeast += counts.Depth[d] - min(counts.Depth[d], undo.Depth[d])
			r.Intersection[d-1] = attack.IntersectionStep{Filters: d, Matched: atLeast}
		}
		slices.SortFunc(r.Matched, func(a, b attack.MatchedCandidate) int { return a.Line - b.Line })
		r.Matched = delistAcrossFiles(r.Matched, listings, fileOf)
		if len(r.Matched) > maxMatches {
			r.Matched, r.MatchedTruncated = r.Matched[:maxMatches], true
		}
		for _, m := range r.Matched {
			cls, err := matchClass(&p, &m, opts.PairTest)
			if err != nil {
				return nil, err
			}
			matchClasses[g] = append(matchClasses[g], cls)
			needed = append(needed, cls)
		}
		out[g] = r
	}
	rates, err := newClassRates(groups, needed, opts.PairTest)
	if err != nil {
		return nil, err
	}
	for g, r := range out {
		finishReport(r, g, matchClasses[g], rates, tot)
	}
	return out, nil
}

// add adds the counts of b to a.
func add(a *shardCounts, b shardCounts) {
	for i, n := range b.Alone {
		a.Alone[i] += n
	}
	for d, n := range b.Depth {
		a.Depth[d] += n
	}
}

// finishReport fills in what depends on the whole universe, as privacy
// does at the end of a pass: the expected false positives (summed over the
// classes in privacy's order, so to the same bits), the wallet estimates,
// the probabilities of the matches, the warnings and the summary.
func finishReport(r *attack.Report, g int, matchClasses []int, rates classRates, tot *universeTotals) {
	for cls, n := range tot.classes {
		if n == 0 {
			continue
		}
		probe := rates[cls][g]
		for i := range r.Filters {
			r.Filters[i].ExpectedFalsePositives += float64(n) * probe.Filters[i].ExpectedFalsePositives
		}
		for j := range r.Intersection {
			r.Intersection[j].ExpectedFalsePositives += float64(n) * probe.Intersection[j].ExpectedFalsePositives
		}
	}
	for j := range r.Intersection {
		st := &r.Intersection[j]
		st.EstimatedWallet = math.Max(float64(st.Matched)-st.ExpectedFalsePositives, 0)
	}
	last := r.Intersection[len(r.Intersection)-1]
	r.MatchedCount, r.ExpectedFalsePositives, r.EstimatedWallet = last.Matched, last.ExpectedFalsePositives, last.EstimatedWallet
	if r.EstimatedWallet > 0 {
		r.PH1 = r.EstimatedWallet / (r.EstimatedWallet + r.ExpectedFalsePositives)
		r.PHAll = model.ProbAllReal(r.EstimatedWallet, r.ExpectedFalsePositives)
	}
	prior := 0.0
	if r.UniverseSize > 0 {
		prior = r.EstimatedWallet / float64(r.UniverseSize)
	}
	for i := range r.Matched {
		p := rates[matchClasses[i]][g].Intersection[len(r.Intersection)-1].ExpectedFalsePositives
		prob := 0.0
		if prior > 0 {
			prob = prior / (prior + (1-prior)*p)
		}
		r.Matched[i].Probability = prob
		if prob >= 0.95 {
			r.Confident++
		}
	}
	// The filters' own warnings are those of a report over one candidate.
	for _, probe := range rates {
		r.Warnings = append(r.Warnings, probe[g].Warnings...)
		break
	}
	if u := r.Universe; u.LinesSkipped > 0 {
		msg := fmt.Sprintf("%d of %d universe lines skipped, not candidates", u.LinesSkipped, u.LinesRead)
		if len(u.BadLines) > 0 {
			msg += fmt.Sprintf(" (first: line %d: %s)", u.BadLines[0].Line, u.BadLines[0].Reason)
		}
		r.Warnings = append(r.Warnings, msg)
	}
	if r.MatchedTruncated {
		r.Warnings = append(r.Warnings, fmt.Sprintf("only the first %d matches are listed; the counts cover all %d", len(r.Matched), r.MatchedCount))
	}
	r.Summary = r.Verdict()
}
