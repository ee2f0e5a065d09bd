package leak

import (
	"fmt"
	"slices"
	"strings"
)

// PassedAlong is in the warning of a report whose leading scripts of two
// appearances riding in other matches' transactions are given half their
// group's probability: see lowerLeadingRiders.
const PassedAlong = "a script paid beside a match and spent beside the next may be a payer's change passed along"

// lowerLeadingRiders gives each leading rider of two appearances
// (leadingRider) given half or more half its probability, its interval a
// quarter to three quarters of it, in every session no other step
// lowered such riders in: not in a capture warnPayingWallets found to
// look like one whose wallets pay each other (paying), not in a session
// sharedPaying maps (c), not in one warned of several wallets
// (recalibrated apart), and not in a client's own report (an upper
// estimate). It warns each report whose scripts it lowered, naming them.
// The package documentation ("Passed along") gives the reason and the
// figures.
func lowerLeadingRiders(reports []*Report, paying bool, c *sharedContest) {
	if paying {
		return // warnPayingWallets lowered them
	}
	for _, r := range reports {
		if r.label != nil || r.severalWallets || c.mapped(r, false) {
			continue
		}
		var named []string
		for k := range r.Matched {
			m := &r.Matched[k]
			if m.Probability < 0.5 || !r.leadingRider(m) {
				continue
			}
			named = append(named, r.lowerMatch(m, prob{m.Probability, m.ProbabilityLow, m.ProbabilityHigh}.halved()))
		}
		if len(named) == 0 {
			continue
		}
		slices.Sort(named)
		r.warn(fmt.Sprintf("%s, as often as the wallet's coin received and spent: each of %s, the most appearing script of its group, appears in two fetched blocks only, each time in a transaction of another match, "+
			"so it is given half the probability in brackets (its group's; on neutrino captures whose outside payers pay a wallet again from the change of their last payment such scripts were the session's 31 of 63 times at 0.91 said)",
			PassedAlong, strings.Join(named, ", ")))
		if r.FetchedBlocks < r.ScannedBlocks {
			r.Verdict = r.verdict()
		}
	}
}
