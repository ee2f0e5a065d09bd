package leak

import (
	"fmt"
	"math"
)

// The learned recalibration of the attack's scripts in sessions warned of
// several wallets: package documentation, "Recalibration", gives the fit,
// its seeds and counts. For a member of the given kind given P in [0.5,
// 0.95), logit P becomes a + b logit P.
const (
	// A group's leading member.
	recalLeadA, recalLeadB = 0.587, 1.541
	// A settled rider not chained.
	recalSettledA, recalSettledB = 0.415, 1.060
	// recalLow and recalHigh bound the claims recalibrated, and what they
	// become: a claim neither crosses 0.5 nor reaches 0.95.
	recalLow, recalHigh, recalMax = 0.5, 0.95, 0.949
)

// recalibrate applies the learned recalibration to the scripts of a
// report found to fetch for several wallets (warnSharedClients), the last
// step of the attack; a client's own report and colluding views are not
// compared, so never recalibrated. Each script's interval is carried
// through the same map, which is monotone, so it still holds the
// probability.
func (r *Report) recalibrate() {
	if !r.severalWallets {
		return
	}
	for i := range r.Matched {
		m := &r.Matched[i]
		if !(m.Probability >= recalLow && m.Probability < recalHigh) {
			continue // nor its interval: a claim outside the map's range stays whole
		}
		var a, b float64
		switch r.recalKind(m) {
		case recalLead:
			a, b = recalLeadA, recalLeadB
		case recalSettled:
			a, b = recalSettledA, recalSettledB
		default:
			continue
		}
		m.Probability = recalMap(m.Probability, a, b)
		m.ProbabilityLow = recalMap(m.ProbabilityLow, a, b)
		m.ProbabilityHigh = recalMap(m.ProbabilityHigh, a, b)
	}
}

// recalKinds are the members the recalibration maps.
type recalKinds int

const (
	recalNone recalKinds = iota
	recalLead
	recalSettled
)

// recalKind says which map, if any, applies to m, a match of r.
func (r *Report) recalKind(m *Match) recalKinds {
	if m.Group == 0 || len(m.AmbiguousWith) > 0 || m.Nested || m.Passenger || m.Paid {
		return recalNone
	}
	k := r.Groups[m.Group-1].Appearances
	switch {
	case !m.CoLocated && !m.Settled && m.Appearances == k:
		return recalLead
	case m.CoLocated && m.Settled && !(m.Appearances >= 2 && m.Appearances < k):
		return recalSettled
	}
	return recalNone
}

// recalMap maps p in [recalLow, recalHigh) to the logistic of
// a + b logit p, kept in [recalLow, recalMax]; any other p is unchanged.
// With b > 0 it is monotone in p.
func recalMap(p, a, b float64) float64 {
	if !(p >= recalLow && p < recalHigh) {
		return p
	}
	z := a + b*math.Log(p/(1-p))
	return min(max(1/(1+math.Exp(-z)), recalLow), recalMax)
}

// warnedCap is the most a script of a warned session is given
// (capWarned), below 0.95 as a group of a capture whose wallets pay each
// other is kept below payGroupCap.
const warnedCap = 0.94

// capWarned keeps below 0.95, at warnedCap, every script (and its
// interval) of every session of a capture warnPayingWallets found to
// look like one whose wallets pay each other (paying): on such captures
// the scripts still given 0.95 or more after every other lowering were
// right less often than a Wilson lower bound of 0.93 allows. It is the
// attack's last step, so it is the probability a script of such a
// capture ends with; each session whose scripts it lowered is warned of
// how many. Sessions warned of several wallets are recalibrated apart
// (recalibrate), and a client's own report and colluding views are
// never compared, so neither is capped.
func capWarned(reports []*Report, paying bool) {
	for _, r := range reports {
		if !paying || r.severalWallets || r.label != nil {
			continue
		}
		why := fmt.Sprintf("%s: on the warned neutrino captures of 16 wallets that pay each other (seeds 501 to 516, 601 to 616 and 701 to 716) the scripts still given 0.95 or more were right 143 of 152 times (Wilson lower bound 0.891, short of 0.93), though 109 of 110 on two later sets (seeds 801 to 816 and 901 to 916)", PayEachOther)
		capped := 0
		for i := range r.Matched {
			m := &r.Matched[i]
			if m.Probability <= warnedCap {
				m.ProbabilityLow = min(m.ProbabilityLow, warnedCap)
				m.ProbabilityHigh = min(m.ProbabilityHigh, warnedCap)
				continue
			}
			if m.Probability >= 0.95 {
				r.Confident--
			}
			m.Probability, m.ProbabilityLow, m.ProbabilityHigh = warnedCap, min(m.ProbabilityLow, warnedCap), min(m.ProbabilityHigh, warnedCap)
			capped++
		}
		if capped == 0 {
			continue
		}
		r.warn(fmt.Sprintf("%s; so no script of this session is given 0.95 or more: %d of its scripts given more than %.2f are given %.2f (their intervals kept below it too)", why, capped, warnedCap, warnedCap))
		if r.FetchedBlocks < r.ScannedBlocks {
			r.Verdict = r.verdict()
		}
	}
}
