package leak

import (
	"fmt"
	"maps"
	"slices"
)

// unitKey names a report's unit of claims: its group in Report.Groups
// (from 1), or, for a match in no group, minus one less its index.
type unitKey int

// unitOf is the unit of r's match k.
func (r *Report) unitOf(k int) unitKey {
	if g := r.Matched[k].Group; g > 0 {
		return unitKey(g)
	}
	return unitKey(-1 - k)
}

// unitP is the probability r gives its unit u.
func (r *Report) unitP(u unitKey) float64 {
	if u > 0 {
		return r.Groups[u-1].Probability
	}
	return r.Matched[-1-int(u)].Probability
}

// fetchedAll reports whether r fetched every block of heights.
func (r *Report) fetchedAll(heights map[int32]bool) bool {
	for h := range heights {
		i := int(h - r.first)
		if i < 0 || i >= len(r.fetched)*64 || !bitGet(r.fetched, i) {
			return false
		}
	}
	return true
}

// maxCoFetchWork bounds the steps coFetched spends comparing units with
// the other sessions' downloads; a capture that needs more is warned.
const maxCoFetchWork = 50_000_000

// coFetch is one pass of coFetched over a capture's reports: what it
// knows of each report and the steps it has spent. Its pairs compare
// each report's claims (claimed, claimedGroups): where every wallet is
// paid in the same blocks, a group's members share its probability, each
// given less than half, and the groups are the only claims to compare.
// Two sessions of one wallet, from two addresses, fetch the same
// wallet's blocks and are not apart (rivals).
type coFetch struct {
	sessionPairs                  // bound is maxCoFetchWork, checked by sum
	hosts        []string         // each report's client address, port left out
	listed       []map[string]int // each report's match index by candidate
	cut          bool             // bound stopped the comparisons
}

func newCoFetch(reports []*Report, bound int) *coFetch {
	c := &coFetch{sessionPairs: sessionPairs{reports: reports, bound: bound, callerChecks: true, claims: make([][]*Match, len(reports))},
		hosts: make([]string, len(reports)), listed: make([]map[string]int, len(reports))}
	for i, r := range reports {
		c.hosts[i] = hostOf(r)
		c.listed[i] = make(map[string]int, len(r.Matched))
		for k := range r.Matched {
			c.listed[i][r.Matched[k].Candidate] = k
		}
		c.claims[i] = append(r.claimed(), r.claimedGroups()...)
	}
	return c
}

// claimedGroups are r's groups of two or more appearances given 0.5 or
// more and not explained by another's blocks, each as a match of the
// blocks of all its members: claims that one of them is the wallet's,
// where each member alone may be given less than half (Report.claimed).
func (r *Report) claimedGroups() []*Match {
	slot := map[int]int{}
	for gi := range r.Groups {
		if g := &r.Groups[gi]; g.Appearances >= 2 && g.Probability >= 0.5 && !g.Nested {
			slot[gi+1] = len(slot)
		}
	}
	if len(slot) == 0 {
		return nil
	}
	out, seen := make([]*Match, len(slot)), make([]map[int32]bool, len(slot))
	for i := range out {
		out[i], seen[i] = &Match{}, map[int32]bool{}
	}
	for k := range r.Matched {
		s, ok := slot[r.Matched[k].Group]
		if !ok {
			continue
		}
		for _, h := range r.Matched[k].Heights {
			if !seen[s][h] {
				seen[s][h] = true
				out[s].Heights = append(out[s].Heights, h)
			}
		}
	}
	return out
}

// weighed reports whether report j is one whose claims are weighed
// against another address's: not a client's own (labelled), with an
// address known.
func (c *coFetch) weighed(j int) bool {
	return c.reports[j].label == nil && c.hosts[j] != ""
}

// sum is the probability report i gives its unit u (of the heights and
// candidates given) added to those the sessions apart from it (rivals)
// of every other address that fetched all its blocks give it, each
// address weighed by the highest of its sessions' (0 if none lists it).
func (c *coFetch) sum(i int, u unitKey, heights map[int32]bool, members []string) float64 {
	weight := map[string]float64{}
	for j, o := range c.reports {
		if c.hosts[j] == c.hosts[i] || !c.weighed(j) {
			continue
		}
		if c.spent() {
			c.cut = true
			break
		}
		c.work += len(heights) + len(members)
		if !o.fetchedAll(heights) || !c.apart(i, j) {
			continue
		}
		w := 0.0
		for _, m := range members {
			if k, ok := c.listed[j][m]; ok {
				w = max(w, o.unitP(o.unitOf(k)))
			}
		}
		weight[c.hosts[j]] = max(weight[c.hosts[j]], w)
	}
	total := c.reports[i].unitP(u)
	for _, h := range slices.Sorted(maps.Keys(weight)) { // one order: the same sum every run
		total += weight[h]
	}
	return total
}

// divisors are the sums above 1 (see sum) of report i's units.
func (c *coFetch) divisors(i int) map[unitKey]float64 {
	r := c.reports[i]
	heights := map[unitKey]map[int32]bool{}
	members := map[unitKey][]string{}
	var order []unitKey
	for k := range r.Matched {
		u := r.unitOf(k)
		if heights[u] == nil {
			heights[u] = map[int32]bool{}
			order = append(order, u)
		}
		for _, h := range r.Matched[k].Heights {
			heights[u][h] = true
		}
		members[u] = append(members[u], r.Matched[k].Candidate)
	}
	var d map[unitKey]float64
	for _, u := range order {
		if r.unitP(u) <= 0 {
			continue
		}
		if s := c.sum(i, u, heights[u], members[u]); s > 1 {
			if d == nil {
				d = map[unitKey]float64{}
			}
			d[u] = s
		}
	}
	return d
}

// coFetched divides the probability and interval of each unit of each
// report, and of its members, by the sum of the probabilities the
// reports of the client addresses that fetched all the unit's blocks
// give it, where that sum is above 1 ("Co-fetched claims" in the package
// documentation), and warns each report it lowered. Reports of a
// client's own downloads (labelled) are left alone.
func coFetched(reports []*Report) { coFetchedWithin(reports, maxCoFetchWork) }

// coFetchedWithin is coFetched spending at most bound steps.
func coFetchedWithin(reports []*Report, bound int) {
	c := newCoFetch(reports, bound)
	divisors := make([]map[unitKey]float64, len(reports))
	for i := range reports {
		if c.weighed(i) {
			divisors[i] = c.divisors(i)
		}
	}
	for i, r := range reports {
		if len(divisors[i]) > 0 {
			divideUnits(r, divisors[i])
		}
		if c.cut && c.weighed(i) {
			r.warn(fmt.Sprintf("the capture's sessions are too many to compare each claim with every other client's downloads (a bound of %d steps): claims in blocks other clients fetched too may still count their scripts (co-fetched)", c.bound))
		}
	}
}

// divideUnits divides each unit of r named in d, its members and
// interval, by d's sum for it, and warns r.
func divideUnits(r *Report, d map[unitKey]float64) {
	lowered := r.mapScripts(func(k int, p float64) float64 {
		if s, ok := d[r.unitOf(k)]; ok {
			return p / s
		}
		return p
	})
	groups := 0
	r.ConfidentGroups = 0
	for gi := range r.Groups {
		g := &r.Groups[gi]
		if s, ok := d[unitKey(gi+1)]; ok {
			g.Probability, g.ProbabilityLow, g.ProbabilityHigh = g.Probability/s, g.ProbabilityLow/s, g.ProbabilityHigh/s
			groups++
		}
		if g.Probability >= 0.95 {
			r.ConfidentGroups++
		}
	}
	r.warn(fmt.Sprintf("%d %s and %d %s lie only in blocks that sessions of other client addresses fetched too, whose reports give them enough that the probabilities of these exclusive claims add up to more than 1 (wallets paid in the same blocks fetch the same blocks, and each session then lists the others' scripts): each is given its share, its probability divided by that sum (co-fetched)",
		groups, forCount(groups, "group", "groups"), lowered, forCount(lowered, "script", "scripts")))
	if r.FetchedBlocks < r.ScannedBlocks {
		r.Verdict = r.verdict()
	}
}
