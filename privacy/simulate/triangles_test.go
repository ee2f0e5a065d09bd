package simulate_test

import (
	"slices"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// TestTriangleMakesNoPaymentALink: a payer's two sessions and its payee
// share the payment's addresses as one wallet's three sessions share the
// wallet, so a third session must not lift a pair of two wallets, one
// paying the other, to P >= 0.95. Seed 9502 of the payments regime (apart
// from the calibration seeds) has a payer of two sessions whose payee's
// sessions it watches 16 addresses of.
func TestTriangleMakesNoPaymentALink(t *testing.T) {
	sc := regimeScenario(t, simulate.RegimePayments, 9502)
	rep, _ := analyzeLinks(t, sc)
	wallets := map[string][]string{}
	for _, s := range sc.Labels.Sessions {
		wallets[s.ID] = append([]string{s.Wallet}, s.Wallets...)
	}
	var lifted, wrong int
	for _, p := range rep.Links.Pairs {
		if p.Third == "" || p.Probability < 0.95 {
			continue
		}
		lifted++
		wb := wallets[p.B]
		if !slices.ContainsFunc(wallets[p.A], func(w string) bool { return w != "" && slices.Contains(wb, w) }) {
			wrong++
			t.Errorf("sessions %s (%v) and %s (%v) linked at P %.3f by session %s", p.A, wallets[p.A], p.B, wb, p.Probability, p.Third)
		}
	}
	t.Logf("%d pairs lifted to P >= 0.95 by a third session, %d of them of two wallets", lifted, wrong)
}
