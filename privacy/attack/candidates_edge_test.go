package attack

import (
	"bytes"
	"encoding/hex"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/bip37"
)

// edgeUniverse writes hashes 20-byte candidates and keys 33-byte public
// keys, the first own of each kind added to f when f is not nil.
func edgeUniverse(rng *rand.Rand, hashes, keys, own int, f *bip37.Filter) []byte {
	var b strings.Builder
	for i := range hashes {
		e := randomElem(rng, 20)
		if f != nil && i < own {
			f.Add(e)
		}
		b.WriteString(hex.EncodeToString(e) + "\n")
	}
	for i := range keys {
		k := randomElem(rng, 33)
		k[0] = 2
		if f != nil && i < own {
			f.Add(k)
		}
		b.WriteString(hex.EncodeToString(k) + "\n")
	}
	return []byte(b.String())
}

// fullFilter is a filter every bit of which is set: it matches everything.
func fullFilter(t *testing.T, size int) *bip37.Filter {
	t.Helper()
	bits := bytes.Repeat([]byte{0xff}, size)
	f, err := bip37.NewFilterFromParams(bits, 5, 7, 0)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestCandidateProbabilityEdges analyzes captures at the edges of the
// fits that weigh the matches' probabilities (one session alone,
// sessions matching nothing or everything, a universe of one class or of
// one candidate, match lists cut short): every probability must be a
// number in [0, 1] inside its interval, and a wallet's own candidates
// matched at a low chance rate must keep P >= 0.95.
func TestCandidateProbabilityEdges(t *testing.T) {
	type capture struct {
		groups   [][]*bip37.Filter
		universe []byte
		opts     AnalyzeOptions
		// confident is the least number of matches of group 0 at P >= 0.95.
		confident int
	}
	build := map[string]func(rng *rand.Rand) capture{
		"one session alone": func(rng *rand.Rand) capture {
			f := bip37.NewFilter(40, 1e-6, 1, 0)
			return capture{groups: [][]*bip37.Filter{{f}}, universe: edgeUniverse(rng, 5000, 5000, 20, f), confident: 30}
		},
		"one session matching nothing": func(rng *rand.Rand) capture {
			f := bip37.NewFilter(40, 1e-6, 1, 0)
			return capture{groups: [][]*bip37.Filter{{f}}, universe: edgeUniverse(rng, 5000, 5000, 0, nil)}
		},
		"a session matching nothing beside a wallet": func(rng *rand.Rand) capture {
			f := bip37.NewFilter(40, 1e-6, 1, 0)
			empty := bip37.NewFilter(20, 1e-6, 2, 0)
			return capture{groups: [][]*bip37.Filter{{f}, {empty}}, universe: edgeUniverse(rng, 5000, 5000, 20, f), confident: 30}
		},
		"every session matching everything": func(rng *rand.Rand) capture {
			return capture{groups: [][]*bip37.Filter{{fullFilter(t, 64)}, {fullFilter(t, 128)}}, universe: edgeUniverse(rng, 500, 500, 0, nil)}
		},
		"a wallet beside sessions matching everything": func(rng *rand.Rand) capture {
			f := bip37.NewFilter(40, 1e-6, 1, 0)
			return capture{groups: [][]*bip37.Filter{{f}, {fullFilter(t, 64)}, {fullFilter(t, 128)}}, universe: edgeUniverse(rng, 5000, 5000, 20, f), confident: 30}
		},
		"a universe of one-element candidates only": func(rng *rand.Rand) capture {
			f := bip37.NewFilter(40, 1e-6, 1, 0)
			g := bip37.NewFilter(20, 0.01, 3, 0)
			return capture{groups: [][]*bip37.Filter{{f}, {g}}, universe: edgeUniverse(rng, 10000, 0, 20, f), confident: 20}
		},
		"a universe of keys only": func(rng *rand.Rand) capture {
			f := bip37.NewFilter(40, 1e-6, 1, 0)
			g := bip37.NewFilter(20, 0.01, 3, 0)
			return capture{groups: [][]*bip37.Filter{{f}, {g}}, universe: edgeUniverse(rng, 0, 10000, 20, f), confident: 20}
		},
		"a universe of one candidate": func(rng *rand.Rand) capture {
			f := bip37.NewFilter(1, 1e-6, 1, 0)
			return capture{groups: [][]*bip37.Filter{{f}}, universe: edgeUniverse(rng, 1, 0, 1, f)}
		},
		"match lists cut short": func(rng *rand.Rand) capture {
			f := bip37.NewFilter(50, 1e-6, 1, 0)
			g := bip37.NewFilter(20, 0.5, 3, 0)
			return capture{groups: [][]*bip37.Filter{{f}, {g}}, universe: edgeUniverse(rng, 2000, 2000, 50, f), opts: AnalyzeOptions{MaxMatches: 10}}
		},
		"sessions at a chance rate near one": func(rng *rand.Rand) capture {
			f := bip37.NewFilter(40, 1e-6, 1, 0)
			var groups [][]*bip37.Filter
			groups = append(groups, []*bip37.Filter{f})
			for i := range 5 {
				groups = append(groups, []*bip37.Filter{bip37.NewFilter(1, 0.99, uint32(10+i), 0)})
			}
			return capture{groups: groups, universe: edgeUniverse(rng, 3000, 3000, 20, f), confident: 30}
		},
	}
	for name, mk := range build {
		t.Run(name, func(t *testing.T) {
			c := mk(rand.New(rand.NewPCG(7, 8)))
			reps, err := AnalyzeGroups(c.groups, bytes.NewReader(c.universe), c.opts)
			if err != nil {
				t.Fatal(err)
			}
			for g, r := range reps {
				if bad(r.EstimatedWallet) || bad(r.ExpectedFalsePositives) {
					t.Errorf("group %d: wallet %v, chance %v", g, r.EstimatedWallet, r.ExpectedFalsePositives)
				}
				for _, m := range r.Matched {
					if bad(m.Probability) || m.Probability < 0 || m.Probability > 1 ||
						!(m.ProbabilityLow <= m.Probability && m.Probability <= m.ProbabilityHigh) {
						t.Fatalf("group %d line %d: P %v in [%v, %v]", g, m.Line, m.Probability, m.ProbabilityLow, m.ProbabilityHigh)
					}
				}
			}
			if reps[0].Confident < c.confident {
				t.Errorf("group 0: %d of %d matches at P >= 0.95, want at least %d", reps[0].Confident, reps[0].MatchedCount, c.confident)
			}
		})
	}
}

func bad(x float64) bool { return math.IsNaN(x) || math.IsInf(x, 0) }

// TestSizePosteriorEdges weighs wallet sizes at counts the fitted prior
// may meet: none matched, no chance, chance far above the count, a
// universe of one candidate. The weights must sum to one and every
// probability must be a number in [0, 1].
func TestSizePosteriorEdges(t *testing.T) {
	tests := []struct {
		name            string
		size            uint64
		matched, chance float64
	}{
		{"nothing matched, no chance", 1000, 0, 0},
		{"nothing matched", 1000, 0, 12.5},
		{"matched, no chance", 1000, 40, 0},
		{"chance far above the count", 1e6, 3, 5e5},
		{"count far above chance", 1e6, 9e5, 10},
		{"every candidate matched by chance", 1e6, 1e6, 1e6},
		{"a universe of one candidate", 1, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range []*sizePrior{newSizePrior(tt.size), fitSizes([]linkSession{{matched: tt.matched, chance: tt.chance}}, tt.size)} {
				post := newSizePosterior(p, tt.matched, tt.chance)
				if post == nil {
					t.Fatalf("no posterior for prior %+v", *p)
				}
				var sum float64
				for _, w := range post.w {
					sum += w
				}
				if math.Abs(sum-1) > 1e-9 {
					t.Errorf("weights sum to %v", sum)
				}
				for _, scale := range []float64{0, 1e-9, 1, 1e6} {
					for _, f := range []float64{0, 1e-9, 0.5, 1} {
						if q := post.probabilityScaled(scale, noBound, tt.size, f); bad(q) || q < 0 || q > 1 {
							t.Errorf("scale %v f %v: P %v", scale, f, q)
						}
					}
				}
			}
		})
	}
}
