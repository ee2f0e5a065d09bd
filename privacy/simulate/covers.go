package simulate

import (
	"slices"

	"github.com/spvfilter/spvfilter/privacy/leak"
)

// The covered regime: a client fetches, beside its wallet's blocks, the
// blocks of cover scripts of others drawn by the rule a covering client
// follows (leak.Need sizes them per class, leak.Draw draws them to the
// wallet's profiles), one set per wallet for all its sessions, so that
// intersecting its sessions keeps them.

// relaxations are the profile fields a short draw gives up, in turn, to
// fill what the exact profile could not: first the era, then the type,
// then whether it is spent. The class is never given up: it is what the
// target is kept in.
var relaxations = []func(leak.Profile) leak.Profile{
	func(p leak.Profile) leak.Profile { return p },
	func(p leak.Profile) leak.Profile { p.Era = 0; return p },
	func(p leak.Profile) leak.Profile { p.Era, p.Type = 0, 0; return p },
	func(p leak.Profile) leak.Profile { p.Era, p.Type, p.Spent = 0, 0, false; return p },
}

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

// drawCovers draws wallet w's covers over from..to to target t, as
// groups that look like the wallet's: the wallet's scripts' profiles set
// the need (a group each), and a cover group is a host, a chain script of
// no wallet, payer or payee (untracked) all of whose appearances lie in
// from..to and in no block of the wallet's, of at most
// leak.MaxProfileClass appearances, drawn by its profile, with a mate: an
// output of the transaction that first paid the host that appears only
// there, as a payer's change beside a payment to the wallet does (the
// attack groups it with the host). A host with no mate is no candidate.
// It returns the covers, each host followed by its mate, and how many
// groups the chain could not give.
func (f *fetchSim) drawCovers(w *fetchWalletSim, from, to int32, t float64, seed uint64) ([]uint32, int) {
	b := f.s.chain
	own := map[int32]bool{}
	var wallet []leak.Profile
	for _, id := range w.scripts {
		if p, ok := f.profileIn(id, from, to); ok {
			wallet = append(wallet, p)
		}
		for _, h := range b.scripts[id].heights {
			own[h] = true
		}
	}
	eligible := func(sc *script) bool {
		n := len(sc.heights)
		return !sc.track && n > 0 && n <= leak.MaxProfileClass && sc.heights[0] >= from && sc.heights[n-1] <= to &&
			!slices.ContainsFunc(sc.heights, func(h int32) bool { return own[h] })
	}
	var cands []leak.Profiled
	ids := map[string][2]uint32{} // host's script: host and mate
	for id := range b.scripts {
		sc := &b.scripts[id]
		if sc.born == 0 || !eligible(sc) {
			continue
		}
		mate := -1
		for _, m := range b.txOuts[sc.born-1] {
			ms := &b.scripts[m]
			if int(m) != id && ms.born == sc.born && eligible(ms) && len(ms.heights) == 1 && ms.heights[0] == sc.heights[0] {
				mate = int(m)
				break
			}
		}
		if mate < 0 {
			continue
		}
		p, _ := f.profileIn(uint32(id), from, to)
		cands = append(cands, leak.Profiled{Script: sc.pk, Profile: p})
		ids[string(sc.pk)] = [2]uint32{uint32(id), uint32(mate)}
	}
	need := leak.Need(wallet, nil, nil, t)
	var covers []uint32
	taken := map[uint32]bool{}
	for i, relax := range relaxations {
		relaxed := map[leak.Profile]int{}
		for p, n := range need {
			relaxed[relax(p)] += n
		}
		var pool []leak.Profiled
		for _, c := range cands {
			hm := ids[string(c.Script)]
			if !taken[hm[0]] && !taken[hm[1]] {
				pool = append(pool, leak.Profiled{Script: c.Script, Profile: relax(c.Profile)})
			}
		}
		drawn, missing := leak.Draw(pool, relaxed, seed+uint64(i))
		for _, d := range drawn {
			hm := ids[string(d.Script)]
			if taken[hm[0]] || taken[hm[1]] {
				// one pair's mate is another's host: the later is
				// short, counted with what the chain could not give
				missing[d.Profile]++
				continue
			}
			taken[hm[0]], taken[hm[1]] = true, true
			covers = append(covers, hm[0], hm[1])
		}
		need = missing
		if len(need) == 0 {
			break
		}
	}
	short := 0
	for _, n := range need {
		short += n
	}
	return covers, short
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
