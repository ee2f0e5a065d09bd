package attack

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

const (
	// orderTail is how rarely chance alone gives the candidates that show
	// a session out of order among two others (see linker.order).
	orderTail = 0.001
	// orderShare is the most share of the triples of linked sessions out
	// of order for an out-of-order session to stand out (see
	// linker.order): where one wallet's sessions hold random parts of it,
	// most are.
	orderShare = 0.2
	// orderLinked is the probability above which order warns of a pair.
	orderLinked = 0.99
)

// order warns of the pairs given more than orderLinked of a session x
// that lies out of order among two sessions y and z, all three pairs
// given more than one half: x holds
// candidates neither y nor z holds, which no other session holds
// either, and lacks candidates both y and z hold, each far above
// chance. One wallet's sessions nest (a later one holds what an earlier
// one held), so three of them are in order; a payer watching part of a
// payee's addresses, or a wallet paid by and paying another, holds a
// part of the other's and a part of its own. It warns only where such
// triples are rare among the capture's (at most orderShare of them):
// where one wallet's sessions hold random parts of it, an out-of-order
// session is no tell. Link asks it only of a capture that looks like one
// whose wallets pay each other several addresses (paymentsWarning): a
// client holding several wallets' filters at once puts sessions out of
// order too.
func (lk *linker) order(pairs []SessionLink) string {
	at := make(map[[2]int]int, len(pairs)) // by indexes among sessions
	for i := range pairs {
		x, y := lk.index[pairs[i].A], lk.index[pairs[i].B]
		at[[2]int{min(x, y), max(x, y)}] = i
	}
	shared := func(x, y int) (float64, bool) {
		i, ok := at[[2]int{min(x, y), max(x, y)}]
		if !ok {
			return 0, false
		}
		return float64(pairs[i].Shared), pairs[i].Probability > 0.5
	}
	var triples, outside int
	flagged := map[int]bool{}
	for trio, joint := range lk.trios {
		var s [3]float64 // s[k]: what the pair opposite trio[k] shares
		linked := true
		for k := range 3 {
			var ok bool
			s[k], ok = shared(trio[(k+1)%3], trio[(k+2)%3])
			linked = linked && ok
		}
		if !linked {
			continue
		}
		triples++
		out := false
		for k := range 3 {
			x, y, z := trio[k], trio[(k+1)%3], trio[(k+2)%3]
			sxy, sxz, syz := s[(k+2)%3], s[(k+1)%3], s[k]
			if !lk.outOfOrder(x, y, z, sxy, sxz, syz, float64(joint)) {
				continue
			}
			out = true
			if !lk.heldElsewhere(x, y, z) {
				flagged[at[[2]int{min(x, y), max(x, y)}]] = true
				flagged[at[[2]int{min(x, z), max(x, z)}]] = true
			}
		}
		if out {
			outside++
		}
	}
	if outside == 0 || float64(outside) > orderShare*float64(triples) {
		return ""
	}
	var named []string
	for i := range flagged {
		if p := &pairs[i]; p.Probability > orderLinked {
			named = append(named, fmt.Sprintf("session %d and session %d", p.A+1, p.B+1))
		}
	}
	if len(named) == 0 {
		return ""
	}
	slices.Sort(named)
	return fmt.Sprintf("the pairs of %s are given more than %g by the model (those printed lower, bounded by their class's rate, are named in a warning of their own), yet one session of each lies out of order among two it is linked to (it holds candidates neither of them holds, nor any other session, and lacks candidates both hold; %d of the capture's %d triples of linked sessions are so): "+
		"a payee's session beside a payer watching part of its addresses, or two wallets paying each other, looks like that, and on simulated captures of that kind (privacy simulate --regime payments, seeds 9601 to 9608) 4 of the 6 pairs so named were of two wallets; weigh those links as such",
		strings.Join(named, "; "), orderLinked, outside, triples)
}

// outOfOrder reports whether session x, of three sessions x, y, z whose
// pairs share sxy, sxz and syz candidates and all three t, holds
// candidates neither y nor z holds and lacks candidates both hold, each
// far above chance.
func (lk *linker) outOfOrder(x, y, z int, sxy, sxz, syz, t float64) bool {
	own := lk.sessions[x].matched - sxy - sxz + t
	lacks := syz - t
	return own-poissonQuantile(1-orderTail, lk.sessions[x].chance) >= 1 &&
		lacks-poissonQuantile(1-orderTail, lk.chanceOf(y, z)) >= 1
}

// heldElsewhere reports whether a session w other than y and z shares
// with x, far above chance, candidates beyond those y or z shares with
// x: x's own part is then another wallet's that w holds too.
func (lk *linker) heldElsewhere(x, y, z int) bool {
	trio := func(a, b, c int) float64 {
		t := [3]int{a, b, c}
		slices.Sort(t[:])
		return float64(lk.trios[t])
	}
	for pair, n := range lk.shared {
		w := pair[0]
		switch x {
		case pair[0]:
			w = pair[1]
		case pair[1]:
		default:
			continue
		}
		if w == y || w == z {
			continue
		}
		q := poissonQuantile(1-orderTail, lk.chanceOf(x, w))
		if float64(n)-math.Max(trio(x, y, w), trio(x, z, w))-q >= 1 {
			return true
		}
	}
	return false
}

// chanceOf is the number of candidates sessions x and y (indexes among
// sessions) share by chance as their pair weighs it: both sessions'
// filters matching a candidate of neither wallet, or one wallet's
// candidates matching the other's filters.
func (lk *linker) chanceOf(x, y int) float64 {
	if k, ok := lk.pairAt[[2]int{min(x, y), max(x, y)}]; ok {
		return lk.mix.pairs[k].chance
	}
	return lk.bothByChance(x, y)
}
