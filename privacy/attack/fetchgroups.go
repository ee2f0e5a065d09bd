package attack

import (
	"fmt"
	"slices"
	"strings"
)

// maxCoverWork bounds the steps spent finding the matches that ride in
// another's transactions (a transaction with thousands of matched
// outputs would otherwise cost their square).
const maxCoverWork = 10_000_000

// matchGroups is the partition of a report's listed matches into the
// groups downloads cannot tell apart, by union-find.
type matchGroups struct {
	parent []int
	// riding[i] is true when every appearance of match i lies in a
	// transaction of another match.
	riding []bool
	// rides[i] is true when match i's group holds a match riding in
	// another's transactions (else its members share their blocks only).
	rides   []bool
	partial bool // the work bound was reached
}

func (g *matchGroups) find(i int) int {
	for g.parent[i] != i {
		g.parent[i] = g.parent[g.parent[i]]
		i = g.parent[i]
	}
	return i
}

func (g *matchGroups) union(a, b int) {
	ra, rb := g.find(a), g.find(b)
	if ra != rb {
		g.parent[max(ra, rb)] = min(ra, rb)
	}
}

// groupMatches groups the matches: each match that appears only in
// transactions of other matches with the one of them of most appearances
// (two of the same transactions join each other), then the groups whose
// most appearing members appear in the same blocks. A group's first
// member (its root, in union-find) is its most appearing one: the list
// runs from most appearances to fewest, and a union keeps the smaller
// index.
func (r *FetchReport) groupMatches() *matchGroups {
	n := len(r.Matched)
	g := &matchGroups{parent: make([]int, n), riding: make([]bool, n), rides: make([]bool, n)}
	for i := range g.parent {
		g.parent[i] = i
	}
	if r.Transactions {
		g.coLocate(r.Matched)
	}
	byBlocks := map[string]int{}
	for i, m := range r.Matched {
		if g.find(i) != i {
			continue
		}
		key := fmt.Sprint(m.Heights)
		if j, ok := byBlocks[key]; ok {
			g.union(i, j)
		} else {
			byBlocks[key] = i
		}
	}
	for i := range g.riding {
		if g.riding[i] {
			g.rides[g.find(i)] = true
		}
	}
	return g
}

// coLocate joins each match to the match of most appearances (the first
// listed: the list runs from most to fewest) among those in every
// transaction of its.
func (g *matchGroups) coLocate(matched []FetchMatch) {
	inTx := map[uint64][]int{}
	for i := range matched {
		for _, tx := range txKeys(&matched[i]) {
			inTx[tx] = append(inTx[tx], i)
		}
	}
	work := 0
	for i := range matched {
		keys := txKeys(&matched[i])
		if len(keys) == 0 {
			continue
		}
		cover := -1
		for _, j := range inTx[keys[0]] {
			work += len(keys)
			if j != i && inAll(j, keys[1:], inTx) {
				cover = j
				break
			}
		}
		if cover >= 0 {
			g.union(i, cover)
			g.riding[i] = true
		}
		if work > maxCoverWork {
			g.partial = true
			return
		}
	}
}

// inAll reports whether match j is in every transaction of keys.
func inAll(j int, keys []uint64, inTx map[uint64][]int) bool {
	for _, k := range keys {
		if !slices.Contains(inTx[k], j) {
			return false
		}
	}
	return true
}

// txKeys names the transactions of a match, height and position; none
// when a block of it has no transaction recorded.
func txKeys(m *FetchMatch) []uint64 {
	if len(m.Transactions) != len(m.Heights) {
		return nil
	}
	var keys []uint64
	for i, txs := range m.Transactions {
		if len(txs) == 0 {
			return nil
		}
		for _, tx := range txs {
			keys = append(keys, uint64(uint32(m.Heights[i]))<<32|uint64(tx))
		}
	}
	return keys
}

// fetchUnit is a group of matches and what its probability rests on.
type fetchUnit struct {
	members []int // indexes into Matched, the most appearing first
	k       uint64
}

// finish groups the matches, gives each group and match its probability
// (see the package documentation), and writes the verdict.
func (r *FetchReport) finish() {
	r.trim()
	g := r.groupMatches()
	units := map[int]*fetchUnit{}
	var order []int
	for i := range r.Matched {
		root := g.find(i)
		u := units[root]
		if u == nil {
			u = &fetchUnit{}
			units[root] = u
			order = append(order, root)
		}
		u.members = append(u.members, i) // Matched is in decreasing appearances
		u.k = max(u.k, r.Matched[i].Appearances)
		if g.riding[i] {
			r.CoLocated++
			r.Matched[i].CoLocated = true
		}
	}
	classes := r.classes(units, g)
	for _, root := range order {
		u := units[root]
		c := classes[u.k]
		p, lo, hi := 0.0, 0.0, 0.0
		if c.Groups > 0 && r.FetchedBlocks < r.ScannedBlocks {
			n, nlo, nhi := walletEstimate(float64(c.Groups), c.chanceGroups)
			p, lo, hi = n/float64(c.Groups), nlo/float64(c.Groups), nhi/float64(c.Groups)
		}
		r.share(u, p, lo, hi)
		if len(u.members) > 1 {
			r.Groups = append(r.Groups, r.groupOf(u, g.rides[root], p, lo, hi))
			for _, i := range u.members {
				r.Matched[i].Group = len(r.Groups)
			}
			if p >= 0.95 {
				r.ConfidentGroups++
			}
		}
	}
	for _, m := range r.Matched {
		if m.Probability >= 0.95 {
			r.Confident++
		}
	}
	r.estimate(classes)
	r.warnings(g)
	r.Verdict = r.verdict()
}

// fetchClass is a FetchClass with the chance expectation of its groups.
type fetchClass struct {
	FetchClass
	chanceGroups float64
}

// classes counts, per k, the candidates, matches, groups and co-located
// matches, and what chance gives: n_k·p_k candidates, as many groups
// (each candidate a group of one: an upper bound), but for k = 1 the
// scanned blocks that hold a candidate of one appearance times p_1 (all
// the candidates seen once in a fetched block match, one group per
// block). Matches beyond the listed ones count as groups of one.
func (r *FetchReport) classes(units map[int]*fetchUnit, g *matchGroups) map[uint64]*fetchClass {
	out := map[uint64]*fetchClass{}
	for k, c := range r.byK {
		fc := &fetchClass{FetchClass: FetchClass{Appearances: k, Candidates: c.candidates, Matched: c.matched}}
		fc.ExpectedByChance = float64(c.candidates) * r.chance(k)
		fc.chanceGroups = fc.ExpectedByChance
		if k == 1 {
			fc.chanceGroups = float64(bitCount(r.single)) * r.chance(1)
		}
		out[k] = fc
	}
	listed := map[uint64]uint64{}
	for i, m := range r.Matched {
		listed[m.Appearances]++
		if g.riding[i] {
			out[m.Appearances].CoLocated++
		}
	}
	for _, u := range units {
		out[u.k].Groups++
	}
	for k, c := range out {
		c.Groups += c.Matched - listed[k]
	}
	keys := make([]uint64, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r.ByAppearances = append(r.ByAppearances, out[k].FetchClass)
	}
	return out
}

// share gives a group's members their part of its probability: a member
// of fewer appearances than the group's most appearing one holds its own
// blocks only, so it is the wallet's (and the other not) only if the
// other's further blocks were fetched by chance; its part is weighed by
// that chance, p_k(most)/p_k(its own).
func (r *FetchReport) share(u *fetchUnit, p, lo, hi float64) {
	top := r.chance(u.k)
	weights := make([]float64, len(u.members))
	var sum float64
	for j, i := range u.members {
		own := r.chance(r.Matched[i].Appearances)
		weights[j] = 1
		if own > 0 && r.Matched[i].Appearances < u.k {
			weights[j] = top / own
		}
		sum += weights[j]
	}
	for j, i := range u.members {
		m := &r.Matched[i]
		w := weights[j] / sum
		m.Probability, m.ProbabilityLow, m.ProbabilityHigh = p*w, lo*w, hi*w
	}
}

// groupOf describes a group of two or more matches.
func (r *FetchReport) groupOf(u *fetchUnit, rides bool, p, lo, hi float64) FetchGroup {
	fg := FetchGroup{Appearances: u.k, Probability: p, ProbabilityLow: lo, ProbabilityHigh: hi}
	for _, i := range u.members {
		fg.Members = append(fg.Members, r.Matched[i].Candidate)
	}
	why := "they appear in the same blocks"
	if rides {
		why = "some appear only in transactions of another (a payer's change beside a payment, the outputs of one transaction)"
	}
	fg.Reason = fmt.Sprintf("%s: downloads cannot tell them apart, so the probability is that one of these %d scripts is the wallet's, each holding a share", why, len(u.members))
	return fg
}

// estimate sets the wallet's estimated groups of two or more appearances.
func (r *FetchReport) estimate(classes map[uint64]*fetchClass) {
	var groups, chance float64
	for k, c := range classes {
		if k >= 2 {
			groups += float64(c.Groups)
			chance += c.chanceGroups
		}
	}
	if r.FetchedBlocks < r.ScannedBlocks {
		r.EstimatedWalletGroups, r.EstimatedWalletGroupsLow, r.EstimatedWalletGroupsHigh = walletEstimate(groups, chance)
	}
}

// warnings adds the report's warnings about its matches.
func (r *FetchReport) warnings(g *matchGroups) {
	if !r.Transactions && r.UniverseSize > 0 {
		r.warn("the index records no transactions (version 1, or written without them): scripts that appear only in the wallet's transactions (a payer's change) cannot be told from the wallet's, and take probabilities of their own; \"privacy universe --index\" writes an index that records them")
	}
	if n := r.byK[1]; n != nil && n.matched > 0 && r.FetchedBlocks < r.ScannedBlocks {
		r.warn(fmt.Sprintf("%d match(es) appear in a single block: every script that appears once in a fetched block matches, the other outputs of the wallet's own transactions too, so chance does not explain them; they are grouped by block", n.matched))
	}
	if r.CoLocated > 0 {
		r.warn(fmt.Sprintf("%d match(es) appear only in transactions of another match (a payer's change beside a payment to the wallet): they are grouped with it, and their probability is their share of the group's", r.CoLocated))
	}
	if g.partial {
		r.warn(fmt.Sprintf("more than %d steps spent on the matches' transactions: some matches riding in another's transactions may be left ungrouped", maxCoverWork))
	}
	if r.MatchedTruncated {
		r.warn(fmt.Sprintf("%d matches, only the %d least explained by chance are listed and grouped", r.MatchedCount, len(r.Matched)))
	}
}

// verdict is the report's verdict in plain words.
func (r *FetchReport) verdict() string {
	switch {
	case r.ScannedBlocks == 0:
		return "the session scanned no block of the index: nothing to say"
	case r.FetchedBlocks == 0:
		return fmt.Sprintf("the session fetched none of the %d blocks it scanned: its downloads reveal nothing", r.ScannedBlocks)
	case r.FetchedBlocks == r.ScannedBlocks:
		r.warn("the session fetched every block it scanned: every candidate matches, and the downloads reveal nothing")
		return fmt.Sprintf("the session fetched all %d blocks it scanned: its downloads reveal nothing", r.ScannedBlocks)
	case r.MatchedCount == 0:
		return fmt.Sprintf("no candidate has every appearance among the %d blocks fetched of %d: the downloads name no script of this index", r.FetchedBlocks, r.ScannedBlocks)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d candidates have every appearance among the %d blocks fetched of %d (f = %.3g); chance explains about %.3g of them",
		r.MatchedCount, r.UniverseSize, r.FetchedBlocks, r.ScannedBlocks, r.FetchedFraction, r.ExpectedFalsePositives)
	if r.CoLocated > 0 {
		fmt.Fprintf(&b, " and %d ride in another match's transactions", r.CoLocated)
	}
	fmt.Fprintf(&b, "; about %.0f groups of scripts seen twice or more hold one of the wallet's (95%% interval %.0f to %.0f): %d scripts are the wallet's with probability at least 0.95",
		r.EstimatedWalletGroups, r.EstimatedWalletGroupsLow, r.EstimatedWalletGroupsHigh, r.Confident)
	if r.ConfidentGroups > 0 {
		fmt.Fprintf(&b, "; %d groups of scripts that downloads cannot tell apart each hold one of the wallet's with probability at least 0.95", r.ConfidentGroups)
	}
	return b.String()
}
