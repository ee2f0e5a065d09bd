package leak

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// maxCoverWork bounds the steps spent finding the matches that ride in
// another's transactions (a transaction with thousands of matched
// outputs would otherwise cost their square).
const maxCoverWork = 10_000_000

// maxTxMatches is the most matches a transaction may hold for them to
// ride in each other: a payment and its change, or a spend, its payee and
// change, hold two or three; a batched payout of dozens of outputs whose
// block was fetched matches all its outputs seen once, which says nothing
// of who is whose.
const maxTxMatches = 4

// matchGroups is the partition of a report's listed matches into the
// groups downloads cannot tell apart, by union-find.
type matchGroups struct {
	parent []int
	// riding[i] is true when every appearance of match i lies in a
	// transaction of another match.
	riding []bool
	// rides[i] is true when match i's group holds a match riding in
	// another's transactions (else its members share their blocks only).
	rides []bool
	// batched[i] is true when match i has two or more appearances and at
	// least half its blocks hold it in a transaction of more than
	// maxTxMatches matches: a batch
	// paying several matched scripts, where the wallet's scripts cannot be
	// told from a payer's change reused across such batches.
	batched []bool
	// inBatch counts the matches of two or more appearances with an
	// appearance in a transaction of more than maxTxMatches matches.
	inBatch int
	partial bool // the work bound was reached
	// inTx lists, per transaction (txKey), the matches appearing in it,
	// when the transactions are known; unlisted counts those of one
	// appearance not in the list (groupMatchesWith).
	inTx     map[uint64][]int
	unlisted map[uint64]int
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

// groupMatchesOf groups matches listed from most appearances to fewest:
// each match that appears only in transactions of other matches with the
// one of most appearances in each, when the transactions are known; then
// the groups whose
// most appearing members appear in the same two or more blocks (every
// script seen once in a fetched block matches: those are not grouped by
// block). A group's first member (its root, in union-find) is its most
// appearing one: a union keeps the smaller index.
func groupMatchesOf(matched []Match, transactions bool) *matchGroups {
	return groupMatchesWith(matched, transactions, nil)
}

// groupMatchesWith is groupMatchesOf with, per transaction (txKey), the
// matches of one appearance it holds that matched does not list (the
// null's shifts count them only): a match riding beside them rides, as it
// would beside them listed, and they count towards a batch.
func groupMatchesWith(matched []Match, transactions bool, unlisted map[uint64]int) *matchGroups {
	n := len(matched)
	g := &matchGroups{parent: make([]int, n), riding: make([]bool, n), rides: make([]bool, n), batched: make([]bool, n), unlisted: unlisted}
	for i := range g.parent {
		g.parent[i] = i
	}
	if transactions {
		g.coLocate(matched)
	}
	byBlocks := map[string]int{}
	for i, m := range matched {
		if g.find(i) != i || m.Appearances < 2 {
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

// coLocate joins each match all of whose transactions hold another
// match (and at most maxTxMatches) to the match of most appearances (the
// first listed: the list runs from most to fewest) in each of them: a
// payer's change beside two payments to the wallet joins both, and the
// wallet's script beside its payer's change joins it.
func (g *matchGroups) coLocate(matched []Match) {
	inTx := map[uint64][]int{}
	for i := range matched {
		for _, tx := range txKeys(&matched[i]) {
			inTx[tx] = append(inTx[tx], i)
		}
	}
	g.inTx = inTx
	work := 0
	var covers []int
	for i := range matched {
		keys := txKeys(&matched[i])
		if len(keys) == 0 {
			continue
		}
		if matched[i].Appearances >= 2 {
			some, most := g.inBatches(&matched[i], inTx)
			g.batched[i] = most
			if some {
				g.inBatch++
			}
		}
		covers = covers[:0]
		rides := true
		for _, k := range keys {
			cover := -1
			in := len(inTx[k]) + g.unlisted[k]
			for _, j := range inTx[k] {
				work++
				if j != i && in <= maxTxMatches {
					cover = j
					break
				}
			}
			if cover < 0 && (g.unlisted[k] == 0 || in > maxTxMatches) {
				rides = false
				break
			}
			if cover >= 0 {
				covers = append(covers, cover)
			}
		}
		if rides {
			for _, j := range covers {
				g.union(i, j)
			}
			g.riding[i] = true
		}
		if work > maxCoverWork {
			g.partial = true
			return
		}
	}
}

// inBatches reports whether a block of m holds it in a transaction of
// more than maxTxMatches matches (some), and whether at least half its
// blocks do (most).
func (g *matchGroups) inBatches(m *Match, inTx map[uint64][]int) (some, most bool) {
	batched := 0
	for i, txs := range m.Transactions {
		for _, tx := range txs {
			if k := txKey(m.Heights[i], tx); len(inTx[k])+g.unlisted[k] > maxTxMatches {
				batched++
				break
			}
		}
	}
	return batched > 0, 2*batched >= len(m.Heights)
}

// maxPassengerWork bounds the steps spent finding, for one match, the
// matches that lie wholly in its transactions.
const maxPassengerWork = 100_000

// passenger reports whether match i, which does not ride, holds no
// evidence of its own: every transaction of it holds another match (in
// some more than maxTxMatches of them, a batched payment, which is why it
// does not ride), and no other match lies wholly in its transactions. A
// wallet's script hosts what its transactions alone show (the payer's
// change beside a payment to it, the payee and change of its spend); a
// payer's change reused across payments to the wallet, some of them
// batched, sits in the wallet's transactions and hosts nothing of its
// own (a batch's other outputs, whose transaction shows no one's, do not
// count). False when the transactions are unknown or the work bound is
// reached.
func (g *matchGroups) passenger(matched []Match, i int) bool {
	keys := txKeys(&matched[i])
	if len(keys) == 0 || g.riding[i] {
		return false
	}
	mine := make(map[uint64]bool, len(keys))
	for _, k := range keys {
		switch n := len(g.inTx[k]); {
		case n < 2:
			return false // alone in a transaction: evidence of its own
		case n <= maxTxMatches:
			mine[k] = true // a batch shows no one's
		}
	}
	work := 0
	for _, k := range keys {
		for _, j := range g.inTx[k] {
			if j == i {
				continue
			}
			inside := true
			for _, kj := range txKeys(&matched[j]) {
				work++
				if !mine[kj] {
					inside = false
					break
				}
			}
			if inside {
				return false // it hosts j
			}
			if work > maxPassengerWork {
				return false
			}
		}
	}
	return true
}

// maxEscortWork bounds the steps spent finding, for one match, the
// matches beside it that appear elsewhere.
const maxEscortWork = 100_000

// escorted reports whether match i sits, in at least half its
// transactions, beside another match (in a transaction of at most
// maxTxMatches matches) that appears in a transaction outside i's: its
// neighbours carry evidence of their own. A payer's change reused across
// payments to the wallet sits beside the wallet's fresh addresses, which
// the wallet spends later, in blocks it fetched; the wallet's own script
// sits beside its payers' change, which the payers spend in blocks the
// wallet did not fetch (so that change is no match, or one that appears
// only there), and in its spends only beside its own change and payee.
// On mixed's tuning seeds 7701 to 7704 the matches given 0.95 or more
// that were so were right 17 of 22 times, the others 207 of 208; on its
// seeds 9311 to 9313, 24 of 31 and 235 of 236. False when the
// transactions are unknown or the work bound is reached.
func (g *matchGroups) escorted(matched []Match, i int) bool {
	keys := txKeys(&matched[i])
	if len(keys) == 0 {
		return false
	}
	mine := make(map[uint64]bool, len(keys))
	for _, k := range keys {
		mine[k] = true
	}
	escorted, work := 0, 0
	for _, k := range keys {
		if len(g.inTx[k])+g.unlisted[k] > maxTxMatches {
			continue
		}
		found := false
		for _, j := range g.inTx[k] {
			if j == i {
				continue
			}
			for _, kj := range txKeys(&matched[j]) {
				work++
				if !mine[kj] {
					found = true
					break
				}
			}
			if found {
				break
			}
		}
		if found {
			escorted++
		}
		if work > maxEscortWork {
			return false
		}
	}
	return 2*escorted >= len(keys)
}

// settled reports whether every transaction of m holds one other match
// (of two, it and its host: a payment and its payer's change, or a spend
// and its change) and one of them created a script its counterparty
// spent in a block the session did not fetch (left, Report.markLeft). In
// a transaction of more matches (a payer's batch, a spend with its payee
// and change) a script spent elsewhere may be one of several
// counterparties, which settles none of the others.
func (g *matchGroups) settled(left map[uint64]bool, m *Match) bool {
	found := false
	for _, k := range txKeys(m) {
		if len(g.inTx[k])+g.unlisted[k] != 2 {
			return false
		}
		found = found || left[k]
	}
	return found
}

// besidePayment reports whether, in every transaction of match i, another
// match appears for the first time in the index and is created there
// (Match.created: with an index recording the roles, version 4, its
// first transaction there pays it, not spends a coin of it paid before
// the index's first block). The transaction pays that script, and what
// rides beside it is the payer's change or another payee, not the change
// of a spend of the wallet's.
func (g *matchGroups) besidePayment(matched []Match, i int) bool {
	keys := txKeys(&matched[i])
	for _, k := range keys {
		paid := false
		for _, j := range g.inTx[k] {
			if o := &matched[j]; j != i && o.created && len(o.Transactions) > 0 && slices.Contains(txKeysAt(o, 0), k) {
				paid = true
			}
		}
		if !paid {
			return false
		}
	}
	return len(keys) > 0
}

// txKeysAt names the transactions of a match in its block i.
func txKeysAt(m *Match, i int) []uint64 {
	keys := make([]uint64, len(m.Transactions[i]))
	for j, tx := range m.Transactions[i] {
		keys[j] = txKey(m.Heights[i], tx)
	}
	return keys
}

// txKeys names the transactions of a match, height and position; none
// when a block of it has no transaction recorded.
func txKeys(m *Match) []uint64 {
	if len(m.Transactions) != len(m.Heights) {
		return nil
	}
	var keys []uint64
	for i, txs := range m.Transactions {
		if len(txs) == 0 {
			return nil
		}
		for _, tx := range txs {
			keys = append(keys, txKey(m.Heights[i], tx))
		}
	}
	return keys
}

// txKey names a transaction by its block's height and its position in it.
func txKey(height int32, tx uint32) uint64 { return uint64(uint32(height))<<32 | uint64(tx) }

// unit is a group of matches and what its probability rests on.
type unit struct {
	members []int // indexes into Matched, the most appearing first
	k       uint64
	// huge is true for a unit of more than hugeGroup members of two or
	// more appearances, when the null is the shifts': it is counted in its
	// k's class and among the groups of its size, and has the lower of
	// the two probabilities.
	huge bool
}

// finish groups the matches, gives each group and match its probability
// (see the package documentation), and writes the verdict.
func (r *Report) finish() {
	r.trim()
	g := groupMatchesOf(r.Matched, r.Transactions)
	real := make(map[string]bool, len(r.Matched))
	for i := range r.Matched {
		if r.Matched[i].Appearances >= 2 {
			real[r.Matched[i].Candidate] = true
		}
	}
	r.null.finish(r.Transactions, real)
	units := map[int]*unit{}
	var order []int
	for i := range r.Matched {
		root := g.find(i)
		u := units[root]
		if u == nil {
			u = &unit{}
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
	for _, u := range units {
		multi := 0 // members of two or more appearances, as the shifts count them
		for _, i := range u.members {
			if r.Matched[i].Appearances >= 2 {
				multi++
			}
		}
		u.huge = r.null != nil && r.label == nil && multi > hugeGroup
	}
	classes := r.classes(units, g)
	single := r.singles(classes[1])
	byK := map[uint64]prob{} // each class's, worked out once
	byClass := func(k uint64) prob {
		if p, ok := byK[k]; ok {
			return p
		}
		p := single
		if k >= 2 {
			p = r.groupProbability(classes[k])
		}
		byK[k] = p.capped(r.cap)
		return byK[k]
	}
	byShares := map[uint64]prob{}
	forShares := func(k uint64) prob {
		if k < 2 {
			return byClass(k)
		}
		if p, ok := byShares[k]; ok {
			return p
		}
		byShares[k] = r.groupProbability(classes[k].forShares()).capped(r.cap)
		return byShares[k]
	}
	huge := r.groupProbability(r.huge).capped(r.cap)
	lower := func(p prob, u *unit) prob {
		if u.huge {
			// Either count explains it: the lower of the two.
			p = prob{min(p.p, huge.p), min(p.lo, huge.lo), min(p.hi, huge.hi)}
		}
		return p
	}
	unitP := func(u *unit) prob { return lower(byClass(u.k), u) }
	sharesP := func(u *unit) prob { return lower(forShares(u.k), u) }
	nested := r.nestedUnits(units, order, unitP)
	halved := func(k uint64) prob { return byClass(k).halved() }
	for _, root := range order {
		u := units[root]
		p, own := unitP(u), byClass
		shared := sharesP(u) // what its riders have their shares of
		switch {
		case nested[root] == nestHosted && r.label == nil:
			p, own, shared = p.halved(), halved, shared.halved()
			r.Matched[root].Nested = len(u.members) == 1
			r.hosted++
		case nested[root] == nestPooled && r.label == nil:
			// The other units' downloads explain its blocks whatever its
			// owner, as one host's explain a hosted unit's: it has half
			// its class's probability, and its members half their shares
			// (a session found to fetch for several wallets gives the
			// group back its class's: keepPooledGroups).
			own, shared = halved, shared.halved()
			if len(u.members) > 1 {
				r.pooledWhole = append(r.pooledWhole, pooledGroup{len(r.Groups), p})
			}
			p = p.halved()
			r.pooled++
			for _, i := range u.members {
				r.Matched[i].Nested = true
			}
		}
		r.share(u, p, shared, g, own)
		if r.paidOnly(u, g) {
			// A tenth of the class's probability before the cover
			// target's cap, so that a capped report is the uncapped one
			// capped.
			whole := lower(r.groupProbability(classes[u.k]), u)
			q := whole
			if nested[root] != nestNone && r.label == nil {
				q = q.halved()
			}
			p = q.paidShare().capped(r.cap)
			if n := len(r.pooledWhole); n > 0 && r.pooledWhole[n-1].group == len(r.Groups) {
				// Its class's probability, given back to a pooled group
				// when the session fetches for several wallets
				// (keepPooledGroups), is a tenth here too.
				r.pooledWhole[n-1].whole = whole.paidShare().capped(r.cap)
			}
			for _, i := range u.members {
				m := &r.Matched[i]
				q := prob{m.Probability, m.ProbabilityLow, m.ProbabilityHigh}.atMost(p)
				m.Probability, m.ProbabilityLow, m.ProbabilityHigh = q.p, q.lo, q.hi
			}
			r.paidGroups++
		}
		if len(u.members) > 1 {
			r.Groups = append(r.Groups, r.groupOf(u, g.rides[root], p))
			r.Groups[len(r.Groups)-1].Nested = nested[root] == nestHosted && r.label == nil
			for _, i := range u.members {
				r.Matched[i].Group = len(r.Groups)
			}
			if p.p >= 0.95 {
				r.ConfidentGroups++
			}
		}
	}
	for _, m := range r.Matched {
		if m.Probability >= 0.95 {
			r.Confident++
		}
	}
	r.estimate(classes, single.capped(r.cap))
	r.warnings(g, classes)
	r.Verdict = r.verdict()
}

// pooledGroup is a pooled group, by its index in Report.Groups, and its
// class's probability.
type pooledGroup struct {
	group int
	whole prob
}

// keepPooledGroups gives each pooled group of a session that fetches for
// several wallets (warnSharedClients) its class's probability, not half:
// the blocks of such a session are its several wallets', and a group that
// lies only in the blocks of other likely groups is, there, another of
// its wallets' groups about as often as the class's others are the
// wallet's (mixed's pooled groups given half were right 0.85 of the time
// at 0.46 said, 0.51 at 0.33), where in a session of one wallet it is a
// script of the chain paid and spent in the wallet's neighbouring blocks
// (change's, given their class's, were right 13 of 46 times at 0.52
// said). Its members keep half their shares, and the verdict is said
// again.
func (r *Report) keepPooledGroups() {
	if len(r.pooledWhole) == 0 {
		return
	}
	for _, pg := range r.pooledWhole {
		g := &r.Groups[pg.group]
		g.Probability, g.ProbabilityLow, g.ProbabilityHigh = pg.whole.p, pg.whole.lo, pg.whole.hi
	}
	r.ConfidentGroups = 0
	for _, g := range r.Groups {
		if g.Probability >= 0.95 {
			r.ConfidentGroups++
		}
	}
	if r.FetchedBlocks < r.ScannedBlocks {
		r.Verdict = r.verdict()
	}
}

// nestKind is how a unit's blocks are explained by the downloads of
// others.
type nestKind int

const (
	// nestNone: some block of it is no other unit's.
	nestNone nestKind = iota
	// nestHosted: every block of it is a block of one other unit of as
	// many appearances or more: it and its members have half their
	// class's probability.
	nestHosted
	// nestPooled: every block of it is a block of some other unit, but
	// no one of them holds them all: the unit has half its class's
	// probability and its members half their shares; a client's own report
	// (Options.Own) leaves them whole, an upper estimate.
	nestPooled
)

// maxNestWork bounds the steps spent finding the units nested in
// another's blocks.
const maxNestWork = 10_000_000

// nestedUnits marks, by root, the units of two or more appearances whose
// most appearing member appears only in blocks of other units of two or
// more appearances, each the wallet's more likely than not: the client
// fetched those blocks for them, so they explain this one whatever its
// owner (another wallet's reused address paid in the wallet's blocks, in
// transactions of its own; a script of the chain paid and spent in the
// blocks of a client's several wallets), and its appearances are no
// evidence of their own. It is nestHosted when one such unit of at least
// as many appearances holds all its blocks, nestPooled when it takes
// several of them, none nestHosted itself.
func (r *Report) nestedUnits(units map[int]*unit, order []int, unitP func(*unit) prob) map[int]nestKind {
	blocks := map[int]map[int32]bool{}
	var hosts []int
	for _, root := range order {
		u := units[root]
		if u.k < 2 || unitP(u).p < 0.5 {
			continue
		}
		set := map[int32]bool{}
		for _, i := range u.members {
			for _, h := range r.Matched[i].Heights {
				set[h] = true
			}
		}
		blocks[root] = set
		hosts = append(hosts, root)
	}
	nested := map[int]nestKind{}
	work := 0
	for _, root := range order {
		u := units[root]
		if u.k < 2 {
			continue
		}
		for _, host := range hosts {
			work += int(u.k)
			if host != root && units[host].k >= u.k && allIn(r.Matched[root].Heights, blocks[host]) {
				nested[root] = nestHosted
				break
			}
		}
		if work > maxNestWork {
			break
		}
	}
	// A unit one other explains explains none: pooling the rest, the
	// wallet's script would be explained by the very scripts its own
	// downloads explain.
	hosting := map[int32]int{} // per height, the pooling hosts holding it
	for _, root := range hosts {
		if nested[root] != nestHosted {
			for h := range blocks[root] {
				hosting[h]++
			}
		}
	}
	for _, root := range order {
		if units[root].k >= 2 && nested[root] == nestNone && hostedElsewhere(r.Matched[root].Heights, hosting, blocks[root]) {
			nested[root] = nestPooled
		}
	}
	return nested
}

// hostedElsewhere reports whether every height is held by a host other
// than the one whose blocks are own (nil: the unit is not a host).
func hostedElsewhere(heights []int32, hosting map[int32]int, own map[int32]bool) bool {
	for _, h := range heights {
		n := hosting[h]
		if own[h] {
			n--
		}
		if n < 1 {
			return false
		}
	}
	return true
}

// fullTxs reports whether every transaction of m holds maxTxMatches
// matches: a payer's batch, its change and other payees beside the
// wallet's script.
func (g *matchGroups) fullTxs(m *Match) bool {
	keys := txKeys(m)
	for _, k := range keys {
		if len(g.inTx[k])+g.unlisted[k] != maxTxMatches {
			return false
		}
	}
	return len(keys) > 0
}

// paidIn reports whether there are transactions and every one is in
// paid (Report.markPaid).
func paidIn(keys []uint64, paid map[uint64]bool) bool {
	for _, k := range keys {
		if !paid[k] {
			return false
		}
	}
	return len(keys) > 0
}

// allIn reports whether every height is in set.
func allIn(heights []int32, set map[int32]bool) bool {
	for _, h := range heights {
		if !set[h] {
			return false
		}
	}
	return true
}

// halved is p with its figure halved, its interval from a quarter of its
// low end to three quarters of its high end: the share of a group's a
// member that carries no evidence of its own is given (see share).
func (p prob) halved() prob {
	return prob{p.p * memberShare, p.lo * memberShareLow, p.hi * memberShareHigh}
}

// classCount is a Class with the chance expectation of its groups
// and its variance.
type classCount struct {
	Class
	chanceGroups, chanceVar float64
	// extraSingles are chance matches of one appearance left out of a
	// partial index (labelling.apply), and coverShare the share of the
	// class's own groups that hold a watched script (1 without covers).
	extraSingles, coverShare float64
	// floored is set when the null's resolution floor (shiftNull.resolved)
	// raised chanceGroups, and shareGroups and shareVar are then the
	// chance count before it: what the shares of a group's members riding
	// in the others' transactions are taken of.
	floored               bool
	shareGroups, shareVar float64
}

// forShares is the class as its riders' shares are taken of it: its
// chance count before the null's resolution floor.
func (c *classCount) forShares() *classCount {
	if c == nil || !c.floored {
		return c
	}
	d := *c
	d.chanceGroups, d.chanceVar = c.shareGroups, c.shareVar
	return &d
}

// classes counts, per k, the candidates, matches, groups and co-located
// matches, and what chance gives: the groups the shifted fetched sets
// form (the null), or without it n_k·p_k groups for candidates placed at
// random (each a group of one: an upper bound). Matches beyond the listed
// ones count as groups of one.
func (r *Report) classes(units map[int]*unit, g *matchGroups) map[uint64]*classCount {
	out := map[uint64]*classCount{}
	for k, c := range r.byK {
		fc := &classCount{Class: Class{Appearances: k, Candidates: c.candidates, Matched: c.matched}, coverShare: 1}
		fc.ExpectedByChance = float64(c.candidates) * r.chance(k)
		fc.chanceGroups, fc.chanceVar = fc.ExpectedByChance, fc.ExpectedByChance
		if r.null != nil {
			fc.ExpectedByShifts = r.null.matched(k)
			fc.ExpectedGroupsByShifts = r.null.groups[k]
			fc.chanceGroups, fc.chanceVar = r.null.groups[k], r.null.groupVar[k]
			if k == 1 {
				fc.chanceGroups, fc.chanceVar = r.null.singleMoments()
				fc.ExpectedGroupsByShifts = fc.chanceGroups
			}
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
	r.huge = &classCount{coverShare: 1}
	if r.null != nil {
		r.huge.chanceGroups, r.huge.chanceVar = r.null.huge, r.null.hugeVar
	}
	for _, u := range units {
		if u.huge {
			r.huge.Groups++
		}
		out[u.k].Groups++
	}
	for k, c := range out {
		c.Groups += c.Matched - listed[k]
		if r.null != nil && k >= 2 {
			c.chanceGroups = selfCorrected(c.chanceGroups, r.null.self[k], float64(c.Groups))
			if r.label == nil && c.Groups > 0 && c.Candidates > c.Matched {
				c.shareGroups, c.shareVar = c.chanceGroups, c.chanceVar
				c.chanceGroups, c.chanceVar = r.null.resolved(c.chanceGroups, c.chanceVar)
				c.floored = c.chanceGroups != c.shareGroups
			}
		}
	}
	if r.label != nil {
		r.label.apply(r, out, units, g)
	}
	keys := make([]uint64, 0, len(out))
	for k := range out {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r.ByAppearances = append(r.ByAppearances, out[k].Class)
	}
	return out
}

// selfCorrected is the null's mean count of a class's groups, m, less
// what the shifts owe to the fetched set meeting itself (see the package
// documentation): x of a shift's groups on average have a most appearing
// member that the fetched set matches too, a share h = x/g of the class's
// g groups. Those of the wallet are no chance; those of chance, about a
// share c/g of them when c of the g groups are chance's, are. The
// wallet's share of them is taken from the class with them taken out
// once: c₁ = m - h(g - m), then c = m - x(1 - c₁/g) = m - h(1+h)(g - m)
// (two steps of c = m - x + x·c/g from c = m, whose fixed point
// (m - x)/(1 - h) is not defined when h nears 1, the shifted sets
// meeting the fetched set everywhere: a session that fetched almost
// every block it scanned). Never above m, nor below 0; m itself when
// the shifts' hits reach the class's groups (x ≥ g).
func selfCorrected(m, x, g float64) float64 {
	if x <= 0 || g <= 0 || x >= g || m <= 0 || m >= g {
		return m
	}
	h := x / g
	return math.Max(0, m-h*(1+h)*(g-m))
}

// prob is a probability and its 95% interval.
type prob struct{ p, lo, hi float64 }

// capped is p with each figure at most t (Options.CoverTarget; 0: none).
func (p prob) capped(t float64) prob {
	if t <= 0 {
		return p
	}
	return prob{min(p.p, t), min(p.lo, t), min(p.hi, t)}
}

// groupProbability is the probability that a group of the class holds a
// wallet's script: the share of the class's groups that chance does not
// explain, with the interval of that share for chance a count of the
// null's mean and variance.
func (r *Report) groupProbability(c *classCount) prob {
	if c == nil || c.Groups == 0 || r.FetchedBlocks >= r.ScannedBlocks {
		return prob{}
	}
	n, lo, hi := walletShare(float64(c.Groups), c.chanceGroups, c.chanceVar)
	return prob{n * c.coverShare, lo * c.coverShare, hi * c.coverShare}
}

// walletShare is the share of observed items that chance, a count of
// mean m and variance v, does not explain, and its 95% interval.
func walletShare(observed, m, v float64) (p, lo, hi float64) {
	if observed <= 0 {
		return 0, 0, 0
	}
	xlo, xhi := chanceRange(m, v)
	p = math.Max(observed-m, 0) / observed
	lo = math.Max(observed-xhi, 0) / observed
	hi = math.Min(math.Max(observed-xlo, 0), observed) / observed
	return p, math.Min(lo, p), math.Max(hi, p)
}

// singles is the probability that a match of one appearance, not riding
// in another's transactions, is the wallet's: every script that appears
// once in a fetched block matches, so a fetched block's singles are not
// random candidates; the wallet's are those the fetched blocks carry
// beyond what their neighbours, the nearest blocks not fetched, carry.
func (r *Report) singles(c *classCount) prob {
	if c == nil || c.Matched == 0 || r.FetchedBlocks >= r.ScannedBlocks {
		return prob{}
	}
	alone := c.alone()
	if alone <= 0 {
		return prob{}
	}
	p, lo, hi := walletShare(alone, c.chanceGroups, c.chanceVar)
	if r.label == nil {
		// Each fetched block holds few of the wallet's singles: the
		// class's share cannot give them more than walletSinglesPerBlock
		// a fetched block between them.
		most := math.Min(walletSinglesPerBlock*float64(r.FetchedBlocks)/alone, 1)
		p, lo, hi = math.Min(p, most), math.Min(lo, most), math.Min(hi, most)
		if lo == 0 && p > 0 {
			// No more than chance's range gives: the point is its low end.
			p = 0
			r.singlesInChance = true
		}
	}
	return prob{p * c.coverShare, lo * c.coverShare, hi * c.coverShare}
}

// alone counts the class's matches riding in no other's transactions,
// with the chance matches left out of a partial index.
func (c *classCount) alone() float64 {
	return float64(c.Matched) - float64(c.CoLocated) + c.extraSingles
}

// SinglesInChance is the warning of an attack's report whose matches of
// one appearance riding in no other's transactions are no more than the
// 95% range of what the fetched blocks' neighbours carry: each is given
// none of their share, which sessions of few blocks gave matches the
// wallet's far less often than said (package documentation, "Matches of
// one appearance").
const SinglesInChance = "the matches of one appearance riding in no other's transactions are within what chance gives (the 95% range of what the fetched blocks' neighbours carry): each is given 0, the low end of its interval, since their share of what is left said far more than they were the wallet's in such sessions; the high end stands"

// walletSinglesPerBlock is the most matches of one appearance, riding in
// no other's transactions, that the attack takes to be the wallet's per
// fetched block.
const walletSinglesPerBlock = 2.0

// Members of a group of several matches: the share of them taken to be
// the wallet's, and the range of that share the intervals carry. A
// payment to the wallet shows its script and the payer's change, a spend
// of the wallet's its coin, its change and the payee: about half the
// scripts of a wallet's transactions are its own (measured from 0.43 on
// neutrino's captures to 0.67 on the simulated regimes).
const (
	memberShare                     = 0.5
	memberShareLow, memberShareHigh = 0.25, 0.75
)

// A member riding in others' transactions in every one of two or more
// blocks, and not its group's most appearing one, is a script passed
// along the wallet's transactions: a payer's change spent in the next
// payment to the wallet, a payee's address paid again by it, the wallet's
// own change spent in its next spend. Of the wallet's transactions' such
// scripts, its own are the fewer (one wallet against its many
// counterparties, each of whose change may chain): measured from 0.21 to
// 0.42 right on the simulated regimes at half their group's probability
// (0.28 over 708 on mixed's tuning seeds), where such a member of one
// appearance was right 0.49 to 0.64 of the time. It has chainedShare of
// its group's, its interval chainedShareLow to chainedShareHigh of it.
const (
	chainedShare                      = 0.3
	chainedShareLow, chainedShareHigh = 0.15, 0.5
)

// A member riding in others' transactions, each holding one other match,
// one of which created a script spent later in a block the session
// scanned and did not fetch, is settled (matchGroups.settled): a wallet
// fetches the blocks of its own spends, so that script was the
// transaction's counterparty's (the payer's change of a payment to the
// wallet, the payee of its spend), and the two matches left there are
// the wallet's. It has settledShare of its group's probability, its
// interval settledShareLow to settledShareHigh of it; a chained one
// chainedSettledShare of its group's (below). On the simulated regimes' tuning seeds (7001
// to 7010, mixed's 9311 to 9313) such riders in groups of P 0.9 or more
// were right 0.96 of the time (n = 575), chained ones 0.73 (n = 63),
// where the other riders there were right 0.45 (n = 2790).
const (
	settledShare                      = 0.94
	settledShareLow, settledShareHigh = 0.8, 1
)

// settledShare is p as a settled member has it.
func (p prob) settledShare() prob {
	return prob{p.p * settledShare, p.lo * settledShareLow, p.hi * settledShareHigh}
}

// A member riding in others' transactions, of fewer appearances than its
// group's most appearing one, every transaction of which spends a coin
// no match holds (a script seen in an earlier block the session did not
// fetch: Report.markPaid), is paid: its transactions are payments to the
// wallet by others, or others' transactions, and what rides there beside
// the wallet's script (the host) is its payer's change and other payees.
// On the tuning seeds (7001 to 7010, 7101 to 7110, mixed's 7701 to 7704
// and 9311 to 9313) such riders in groups of P 0.5 or more were right 3
// of 1,133 times on mixed, 23 of 46 on the other regimes. So is one each
// of whose transactions holds maxTxMatches matches, a payer's batch (2
// of 183 right on mixed's tuning seeds, in [0.5, 0.8); the other regimes
// hold almost none). It has paidShare of its group's probability, its
// interval paidShareLow to paidShareHigh of it; a client's own report
// leaves it half.
const (
	paidShare                   = 0.1
	paidShareLow, paidShareHigh = 0, 0.5
)

// A settled member chained through the others' transactions (riding in
// every one of two or more blocks, not its group's most appearing) has
// chainedSettledShare of its group's probability, its interval
// chainedSettledShareLow to chainedSettledShareHigh of it: on the
// simulated regimes' tuning seeds (7701 to 7704, groups of P 0.5 or
// more) such members were right 217 of 310 times (0.70) at half their
// group's, from 0.48 on heavy-tail to 0.95 on reuse.
const (
	chainedSettledShare                             = 0.7
	chainedSettledShareLow, chainedSettledShareHigh = 0.45, 0.95
)

// chainedSettled is p as a settled member chained through the others'
// transactions has it (chainedSettledShare).
func (p prob) chainedSettled() prob {
	return prob{p.p * chainedSettledShare, p.lo * chainedSettledShareLow, p.hi * chainedSettledShareHigh}
}

// paidShare is p as a paid member has it.
func (p prob) paidShare() prob {
	return prob{p.p * paidShare, p.lo * paidShareLow, p.hi * paidShareHigh}
}

// chained is p as a member chained through the others' transactions has
// it (chainedShare).
func (p prob) chained() prob {
	return prob{p.p * chainedShare, p.lo * chainedShareLow, p.hi * chainedShareHigh}
}

// share gives a group's members their probability. A match alone has its
// group's. In a group of several, a member with an appearance in a
// transaction of no other match carries evidence of its own and has the
// probability of its class; a member all of whose appearances lie in
// other matches' transactions carries none (a payer's change, reused or
// not, or a payee rides in the wallet's transactions as the wallet's own
// scripts do, and may appear in more of its blocks than any of them): it
// is the wallet's with the group's probability times memberShare, its
// interval the group's times memberShareLow and memberShareHigh; but the
// group's most appearing member, alone so, riding outside transactions of
// two (pairedMostly), has the group's probability: it is the script that
// probability is of. Members of as many appearances as the most
// appearing one that share a block are ambiguous with each other
// (sameEvidence): the downloads give the same evidence for each, and
// each of n has at most a share 1/n of the group's probability
// (ambiguous), but in a client's own report (Options.Own), which stays
// an upper estimate. A match alone, the most appearing member and the
// ambiguous have shares of p, the group's; the members riding in others'
// transactions shares of shared, the group's before the null's
// resolution floor (the shares were measured so).
func (r *Report) share(u *unit, p, shared prob, g *matchGroups, own func(k uint64) prob) {
	var tied []int
	for _, i := range u.members {
		if r.Matched[i].Appearances == u.k {
			tied = append(tied, i)
		}
	}
	ambiguous := sameEvidence(r.Matched, tied)
	for _, i := range u.members {
		m := &r.Matched[i]
		switch {
		case len(u.members) == 1:
			m.Probability, m.ProbabilityLow, m.ProbabilityHigh = p.p, p.lo, p.hi
		case !g.riding[i] && (r.label != nil || !g.passenger(r.Matched, i)):
			q := own(m.Appearances)
			m.Probability, m.ProbabilityLow, m.ProbabilityHigh = q.p, q.lo, q.hi
		case !g.riding[i]:
			// It sits beside other matches in every transaction and hosts
			// none: as a match riding in them, half the group's.
			h := shared.halved().atMost(p)
			m.Probability, m.ProbabilityLow, m.ProbabilityHigh = h.p, h.lo, h.hi
			m.Passenger = true
			r.passengers++
		case m.Appearances >= 2 && m.Appearances < u.k && r.label == nil:
			// It rides in every block of it, beside a match that appears
			// more: a script chained through the wallet's transactions.
			h := shared.chained()
			if g.settled(r.left, m) {
				h, m.Settled = shared.chainedSettled(), true
			}
			h = h.atMost(p)
			m.Probability, m.ProbabilityLow, m.ProbabilityHigh = h.p, h.lo, h.hi
		default:
			h := shared.halved()
			switch {
			case r.label == nil && m.Appearances < u.k && (paidIn(txKeys(m), r.paid) || g.fullTxs(m)):
				h, m.Paid = shared.paidShare(), true
			case r.label == nil && m.Appearances < u.k && g.settled(r.left, m) && g.besidePayment(r.Matched, i):
				h, m.BesidePayment = shared.paidShare(), true
			case g.settled(r.left, m):
				h, m.Settled = shared.settledShare(), true
			case m.Appearances == u.k && m.Appearances >= 2 && len(ambiguous[i]) == 0 && !g.pairedMostly(m):
				// The group's most appearing member, alone so and not a
				// payer's change paid back to itself (leads, below).
				h = p
			}
			h = h.atMost(p)
			m.Probability, m.ProbabilityLow, m.ProbabilityHigh = h.p, h.lo, h.hi
		}
		if g.batched[i] && !g.riding[i] {
			m.Probability, m.ProbabilityLow = m.Probability*memberShareHigh, m.ProbabilityLow*memberShareLow
			m.Batched = true
		} else if r.label == nil && !g.riding[i] && !m.Passenger && m.Appearances >= 2 && g.escorted(r.Matched, i) {
			m.Probability, m.ProbabilityLow = m.Probability*memberShareHigh, m.ProbabilityLow*memberShareLow
			m.Escorted = true
			r.escorted++
		}
		if with := ambiguous[i]; len(with) > 0 {
			if r.label == nil {
				a := p.ambiguous(len(with) + 1)
				m.Probability, m.ProbabilityLow = min(m.Probability, a.p), min(m.ProbabilityLow, a.lo)
			}
			for _, j := range with {
				m.AmbiguousWith = append(m.AmbiguousWith, r.Matched[j].Candidate)
			}
		}
	}
}

// sameEvidence returns, for each of the tied matches (a group's members
// of as many appearances as its most appearing one), the others it is
// ambiguous with: those it shares a block with. A payer's change reused
// as often as the wallet's script sits in the same payments to it, and
// matches of the same blocks have the same downloads for evidence; two
// of the wallet's scripts of as many appearances in blocks apart (two
// addresses it was paid on again, each spent later) are each the
// evidence of its own downloads.
func sameEvidence(matched []Match, tied []int) map[int][]int {
	if len(tied) < 2 {
		return nil
	}
	in := map[int32][]int{}
	for _, i := range tied {
		for _, h := range matched[i].Heights {
			in[h] = append(in[h], i)
		}
	}
	with := map[int]map[int]bool{}
	for _, is := range in {
		for _, i := range is {
			for _, j := range is {
				if i == j {
					continue
				}
				if with[i] == nil {
					with[i] = map[int]bool{}
				}
				with[i][j] = true
			}
		}
	}
	out := make(map[int][]int, len(with))
	for i, js := range with {
		out[i] = slices.Sorted(maps.Keys(js)) // Matched's order, as tied's
	}
	return out
}

// pairedMostly reports whether more than half the transactions of m
// hold it and one other match only (or none is recorded): a payer's
// change reused across the payments to the wallet, the payer spending it
// and paying itself back to it, sits in transactions of two (the payment
// and it), where the wallet's script appears in its spends (its coin, the
// payee and its change) and in payments that spend a payer's earlier
// change (three). A group's most appearing member riding in the others'
// transactions leads it (has the group's probability) unless it is
// paired so, or ambiguous: on the simulated regimes' tuning seeds (7701
// to 7704, groups of P 0.5 or more) the members that lead so were right
// 211 of 223 times at a mean of 0.935 said (standard 38 of 40, change 62
// of 62, shared-client 68 of 69, mixed 41 of 50, reuse 2 of 2), those
// paired mostly, at half their group's, 22 of 54 on reuse (its payers'
// change paid back to one address), and on a real neutrino client's
// capture 96 of 96 (the wallet's addresses paid again and spent, each
// in blocks of its own), which half, or a share of an ambiguous pair,
// had put at 0.48 to 0.5.
func (g *matchGroups) pairedMostly(m *Match) bool {
	keys := txKeys(m)
	two := 0
	for _, k := range keys {
		if len(g.inTx[k])+g.unlisted[k] == 2 {
			two++
		}
	}
	return len(keys) == 0 || 2*two > len(keys)
}

// atMost is p with each figure at most q's: a member's share of its
// group's probability is no more than the group's.
func (p prob) atMost(q prob) prob {
	return prob{min(p.p, q.p), min(p.lo, q.lo), min(p.hi, q.hi)}
}

// ambiguous is the probability of each of n members of an ambiguous set
// in a group of probability p: the downloads give the same evidence for
// each, so the group's probability is that one of them, not each, is the
// wallet's (a payer's change reused as often as the wallet's script,
// paid and spent in the same transactions), and each has a share 1/n of
// it; its interval reaches p's high end, for the sets of which more than
// one is the wallet's.
func (p prob) ambiguous(n int) prob {
	return prob{p.p / float64(n), p.lo / float64(n), p.hi}
}

// groupOf describes a group of two or more matches.
func (r *Report) groupOf(u *unit, rides bool, p prob) Group {
	fg := Group{Appearances: u.k, Probability: p.p, ProbabilityLow: p.lo, ProbabilityHigh: p.hi}
	tied := 0
	for _, i := range u.members {
		fg.Members = append(fg.Members, r.Matched[i].Candidate)
		if len(r.Matched[i].AmbiguousWith) > 0 {
			tied++
		}
	}
	fg.Ambiguous = tied > 1
	why := "they appear in the same blocks"
	if rides {
		why = "some appear only in transactions of another (a payer's change beside a payment, the outputs of one transaction)"
	}
	fg.Reason = fmt.Sprintf("%s: downloads cannot tell them apart, so the probability is that one of these %d scripts is the wallet's; one that appears only in the others' transactions is taken to be with half of it", why, len(u.members))
	if fg.Ambiguous {
		fg.Reason += fmt.Sprintf("; %d of them appear as often as each other, in the same blocks' transactions: an ambiguous set, one of which (not each) is the wallet's", tied)
	}
	return fg
}

// estimate sets the wallet's estimated groups of two or more appearances
// and its estimated matches of one appearance riding in no other's
// transactions: those matches times single, the probability each is
// given, its low end times single's low end, so that the count is bound
// as they are (at most walletSinglesPerBlock a fetched block), and its
// high end what chance leaves of every match of one appearance within
// that bound.
func (r *Report) estimate(classes map[uint64]*classCount, single prob) {
	if r.FetchedBlocks >= r.ScannedBlocks {
		return
	}
	var groups, chance, variance float64
	for _, k := range sortedKeys(classes) {
		if c := classes[k]; k >= 2 {
			groups += float64(c.Groups)
			chance += c.chanceGroups
			variance += c.chanceVar
		}
	}
	r.EstimatedWalletGroups, r.EstimatedWalletGroupsLow, r.EstimatedWalletGroupsHigh, r.EstimatedWalletGroupsLevel = observedCount(groups, chance, variance)
	if c := classes[1]; c != nil {
		alone := math.Max(c.alone(), 0)
		r.EstimatedWalletSingles, r.EstimatedWalletSinglesLow = single.p*alone, single.lo*alone
		// Its high end is what chance leaves of every match of one
		// appearance, riding or not (the neighbours' counts are of every
		// script seen once), within the matches alone and their bound.
		all := float64(c.Matched) + c.extraSingles
		_, _, hi := walletShare(all, c.chanceGroups, c.chanceVar)
		most := alone
		if r.label == nil {
			most = math.Min(most, walletSinglesPerBlock*float64(r.FetchedBlocks))
		}
		hi = math.Min(hi*all, most) * c.coverShare
		if r.cap > 0 {
			hi = math.Min(hi, r.cap*alone)
		}
		r.EstimatedWalletSinglesHigh = math.Max(hi, r.EstimatedWalletSingles)
		r.EstimatedWalletSinglesLevel = chanceLevel(c.chanceGroups, c.chanceVar)
	}
}

// sortedKeys are the keys of m in increasing order: sums of floating
// point numbers over a map are summed in this order, so that a report is
// the same bytes every run.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	return slices.Sorted(maps.Keys(m))
}

// CoversNotRuledOut is the warning of a report that names a script or a
// group at 0.5 or more without Options.CoverTarget: nothing in the
// downloads tells the blocks of covers drawn to the wallet's profile from
// its own (they are drawn so that nothing does), whatever client sent
// them and whatever its user agent, so their presence cannot be ruled
// out, and a client that fetches covers to a target below what is said
// is overstated by every such probability, not only those of 0.95 and
// more.
const CoversNotRuledOut = "covers cannot be ruled out: nothing in the downloads tells the blocks of cover scripts a client fetches to hide its own (drawn to its scripts' profile, as spvfilter's --privacy-target does, whatever the user agent says) from the wallet's; if this client fetches covers, every probability above its target is overstated (of 0.5 and more here): give --cover-target with its target"

// coversMatter reports whether the report names a script or a group at
// 0.5 or more: what a client's covers would make overstated.
func (r *Report) coversMatter() bool {
	for _, m := range r.Matched {
		if m.Probability >= 0.5 {
			return true
		}
	}
	for _, g := range r.Groups {
		if g.Probability >= 0.5 {
			return true
		}
	}
	return false
}

// warnings adds the report's warnings about its matches.
func (r *Report) warnings(g *matchGroups, classes map[uint64]*classCount) {
	if !r.Transactions && r.UniverseSize > 0 {
		r.warn("the index records no transactions (version 1, or written without them): scripts that appear only in the wallet's transactions (a payer's change) cannot be told from the wallet's, and take probabilities of their own; \"privacy universe --index\" writes an index that records them")
	}
	if c := classes[1]; c != nil && c.Matched > 0 && r.FetchedBlocks < r.ScannedBlocks {
		r.warn(fmt.Sprintf("%d %s in a single block: every script that appears once in a fetched block matches, the wallet's among them, so each has the share of them that the fetched blocks carry beyond what their neighbours carry (estimated_wallet_singles)", c.Matched, forCount(c.Matched, "match appears", "matches appear")))
		if r.singlesInChance {
			r.warn(SinglesInChance)
		}
	}
	if n := r.hosted; n > 0 {
		r.warn(fmt.Sprintf("%d %s of two or more appearances %s only in blocks of another group of as many appearances or more, in transactions of %s own: the downloads of that group's blocks explain %s whatever the owner (another wallet's address reused in the wallet's blocks), so each has half its class's probability (nested)",
			n, forCount(n, "group or match", "groups or matches"), forCount(n, "appears", "appear"), forCount(n, "its", "their"), forCount(n, "it", "them")))
	}
	if r.pooled > 0 {
		n := r.pooled
		r.warn(fmt.Sprintf("%d %s of two or more appearances %s only in blocks of other groups the wallet's more likely than not, no one of which holds them all, in transactions of %s own: those downloads explain %s whatever the owner (one client fetching for several wallets, a script paid and spent in the wallet's neighbouring blocks), so each has half its class's probability and its scripts half their shares (pooled)",
			n, forCount(n, "group or match", "groups or matches"), forCount(n, "appears", "appear"), forCount(n, "its", "their"), forCount(n, "it", "them")))
	}
	if g.inBatch > 0 {
		n, batched := g.inBatch, countBatched(r.Matched)
		r.warn(fmt.Sprintf("%d %s of two or more appearances %s in transactions paying more than %d matched scripts at once (batched payments): downloads cannot tell the wallet's scripts there from a payer's change reused across such payments, so on downloads like these the scripts given 0.95 or more are right less often than they say, and their groups are the claim to read; the %d in batches in at least half %s blocks %s three quarters of %s class's probability (batched)",
			n, forCount(n, "match", "matches"), forCount(n, "sits", "sit"), maxTxMatches, batched, forCount(batched, "its", "their"), forCount(batched, "has", "have"), forCount(batched, "its", "their")))
	}
	if r.escorted > 0 {
		n := r.escorted
		r.warn(fmt.Sprintf("%d %s of two or more appearances %s, in at least half %s transactions, beside other matches that appear in transactions of their own elsewhere (a payer's change reused across payments to the wallet, beside the wallet's addresses that it spends later): %s (escorted)",
			n, forCount(n, "match", "matches"), forCount(n, "sits", "sit"), forCount(n, "its", "their"),
			forCount(n, "that is the wallet's more often than it is, so it has three quarters of its probability", "those are the wallet's more often than they are, so they have three quarters of their probability")))
	}
	if r.passengers > 0 {
		n := r.passengers
		r.warn(fmt.Sprintf("%d %s of a group %s beside other matches in every transaction, in some of them a batched payment, and no other match lies wholly in %s transactions (a payer's change reused across payments to the wallet, some batched): %s, as a match riding in another's transactions (passenger)",
			n, forCount(n, "match", "matches"), forCount(n, "sits", "sit"), forCount(n, "its", "their"),
			forCount(n, "it shows no evidence of its own, and has half its group's probability", "they show no evidence of their own, and have half their group's probability")))
	}
	if r.paidGroups > 0 {
		n := r.paidGroups
		r.warn(fmt.Sprintf("%d %s, beside %s most appearing match, only matches riding in payments by others (paid): nothing there shows the wallet, and on simulated captures none of 36 such groups given 0.5 or more held a wallet's script, so %s",
			n, forCount(n, "group holds", "groups hold"), forCount(n, "its", "their"),
			forCount(n, "it has a tenth of its class's probability", "they have a tenth of their class's probability")))
	}
	if r.CoLocated > 0 {
		n := r.CoLocated
		r.warn(fmt.Sprintf("%d %s only in transactions of another match (a payer's change beside a payment to the wallet): %s",
			n, forCount(n, "match appears", "matches appear"),
			forCount(n, "it is grouped with that match, and its probability is its share of the group's", "they are grouped with that match, and their probability is their share of the group's")))
	}
	ambiguous := 0
	for _, fg := range r.Groups {
		if fg.Ambiguous {
			ambiguous++
		}
	}
	if ambiguous > 0 {
		r.warn(fmt.Sprintf("%d %s scripts of the same evidence (as many appearances, in the same blocks: a payer's change reused as often as the wallet's script): one of each set, not each, is the wallet's with the group's probability, and each of a set of n has a share 1/n of it", ambiguous, forCount(ambiguous, "group holds", "groups hold")))
	}
	var shifted, random float64
	for _, k := range sortedKeys(classes) {
		if c := classes[k]; k >= 2 {
			shifted += c.ExpectedByShifts
			random += c.ExpectedByChance
		}
	}
	if r.null != nil && shifted > 2*random+3 {
		r.warn("the chain's scripts cluster: the fetched set shifted along the scanned blocks matches far more scripts of two or more appearances than blocks placed at random give (expected_by_shifts against expected_by_chance, by appearances); the probabilities rest on the shifts, and on the simulated clustered chain its groups given 0.8 to 0.95 were right less often than said (6 of 9 times at 0.92 said)")
	}
	if r.null == nil && r.label == nil && r.FetchedBlocks > 0 && r.FetchedBlocks < r.ScannedBlocks {
		r.warn("too few scanned blocks to shift the fetched set along them: the probabilities take the scripts' blocks as placed at random, which a clustered chain (outputs spent in the next blocks) breaks")
	}
	if r.null != nil && r.null.over {
		r.warn(fmt.Sprintf("a shifted fetched set matched more than %d scripts of two or more appearances: the rest count as groups of their own", maxNullMatches))
	}
	if r.label == nil && r.cap == 0 && r.coversMatter() {
		r.warn(CoversNotRuledOut)
	}
	if g.partial {
		r.warn(fmt.Sprintf("more than %d steps spent on the matches' transactions: some matches riding in another's transactions may be left ungrouped", maxCoverWork))
	}
	if r.MatchedTruncated {
		r.warn(fmt.Sprintf("%d matches, only the %d least explained by chance are listed and grouped", r.MatchedCount, len(r.Matched)))
	}
}

// FewBlocks is in the warning of a report of the attack on a session
// that fetched maxFewBlocks blocks or fewer and gives a group a
// probability from 0.5 to 0.8 (see the package documentation, "Few
// blocks").
const FewBlocks = "the session fetched 6 blocks or fewer"

// maxFewBlocks is the most blocks a session warned with FewBlocks
// fetched.
const maxFewBlocks = 6

// fewBlocksFactor is what lowerFewBlocks multiplies the probabilities
// of matches alone by: where it was chosen, the groups and matches alone
// of such sessions together were right 0.765 of what they said (see the
// package documentation, "Few blocks").
const fewBlocksFactor = 0.75

// fewBlocks reports whether the report is of a session that fetched
// maxFewBlocks blocks or fewer (some) and gives a group of several
// matches, or a match alone of two or more appearances, a probability
// from 0.5 to 0.8.
func (r *Report) fewBlocks() bool {
	if r.FetchedBlocks == 0 || r.FetchedBlocks > maxFewBlocks || r.FetchedBlocks >= r.ScannedBlocks {
		return false
	}
	for _, g := range r.Groups {
		if g.Probability >= 0.5 && g.Probability < 0.8 {
			return true
		}
	}
	for _, m := range r.Matched {
		if m.Group == 0 && m.Appearances >= 2 && m.Probability >= 0.5 && m.Probability < 0.8 {
			return true
		}
	}
	return false
}

// lowerFewBlocks multiplies by fewBlocksFactor, in a report of few
// blocks (fewBlocks), the probability and interval of each match alone
// of two or more appearances given 0.5 to 0.8, and warns of it (see the
// package documentation, "Few blocks"). Groups of several matches and
// their members keep what their class gives: in such sessions they are
// right about as often as said, and the class's share is lowered only
// for the matches alone, right far less often. It is the attack's last
// step, after the sessions are compared (warnSharedClients), which reads
// the probabilities it would lower, and the recalibration. Under a cover
// target (Options.CoverTarget) a probability at the target was capped
// there and may have been given more than 0.8: it is left at the target,
// the higher of what lowering and capping give, and only those below it
// are lowered. A labelled report (Options.Own: a client's account of its
// own downloads) is not lowered: it is held to say no less than the
// attack on its capture (see Compute), and the factor corrects the
// attack's over-confidence, not the client's bound. It is warned instead
// that the attack on the session would give such matches less.
func (r *Report) lowerFewBlocks() {
	if !r.fewBlocks() {
		return
	}
	if r.label != nil {
		r.warn(fmt.Sprintf("%s: matches alone of two or more appearances given 0.5 to 0.8 in such sessions are right less often than said, and the attack on this session, which does not know the wallet's scripts, gives them %.2f of what their classes give; this account, of the client's own scripts, keeps them whole", FewBlocks, fewBlocksFactor))
		return
	}
	mid := func(p float64) bool { return p >= 0.5 && p < 0.8 && (r.cap == 0 || p < r.cap) }
	for i := range r.Matched {
		m := &r.Matched[i]
		if m.Group == 0 && m.Appearances >= 2 && mid(m.Probability) {
			m.Probability, m.ProbabilityLow, m.ProbabilityHigh = m.Probability*fewBlocksFactor, m.ProbabilityLow*fewBlocksFactor, m.ProbabilityHigh*fewBlocksFactor
			r.few++
		}
	}
	r.warn(fmt.Sprintf("%s: each class of two or more appearances holds a few groups and a chance count near them; its groups of several matches are right about as often as said, its matches alone given 0.5 to 0.8 far less often (on simulated captures 2 of 46 times at 0.61 said): the %d such matches alone have %.2f of that probability here, still more than they get", FewBlocks, r.few, fewBlocksFactor))
}

// paidOnly reports whether the unit u of an attack's report is a group
// whose members beside its most appearing one, which rides in no other's
// transactions, are all paid (Match.Paid): every transaction it shares
// with them spends a coin of a block the session did not fetch and holds
// nothing of the wallet's that the downloads show, another's payment or
// another's own. Such a group has a tenth of its class's probability,
// its interval up to half of it, as a paid rider of its group (see the
// package documentation, "Members").
func (r *Report) paidOnly(u *unit, g *matchGroups) bool {
	if r.label != nil || len(u.members) < 2 || g.riding[u.members[0]] {
		return false
	}
	for _, i := range u.members[1:] {
		if !r.Matched[i].Paid {
			return false
		}
	}
	return true
}

// countBatched counts the matches marked Batched.
func countBatched(ms []Match) int {
	n := 0
	for i := range ms {
		if ms[i].Batched {
			n++
		}
	}
	return n
}

// verdict is the report's verdict in plain words.
func (r *Report) verdict() string {
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

// forCount is one, said of a count of 1, or many, said of any other: the
// noun, verb or pronoun a warning's count takes ("1 match appears", "3
// matches appear").
func forCount[T ~int | ~uint64](n T, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
