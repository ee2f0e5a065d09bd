package simulate_test

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// boundWarning is what the warning of pairs whose probability is bounded
// by their class's rate says (attack's linker.bound).
const boundWarning = "two payers of one payee, give those counts as one wallet"

// TestPaymentsPairsBounded runs linking on captures of the payments and
// mixed regimes whose pairs payments and one wallet give alike: on
// payments seed 9601, four pairs of two wallets (a payer and its payee
// who both paid a third) were given more than 0.999 before they were
// bounded; now no pair of two wallets is given more than 0.99, and a
// warning names the bounded pairs. Mixed seed 8801 holds pairs of one
// wallet with the same counts, but its capture does not look like one of
// payments, so none is bounded and no warning is given.
func TestPaymentsPairsBounded(t *testing.T) {
	for _, tc := range []struct {
		regime  simulate.Regime
		seed    uint64
		bounded bool
	}{
		{simulate.RegimePayments, 9601, true},
		{simulate.RegimeMixed, 8801, false},
	} {
		t.Run(string(tc.regime), func(t *testing.T) {
			sc := linkScenario(t, tc.regime, tc.seed)
			rep, _ := analyzeLinks(t, sc)
			l := rep.Links.Linkage
			warned := strings.Contains(strings.Join(l.Warnings, "\n"), boundWarning)
			if warned != tc.bounded {
				t.Errorf("bound warning given %t, want %t; warnings %q", warned, tc.bounded, l.Warnings)
			}
			var confident, wrongSure int
			for p, right := range labelledPairs(sc.Labels, rep.Links) {
				if p.Probability >= simulate.ConfidentP {
					confident++
				}
				if p.Probability > simulate.SureLinkP && !right {
					wrongSure++
					t.Errorf("sessions %s and %s, of two wallets, given %.4f", p.A, p.B, p.Probability)
				}
				if p.ProbabilityLow > p.Probability || p.ProbabilityHigh < p.Probability {
					t.Errorf("sessions %s and %s: %.4f outside its interval [%.4f, %.4f]", p.A, p.B, p.Probability, p.ProbabilityLow, p.ProbabilityHigh)
				}
			}
			t.Logf("%s seed %d: %d pairs given P >= 0.95, %d of two wallets given more than 0.99", tc.regime, tc.seed, confident, wrongSure)
		})
	}
}

// TestPaymentsBoundCalibrated judges the bound on the payments regime's
// captures of seeds 9601 to 9608, apart from those its rate was measured
// on (9501 to 9540): the pairs it lowered, as a group, are one wallet's
// as often as the probability printed for them (inside its Wilson
// interval, or within simulate.TargetBinSlack of it), and no pair of two
// wallets is given more than 0.99. At 0.833, the rate of 15 of 18 pairs
// on seeds 9501 to 9516, the 9 pairs lowered there were one wallet's 4
// times (Wilson [0.19, 0.73]).
func TestPaymentsBoundCalibrated(t *testing.T) {
	var seeds []uint64
	for s := uint64(9601); s <= 9608; s++ {
		seeds = append(seeds, s)
	}
	bt := boundSweep(t, seeds)
	n, right, said := bt.all.bounded()
	t.Logf("bounded: %s; all pairs: %v", boundFigure(&bt.all), &bt.links)
	if n == 0 {
		t.Fatal("no pair bounded: nothing judged")
	}
	rate := float64(right) / float64(n)
	if lo, hi := simulate.Wilson(right, n); (said < lo || said > hi) && math.Abs(said-rate) > simulate.TargetBinSlack {
		t.Errorf("bounded pairs given %.3f on average, one wallet's %d of %d (%.3f, Wilson [%.3f, %.3f])", said, right, n, rate, lo, hi)
	}
	if bt.links.wrongSure > 0 {
		t.Errorf("%d pairs of two wallets given more than %.2f", bt.links.wrongSure, simulate.SureLinkP)
	}
}

// boundNamed matches a pair the bound's warning names: its two sessions
// and the model's probability.
var boundNamed = regexp.MustCompile(`session (\S+) and session (\S+) \(([0-9.e+-]+)\)`)

// namedPairs returns the pairs of a link report a warning saying phrase
// names (those the bound, or the cap, lowered), with the model's
// probability it printed for each.
func namedPairs(t *testing.T, links *attack.LinkReport, phrase string) map[[2]string]float64 {
	t.Helper()
	out := map[[2]string]float64{}
	for _, w := range links.Linkage.Warnings {
		if !strings.Contains(w, phrase) {
			continue
		}
		for _, m := range boundNamed.FindAllStringSubmatch(w, -1) {
			p, err := strconv.ParseFloat(m[3], 64)
			if err != nil {
				t.Fatalf("bound warning names %q: %v", m[0], err)
			}
			out[[2]string{min(m[1], m[2]), max(m[1], m[2])}] = p
		}
	}
	return out
}

// boundTally gathers, over payments captures, the pairs the bound
// lowered (their count, those of one wallet and the printed
// probabilities' sum), by band of shared candidates (boundBands) and
// over all, and every pair as linking's tally has it.
type boundTally struct {
	bands [len(boundBands)]claimTally
	all   claimTally
	links linkTally
}

// boundBands are the lower ends of the bands of shared candidates
// boundTally keeps apart.
var boundBands = [...]uint64{10, 16, 24, 40}

// boundSweep runs linking on the payments regime's captures of seeds and
// tallies the pairs the bound lowered, logging each (seed, shared
// candidates, the model's probability, the printed one, one wallet's).
func boundSweep(t *testing.T, seeds []uint64) *boundTally {
	t.Helper()
	var bt boundTally
	for _, seed := range seeds {
		sc := linkScenario(t, simulate.RegimePayments, seed)
		rep, _ := analyzeLinks(t, sc)
		named := namedPairs(t, rep.Links, boundWarning)
		for p, right := range labelledPairs(sc.Labels, rep.Links) {
			bt.links.add(p.Probability, p.Linked, right)
			model, ok := named[[2]string{min(p.A, p.B), max(p.A, p.B)}]
			if !ok {
				continue
			}
			t.Logf("bounded\t%d\t%d\t%.4g\t%.4f\t%t", seed, p.Shared, model, p.Probability, right)
			i := 0
			for i+1 < len(boundBands) && p.Shared >= boundBands[i+1] {
				i++
			}
			bt.bands[i].addClaim(p.Probability, right)
			bt.all.addClaim(p.Probability, right)
		}
	}
	return &bt
}

// bounded is the pairs of a tally: their count, those of one wallet and
// the mean printed probability.
func (c *claimTally) bounded() (n, right int, said float64) {
	var sum float64
	for _, b := range c.bins {
		n += b.n
		right += b.right
		sum += b.sumP
	}
	return n, right, sum / math.Max(float64(n), 1)
}

// boundFigure is a tally of bounded pairs as one line: how many, the
// printed probability on average, the share of one wallet with its
// Wilson interval.
func boundFigure(c *claimTally) string {
	n, right, said := c.bounded()
	lo, hi := simulate.Wilson(right, n)
	return fmt.Sprintf("%d of %d one wallet's (%.3f) at %.3f said, Wilson [%.3f, %.3f]", right, n, float64(right)/math.Max(float64(n), 1), said, lo, hi)
}

// TestPaymentsBoundSweep lists, over the payments regime's captures of
// the seeds of SPVFILTER_BOUND_SEEDS (skipped without it), every pair
// the bound lowered, then their share of one wallet with its Wilson
// interval, by band of shared candidates and over all, and linking's
// tally of every pair. It is how boundRate's figures were measured
// (with boundRate set to one half for the run, so that it names every pair of its
// class given more).
func TestPaymentsBoundSweep(t *testing.T) {
	seeds := envSeeds(t, "SPVFILTER_BOUND_SEEDS")
	if seeds == nil {
		t.Skip("set SPVFILTER_BOUND_SEEDS=FROM-TO to list the bounded pairs of the payments regime")
	}
	bt := boundSweep(t, seeds)
	for i := range bt.bands {
		t.Logf("shared >= %d: %s", boundBands[i], boundFigure(&bt.bands[i]))
	}
	t.Logf("all bounded: %s", boundFigure(&bt.all))
	t.Logf("all pairs: %v", &bt.links)
}

// topWarning is what the warning of pairs lowered to the most a pair is
// given in a capture of payments says (attack's linker.top).
const topWarning = "a payer watching every address of a small payee gives the counts of one wallet seen twice"

// TestPaymentsPairsTopped runs linking on payments captures where the
// model gave pairs of two wallets more than 0.99: seed 9592 (among the
// seeds the cap was measured on), a payer and its payee sharing 6
// candidates at 0.994 and 0.992, and seed 9545 (judged apart), two
// small payees each wholly watched by two payers whose filters match
// mostly by chance, sharing 17 candidates at 0.993 to 0.996. Now no
// pair is given more than 0.99, and the warning names every pair the
// model gave more, with the model's probability.
func TestPaymentsPairsTopped(t *testing.T) {
	for _, tc := range []struct {
		seed      uint64
		wrongOver int // pairs of two wallets the model gave more than 0.99
	}{
		{9592, 2},
		{9545, 4},
	} {
		t.Run(strconv.FormatUint(tc.seed, 10), func(t *testing.T) {
			sc := linkScenario(t, simulate.RegimePayments, tc.seed)
			rep, _ := analyzeLinks(t, sc)
			named := namedPairs(t, rep.Links, topWarning)
			var wrongNamed int
			for p, right := range labelledPairs(sc.Labels, rep.Links) {
				if p.Probability > simulate.SureLinkP {
					t.Errorf("sessions %s and %s (one wallet's %t) given %.4f", p.A, p.B, right, p.Probability)
				}
				model, ok := named[[2]string{min(p.A, p.B), max(p.A, p.B)}]
				if !ok {
					continue
				}
				if model <= simulate.SureLinkP || p.Probability != simulate.SureLinkP {
					t.Errorf("sessions %s and %s named at %.5g, given %.4f", p.A, p.B, model, p.Probability)
				}
				if !right {
					wrongNamed++
				}
			}
			if wrongNamed != tc.wrongOver {
				t.Errorf("%d pairs of two wallets named as given more than %.2f, want %d", wrongNamed, simulate.SureLinkP, tc.wrongOver)
			}
			t.Logf("seed %d: %d pairs named, %d of two wallets", tc.seed, len(named), wrongNamed)
		})
	}
}
