package attack

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/spvfilter/spvfilter/bip37"
)

// ErrBadLink reports reports or options that LinkSessions cannot combine.
var ErrBadLink = errors.New("privacy: cannot link sessions")

// MaxListedLinks bounds the pairs a Linkage lists when some share no match:
// with more sessions than that many pairs, only the pairs that share a
// match are listed (the others cannot be linked).
const MaxListedLinks = 5000

// LinkOptions tune LinkSessions.
type LinkOptions struct {
	// Threshold is the probability above which two sessions are linked:
	// 0 means 0.5; it must lie in [0.5, 1).
	Threshold float64
	// Prior is the probability, before looking at the matches, that two
	// given sessions share a wallet. 0 means 1/(sessions-1), at most 1/2:
	// as if each session had one other session of its wallet among the
	// rest.
	Prior float64
}

// SessionLink compares the matches of two sessions A and B (indexes into
// the reports given to LinkSessions).
type SessionLink struct {
	A int `json:"a"`
	B int `json:"b"`
	// Shared counts the candidates that match both sessions' filters.
	Shared uint64 `json:"shared"`
	// ExpectedByChance is the number of shared matches expected if the
	// sessions are of different wallets: false positives of both, and each
	// wallet's candidates matching the other's filters by chance.
	ExpectedByChance float64 `json:"expected_by_chance"`
	// ExpectedIfSameWallet adds the wallet's candidates, which match both:
	// the smaller of the two sessions' estimated wallet sizes.
	ExpectedIfSameWallet float64 `json:"expected_if_same_wallet"`
	// Probability is the posterior probability that the sessions share a
	// wallet, from the two Poisson likelihoods of Shared and the prior.
	Probability float64 `json:"probability"`
	Linked      bool    `json:"linked"`
}

// Linkage is the result of LinkSessions.
type Linkage struct {
	Prior     float64 `json:"prior"`
	Threshold float64 `json:"threshold"`
	// PairsCompared is the number of session pairs, n(n-1)/2; Pairs lists
	// them all, or for more than MaxListedLinks pairs those that share a
	// match (PairsListedShared is then true).
	PairsCompared     int           `json:"pairs_compared"`
	PairsListedShared bool          `json:"pairs_listed_shared_only,omitempty"`
	Pairs             []SessionLink `json:"pairs"`
	// Groups are the sets of sessions joined by links (transitively),
	// each of two or more sessions, in order of their first session.
	Groups   [][]int  `json:"groups"`
	Warnings []string `json:"warnings"`
}

// LinkSessions finds the sessions that probably belong to one wallet, such
// as a wallet that reconnected with a new tweak. reports must come from one
// AnalyzeGroups call over groups, one group per session. Two sessions of
// one wallet share its candidates; sessions of different wallets share only
// chance matches, whose number is predictable from the filters' rates.
func LinkSessions(reports []*Report, groups [][]*bip37.Filter, opts LinkOptions) (*Linkage, error) {
	if err := sameAnalysis(reports, groups); err != nil {
		return nil, err
	}
	n := len(reports)
	l := &Linkage{Threshold: opts.Threshold, Prior: opts.Prior, PairsCompared: n * (n - 1) / 2,
		Pairs: []SessionLink{}, Groups: [][]int{}, Warnings: []string{}}
	if l.Threshold == 0 {
		l.Threshold = 0.5
	}
	if !(l.Threshold >= 0.5 && l.Threshold < 1) {
		return nil, fmt.Errorf("%w: threshold %v not in [0.5, 1)", ErrBadLink, opts.Threshold)
	}
	if l.Prior == 0 && n > 1 {
		l.Prior = min(0.5, 1/float64(n-1))
	}
	if n > 1 && !(l.Prior > 0 && l.Prior < 1) {
		return nil, fmt.Errorf("%w: prior %v not in (0, 1)", ErrBadLink, opts.Prior)
	}
	for i, r := range reports {
		if r.MatchedTruncated {
			l.Warnings = append(l.Warnings, fmt.Sprintf("session %d: its match list is truncated, so its shared matches are undercounted", i+1))
		}
	}
	// The shared matches of every pair, from the lines each matched.
	byLine := map[int][]int{}
	for i, r := range reports {
		for _, m := range r.Matched {
			byLine[m.Line] = append(byLine[m.Line], i)
		}
	}
	shared := map[[2]int]uint64{}
	for _, ss := range byLine {
		for x := range ss {
			for y := x + 1; y < len(ss); y++ {
				shared[[2]int{ss[x], ss[y]}]++
			}
		}
	}
	classes := reports[0].classes
	rates := make([][]float64, n) // per session, per class
	for i, g := range groups {
		rates[i] = sessionRates(g, classes)
	}
	link := func(a, b int) SessionLink {
		s := SessionLink{A: a, B: b, Shared: shared[[2]int{a, b}]}
		wa, wb := reports[a].EstimatedWallet, reports[b].EstimatedWallet
		for cls, cnt := range classes {
			if cnt > 0 {
				s.ExpectedByChance += float64(cnt) * rates[a][cls] * rates[b][cls]
			}
		}
		s.ExpectedByChance += wa*rates[b][1] + wb*rates[a][1]
		s.ExpectedIfSameWallet = s.ExpectedByChance + min(wa, wb)
		logit := math.Log(l.Prior) - math.Log1p(-l.Prior) +
			logPoisson(s.Shared, s.ExpectedIfSameWallet) - logPoisson(s.Shared, s.ExpectedByChance)
		s.Probability = 1 / (1 + math.Exp(-logit))
		s.Linked = s.Probability > l.Threshold
		return s
	}
	if l.PairsCompared <= MaxListedLinks {
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				l.Pairs = append(l.Pairs, link(a, b))
			}
		}
	} else {
		// The others share nothing: their probability is at most the
		// prior, at most 1/2, so they are not linked.
		l.PairsListedShared = true
		for ab := range shared {
			l.Pairs = append(l.Pairs, link(ab[0], ab[1]))
		}
		slices.SortFunc(l.Pairs, func(x, y SessionLink) int {
			if x.A != y.A {
				return x.A - y.A
			}
			return x.B - y.B
		})
	}
	// Groups: the connected components of the links.
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, p := range l.Pairs {
		if p.Linked {
			ra, rb := find(p.A), find(p.B)
			parent[max(ra, rb)] = min(ra, rb)
		}
	}
	members := map[int][]int{}
	for i := 0; i < n; i++ {
		members[find(i)] = append(members[find(i)], i)
	}
	for i := 0; i < n; i++ {
		if m := members[i]; len(m) > 1 {
			l.Groups = append(l.Groups, m)
		}
	}
	return l, nil
}

// sessionRates is the chance that a candidate of each class matches every
// filter of a session by accident.
func sessionRates(filters []*bip37.Filter, classes []uint64) []float64 {
	var joint *jointRates
	for _, f := range filters {
		joint = joint.with(f)
	}
	out := make([]float64, len(classes))
	for cls := range classes {
		out[cls] = joint.classRate(cls)
	}
	return out
}

// logPoisson is the log probability of k events at mean lambda.
func logPoisson(k uint64, lambda float64) float64 {
	if k == 0 {
		return -lambda
	}
	lg, _ := math.Lgamma(float64(k) + 1)
	return float64(k)*math.Log(lambda) - lambda - lg
}

// sameAnalysis checks that reports come from one AnalyzeGroups pass over
// groups.
func sameAnalysis(reports []*Report, groups [][]*bip37.Filter) error {
	if len(reports) == 0 || len(reports) != len(groups) {
		return fmt.Errorf("%w: %d reports for %d groups of filters", ErrBadLink, len(reports), len(groups))
	}
	for i, r := range reports {
		if r.classes == nil || r.Universe != reports[0].Universe || len(r.Filters) != len(groups[i]) {
			return fmt.Errorf("%w: report %d is not from the same AnalyzeGroups pass over these filters", ErrBadLink, i+1)
		}
	}
	return nil
}

// IntersectReports runs the intersection attack over the sessions members
// (indexes into reports, from one AnalyzeGroups pass over groups) without
// reading the universe again: a candidate must match every filter of every
// member, so the joint matches are those every member's report lists. The
// steps add one session at a time. A member whose match list was truncated
// makes the counts lower bounds, which a warning says.
func IntersectReports(reports []*Report, groups [][]*bip37.Filter, members []int) (*Report, error) {
	if err := sameAnalysis(reports, groups); err != nil {
		return nil, err
	}
	if len(members) == 0 {
		return nil, fmt.Errorf("%w: no session to intersect", ErrBadLink)
	}
	first := reports[members[0]]
	r := &Report{UniverseSize: first.UniverseSize, Pairs: first.Pairs, MergedAddressLines: first.MergedAddressLines,
		PairTest: first.PairTest, Universe: first.Universe, classes: first.classes, Warnings: []string{}}
	var joint *jointRates
	var kept map[int]MatchedCandidate
	var truncated []int
	for step, m := range members {
		if m < 0 || m >= len(reports) {
			return nil, fmt.Errorf("%w: session %d of %d", ErrBadLink, m+1, len(reports))
		}
		rep := reports[m]
		if rep.MatchedTruncated {
			truncated = append(truncated, m+1)
		}
		for i, f := range groups[m] {
			joint = joint.with(f)
			fr := rep.Filters[i]
			fr.Number = len(r.Filters) + 1
			r.Filters = append(r.Filters, fr)
		}
		next := make(map[int]MatchedCandidate, len(rep.Matched))
		for _, mc := range rep.Matched {
			if _, ok := kept[mc.Line]; ok || step == 0 {
				next[mc.Line] = mc
			}
		}
		kept = next
		r.Intersection = append(r.Intersection, intersectionStep(len(r.Filters), uint64(len(kept)), joint, r.classes))
	}
	r.Matched = make([]MatchedCandidate, 0, len(kept))
	for _, mc := range kept {
		r.Matched = append(r.Matched, mc)
	}
	r.finish(joint)
	if len(truncated) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the match lists of sessions %v were truncated: the joint matches are a lower bound", truncated))
	}
	return r, nil
}
