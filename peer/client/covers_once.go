package client

import (
	"math/rand/v2"
	"slices"

	"github.com/spvfilter/spvfilter/peer/cover"
)

// Across sessions. Covers are drawn from chains found in blocks a scan
// short of them explored, so each cover has a block some earlier
// session asked for: were the wallet's blocks never explored, a peer
// that keeps every session (or peers that collude) would tell the
// covers as the chains with a block asked before, and the blocks left
// unasked once the sweep has lapped would be the wallet's. So the sweep
// takes the wallet's blocks as any other (profileRange labels only the
// covers' in use), and the first round of exploring of a scan also
// asks, among the blocks it explores and in the same sorted request,
// for one block of each of the wallet's chains (walletChains) none of
// whose blocks any peer was asked for before (the ledger, kept across
// sessions, remembers it: the block is asked once), the block holding
// the most of the chain's scripts (fullest), unless the sweep takes one
// as full in that round. Then every chain of the
// wallet's, like every cover's, has a block asked in an earlier
// session, and its other blocks were swept at the rate a cover's were;
// within its session such a block is one appearance among the blocks
// explored, whose scripts appear once each. It is read only for the
// false matches it shows (refute), and joins neither the blocks
// explored nor the reserve. A scan allowed short of its covers
// (Config.AllowShortCovers) fetches the wallet's blocks in the same
// session and asks for none of them beforehand.

// walletOnce returns, for each of the wallet's chains matched in the
// range (its scripts' heights on the held filters among the wallet's
// blocks, less the matches known false) none of whose heights any peer
// was asked for before the scan (cs.before), one of its heights holding
// the most of its scripts, at random among those (fullest), unless now
// (the heights the round explores) holds one as full; in order of
// height.
func (cs *coverScan) walletOnce(now []int32) []int32 {
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
		if cs.chainAskedBefore(at) {
			continue
		}
		h := fullest(at)
		if slices.ContainsFunc(now, func(n int32) bool { return at[n] == at[h] }) {
			continue // the round asks for a block as full already
		}
		out = append(out, h)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// chainAskedBefore reports whether a peer was asked for a block of the chain
// (at: its scripts per height) before the scan.
func (cs *coverScan) chainAskedBefore(at map[int32]int) bool {
	for h := range at {
		if cs.before[h] {
			return true
		}
	}
	return false
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

// noteWalletExplored notes the wallet's heights among hs, fetched while
// exploring.
func (cs *coverScan) noteWalletExplored(hs []int32) {
	for _, h := range hs {
		if cs.walletAt[h] {
			if cs.walletExplored == nil {
				cs.walletExplored = map[int32]bool{}
			}
			cs.walletExplored[h] = true
		}
	}
}
