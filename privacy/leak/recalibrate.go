package leak

import "math"

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
