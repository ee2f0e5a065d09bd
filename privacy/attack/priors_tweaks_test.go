package attack

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/spvfilter/spvfilter/bip37"
)

// tweakCopies are k filters of the same n candidates of cands under k
// tweaks, about chance chance matches each over a universe of size: one
// tiny wallet's filter loaded again and again under new tweaks, which
// the copies of one filter bit for bit (see countCopies) do not catch.
func tweakCopies(rng *rand.Rand, k, n int, cands [][]byte, chance float64, size int) [][]*bip37.Filter {
	var elems [][]byte
	for range n {
		elems = append(elems, cands[rng.IntN(len(cands))])
	}
	var out [][]*bip37.Filter
	for i := range k {
		f := bip37.NewFilter(uint32(n), chance/float64(size), uint32(i), 0)
		for _, e := range elems {
			f.Add(e)
		}
		out = append(out, []*bip37.Filter{f})
	}
	return out
}

// TestTweakCopiesPrior injects 100 and 1,000 filters of the same two
// candidates of the universe under as many tweaks (about 0.02 chance
// matches each) beside 30 honest sessions (sessionsCapture, seeds 3, 5,
// 7). Before the sessions of the very same matches were weighed as
// copies, 1,000 of them took the prior's median to 2.1 and the honest
// matches at P >= 0.95 from 123 / 293 / 191 to none (the honest mean P
// 0.165 / 0.327 / 0.324 to 0.092 / 0.149 / 0.147); weighed as copies
// the honest matches at P >= 0.95 stay, the mean P moves by at most
// tweakMove, and the capture warns of them. Copies of a filter of about
// 5 chance matches match other lines under each tweak: they are sessions
// near chance, distinct, and are logged only.
func TestTweakCopiesPrior(t *testing.T) {
	const honest, random = 30, 20_000
	// tweakMove bounds the move of the honest mean probability.
	const tweakMove = 0.015
	for _, seed := range []uint64{3, 5, 7} {
		groups, univ := sessionsCapture(seed, honest, random)
		lines := universeLines(t, univ)
		var baseHigh int
		var baseMean float64
		for _, k := range []int{0, 100, 1000} {
			for _, chance := range []float64{0.02, 5} {
				if k == 0 && chance != 0.02 {
					continue
				}
				g := slices.Clone(groups)
				g = append(g, tweakCopies(rand.New(rand.NewPCG(seed, uint64(k))), k, 2, lines, chance, len(lines))...)
				acc, reps := accumulate(t, g, univ, AnalyzeOptions{})
				var high int
				for _, r := range reps[:honest] {
					high += r.Confident
				}
				mean := honestMean(reps, honest)
				if k == 0 {
					baseHigh, baseMean = high, mean
				}
				var twins int
				for _, s := range reportSessions(reps, acc.set)[honest:] {
					if s.copies > 1 {
						twins++
					}
				}
				t.Logf("seed %d, %4d copies under tweaks, chance %.2f: honest P>=0.95 %d (%d alone), mean P %.4f (%.4f alone); weighed as copies %d; prior median %.1f, empty %.2f",
					seed, k, chance, high, baseHigh, mean, baseMean, twins, acc.fit.sizes.public().Median, acc.fit.sizes.empty)
				if chance != 0.02 {
					continue
				}
				if high < baseHigh {
					t.Errorf("seed %d, %d copies under tweaks: honest matches at P >= 0.95 %d -> %d", seed, k, baseHigh, high)
				}
				if d := mean - baseMean; d > tweakMove || d < -tweakMove {
					t.Errorf("seed %d, %d copies under tweaks: honest mean P %.4f -> %.4f", seed, k, baseMean, mean)
				}
				if warned := hasPriorWarning(reps[0].Warnings); warned != (k > 0) {
					t.Errorf("seed %d, %d copies under tweaks: warned %v: %q", seed, k, warned, reps[0].Warnings)
				}
			}
		}
	}
}

// TestWeighTwins holds weighTwins to the sessions it counts as copies:
// the same lines matched through filters of the same sizes and hash
// functions, in any order, more than twinSessions of them; not sessions
// of no match, cut short, blind, or of other filters' sizes.
func TestWeighTwins(t *testing.T) {
	key := func(size int, k uint32) []hashingKey {
		return []hashingKey{{size: size, k: k, tweak: uint32(size) * k}}
	}
	s := func(lines []int, keys []hashingKey, copies int) linkSession {
		return linkSession{matched: float64(len(lines)), lines: lines, keys: keys, copies: copies}
	}
	// many is one more session of the same matches than weigh as
	// themselves.
	many := func(x linkSession) []linkSession { return slices.Repeat([]linkSession{x}, twinSessions+1) }
	truncated := s([]int{4, 9}, key(10, 3), 1)
	truncated.truncated = true
	blind := s([]int{4, 9}, key(10, 3), 1)
	blind.blind = true
	tests := []struct {
		name     string
		sessions []linkSession
		want     []int
	}{
		{"same lines, any order", append(slices.Repeat([]linkSession{s([]int{4, 9}, key(10, 3), 1)}, 5), slices.Repeat([]linkSession{s([]int{9, 4}, key(10, 3), 0)}, 4)...),
			slices.Repeat([]int{2}, 9)},
		{"a wallet's sessions", slices.Repeat([]linkSession{s([]int{4, 9}, key(10, 3), 1)}, twinSessions), slices.Repeat([]int{1}, twinSessions)},
		{"one more", slices.Repeat([]linkSession{s([]int{4, 9}, key(10, 3), 1)}, twinSessions+1), slices.Repeat([]int{2}, twinSessions+1)},
		{"a thousand", slices.Repeat([]linkSession{s([]int{9, 4}, key(10, 3), 1)}, 1000), slices.Repeat([]int{(1000 + twinSessions - 1) / twinSessions}, 1000)},
		{"other lines", append(many(s([]int{4, 9}, key(10, 3), 1)), s([]int{4, 8}, key(10, 3), 1)), append(slices.Repeat([]int{2}, twinSessions+1), 1)},
		{"other size", append(many(s([]int{4, 9}, key(10, 3), 1)), s([]int{4, 9}, key(11, 3), 1)), append(slices.Repeat([]int{2}, twinSessions+1), 1)},
		{"other hash functions", append(many(s([]int{4, 9}, key(10, 3), 1)), s([]int{4, 9}, key(10, 4), 1)), append(slices.Repeat([]int{2}, twinSessions+1), 1)},
		{"no match", many(s(nil, key(10, 3), 1)), slices.Repeat([]int{1}, twinSessions+1)},
		{"cut short or blind", append(many(truncated), many(blind)...), slices.Repeat([]int{1}, 2*twinSessions+2)},
		{"bit for bit copies kept", []linkSession{s([]int{4, 9}, key(10, 3), 20), s([]int{4, 9}, key(10, 3), 20)}, []int{20, 20}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			weighTwins(tt.sessions)
			for i, s := range tt.sessions {
				if s.copies != tt.want[i] {
					t.Fatalf("session %d copies %d, want %v", i, s.copies, tt.want)
				}
			}
		})
	}
}
