package attack

import (
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/bip37"
)

// linkedClassCapture is classCapture's capture with several sessions per
// wallet: every wallet candidate a 20-byte hash (one element) among a
// universe mostly of public keys (two elements), wallet sizes
// log-uniform from 1 to maxSize, each wallet seen in 2 to 3 sessions
// under new tweaks and rates high enough that their intersection still
// holds chance matches; a wallet's first session holds only the first
// part of its candidates (it grew since), so that the intersection's
// chance matches include candidates only some sessions hold. members
// are each wallet's sessions; holds maps a line to the sessions whose
// filters hold it.
func linkedClassCapture(seed uint64, wallets, hashes, keys int, maxSize float64) (groups [][]*bip37.Filter, universe []byte, members [][]int, holds map[int][]int) {
	rng := rand.New(rand.NewPCG(seed, seed^0x11d))
	var b strings.Builder
	holds = map[int][]int{}
	line := 0
	write := func(s string) int {
		b.WriteString(s)
		b.WriteByte('\n')
		line++
		return line
	}
	total := float64(hashes + 2*keys)
	for range wallets {
		n := int(logUniform(rng, 1, maxSize))
		first := max(1, int(math.Ceil(0.8*float64(n))))
		var ids []int
		var filters []*bip37.Filter
		for k := range 2 + rng.IntN(2) {
			held := n
			if k == 0 {
				held = first
			}
			filters = append(filters, bip37.NewFilter(uint32(held), logUniform(rng, 200, 4000)/total, rng.Uint32(), 0))
			ids = append(ids, len(groups)+k)
		}
		for i := range n {
			e := randomElem(rng, 20)
			l := write(hex.EncodeToString(e))
			for k, f := range filters {
				if k == 0 && i >= first {
					continue
				}
				f.Add(e)
				holds[l] = append(holds[l], ids[k])
			}
		}
		for _, f := range filters {
			groups = append(groups, []*bip37.Filter{f})
		}
		members = append(members, ids)
	}
	for range hashes {
		write(hex.EncodeToString(randomElem(rng, 20)))
	}
	key := make([]byte, 33)
	for range keys {
		key[0] = 2
		randomBytes(rng, key[1:])
		write(hex.EncodeToString(key))
	}
	return groups, []byte(b.String()), members, holds
}

// TestIntersectProbabilityCalibrated holds the probabilities of the
// matches of intersected sessions (each wallet's sessions, as Link would
// group them) to their labels, as TestCandidateProbabilityCalibrated
// holds a single session's: a match is right when every member's filters
// hold it. Pooled over the groups, the matches of each class, those
// given 0.5 to 0.95, and those given 0.95 or more must be right as often
// as said, within 0.05. Weighing a group's matches at its wallet size's
// point estimate, the wallet's candidates taken as spread over the
// classes as the universe's, gave the key lines, none of them a
// wallet's, a probability they never earned.
func TestIntersectProbabilityCalibrated(t *testing.T) {
	var byKind [2]calTally
	var mid, high calTally
	for _, seed := range []uint64{41, 42, 43} {
		groups, univ, members, holds := linkedClassCapture(seed, 40, 20_000, 40_000, 300)
		acc, _ := accumulate(t, groups, univ, AnalyzeOptions{})
		for _, g := range members {
			r, err := acc.Intersect(g)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range r.Matched {
				right := len(holds[m.Line]) == len(g) && holds[m.Line][0] == g[0]
				byKind[classKind(m)].add(m.Probability, right)
				switch {
				case m.Probability >= 0.95:
					high.add(m.Probability, right)
				case m.Probability >= 0.5:
					mid.add(m.Probability, right)
				}
			}
		}
	}
	byKind[0].check(t, "one-element matches", 50)
	byKind[1].check(t, "two-element matches", 50)
	mid.check(t, "matches given 0.5 to 0.95", 50)
	high.check(t, "matches given 0.95 or more", 50)
}
