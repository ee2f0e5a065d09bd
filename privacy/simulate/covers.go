package simulate

import (
	"cmp"
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/spvfilter/spvfilter/privacy/leak"
)

// The covered regime: a client fetches, beside its wallet's blocks, the
// blocks of cover scripts of others drawn by the rule a covering client
// follows (leak.Need sizes them per class, leak.Draw draws them to the
// wallet's profiles), one set per wallet for all its sessions, so that
// intersecting its sessions keeps them.

// relaxations are what a short draw gives up, in turn, to fill what
// the exact shape could not, each a relaxed shape and how far from the
// shape's era a chain may lie (anyEra: any, the nearest first, as
// leak.Draw takes them): first the era beyond two deciles of the
// shape's, then riding, then any era, then the type, then the era,
// then whether it is spent. Riding is given up before the era drifts
// far: drawn at any era, riders kept riding as often as within two
// deciles (over seeds 4101 to 4112, 9, 10 and 9 seeds met against 9, 10
// and 8, three draws each) but the era met on fewer (8, 9 and 9 against
// 11, 11 and 10). The class and the chain's length are never given up:
// the target is kept per class of groups, and the length is what a
// group's size shows.
var relaxations = []relaxation{
	{func(p leak.Profile) leak.Profile { return p }, 2},
	{func(p leak.Profile) leak.Profile { p.Riding = false; return p }, 2},
	{func(p leak.Profile) leak.Profile { p.Riding = false; return p }, anyEra},
	{func(p leak.Profile) leak.Profile { p.Type, p.Riding = 0, false; return p }, anyEra},
	{func(p leak.Profile) leak.Profile { p.Era, p.Type, p.Riding = 0, 0, false; return p }, anyEra},
	{func(p leak.Profile) leak.Profile { p.Era, p.Type, p.Riding, p.Spent = 0, 0, false, false; return p }, anyEra},
}

// relaxation is a round of a short draw: the shape relaxed, and how far
// from its era a chain may lie.
type relaxation struct {
	relax func(leak.Profile) leak.Profile
	drift int
}

// anyEra lets a round take chains of any era.
const anyEra = -1

// maxWalks bounds the candidate chains found per length (and count of
// spent scripts) a wallet's draw needs.
const maxWalks = 4000

// profileIn is the profile of chain script id seen in from..to, and
// whether it appears there at all. Riding is left false: its caller
// sets it from the script's chain (rides, escort).
func (f *fetchSim) profileIn(id uint32, from, to int32) (leak.Profile, bool) {
	sc := &f.s.chain.scripts[id]
	var in []int32
	for _, h := range sc.heights {
		if h >= from && h <= to {
			in = append(in, h)
		}
	}
	if len(in) == 0 {
		return leak.Profile{}, false
	}
	spent := slices.ContainsFunc(sc.spends, func(h int32) bool { return h >= from && h <= to })
	return leak.ProfileOf(sc.pk, leak.Match{Appearances: uint64(len(in)), Heights: in}, spent, from, to), true
}

// txIndex lists, per chain script, the transactions of from..to (from
// 1) that pay or spend it.
func (f *fetchSim) txIndex(from, to int32) map[uint32][]int {
	out := map[uint32][]int{}
	for i := range f.s.chain.txs {
		r := &f.s.chain.txs[i]
		if r.h < from || r.h > to {
			continue
		}
		for _, id := range slices.Concat(r.ins, r.outs) {
			if l := out[id]; len(l) == 0 || l[len(l)-1] != i+1 {
				out[id] = append(l, i+1)
			}
		}
	}
	return out
}

// rides reports whether script id rides in its chain: every
// transaction of txs (id's, from 1) holds another script for which
// mate is true, as the attack's riding asks another match in each of a
// script's transactions.
func (f *fetchSim) rides(id uint32, txs []int, mate func(uint32) bool) bool {
	for _, t := range txs {
		r := &f.s.chain.txs[t-1]
		if !slices.ContainsFunc(slices.Concat(r.ins, r.outs), func(x uint32) bool { return x != id && mate(x) }) {
			return false
		}
	}
	return len(txs) > 0
}

// walletChains is the profiles of wallet w's scripts seen in from..to,
// each with its chain (Group): the scripts that share a transaction of
// from..to, directly or through its payers' change and its payees, as
// the client knows its own transactions; riding where each of its
// transactions there holds another script of its chain (its own, a
// payer's change or a payee), which the client reads in its own
// blocks.
func (f *fetchSim) walletChains(w *fetchWalletSim, from, to int32, txsOf map[uint32][]int) (ids []uint32, profiles []leak.Profile) {
	b := f.s.chain
	node := map[uint32]bool{}
	for _, id := range slices.Concat(w.scripts, w.payerChange, w.payees) {
		node[id] = true
	}
	parent := map[uint32]uint32{}
	var find func(uint32) uint32
	find = func(x uint32) uint32 {
		p, ok := parent[x]
		if !ok || p == x {
			return x
		}
		r := find(p)
		parent[x] = r
		return r
	}
	for i := range b.txs {
		r := &b.txs[i]
		if r.h < from || r.h > to {
			continue
		}
		first, any := uint32(0), false
		for _, id := range slices.Concat(r.ins, r.outs) {
			if !node[id] {
				continue
			}
			if !any {
				first, any = find(id), true
				continue
			}
			if x := find(id); x != first {
				parent[x] = first
			}
		}
	}
	group := map[uint32]int{}
	for _, id := range w.scripts {
		p, ok := f.profileIn(id, from, to)
		if !ok {
			continue
		}
		root := find(id)
		if group[root] == 0 {
			group[root] = len(group) + 1
		}
		p.Group = group[root]
		p.Riding = f.rides(id, txsOf[id], func(x uint32) bool { return node[x] && find(x) == root })
		ids = append(ids, id)
		profiles = append(profiles, p)
	}
	_, profiles = leak.Shapes(profiles)
	return ids, profiles
}

// coverWalk finds cover chains on the background's transactions.
type coverWalk struct {
	f        *fetchSim
	from, to int32
	own      map[int32]bool // the wallet's blocks
}

// eligible reports whether chain script id may be a cover: of no
// wallet, payer or payee (untracked), all of its appearances in from..to
// and in no block of the wallet's, at most leak.MaxProfileClass of them.
func (c *coverWalk) eligible(id uint32) bool {
	sc := &c.f.s.chain.scripts[id]
	n := len(sc.heights)
	return !sc.track && n > 0 && n <= leak.MaxProfileClass && sc.heights[0] >= c.from && sc.heights[n-1] <= c.to &&
		!slices.ContainsFunc(sc.heights, func(h int32) bool { return c.own[h] })
}

// usable reports whether transaction t (from 1) lies in from..to and in
// no block of the wallet's.
func (c *coverWalk) usable(t int) bool {
	if t == 0 {
		return false
	}
	h := c.f.s.chain.txs[t-1].h
	return h >= c.from && h <= c.to && !c.own[h]
}

// walk is a chain of n covers, m of them spent in from..to where the
// transactions allow (the caller keeps those of the shape it needs), that
// starts at transaction start (from 1), as a wallet's payments chain:
// each transaction pays a cover (as a payment pays the wallet) beside a
// link output (as the payer's change) that the next transaction spends;
// where the cover is spent in from..to, an output of the transaction
// spending it that appears nowhere else is a cover too (as the wallet's
// change beside the payee of its spend). It returns the covers and
// links, or false when the background holds no such chain from start.
func (c *coverWalk) walk(start, n, m int, rng *rand.Rand) (covers, links []uint32, ok bool) {
	b := c.f.s.chain
	in := map[uint32]bool{}
	take := func(ids []uint32, want func(int) bool) (uint32, int, bool) {
		for _, i := range rng.Perm(len(ids)) {
			if id := ids[i]; !in[id] && want(i) {
				return id, i, true
			}
		}
		return 0, 0, false
	}
	spent := 0
	for t := start; len(covers) < n; {
		if !c.usable(t) {
			return nil, nil, false
		}
		r := &b.txs[t-1]
		// A spent cover and its change take two of the chain's places;
		// the spent ones still owed are placed among the steps left.
		owe, left := m-spent, n-len(covers)
		wantSpent := owe > 0 && (2*owe >= left || rng.IntN(left-owe) < owe)
		kind := func(spent bool) func(int) bool {
			return func(i int) bool { return c.eligible(r.outs[i]) && c.usable(r.spentBy[i]) == spent }
		}
		// The other kind where this transaction has none of the one
		// wanted: the chain's shape then says what it holds.
		cv, ci, found := take(r.outs, kind(wantSpent))
		if !found {
			wantSpent = !wantSpent
			if cv, ci, found = take(r.outs, kind(wantSpent)); !found {
				return nil, nil, false
			}
		}
		in[cv] = true
		covers = append(covers, cv)
		if wantSpent {
			spent++
			if len(covers) < n {
				sr := &b.txs[r.spentBy[ci]-1]
				id, _, ok := take(sr.outs, func(i int) bool {
					return c.eligible(sr.outs[i]) && len(b.scripts[sr.outs[i]].heights) == 1
				})
				if !ok {
					return nil, nil, false
				}
				in[id] = true
				covers = append(covers, id)
			}
		}
		if len(covers) == n {
			// The last transaction's other output, where it appears
			// nowhere else, rides with it as the last payer's change.
			if lk, _, ok := take(r.outs, func(i int) bool {
				return c.eligible(r.outs[i]) && len(b.scripts[r.outs[i]].heights) == 1
			}); ok {
				links = append(links, lk)
			}
			break
		}
		// A link appears in its two transactions alone, so that the
		// attack matches it and ties the covers on either side.
		lk, li, found := take(r.outs, func(i int) bool {
			s := r.spentBy[i]
			return c.eligible(r.outs[i]) && c.usable(s) && len(b.scripts[r.outs[i]].heights) == min(2, int(b.txs[s-1].h-r.h)+1)
		})
		if !found {
			return nil, nil, false
		}
		in[lk] = true
		links = append(links, lk)
		t = r.spentBy[li]
	}
	return covers, links, true
}

// escort makes the covers of a chain ride where their transactions
// allow, and returns those that ride and the chain's links with the
// riders added. A cover rides where each transaction of it in from..to
// holds another script of its chain, as the attack's riding asks
// another match in each. A cover paid or spent again outside its walk
// (the background pays a script more than once) sits there alone,
// where a wallet's script paid again sits beside its payer's change; so
// a script of each such transaction whose every appearance lies in the
// covers' blocks (fetched with them, so that the attack matches it)
// joins the chain as a link, as that payer's change. A cover with a
// transaction that holds none keeps no rider and does not ride.
//
// The client makes the same decision from what it holds: the filters
// give a candidate's and a rider's heights, and the transactions there
// are in the blocks of the chain it explored and, for a cover's other
// appearances, in blocks it holds once it has fetched them (it settles
// the chains it drew on the blocks fetched, and keeps those whose
// riders are like the wallet's scripts'); the simulation decides before
// the fetch, and so does not pay for the chains a client fetches and
// leaves out.
func (c *coverWalk) escort(covers, links []uint32, txsOf map[uint32][]int, rng *rand.Rand) (riding map[uint32]bool, out []uint32) {
	b := c.f.s.chain
	in := map[uint32]bool{}
	for _, id := range slices.Concat(covers, links) {
		in[id] = true
	}
	seen := map[int32]bool{} // the covers' blocks, fetched with them
	for _, id := range covers {
		for _, h := range b.scripts[id].heights {
			seen[h] = true
		}
	}
	rider := func(x uint32) bool {
		return c.eligible(x) && !slices.ContainsFunc(b.scripts[x].heights, func(h int32) bool { return !seen[h] })
	}
	riding = map[uint32]bool{}
	out = links
	for _, id := range covers {
		var add []uint32
		rides := len(txsOf[id]) > 0
		for _, t := range txsOf[id] {
			r := &b.txs[t-1]
			all := slices.Concat(r.ins, r.outs)
			if slices.ContainsFunc(all, func(x uint32) bool { return x != id && in[x] }) {
				continue
			}
			found := false
			for _, i := range rng.Perm(len(all)) {
				if x := all[i]; x != id && !in[x] && !slices.Contains(add, x) && rider(x) {
					add, found = append(add, x), true
					break
				}
			}
			if !found {
				rides = false
				break
			}
		}
		if !rides {
			continue
		}
		riding[id] = true
		for _, x := range add {
			in[x] = true
		}
		out = append(out, add...)
	}
	return riding, out
}

// drawCovers draws wallet w's covers over from..to to target t as whole
// chains shaped like the wallet's: the wallet's chains (walletChains)
// set the need (leak.Need, a chain each), and the candidates are chains
// of the background's transactions (coverWalk.walk) of the lengths
// needed, whose transactions lie in from..to and in no block of the
// wallet's, drawn by shape (leak.Draw; a short shape gives up what
// relaxations name). It returns the covers, the links of their chains
// (outputs the attack groups with them, as a payer's change), and how
// many chains the chain could not give.
func (f *fetchSim) drawCovers(w *fetchWalletSim, from, to int32, t float64, seed uint64) (covers, links []uint32, short int) {
	b := f.s.chain
	cw := &coverWalk{f: f, from: from, to: to, own: map[int32]bool{}}
	for _, id := range w.scripts {
		for _, h := range b.scripts[id].heights {
			cw.own[h] = true
		}
	}
	txsOf := f.txIndex(from, to)
	_, wallet := f.walletChains(w, from, to, txsOf)
	need := leak.Need(wallet, nil, nil, t)
	lengths := map[[2]int]bool{}
	for p := range need {
		lengths[[2]int{p.Chain, p.ChainSpent}] = true
	}
	rng := rand.New(rand.NewPCG(seed, 0x77616c6b))
	var cands []leak.Profiled
	linksOf := map[int][]uint32{}
	ids := map[string]uint32{}
	for _, nm := range slices.SortedFunc(maps.Keys(lengths), func(a, b [2]int) int { return cmp.Or(a[0]-b[0], a[1]-b[1]) }) {
		found := 0
		for _, i := range rng.Perm(len(b.txs)) {
			if found == maxWalks {
				break
			}
			cs, ls, ok := cw.walk(i+1, nm[0], nm[1], rng)
			if !ok {
				continue
			}
			found++
			g := len(linksOf) + 1
			riding, ls := cw.escort(cs, ls, txsOf, rng)
			linksOf[g] = ls
			for _, id := range cs {
				p, _ := f.profileIn(id, from, to)
				p.Group = g
				p.Riding = riding[id]
				cands = append(cands, leak.Profiled{Script: b.scripts[id].pk, Profile: p})
				ids[string(b.scripts[id].pk)] = id
			}
		}
	}
	d := &chainDraw{cands: cands, ids: ids, linksOf: linksOf, taken: map[uint32]bool{}}
	for i, r := range relaxations {
		if len(need) == 0 {
			break
		}
		need = d.round(need, r, seed+uint64(i))
	}
	for _, n := range need {
		short += n
	}
	// A chain of a class no candidate chain has (a wallet paid again
	// and again) is still stood for by a chain of its length, so that
	// the wallet's largest groups do not stand alone; it counts short,
	// as its class keeps no more than the covers it has.
	d.round(need, relaxation{func(p leak.Profile) leak.Profile { return leak.Profile{Chain: p.Chain} }, anyEra}, seed+uint64(len(relaxations)))
	return d.covers, d.links, short
}

// chainDraw is a wallet's draw of cover chains over rounds of relaxed
// shapes: the candidates, their scripts' ids and their chains' links,
// and what was drawn.
type chainDraw struct {
	cands   []leak.Profiled
	ids     map[string]uint32
	linksOf map[int][]uint32
	taken   map[uint32]bool
	covers  []uint32
	links   []uint32
}

// round draws need, relaxed by r, from the candidate chains of which
// no script or link is taken and whose shape lies within r's drift of a
// shape needed, and returns what it could not give.
func (d *chainDraw) round(need map[leak.Profile]int, r relaxation, seed uint64) map[leak.Profile]int {
	relaxed := map[leak.Profile]int{}
	for p, n := range need {
		relaxed[r.relax(p)] += n
	}
	var pool []leak.Profiled
	for _, c := range d.cands {
		if !d.taken[d.ids[string(c.Script)]] && !slices.ContainsFunc(d.linksOf[c.Profile.Group], d.isTaken) {
			p := r.relax(c.Profile)
			p.Group = c.Profile.Group
			pool = append(pool, leak.Profiled{Script: c.Script, Profile: p})
		}
	}
	if r.drift != anyEra {
		pool = nearShapes(pool, relaxed, r.drift)
	}
	drawn, missing := leak.Draw(pool, relaxed, seed)
	// Draw keeps scripts apart within a round; a chain whose script is
	// another's link is passed over with what the chain could not give.
	for _, ch := range chainsOf(drawn) {
		ps := make([]leak.Profile, len(ch))
		clash := slices.ContainsFunc(d.linksOf[ch[0].Profile.Group], d.isTaken)
		for j, c := range ch {
			ps[j] = c.Profile
			clash = clash || d.taken[d.ids[string(c.Script)]]
		}
		if clash {
			missing[leak.Shape(ps)]++
			continue
		}
		for _, c := range ch {
			id := d.ids[string(c.Script)]
			d.taken[id] = true
			d.covers = append(d.covers, id)
		}
		for _, id := range d.linksOf[ch[0].Profile.Group] {
			d.taken[id] = true
			d.links = append(d.links, id)
		}
	}
	return missing
}

func (d *chainDraw) isTaken(id uint32) bool { return d.taken[id] }

// nearShapes keeps the chains of pool (in chains, as leak.Draw takes
// them) whose shape is one of need's but for an era at most drift away.
func nearShapes(pool []leak.Profiled, need map[leak.Profile]int, drift int) []leak.Profiled {
	keys := slices.Collect(maps.Keys(need))
	var out []leak.Profiled
	for _, ch := range chainsOf(pool) {
		ps := make([]leak.Profile, len(ch))
		for i, c := range ch {
			ps[i] = c.Profile
		}
		sh := leak.Shape(ps)
		if slices.ContainsFunc(keys, func(p leak.Profile) bool {
			q := sh
			q.Era = p.Era
			return q == p && abs(sh.Era-p.Era) <= drift
		}) {
			out = append(out, ch...)
		}
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// chainsOf splits what leak.Draw drew into its chains, in order.
func chainsOf(drawn []leak.Profiled) [][]leak.Profiled {
	var out [][]leak.Profiled
	for i, d := range drawn {
		if i == 0 || d.Profile.Group != drawn[i-1].Profile.Group {
			out = append(out, nil)
		}
		out[len(out)-1] = append(out[len(out)-1], d)
	}
	return out
}

// coverHeights are the blocks of from..to that covers appear in and no
// earlier reason took; it marks them taken.
func (f *fetchSim) coverHeights(covers []uint32, from, to int32, taken map[int32]bool) []int32 {
	got := map[int32]bool{}
	for _, id := range covers {
		for _, h := range f.s.chain.scripts[id].heights {
			if h >= from && h <= to && !taken[h] {
				taken[h], got[h] = true, true
			}
		}
	}
	return sortedHeights(got)
}
