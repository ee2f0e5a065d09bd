package client

import (
	"maps"
	"math/rand/v2"
	"slices"

	"github.com/spvfilter/spvfilter/peer/cover"
)

// Across sessions. Covers are drawn from chains found in blocks a scan
// short of them explored, so each cover has a block some earlier
// session asked for, where the wallet's blocks are never explored: a
// peer that keeps every session (or peers that collude) would tell the
// covers as the chains with a block asked before. So the first round of
// exploring of a scan also asks, among the blocks it explores and in
// the same sorted request, for one block, chosen at random, of each of
// the wallet's chains (walletChains) none of whose blocks any peer was
// asked for before (the ledger, kept across sessions, remembers it: the
// block is asked once). Then every chain of the wallet's, like every
// cover's, has a block asked in an earlier session; within its session
// such a block is one appearance among the blocks explored, whose
// scripts appear once each. It joins neither the blocks explored nor
// the reserve (a cover found in a block of the wallet's would share it):
// it is read only for the false matches it shows (refute).

// walletOnce returns one height, chosen at random, of each of the
// wallet's chains matched in the range (its scripts' heights on the
// held filters among the wallet's blocks, less the matches known false)
// none of whose heights any peer was asked for before the scan
// (cs.before), in order of height.
func (cs *coverScan) walletOnce() []int32 {
	var ms []member
	for i, s := range cs.wallet {
		if i >= len(cs.walletHeights) {
			break
		}
		hs := slices.DeleteFunc(slices.Clone(cs.walletHeights[i]), func(h int32) bool {
			return !cs.walletAt[h] || cs.set.Refuted(cover.MatchKeyOf(cs.hash(h), s))
		})
		if len(hs) > 0 {
			ms = append(ms, member{script: s, heights: hs})
		}
	}
	walletChains(ms)
	chains := map[uint64]map[int32]int{} // per chain, its scripts per height
	for _, m := range ms {
		if chains[m.group] == nil {
			chains[m.group] = map[int32]int{}
		}
		for _, h := range m.heights {
			chains[m.group][h]++
		}
	}
	var out []int32
	for _, at := range chains {
		if slices.ContainsFunc(slices.Collect(maps.Keys(at)), func(h int32) bool { return cs.before[h] }) {
			continue
		}
		out = append(out, fullest(at))
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// fullest returns, of the heights of a chain (at: its scripts per
// height), one holding the most of its scripts, chosen at random among
// those: a cover chain is found in a block of its owner's transactions,
// which holds every script of it, so a block of the wallet's chain
// holding fewer would leave scripts of its with no block asked before.
func fullest(at map[int32]int) int32 {
	var best []int32
	most := 0
	for h, n := range at {
		switch {
		case n > most:
			best, most = []int32{h}, n
		case n == most:
			best = append(best, h)
		}
	}
	slices.Sort(best)
	return best[rand.IntN(len(best))]
}
