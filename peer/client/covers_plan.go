package client

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

// plan profiles the wallet and the covers on the filters of the range
// and, while covers are short of the target, draws cover chains from
// the reserve (leak.Need, leak.Draw, relaxing a shape where no
// candidate chain has it) and explores blocks for more candidates, in
// rounds, before any block of the wallet is fetched. It returns the
// heights to fetch: the wallet's of matched (the filter pass's), the
// blocks explored (held already), and the covers' (those in use first,
// then the new ones) within the bound. Covers still short, the scan
// fails with *PrivacyTargetError unless Config.AllowShortCovers.
func (cs *coverScan) plan(ctx context.Context, log *scanLog, matched []int32, forced map[int32]bool) ([]int32, error) {
	return cs.planProfiled(ctx, log, cs.profileRange(matched, forced))
}

// planProfiled is plan once the wallet and the covers in use are
// profiled (profileRange), the covers' heights at coverHeights.
func (cs *coverScan) planProfiled(ctx context.Context, log *scanLog, coverHeights [][]int32) ([]int32, error) {
	cs.log = log
	cs.before = cs.askedBefore()
	bound := cs.bound()
	if err := cs.exploreRounds(ctx, log, bound, coverHeights, cs.need()); err != nil {
		return nil, err
	}
	return cs.closePlan(bound, coverHeights)
}

// exploreRounds draws, in rounds, the cover chains short (short, at
// first) from the reserve and, still short, explores blocks for more
// candidates, within bound beside the covers in use (coverHeights),
// until none is short or exploring finds nothing more to take.
func (cs *coverScan) exploreRounds(ctx context.Context, log *scanLog, bound int, coverHeights [][]int32, short map[leak.Profile]int) error {
	// Draw what the reserve holds and settle the chains drawn against
	// the whole plan; still short, explore blocks for the next scan
	// (twice as many after each scan short in a row), leaving room
	// within the bound for the blocks of the chains still short that
	// the reserve may give (exploreRoom), and
	// of those drawn where the scan may fetch them (exploreBeside):
	// this scan draws none of the chains it finds. Only a match of the
	// wallet's the blocks explored show false, which changes what the
	// wallet needs, has it draw and explore again.
	cs.foundNow = map[string]uint8{}
	for round := cs.firstRound(); len(short) > 0; round++ {
		short = cs.drawSettled(bound, coverHeights, short)
		n := chainsShort(short)
		cs.short = n
		if n == 0 {
			break
		}
		room := cs.exploreRoom(short, n, cs.room(bound, cs.exploreBeside(coverHeights)))
		ask := min(max(minExploreBlocks, exploreFactor*n)<<min(round, maxEscalation), room)
		hs := cs.exploreNext(ask)
		cs.rangeDone = cs.rangeDone || (ask > 0 && len(hs) < ask)
		hs = cs.withLapHoles(hs)
		if len(hs) == 0 {
			break
		}
		var once []int32
		if !cs.onceAsked && (cs.c == nil || !cs.c.cfg.AllowShortCovers) {
			hs = cs.dropUnfound(hs)
			once, cs.onceAsked = cs.walletOnce(hs), true
			cs.onceFetched = len(once)
			if len(once) > 0 {
				cs.startOnceEpoch()
			}
		}
		blocks, onceBlocks, err := cs.fetchExploredWith(ctx, log, hs, once)
		if err != nil {
			return fmt.Errorf("client: exploring blocks for covers: %w", err)
		}
		cs.noteWalletExplored(slices.Concat(hs, once))
		refuted := cs.refute(once, onceBlocks) > 0
		if !cs.took(hs, blocks) && !refuted {
			break
		}
		// A wallet's match the blocks showed false: its profile is
		// what the attack sees, without it.
		cs.reprofileWallet()
		short = cs.need()
	}
	return nil
}

// exploreRoom is how much of room, the bound's room beside the covers,
// exploring takes while n chains are short (short): room less the blocks
// of those chains (as many as the wallet's largest class a chain), kept
// for a later round of the scan to draw them from the reserve, where the
// reserve holds a candidate of a class short, or one above, that the
// scan may still draw (not found by it, not drawn nor turned down by
// it); all of room where it holds none, as in a data directory's first
// scan: no round draws a chain the scan finds, so room kept for them
// would lie idle. Where room cannot hold those blocks, none (room less
// them, below zero, as before): chains the bound has no room to fetch
// are not worth exploring for, and the blocks of the wallet's chains
// asked once (walletOnce) would stand out among a few explored.
//
// Measured on TestCoversAcrossSessions's fixture (60 clients at 0.5),
// where the first scan explored 60 to 65 blocks of a bound of 96 before,
// 80 after (the round's ask), and the next, short of 1 to 3 chains of
// class 3, 16 to 24: the clients that met the target after their 2nd
// session 5 to 11 of 60 before (six runs, mean 8.2), 2 to 7 after (ten
// runs, mean 3.5; TestCoversAcrossSessions and TestCoversRequestShape);
// the blocks asked over every session 139.8 to 143.0 a client before,
// 153.0 to 154.6 after (a tenth more), in 2.05 to 2.08 sessions against
// 2.10 to 2.20; the blocks asked before a chain, the wallet's against
// the covers', 1.03 against 1.12 before, 1.06 and 1.07 against 1.11 to
// 1.15 after (TestCoversAcrossSessions). On TestCoversSpanLikeWallet's
// (96 clients), 137 blocks a client before, 150 after, the span AUC as
// it was (0.844 and 0.856).
func (cs *coverScan) exploreRoom(short map[leak.Profile]int, n, room int) int {
	held := n * max(cs.largest, 1)
	if room < held {
		return room - held
	}
	want := wantedClasses(short)
	for _, c := range cs.set.Reserve() {
		if _, now := cs.foundNow[string(c.Script)]; !now && !cs.skip[string(c.Script)] && want[c.Profile.Class] {
			return room - held
		}
	}
	return room
}

// fetchExplored fetches the blocks at hs to explore them: from the
// client's peers, unless blocksAt gives them.
func (cs *coverScan) fetchExplored(ctx context.Context, log *scanLog, hs []int32) ([]*wire.MsgBlock, error) {
	if cs.blocksAt != nil {
		return cs.blocksAt(hs), nil
	}
	return cs.c.fetchBlocks(ctx, log, hs, nil)
}

// fetchExploredWith fetches the blocks at hs to explore them and those
// at once, one block of each of the wallet's chains asked for the first
// time (walletOnce), in one request sorted by height, so that nothing
// in it tells the wallet's from those explored; it returns each part's.
func (cs *coverScan) fetchExploredWith(ctx context.Context, log *scanLog, hs, once []int32) (explored, onceBlocks []*wire.MsgBlock, err error) {
	if len(once) == 0 {
		explored, err = cs.fetchExplored(ctx, log, hs)
		return explored, nil, err
	}
	all := slices.Compact(slices.Sorted(slices.Values(slices.Concat(hs, once))))
	blocks, err := cs.fetchExplored(ctx, log, all)
	if err != nil {
		return nil, nil, err
	}
	at := map[int32]*wire.MsgBlock{}
	for i, h := range all {
		if i < len(blocks) {
			at[h] = blocks[i]
		}
	}
	for _, h := range hs {
		explored = append(explored, at[h])
	}
	for _, h := range once {
		onceBlocks = append(onceBlocks, at[h])
	}
	return explored, onceBlocks, nil
}

// exploreBeside is what exploring leaves room beside within the bound:
// the covers in use at inUse and, where the scan may yet fetch them,
// the pending chains. Covers short even with the chains settling
// turned down taken back (readmit), and not allowed short
// (Config.AllowShortCovers), the scan stops before fetching any
// pending chain: leaving room for them would leave a scan whose draw
// fills the bound exploring nothing, and every scan after it drawing
// the same chains short.
func (cs *coverScan) exploreBeside(inUse [][]int32) [][]int32 {
	if (cs.c == nil || !cs.c.cfg.AllowShortCovers) && cs.shortAnyway() {
		return inUse
	}
	return cs.withPending(inUse)
}

// shortAnyway reports whether the covers are short with the pending
// chains and those settling turned down alike.
func (cs *coverScan) shortAnyway() bool {
	return len(cs.needWith(cs.turned)) > 0
}

// closePlan settles the chains drawn against the plan once more, the
// blocks explored last in it, takes back chains turned down where the
// covers are short without them (readmit), and returns the plan's
// heights within bound, the covers in use at coverHeights. Covers
// still short, or left out by the bound, it returns a
// *PrivacyTargetError, keeping what the scan found for the next one,
// unless Config.AllowShortCovers, which has the result say why.
func (cs *coverScan) closePlan(bound int, coverHeights [][]int32) ([]int32, error) {
	cs.settle(bound, coverHeights)
	short := cs.need()
	if len(short) > 0 {
		short = cs.readmit(cs.needWith)
	}
	cs.bounded, cs.inUseHeights = bound, coverHeights
	coverHeights = cs.withPending(coverHeights)
	cs.short = chainsShort(short)
	drawn := cs.shortDrawn(short)
	classes := drawn
	if len(drawn) == 0 {
		classes = short // the bound is all that is short
	}
	for p := range classes {
		if !slices.Contains(cs.shortClasses, p.Class) {
			cs.shortClasses = append(cs.shortClasses, p.Class)
		}
	}
	slices.Sort(cs.shortClasses)
	// A range swept whole still offers the next scan the candidates
	// found in it by this one that could mend what is short; those of
	// other classes, found again each lap, mend nothing.
	found := cs.foundFor(classes)
	cs.rangeDone = (cs.rangeDone || cs.short > 0 && cs.lapped()) && found == 0
	heights, reached := cs.heights(bound, coverHeights)
	if cs.short > 0 || reached > 0 {
		n := chainsShort(drawn)
		e := &PrivacyTargetError{Target: cs.target, Short: n, OnlyBound: cs.short - n, ShortClasses: cs.shortClasses, Unfetched: reached, Explored: len(cs.explored),
			Found: found, Bound: bound, RangeExplored: cs.rangeDone, WalletExplored: len(cs.walletExplored), WalletOnce: cs.onceFetched}
		if !cs.c.cfg.AllowShortCovers {
			cs.keep(nil)
			return nil, e
		}
		cs.why = append(cs.why, "covers short: "+e.Reason())
	}
	return heights, nil
}

// shortDrawn is what the covers are short of with every chain drawn,
// short being what they are short of without those settle left out for
// the bound (unfit): the chains the reserve could not give. A scan short
// anyway explores into the room of the chains drawn, which it fetches
// none of (exploreBeside), so that counting without them would count
// the blocks explored, not the chains missing. Where the chains left
// out for the bound are all that is short, it returns none.
func (cs *coverScan) shortDrawn(short map[leak.Profile]int) map[leak.Profile]int {
	if len(short) == 0 || len(cs.unfit) == 0 {
		return short
	}
	drawn := cs.needWith(cs.unfit)
	if chainsShort(drawn) > chainsShort(short) {
		return short
	}
	return drawn
}

// drawSettled draws the chains of short from the reserve and settles
// them against the plan (settle), drawing again, from a new sample of
// the reserve, while settle turns chains down or a draw leaves fewer
// short (at most maxRedraws draws): a scan draws no chain it found in
// the blocks it explored, so the reserve it starts with is all it has,
// and one sample of it (maxProbes) may hold too few of a rare class.
// It returns what is still short.
func (cs *coverScan) drawSettled(bound int, coverHeights [][]int32, short map[leak.Profile]int) map[leak.Profile]int {
	for try := 0; try < maxRedraws && len(short) > 0; try++ {
		before := chainsShort(short)
		grown := cs.grown
		cs.drawRound(short)
		cs.settle(bound, coverHeights)
		short = cs.need()
		if cs.grown == grown && chainsShort(short) >= before {
			break
		}
	}
	return short
}

// settleFetched settles the pending chains once more on every block
// of the plan, all fetched now in one shuffled order with the wallet's
// (settle), takes back chains turned down while the covers are short
// without them (readmit), leaves out those drawn beyond the need
// (matchRiders: those whose riders are least told from the wallet's
// kept; trim, at random, where it cannot), and adds the rest to the set
// (commit). Covers short then,
// the target is not met: the scan says why (a chain's group read on
// its own blocks only once they are fetched beside the wallet's).
func (cs *coverScan) settleFetched() {
	if len(cs.pending) == 0 {
		return
	}
	// Every pending chain's blocks are fetched: those not added below
	// (turned down, or drawn beyond the need) are decoys.
	var fetched [][]byte
	for _, ch := range cs.pending {
		for _, c := range ch.covers {
			fetched = append(fetched, c.Script)
		}
	}
	defer cs.decoyLeftOut(fetched)
	// Only a chain turned down now may be taken back: one turned down
	// while planning has no block in the plan.
	cs.turned = nil
	cs.settle(cs.bounded, cs.inUseHeights)
	if cs.decoyRoom() < len(fetched) {
		cs.keepFetched()
		cs.commit()
		return
	}
	short := cs.need()
	if len(short) > 0 {
		short = cs.readmit(cs.needWith)
	} else if !cs.matchRiders() {
		cs.trim()
	}
	cs.commit()
	if n := chainsShort(short); n > 0 {
		cs.why = append(cs.why, fmt.Sprintf("%s short once the blocks fetched showed the groups of the chains drawn (they grew through the plan's other blocks): the next scan draws again", nounCount(n, "cover chain")))
	}
}

// commit adds the pending chains to the set, their blocks fetched and
// settled: each cover drawn.
func (cs *coverScan) commit() {
	for _, ch := range cs.pending {
		for i, c := range ch.covers {
			// Its riders over every block of its, fetched.
			if i < len(ch.members) {
				r, n := cs.riders(ch.members[i].script, ch.members[i].heights)
				c.Profile.Riders, c.Profile.Read = uint32(min(r, math.MaxUint32)), uint16(min(n, math.MaxUint16))
			}
			if err := cs.set.Add(c); err != nil {
				cs.why = append(cs.why, fmt.Sprintf("a cover could not be added: %v", err))
				cs.pending = nil
				return
			}
			cs.drawn++
		}
	}
	cs.pending = nil
}

// warnGrownInUse settles the chains of the covers in use as settle
// does the chains drawn, on every block the scan fetched (fetched,
// held) and those
// earlier scans fetched, and warns of those whose groups grew past their
// size in their own blocks (the wallet grew, or other covers were drawn
// since): their size can tell them from the wallet's chains. They are
// kept: dropping a cover marks it to anyone intersecting sessions.
func (cs *coverScan) warnGrownInUse(fetched []int32) {
	chains := chainsOf(cs.inUse)
	if len(chains) == 0 {
		return
	}
	seen := maps.Clone(cs.before)
	if seen == nil {
		seen = map[int32]bool{}
	}
	for _, h := range fetched {
		seen[h] = true
	}
	in := make([]map[int32]bool, 0, 2*len(chains))
	for range chains {
		in = append(in, seen)
	}
	for _, ch := range chains {
		own := map[int32]bool{}
		for _, m := range ch {
			for _, h := range m.heights {
				own[h] = true
			}
		}
		in = append(in, own)
	}
	sizes := cs.groupSizes(slices.Concat(chains, chains), in)
	grown := 0
	for i, ch := range chains {
		if sizes[i] > sizes[len(chains)+i] {
			grown += len(ch)
		}
	}
	if grown > 0 {
		cs.warnings = append(cs.warnings, fmt.Sprintf("%s in use now in groups larger than their chains' own blocks give (grown through blocks fetched since they were drawn): their groups' size can tell them from the wallet's (kept: dropping a cover marks it to anyone intersecting sessions)", nounCount(grown, "cover")))
	}
}

// finish settles and adds the chains drawn (settleFetched), counts the
// scan's cost, adds candidates of its blocks to the
// reserve (of those not explored: the rounds took the candidates of
// those) and saves the set.
func (cs *coverScan) finish(heights []int32, blocks []*wire.MsgBlock) *CoverCost {
	cs.settleFetched()
	cs.warnDrawn()
	cs.warnGrownInUse(heights)
	k := &CoverCost{Target: cs.target, Drawn: cs.drawn, ExploredBlocks: len(cs.explored)}
	explored := make(map[int32]bool, len(cs.explored))
	for _, h := range cs.explored {
		explored[h] = true
	}
	var unexplored []*wire.MsgBlock
	for i, b := range blocks {
		size := uint64(b.SerializeSize())
		if !explored[heights[i]] {
			unexplored = append(unexplored, b)
		}
		if cs.walletAt[heights[i]] {
			k.WalletBlocks++
			k.WalletBytes += size
			continue
		}
		k.CoverBlocks++
		k.CoverBytes += size
	}
	// The wallet's blocks fetched show its false matches, for the next
	// scans' profiles.
	cs.refute(heights, blocks)
	cs.keep(unexplored)
	k.Covers, k.Reserve = len(cs.set.Covers()), len(cs.set.Reserve())
	k.Met = len(cs.why) == 0
	if !k.Met {
		k.Why = cs.why[0]
		for _, w := range cs.why[1:] {
			k.Why += "; " + w
		}
	}
	return k
}
