package attack

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/spvfilter/spvfilter/bip37"
)

// ErrBadLink reports sessions or options that Link or Intersect cannot use.
var ErrBadLink = errors.New("privacy: cannot link sessions")

// maxListedLinks bounds the pairs a Linkage lists when some share no match:
// with more sessions than that many pairs, only the pairs that share a
// match are listed (the others cannot be linked).
const maxListedLinks = 5000

// LinkOptions tune Accumulator.Link.
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

// SessionLink compares the matches of two sessions A and B (indexes of the
// accumulator's groups).
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

// Linkage is the result of Accumulator.Link.
type Linkage struct {
	Prior     float64 `json:"prior"`
	Threshold float64 `json:"threshold"`
	// PairsCompared is the number of session pairs, n(n-1)/2; Pairs lists
	// them all, or for more than maxListedLinks pairs those that share a
	// match (PairsListedShared is then true).
	PairsCompared     int           `json:"pairs_compared"`
	PairsListedShared bool          `json:"pairs_listed_shared_only,omitempty"`
	Pairs             []SessionLink `json:"pairs"`
	// Groups are the sets of sessions joined by links (transitively),
	// each of two or more sessions, in order of their first session.
	Groups   [][]int  `json:"groups"`
	Warnings []string `json:"warnings"`
}

// Link finds, among the groups it is given (nil: all of them), the
// sessions that probably belong to one wallet, such as a wallet that
// reconnected with a new tweak, each group of filters being one session.
// Two sessions of one wallet share its candidates; sessions of different
// wallets share only chance matches, whose number is predictable from the
// filters' rates (see the package documentation). The links and groups
// name sessions by their index among the accumulator's groups.
func (a *Accumulator) Link(groups []int, opts LinkOptions) (*Linkage, error) {
	if groups == nil {
		groups = make([]int, len(a.set.filters))
		for g := range groups {
			groups[g] = g
		}
	}
	seen := map[int]bool{}
	for _, g := range groups {
		if g < 0 || g >= len(a.set.filters) || seen[g] {
			return nil, fmt.Errorf("%w: session %d of %d, or named twice", ErrBadLink, g+1, len(a.set.filters))
		}
		seen[g] = true
	}
	u, err := a.finished()
	if err != nil {
		return nil, err
	}
	reports := make([]*Report, len(groups))
	for i, g := range groups {
		reports[i] = a.report(g, u)
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
			l.Warnings = append(l.Warnings, fmt.Sprintf("session %d: its match list is truncated, so its shared matches are undercounted", groups[i]+1))
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
	rates := make([][]float64, n) // per session, per class
	for i, g := range groups {
		rates[i] = sessionRates(a.set.filters[g], u.classes)
	}
	link := func(x, y int) SessionLink {
		s := SessionLink{A: groups[x], B: groups[y], Shared: shared[[2]int{x, y}]}
		wa, wb := reports[x].EstimatedWallet, reports[y].EstimatedWallet
		for cls, cnt := range u.classes {
			if cnt > 0 {
				s.ExpectedByChance += float64(cnt) * rates[x][cls] * rates[y][cls]
			}
		}
		s.ExpectedByChance += wa*rates[y][1] + wb*rates[x][1]
		s.ExpectedIfSameWallet = s.ExpectedByChance + min(wa, wb)
		logit := math.Log(l.Prior) - math.Log1p(-l.Prior) +
			logPoisson(s.Shared, s.ExpectedIfSameWallet) - logPoisson(s.Shared, s.ExpectedByChance)
		s.Probability = 1 / (1 + math.Exp(-logit))
		s.Linked = s.Probability > l.Threshold
		return s
	}
	if l.PairsCompared <= maxListedLinks {
		for x := 0; x < n; x++ {
			for y := x + 1; y < n; y++ {
				l.Pairs = append(l.Pairs, link(x, y))
			}
		}
	} else {
		// The others share nothing: their probability is at most the
		// prior, at most 1/2, so they are not linked.
		l.PairsListedShared = true
		for xy := range shared {
			l.Pairs = append(l.Pairs, link(xy[0], xy[1]))
		}
		slices.SortFunc(l.Pairs, func(p, q SessionLink) int {
			if p.A != q.A {
				return p.A - q.A
			}
			return p.B - q.B
		})
	}
	l.Groups = linkedGroups(l.Pairs, groups)
	return l, nil
}

// linkedGroups returns the connected components of the links among the
// sessions, each of two or more, in order of their first session.
func linkedGroups(pairs []SessionLink, sessions []int) [][]int {
	parent := map[int]int{}
	for _, s := range sessions {
		parent[s] = s
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for _, p := range pairs {
		if p.Linked {
			ra, rb := find(p.A), find(p.B)
			parent[max(ra, rb)] = min(ra, rb)
		}
	}
	members := map[int][]int{}
	sorted := slices.Sorted(maps.Keys(parent))
	for _, s := range sorted {
		members[find(s)] = append(members[find(s)], s)
	}
	groups := [][]int{}
	for _, s := range sorted {
		if m := members[s]; len(m) > 1 {
			groups = append(groups, m)
		}
	}
	return groups
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

// Intersect runs the intersection attack over the sessions members
// (indexes of the accumulator's groups) without reading the universe
// again: a candidate must match every filter of every member, so the joint
// matches are those every member's report lists. The steps add one session
// at a time. A member whose match list was truncated makes the counts lower
// bounds, which a warning says.
func (a *Accumulator) Intersect(members []int) (*Report, error) {
	if len(members) == 0 {
		return nil, fmt.Errorf("%w: no session to intersect", ErrBadLink)
	}
	for _, m := range members {
		if m < 0 || m >= len(a.set.filters) {
			return nil, fmt.Errorf("%w: session %d of %d", ErrBadLink, m+1, len(a.set.filters))
		}
	}
	u, err := a.finished()
	if err != nil {
		return nil, err
	}
	r := &Report{UniverseSize: u.size, Pairs: a.t.pairs, MergedAddressLines: a.t.undoLines,
		PairTest: a.set.opts.PairTest, Universe: u.scan, Warnings: []string{}}
	var joint *jointRates
	var kept map[int]MatchedCandidate
	var truncated []int
	for step, m := range members {
		rep := a.report(m, u)
		if rep.MatchedTruncated {
			truncated = append(truncated, m+1)
		}
		for i, f := range a.set.filters[m] {
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
		r.Intersection = append(r.Intersection, intersectionStep(len(r.Filters), uint64(len(kept)), joint, u.classes))
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
