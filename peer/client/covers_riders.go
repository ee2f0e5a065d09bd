package client

import (
	"bytes"
	"cmp"
	"maps"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer/cover"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

// Riders. A peer that reads the blocks it served sees, beside each
// script, the other scripts of its transactions there (txMates: the
// outputs, and the scripts the inputs show they spend): its riders. A
// wallet's scripts sit in transactions of a wallet's shape (a payment
// and the payer's change, a spend and its change), a cover drawn only by
// its appearances in transactions of any shape (a batch of payouts, a
// consolidation), so the riders per appearance can tell covers from the
// wallet's scripts where their appearance classes do not.
//
// Where the wallet's scripts sit is read only on its blocks, which a
// scan fetches with the covers' in one shuffled order, so the riders
// are weighed once the plan is fetched: of the chains drawn that settle
// on the fetched blocks (the need and a margin beyond it, coverMargin),
// matchRiders keeps, per class, those whose riders are least told from
// the wallet's scripts' (riderScore), instead of a random choice; the
// rest are left out, fetched once. Each cover keeps its riders over its
// blocks in the cover file (cover.Profile's Riders and Read), each
// candidate those of the block it was found in.
//
// Each chain is weighed by whether its members are spent in the blocks
// held too (spentIn: an input's signature script or witness names the
// script it spends, which a peer reading the blocks sees), beside the
// wallet's scripts'.
//
// Each chain is weighed by its group too: the size of the group the
// attack forms of it on the blocks the peers see (groupSizes), beside
// the wallet's chains' (riderDistance, and riderScore of the group
// sizes added to that of the riders).
//
// The draw takes first, of each shape, the chains found in
// transactions of a wallet's own shape (fewRiders: at most walletRiders
// riders an appearance where read), and the choice, after the nearest
// and the random trials, swaps chains of a class for others of it while
// a swap lowers the score (improveRiders); a cover's value counts as
// the wallet's only where a wallet's script of its class has it
// (classedScore). On the covers' chain, three runs of 64 clients each
// (intervals of clients drawn with replacement about ±0.015 for riders,
// ±0.02 for group size): riders AUC 0.410 to 0.417 before, 0.438 to
// 0.443 after; group size AUC 0.411 to 0.419 before, 0.436 to 0.454
// after; spent 0.444 to 0.447 before, 0.442 to 0.453 after; 1.78 to
// 1.82 cover blocks a wallet block before, 1.82 to 1.83 after. A margin
// of 2 (1.88 to 1.90 cover blocks a wallet block) gave riders 0.441 to
// 0.453 and group size 0.442 to 0.460 (two runs), one of 2.5 (2.20 to
// 2.24) 0.453 to 0.460 and 0.448 to 0.488.
//
// What remains: the choice is among the chains drawn from the reserve,
// a margin beyond the need, and a client's reserve often offers fewer
// chains of the wallet's group size than the need (a draw of six
// chains of two appearances from seven or nine): no interval holds a
// half yet. Candidate chains
// are formed as a wallet's (ownerChains), but a cover's coin was more
// often paid beside more outputs than a wallet's receive key is (a
// payer's payment with change), so the covers' riders per appearance
// run above the wallet's and their groups hold a script more (on a
// chain of other users' transactions of mainnet's shapes, 32 clients,
// the margin of one and a half: riders AUC 0.42 to 0.43, group size AUC
// 0.40 to 0.44; a margin of two and a half: 0.41 to 0.46 and 0.43 to
// 0.47; TestCoverRidersLikeWallet, TestCoverChainsLikeWallet).

// riders returns the riders of script over the blocks held at heights
// (txMates), and how many of those blocks were held.
func (cs *coverScan) riders(script []byte, heights []int32) (riders, read int) {
	for _, h := range heights {
		if cs.held(h) == nil {
			continue
		}
		read++
		riders += len(cs.txMates(h, script))
	}
	return riders, read
}

// riderChain is a chain as matchRiders weighs it: its length, its head's
// class, and its signature, its members' riders per appearance, sorted
// (NaN for a member of no block held).
type riderChain struct {
	length, class int
	sig           []float64
	// group is the size of the group the attack forms of the chain on
	// the blocks the peers see (0: not weighed).
	group int
	// spent is, for each member, 1 where an input of a block held
	// spends it (spentIn), else 0.
	spent []float64
	// asked is how many of the chain's blocks any peer was asked for
	// before the scan (askedOf).
	asked int
	// place is where the chain's blocks lie in the range (placeOf).
	place chainPlace
}

// riderChainOf weighs the chain of members ms.
func (cs *coverScan) riderChainOf(ms []member) riderChain {
	c := riderChain{length: len(ms)}
	at := map[int32]bool{}
	for _, m := range ms {
		for _, h := range m.heights {
			at[h] = true
		}
	}
	c.asked = cs.askedOf(at).asked
	c.place = cs.placeOf(at)
	for _, m := range ms {
		c.class = max(c.class, min(len(m.heights), leak.MaxProfileClass))
		r, n := cs.riders(m.script, m.heights)
		v := math.NaN()
		if n > 0 {
			v = float64(r) / float64(n)
		}
		c.sig = append(c.sig, v)
		c.spent = append(c.spent, 0)
		if cs.spentIn(m.script, m.heights) {
			c.spent[len(c.spent)-1] = 1
		}
	}
	slices.SortFunc(c.sig, func(a, b float64) int {
		// NaN last.
		switch an, bn := math.IsNaN(a), math.IsNaN(b); {
		case an && bn:
			return 0
		case an:
			return 1
		case bn:
			return -1
		}
		return cmp.Compare(a, b)
	})
	return c
}

// spentIn reports whether an input of a block held at heights spends
// script, as its signature script or witness names it
// (gcs.SpendCandidates): a peer reading the blocks it served sees it.
func (cs *coverScan) spentIn(script []byte, heights []int32) bool {
	for _, h := range heights {
		b := cs.held(h)
		if b == nil {
			continue
		}
		for _, tx := range b.Transactions[1:] {
			for _, in := range tx.TxIn {
				_, cands := gcs.SpendCandidates(in)
				if slices.ContainsFunc(cands, func(s []byte) bool { return bytes.Equal(s, script) }) {
					return true
				}
			}
		}
	}
	return false
}

// riderDistance is how far a cover chain c lies from a wallet's chain
// w: a chain of another length far (its group's size tells it apart),
// then the sum of the differences of the members' riders per
// appearance (a member unknown on either side counting as one rider)
// and of the chains' group sizes.
func riderDistance(w, c riderChain) float64 {
	if w.length != c.length {
		return 1000 + math.Abs(float64(w.length-c.length))
	}
	d := math.Abs(float64(w.asked - c.asked))
	if w.group > 0 && c.group > 0 {
		d += math.Abs(float64(w.group - c.group))
	}
	for i := range w.sig {
		x := math.Abs(w.sig[i] - c.sig[i])
		if math.IsNaN(x) {
			x = 1
		}
		d += x
	}
	return d
}

// riderSigned is the sum of the differences of c's members' riders
// per appearance from w's, where both are known and the lengths agree
// (else 0).
func riderSigned(w, c riderChain) float64 {
	if w.length != c.length {
		return 0
	}
	s := 0.0
	for i := range w.sig {
		if x := c.sig[i] - w.sig[i]; !math.IsNaN(x) {
			s += x
		}
	}
	return s
}

// walletMembers are the wallet's scripts matched in the range, each
// with its heights on the held filters without the matches the cover
// set keeps as false, in chains (walletChains).
func (cs *coverScan) walletMembers() []member {
	var wallet []member
	for i, s := range cs.wallet {
		if i >= len(cs.walletHeights) {
			break
		}
		hs := slices.DeleteFunc(slices.Clone(cs.walletHeights[i]), func(h int32) bool {
			return cs.set.Refuted(cover.MatchKeyOf(cs.hash(h), s))
		})
		if len(hs) > 0 {
			wallet = append(wallet, member{script: s, heights: hs})
		}
	}
	walletChains(wallet)
	return wallet
}

// chainsOf splits ms into chains by group (0: each alone).
func chainsOf(ms []member) [][]member {
	var out [][]member
	at := map[uint64]int{}
	for _, m := range ms {
		i, ok := at[m.group]
		if !ok || m.group == 0 {
			i = len(out)
			at[m.group] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], m)
	}
	return out
}

// maxRiderTrials is how many random choices of the pending chains
// matchRiders weighs beside the nearest.
const maxRiderTrials = 32

// matchRiders keeps, of the pending chains, as many per class as the
// covers need without any pending chain (need), those whose riders are
// least told from the wallet's scripts' (riderScore, with the covers in
// use): of the choice nearest the wallet's chains (nearestRiders) and
// maxRiderTrials random ones, the best. It reports whether the chains
// kept leave the covers short of nothing, and otherwise leaves the
// pending chains as they were. The blocks of the wallet, of the covers
// in use and of every pending chain must be held.
func (cs *coverScan) matchRiders() bool {
	// The blocks the peers see: the plan's, the pending chains' with
	// them, and those of earlier scans.
	_, seen := cs.planSeen(cs.bounded, cs.inUseHeights)
	all := cs.pending
	want := map[int]int{}
	for p, k := range cs.needOf(nil) {
		want[min(p.Class, leak.MaxProfileClass)] += k
	}
	// Each chain's group as the attack forms it on the blocks the
	// peers see: the wallet's, the covers in use and the pending.
	walletCh, inUseCh := chainsOf(cs.walletMembers()), chainsOf(cs.inUse)
	chains := slices.Concat(walletCh, inUseCh)
	for _, ch := range all {
		chains = append(chains, ch.members)
	}
	in := make([]map[int32]bool, len(chains))
	for i := range in {
		in[i] = seen
	}
	sizes := cs.groupSizes(chains, in)
	byClass := map[int][]riderChain{}
	var wallet, inUse riderValues
	for i, ch := range walletCh {
		w := cs.riderChainOf(ch)
		w.group = sizes[i]
		byClass[w.class] = append(byClass[w.class], w)
		wallet.add(w)
	}
	for i, ch := range inUseCh {
		c := cs.riderChainOf(ch)
		c.group = sizes[len(walletCh)+i]
		inUse.add(c)
	}
	cands := make([]riderChain, len(all))
	for i, ch := range all {
		cands[i] = cs.riderChainOf(ch.members)
		cands[i].group = sizes[len(walletCh)+len(inUseCh)+i]
	}
	score := func(sel []int) float64 {
		covers := inUse.clone()
		for _, i := range sel {
			covers.add(cands[i])
		}
		return wallet.score(covers)
	}
	best := nearestRiders(want, byClass, cands)
	bestScore := score(best)
	for range maxRiderTrials {
		sel := randomRiders(want, cands)
		if sc := score(sel); sc < bestScore-1e-9 {
			best, bestScore = sel, sc
		}
	}
	best, _ = improveRiders(best, cands, score)
	var kept []pendingChain
	for _, i := range best {
		kept = append(kept, all[i])
	}
	if len(cs.needOf(kept)) > 0 {
		return false
	}
	cs.pending = kept
	return true
}

// riderValues are the values matchRiders weighs of a side's chains
// (the wallet's, or the covers'): each member's riders per appearance
// (where known), group size and spent, each with its chain's class.
type riderValues struct {
	riders, groups, spent    []float64
	ridersK, groupsK, spentK []int
	// asked is each chain's blocks asked before (riderChain.asked),
	// askedK its class.
	asked  []float64
	askedK []int
	// span and mean are each chain's span and mean height (chainPlace),
	// placeK its blocks' key (spanKey).
	span, mean []float64
	placeK     []int
}

// add adds the values of chain c.
func (v *riderValues) add(c riderChain) {
	r := knownValues(c.sig)
	v.riders, v.ridersK = append(v.riders, r...), append(v.ridersK, slices.Repeat([]int{c.class}, len(r))...)
	v.groups, v.groupsK = append(v.groups, perMember(c)...), append(v.groupsK, slices.Repeat([]int{c.class}, c.length)...)
	v.spent, v.spentK = append(v.spent, c.spent...), append(v.spentK, slices.Repeat([]int{c.class}, len(c.spent))...)
	v.asked, v.askedK = append(v.asked, float64(c.asked)), append(v.askedK, c.class)
	v.span, v.mean = append(v.span, c.place.span), append(v.mean, c.place.mean)
	v.placeK = append(v.placeK, spanKey(c.place.blocks))
}

func (v riderValues) clone() riderValues {
	return riderValues{slices.Clone(v.riders), slices.Clone(v.groups), slices.Clone(v.spent),
		slices.Clone(v.ridersK), slices.Clone(v.groupsK), slices.Clone(v.spentK),
		slices.Clone(v.asked), slices.Clone(v.askedK),
		slices.Clone(v.span), slices.Clone(v.mean), slices.Clone(v.placeK)}
}

// score is how well covers are told from v, the wallet's, by each
// value (classedScore), summed.
func (v riderValues) score(covers riderValues) float64 {
	return classedScore(v.riders, covers.riders, v.ridersK, covers.ridersK) +
		classedScore(v.groups, covers.groups, v.groupsK, covers.groupsK) +
		classedScore(v.spent, covers.spent, v.spentK, covers.spentK) +
		classedScore(v.asked, covers.asked, v.askedK, covers.askedK) +
		spanScore(v.span, covers.span, v.placeK, covers.placeK) +
		spanScore(v.mean, covers.mean, v.placeK, covers.placeK)
}

// perMember is c's group size once for each of its members, as the
// attack gives each script its group's size.
func perMember(c riderChain) []float64 {
	out := make([]float64, c.length)
	for i := range out {
		out[i] = float64(c.group)
	}
	return out
}

// knownValues is the values of sig that are known (not NaN).
func knownValues(sig []float64) []float64 {
	return slices.DeleteFunc(slices.Clone(sig), math.IsNaN)
}

// riderScore is how well covers' values are told from the wallet's:
// classedScore with every value of one class.
func riderScore(wallet, covers []float64) float64 {
	return classedScore(wallet, covers, nil, nil)
}

// classedScore is how well covers' values are told from the wallet's:
// the folded AUC's distance from a half, plus the share of covers with
// a value no script of the wallet of their class has (wk, ck: each
// value's class; nil, all of one). The share is taken within a class
// since the attack sees a script's appearances: a cover's value that
// only a wallet's script of another class has tells it apart as well
// as one no wallet's script has, and counting it as shared let the
// choice prefer, of the values around the wallet's, those of other
// classes, which on the covers' chain lay above (groups of five for
// scripts of two appearances, whose wallet's are of four).
func classedScore(wallet, covers []float64, wk, ck []int) float64 {
	if len(wallet) == 0 || len(covers) == 0 {
		return 0
	}
	auc, apart := 0.0, 0
	for i, c := range covers {
		has := false
		for j, w := range wallet {
			switch {
			case math.Abs(w-c) < 1e-9:
				auc += 0.5
				has = has || wk == nil || ck == nil || wk[j] == ck[i]
			case w > c:
				auc++
			}
		}
		if !has {
			apart++
		}
	}
	auc /= float64(len(wallet) * len(covers))
	return math.Abs(auc-0.5) + float64(apart)/float64(len(covers))
}

// improveRiders swaps chains of a class in sel for others of the same
// class while a swap lowers score.
func improveRiders(sel []int, cands []riderChain, score func([]int) float64) ([]int, float64) {
	sel = slices.Clone(sel)
	best := score(sel)
	in := make([]bool, len(cands))
	for _, i := range sel {
		in[i] = true
	}
	for pass := 0; pass < 8; pass++ {
		improved := false
		for si := range sel {
			for u := range cands {
				if in[u] || cands[u].class != cands[sel[si]].class {
					continue
				}
				old := sel[si]
				sel[si] = u
				if sc := score(sel); sc < best-1e-9 {
					best, in[old], in[u], improved = sc, false, true, true
					continue
				}
				sel[si] = old
			}
		}
		if !improved {
			break
		}
	}
	return sel, best
}

// nearestRiders chooses, per class k, want[k] of cands, each the
// nearest (riderDistance) to a wallet's chain of class k (byClass),
// those taken in turn in random order so that the choice copies their
// mixture; of chains as near, the one that brings the sum of the signed
// differences nearest zero, so that covers stand on both sides of the
// wallet's riders rather than above them all.
func nearestRiders(want map[int]int, byClass map[int][]riderChain, cands []riderChain) []int {
	taken := make([]bool, len(cands))
	var out []int
	bal := 0.0
	for _, k := range slices.Sorted(maps.Keys(want)) {
		ws := byClass[k]
		if len(ws) == 0 {
			continue
		}
		order := rand.Perm(len(ws))
		for n := range want[k] {
			w := ws[order[n%len(ws)]]
			best, bestD, bestB := -1, math.Inf(1), math.Inf(1)
			for _, i := range rand.Perm(len(cands)) {
				if taken[i] || cands[i].class != k {
					continue
				}
				d, b := riderDistance(w, cands[i]), math.Abs(bal+riderSigned(w, cands[i]))
				if d < bestD-1e-9 || d < bestD+1e-9 && b < bestB {
					best, bestD, bestB = i, d, b
				}
			}
			if best < 0 {
				break
			}
			bal += riderSigned(w, cands[best])
			taken[best] = true
			out = append(out, best)
		}
	}
	return out
}

// randomRiders chooses, per class k, want[k] of cands at random.
func randomRiders(want map[int]int, cands []riderChain) []int {
	var out []int
	got := map[int]int{}
	for _, i := range rand.Perm(len(cands)) {
		if k := cands[i].class; got[k] < want[k] {
			got[k]++
			out = append(out, i)
		}
	}
	return out
}
