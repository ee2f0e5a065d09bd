package leak

import (
	"fmt"
	"net"
)

// Co-fetched claims. A colluding observer sees every session of a
// capture. Where the sessions of different client addresses fetched
// every block of one of a session's groups (or of a match in no group),
// the downloads of each of them explain it as well as the session's own
// do: wallets that are paid in the same blocks (a round's payments in one
// block, wallets that pay each other) fetch the same blocks, and each
// session's report then claims the others' receive addresses, change
// and payees too. A script belongs to one wallet at most, so the
// probabilities the sessions of different addresses give one unit are
// those of exclusive events and cannot add up to more than 1. Where they
// do, coFetched divides each by their sum: a unit's probability is then
// its share among the addresses whose sessions fetched all its blocks,
// each weighed by its own report's probability for it (the highest of
// its sessions'), and where they add up to 1 or less nothing changes. A
// session of another address that fetched those blocks but does not
// list the unit (it scanned further and left one of its blocks) weighs
// nothing. Only sessions that fetch for other scripts than the session's
// are weighed: one of the two scanned every block of a script of two or
// more appearances the other gives half or more and did not fetch all of
// them (as warnSharedClients asks). Two sessions of one wallet fetch the
// same wallet's blocks and are not compared, nor are sessions of the
// session's own address (one wallet's several sessions, or the several
// wallets behind one address that warnSharedClients deals with).

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

// hostOf is a report's client address without its port.
func hostOf(r *Report) string {
	if h, _, err := net.SplitHostPort(r.Client); err == nil {
		return h
	}
	return r.Client
}

// maxCoFetchWork bounds the steps coFetched spends comparing units with
// the other sessions' downloads.
const maxCoFetchWork = 50_000_000

// coFetched divides the probability and interval of each unit of each
// report, and of its members, by the sum of the probabilities the
// reports of the client addresses that fetched all the unit's blocks
// give it, where that sum is above 1 (see "Co-fetched claims" above), and
// warns each report it lowered. Reports of a client's own downloads
// (labelled) are left alone.
func coFetched(reports []*Report) {
	hosts := make([]string, len(reports))
	listed := make([]map[string]int, len(reports)) // candidate -> match index
	for i, r := range reports {
		hosts[i] = hostOf(r)
		listed[i] = make(map[string]int, len(r.Matched))
		for k := range r.Matched {
			listed[i][r.Matched[k].Candidate] = k
		}
	}
	divisors := make([]map[unitKey]float64, len(reports))
	work := 0
	claims := make([][]*Match, len(reports))
	for i, r := range reports {
		claims[i] = r.claimed()
	}
	apart := map[[2]int]bool{}
	// rival reports whether the sessions of reports i and j fetch for
	// different scripts (skipped, as warnSharedClients asks): one of the
	// two scanned every block of a script the other claims and did not
	// fetch all of them. Two sessions of one wallet, from two addresses,
	// fetch the same wallet's blocks and are not rivals.
	rival := func(i, j int) bool {
		key := [2]int{min(i, j), max(i, j)}
		d, ok := apart[key]
		if !ok {
			work += len(claims[i]) + len(claims[j]) + 1
			d = reports[i].skipped(claims[j]) || reports[j].skipped(claims[i])
			apart[key] = d
		}
		return d
	}
	for i, r := range reports {
		if r.label != nil || hosts[i] == "" {
			continue
		}
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
		for _, u := range order {
			own := r.unitP(u)
			if own <= 0 {
				continue
			}
			weight := map[string]float64{}
			for j, o := range reports {
				if hosts[j] == hosts[i] || hosts[j] == "" || o.label != nil || work >= maxCoFetchWork {
					continue
				}
				work += len(heights[u]) + len(members[u])
				if !o.fetchedAll(heights[u]) || !rival(i, j) {
					continue
				}
				w := 0.0
				for _, c := range members[u] {
					if k, ok := listed[j][c]; ok {
						w = max(w, o.unitP(o.unitOf(k)))
					}
				}
				weight[hosts[j]] = max(weight[hosts[j]], w)
			}
			sum := own
			for _, w := range weight {
				sum += w
			}
			if sum > 1 {
				if divisors[i] == nil {
					divisors[i] = map[unitKey]float64{}
				}
				divisors[i][u] = sum
			}
		}
	}
	for i, r := range reports {
		if len(divisors[i]) == 0 {
			continue
		}
		d := divisors[i]
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
		r.warn(fmt.Sprintf("%d group(s) and %d script(s) lie only in blocks that sessions of other client addresses fetched too, whose reports give them enough that the probabilities of these exclusive claims add up to more than 1 (wallets paid in the same blocks fetch the same blocks, and each session then lists the others' scripts): each is given its share, its probability divided by that sum (co-fetched)",
			groups, lowered))
		if r.FetchedBlocks < r.ScannedBlocks {
			r.Verdict = r.verdict()
		}
	}
}
