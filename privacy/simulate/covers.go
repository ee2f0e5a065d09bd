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

// relaxations are the profile fields a short draw gives up, in turn, to
// fill what the exact shape could not: first the type, then the era,
// then whether it is spent. The class and the chain's length are never
// given up: the target is kept per class of groups, and the length is
// what a group's size shows.
var relaxations = []func(leak.Profile) leak.Profile{
	func(p leak.Profile) leak.Profile { return p },
	func(p leak.Profile) leak.Profile { p.Type = 0; return p },
	func(p leak.Profile) leak.Profile { p.Era, p.Type = 0, 0; return p },
	func(p leak.Profile) leak.Profile { p.Era, p.Type, p.Spent = 0, 0, false; return p },
}

// maxWalks bounds the candidate chains found per length (and count of
// spent scripts) a wallet's draw needs.
const maxWalks = 4000

// profileIn is the profile of chain script id seen in from..to, and
// whether it appears there at all. Riding (in other matches'
// transactions) is left false for wallet and cover alike: the simulation
// does not know which of a block's scripts the attack will match.
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

// walletChains is the profiles of wallet w's scripts seen in from..to,
// each with its chain (Group): the scripts that share a transaction of
// from..to, directly or through its payers' change and its payees, as
// the client knows its own transactions.
func (f *fetchSim) walletChains(w *fetchWalletSim, from, to int32) (ids []uint32, profiles []leak.Profile) {
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
	_, wallet := f.walletChains(w, from, to)
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
			linksOf[g] = ls
			for _, id := range cs {
				p, _ := f.profileIn(id, from, to)
				p.Group = g
				cands = append(cands, leak.Profiled{Script: b.scripts[id].pk, Profile: p})
				ids[string(b.scripts[id].pk)] = id
			}
		}
	}
	d := &chainDraw{cands: cands, ids: ids, linksOf: linksOf, taken: map[uint32]bool{}}
	for i, relax := range relaxations {
		if len(need) == 0 {
			break
		}
		need = d.round(need, relax, seed+uint64(i))
	}
	for _, n := range need {
		short += n
	}
	// A chain of a class no candidate chain has (a wallet paid again
	// and again) is still stood for by a chain of its length, so that
	// the wallet's largest groups do not stand alone; it counts short,
	// as its class keeps no more than the covers it has.
	d.round(need, func(p leak.Profile) leak.Profile { return leak.Profile{Chain: p.Chain} }, seed+uint64(len(relaxations)))
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

// round draws need, relaxed by relax, from the candidate chains of which
// no script or link is taken, and returns what it could not give.
func (d *chainDraw) round(need map[leak.Profile]int, relax func(leak.Profile) leak.Profile, seed uint64) map[leak.Profile]int {
	relaxed := map[leak.Profile]int{}
	for p, n := range need {
		relaxed[relax(p)] += n
	}
	var pool []leak.Profiled
	for _, c := range d.cands {
		if !d.taken[d.ids[string(c.Script)]] && !slices.ContainsFunc(d.linksOf[c.Profile.Group], d.isTaken) {
			p := relax(c.Profile)
			p.Group = c.Profile.Group
			pool = append(pool, leak.Profiled{Script: c.Script, Profile: p})
		}
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
