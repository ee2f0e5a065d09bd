package attack

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/bip37"
)

// craftedUniverse is the number of random hashes beside the honest
// wallets' in the captures of TestCraftedSessionsPrior.
const craftedUniverse = 20_000

// craftedSessions are k sessions a node analyzing its own capture could
// inject to move the prior on wallet sizes, of one kind:
//
//   - "no bits": filters with no bit set (of distinct tweaks), which
//     match nothing;
//   - "nothing": filters of 20 elements none of the universe holds and
//     about one chance match expected, drawn again until they match
//     nothing of it (the node knows its universe);
//   - "copies": k copies of one filter of 20 such elements and about 5
//     chance matches, an empty wallet's session repeated;
//   - "near chance": k distinct such filters, each an empty wallet's
//     session as an honest one looks;
//   - "huge": filters of about 1,000 chance matches;
//   - "big": filters holding 2,000 of the universe's candidates each (a
//     big wallet's session, as far as its matches tell);
//   - "all": filters matching everything.
func craftedSessions(rng *rand.Rand, kind string, k int, univ []byte) [][]*bip37.Filter {
	filterOf := func(i int, chance float64) *bip37.Filter {
		f := bip37.NewFilter(20, chance/craftedUniverse, uint32(i), 0)
		for range 20 {
			f.Add(randomElem(rng, 20))
		}
		return f
	}
	chanceFilter := func(i int) *bip37.Filter { return filterOf(i, 5) }
	var lines [][]byte
	if kind == "nothing" || kind == "big" {
		for _, l := range bytes.Fields(univ) {
			b, err := hex.DecodeString(string(l))
			if err != nil {
				panic(err)
			}
			lines = append(lines, b)
		}
	}
	copied := chanceFilter(-1)
	var out [][]*bip37.Filter
	for i := range k {
		var f *bip37.Filter
		switch kind {
		case "no bits":
			f = bip37.NewFilter(10, 0.001, uint32(i), 0)
		case "nothing":
			for f == nil || slices.ContainsFunc(lines, f.Contains) {
				f = filterOf(i, 1)
			}
		case "copies":
			f = copied
		case "near chance":
			f = chanceFilter(i)
		case "huge":
			f = bip37.NewFilter(20, 1000.0/craftedUniverse, uint32(i), 0)
			for range 20 {
				f.Add(randomElem(rng, 20))
			}
		case "big":
			f = bip37.NewFilter(2000, 1e-6, uint32(i), 0)
			for _, j := range rng.Perm(len(lines))[:2000] {
				f.Add(lines[j])
			}
		case "all":
			f, _ = bip37.NewFilterFromParams([]byte{0xff, 0xff}, 3, uint32(i), 0)
		default:
			panic("unknown kind " + kind)
		}
		out = append(out, []*bip37.Filter{f})
	}
	return out
}

// honestMean is the mean probability of the honest sessions' matches
// (the first honest of reps).
func honestMean(reps []*Report, honest int) float64 {
	var sum float64
	var n int
	for _, r := range reps[:honest] {
		for _, m := range r.Matched {
			sum += m.Probability
			n++
		}
	}
	return sum / float64(n)
}

// TestCraftedSessionsPrior: sessions that carry no evidence of wallet
// sizes, injected by k = 10, 30, 100 beside 30 honest wallets, move the
// honest matches' mean probability by less than craftedMove (weighed as
// one session together: those of no bit not at all), and every report
// warns of them. Before the sessions were so weighed, each counted as an
// empty wallet: 100 sessions of no bit took the empty share of the prior
// from 0.28 to 0.88 on seed 3, the honest mean P from 0.165 to 0.154. Sessions of matches near chance (about 5, or a
// thousand) each look like an honest empty wallet's and are not bounded:
// their move is measured and logged. Filters matching everything moved
// nothing before and after.
func TestCraftedSessionsPrior(t *testing.T) {
	const honest = 30
	// craftedMove bounds the move of the honest mean probability; one
	// empty wallet's session more moves it by about 0.002.
	const craftedMove = 0.003
	bounded := map[string]bool{"no bits": true, "nothing": true, "copies": true, "all": true}
	for _, seed := range []uint64{3, 5, 7} {
		groups, univ := sessionsCapture(seed, honest, craftedUniverse)
		_, base := accumulate(t, groups, univ, AnalyzeOptions{})
		before := honestMean(base, honest)
		if slices.ContainsFunc(base, func(r *Report) bool { return hasPriorWarning(r.Warnings) }) {
			t.Errorf("seed %d: an honest capture warned of sessions without evidence", seed)
		}
		for _, kind := range []string{"no bits", "nothing", "copies", "near chance", "huge", "big", "all"} {
			for _, k := range []int{10, 30, 100} {
				rng := rand.New(rand.NewPCG(seed, uint64(k)))
				crafted := craftedSessions(rng, kind, k, univ)
				acc, reps := accumulate(t, append(slices.Clone(groups), crafted...), univ, AnalyzeOptions{})
				after := honestMean(reps, honest)
				t.Logf("seed %d, %d %s: honest mean P %.4f -> %.4f, prior %+v", seed, k, kind, before, after, acc.fit.sizes.public())
				if kind == "nothing" {
					for g, r := range reps[honest:] {
						if r.MatchedCount != 0 {
							t.Fatalf("seed %d: crafted session %d matched %d", seed, g, r.MatchedCount)
						}
					}
				}
				if !bounded[kind] {
					continue
				}
				if d := math.Abs(after - before); d > craftedMove {
					t.Errorf("seed %d, %d %s sessions: honest mean P %.4f -> %.4f, moved %.4f (bound %.3f)", seed, k, kind, before, after, d, craftedMove)
				}
				if kind == "no bits" && after != before {
					t.Errorf("seed %d, %d sessions of no bit moved the honest mean P: %.6f -> %.6f", seed, k, before, after)
				}
				if kind == "all" {
					continue
				}
				for g, r := range reps {
					if !hasPriorWarning(r.Warnings) {
						t.Fatalf("seed %d, %d %s sessions: report %d does not warn of them: %q", seed, k, kind, g, r.Warnings)
					}
				}
			}
		}
	}
}

// hasPriorWarning reports whether warnings hold priorWarning's.
func hasPriorWarning(warnings []string) bool {
	return slices.ContainsFunc(warnings, func(w string) bool { return strings.Contains(w, "carry no evidence of wallet sizes") })
}

// TestEvidenceWeights holds the weights of the size prior's fit to what
// linkSession.evidence and evidenceWeights say: one of no chance match
// and no match weighs nothing, copies share one weight, sessions of no
// match weigh one together at most.
func TestEvidenceWeights(t *testing.T) {
	tests := []struct {
		name     string
		sessions []linkSession
		want     []float64
	}{
		{"honest", []linkSession{{matched: 5, chance: 3}, {matched: 40, chance: 3}}, []float64{1, 1}},
		{"blind", []linkSession{{matched: 5, chance: 3, blind: true}}, []float64{0}},
		{"no bits", []linkSession{{matched: 0, chance: 0}, {matched: 9, chance: 1}}, []float64{0, 1}},
		{"one of no match", []linkSession{{matched: 0, chance: 2}}, []float64{1 - math.Exp(-2)}},
		{"copies", []linkSession{{matched: 7, chance: 5, copies: 4}, {matched: 7, chance: 5, copies: 4}}, []float64{0.25, 0.25}},
		{"no match pooled", []linkSession{{matched: 0, chance: 20}, {matched: 0, chance: 20}, {matched: 0, chance: 20}, {matched: 3, chance: 1}},
			[]float64{1.0 / 3, 1.0 / 3, 1.0 / 3, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := evidenceWeights(tt.sessions)
			for i := range got {
				if math.Abs(got[i]-tt.want[i]) > 1e-6 {
					t.Fatalf("weights %v, want %v", got, tt.want)
				}
			}
		})
	}
}

// TestCraftedSessionsWarned: a capture of 30 honest wallets and 30
// sessions of no bit warns of them once as the capture's in a capture
// report, and its linkage too, whose prior they would move as well.
func TestCraftedSessionsWarned(t *testing.T) {
	groups, univ := sessionsCapture(3, 30, craftedUniverse)
	groups = append(groups, craftedSessions(rand.New(rand.NewPCG(3, 30)), "no bits", 30, univ)...)
	acc, reps := accumulate(t, groups, univ, AnalyzeOptions{})
	want := priorWarning(reportSessions(reps, acc.set))
	if !strings.HasPrefix(want, "30 of 60 sessions carry no evidence of wallet sizes (30 matched nothing of the universe, 0 repeat") {
		t.Fatalf("warning %q", want)
	}
	l, err := acc.Link(nil, LinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(l.Warnings, want) {
		t.Errorf("the linkage does not warn of the sessions: %q", l.Warnings)
	}
	var got []string
	w := warnings{seen: map[string]bool{}, out: &got, capture: []string{want}}
	for _, id := range []string{"a", "b"} {
		w.add("session "+id+": ", reps[0].Warnings)
	}
	w.add("link: ", l.Warnings)
	if n := slices.Index(got, "capture: "+want); n < 0 || slices.ContainsFunc(got, func(s string) bool { return s != "capture: "+want && strings.Contains(s, want) }) {
		t.Errorf("the capture's warning not said once as the capture's: %q", got)
	}
}
