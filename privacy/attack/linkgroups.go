package attack

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
)

// collapseTail is the chance, shared among a group's pairs and members,
// that one wallet's group is split because a pair's or a member's strict
// lower bound on its wallet exceeds twice what the group keeps.
const collapseTail = 0.01

// group forms the linked groups from the pairs above the threshold by
// complete linkage: the pairs are taken from the most probable down, and
// two groups are joined only when every pair across them is above the
// threshold, so that no group rests on a single link. A group of three or
// more whose joint matches collapse is then split (see consistent). The
// pairs of a group are marked Linked.
func (lk *linker) group(pairs []SessionLink, threshold float64) [][]int {
	above := map[[2]int]bool{}
	var edges []SessionLink
	for _, p := range pairs {
		if p.Probability > threshold {
			above[[2]int{p.A, p.B}] = true
			edges = append(edges, p)
		}
	}
	slices.SortStableFunc(edges, func(p, q SessionLink) int { return cmp.Compare(q.Probability, p.Probability) })
	of := map[int]int{}        // session -> its group's key (its first session)
	members := map[int][]int{} // key -> sessions, in increasing order
	for _, s := range lk.sessions {
		of[s.group] = s.group
		members[s.group] = []int{s.group}
	}
	for _, e := range edges {
		ka, kb := of[e.A], of[e.B]
		if ka == kb || !allLinked(members[ka], members[kb], above) {
			continue
		}
		ka, kb = min(ka, kb), max(ka, kb)
		for _, s := range members[kb] {
			of[s] = ka
		}
		members[ka] = append(members[ka], members[kb]...)
		slices.Sort(members[ka])
		delete(members, kb)
	}
	var groups [][]int
	for _, m := range members {
		if len(m) > 1 {
			groups = append(groups, lk.consistent(m)...)
		}
	}
	slices.SortFunc(groups, func(a, b []int) int { return a[0] - b[0] })
	in := map[int]int{}
	for i, g := range groups {
		for _, s := range g {
			in[s] = i + 1
		}
	}
	for i := range pairs {
		p := &pairs[i]
		p.Linked = in[p.A] != 0 && in[p.A] == in[p.B]
	}
	if groups == nil {
		groups = [][]int{}
	}
	return groups
}

// allLinked reports whether every pair across a and b is above the
// threshold.
func allLinked(a, b []int, above map[[2]int]bool) bool {
	for _, x := range a {
		for _, y := range b {
			if !above[[2]int{min(x, y), max(x, y)}] {
				return false
			}
		}
	}
	return true
}

// consistent checks that a group's joint matches keep what its pairs and
// members are sure of: one wallet's sessions all match its candidates, so
// their intersection holds at least the wallet, which each pair's shared
// matches and each member's own matches bound from below. A group whose
// intersection falls below half the highest of those bounds (half:
// sessions of a wallet that grew hold more than the others) mixes
// wallets: the session whose removal keeps the most is taken out, until
// the rest is consistent or two remain. It returns the groups left, of
// two or more sessions.
func (lk *linker) consistent(group []int) [][]int {
	for len(group) > 2 {
		joint, bound := lk.jointMatches(group), lk.lowerBound(group)
		if joint >= bound/2 {
			break
		}
		best, bestMargin := -1, math.Inf(-1)
		for i := range group {
			rest := slices.Delete(slices.Clone(group), i, i+1)
			if margin := lk.jointMatches(rest) - lk.lowerBound(rest)/2; margin > bestMargin {
				best, bestMargin = i, margin
			}
		}
		lk.warnings = append(lk.warnings, fmt.Sprintf("group %s: %.0f joint matches, where its pairs or sessions are sure of %.0f: session %d taken out",
			names(group), joint, bound, group[best]+1))
		group = slices.Delete(slices.Clone(group), best, best+1)
	}
	return [][]int{group}
}

// sessionOf is the session of the accumulator's group g.
func (lk *linker) sessionOf(g int) *linkSession { return &lk.sessions[lk.index[g]] }

// pairOf is the evidence of the pair of the accumulator's groups x and y,
// if it was weighed one by one.
func (lk *linker) pairOf(x, y int) *pairEvidence {
	i, j := lk.index[x], lk.index[y]
	if k, ok := lk.pairAt[[2]int{min(i, j), max(i, j)}]; ok {
		return &lk.mix.pairs[k]
	}
	return nil
}

// jointMatches counts the candidates every session of the group matches.
func (lk *linker) jointMatches(group []int) float64 {
	lines := lk.sessionOf(group[0]).lines
	for _, g := range group[1:] {
		other := lk.sessionOf(g).lines
		kept := lines[:0:0]
		for _, l := range lines {
			if _, ok := slices.BinarySearch(other, l); ok {
				kept = append(kept, l)
			}
		}
		lines = kept
	}
	return float64(len(lines))
}

// lowerBound is the highest strict lower bound on the wallet of a
// group's pairs (from their shared matches) and members (from their own).
func (lk *linker) lowerBound(group []int) float64 {
	n := len(group)
	tail := collapseTail / float64(n+n*(n-1)/2)
	var bound float64
	for i, x := range group {
		sx := lk.sessionOf(x)
		bound = math.Max(bound, sx.matched-poissonQuantile(1-tail, sx.chance))
		for _, y := range group[i+1:] {
			if ev := lk.pairOf(x, y); ev != nil {
				bound = math.Max(bound, float64(ev.shared)-poissonQuantile(1-tail, ev.both))
			}
		}
	}
	return bound
}

// names lists sessions by their number from 1, joined by "+".
func names(sessions []int) string {
	var b strings.Builder
	for i, s := range sessions {
		if i > 0 {
			b.WriteByte('+')
		}
		fmt.Fprint(&b, s+1)
	}
	return b.String()
}
