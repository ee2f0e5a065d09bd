package simulate_test

import (
	"strings"
	"testing"

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
