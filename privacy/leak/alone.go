package leak

// AloneOdds is the factor the attack multiplies the odds of a match alone
// of two or more appearances by, where its class holds a group of
// several matches: the odds that such a match is the wallet's, where its
// class's share says P, become AloneOdds·P/(1-P). A class's share is one
// figure for its groups of several matches and its matches alone, but
// the wallet's units of two or more appearances are mostly groups (a
// payment to it brings the payer's change along) and chance's mostly
// matches alone; the factor is that shape's likelihood ratio, fitted on
// labelled captures (package documentation, "Matches alone").
const AloneOdds = 0.12

// lowerAlone multiplies the odds of each match alone of two or more
// appearances (a unit of one match: none rides in its transactions, nor
// it in another's) whose class holds a group of several matches by
// AloneOdds, its interval with it (the map is monotone), and says the
// verdict again when a claim of 0.95 or more falls below it. A class of
// matches alone only keeps its share: there the wallet's units are
// matches alone too (a real client's wallet paid and spent in blocks of
// its own). It is the attack's last step, after lowerFewBlocks. Under a
// cover target (Options.CoverTarget) a probability at the target is
// left there, as lowerFewBlocks leaves it; a client's own report
// (Options.Own), an upper estimate, and a report without the shifts'
// null are left whole.
func (r *Report) lowerAlone() {
	if r.label != nil || r.null == nil {
		return
	}
	grouped := map[uint64]bool{} // the classes holding a group of several matches
	for _, g := range r.Groups {
		grouped[g.Appearances] = true
	}
	changed := false
	for i := range r.Matched {
		m := &r.Matched[i]
		if m.Group != 0 || m.Appearances < 2 || !grouped[m.Appearances] || (r.cap > 0 && m.Probability >= r.cap) {
			continue
		}
		was := m.Probability
		m.Probability, m.ProbabilityLow, m.ProbabilityHigh = OddsTimes(m.Probability, AloneOdds), OddsTimes(m.ProbabilityLow, AloneOdds), OddsTimes(m.ProbabilityHigh, AloneOdds)
		if was >= 0.95 && m.Probability < 0.95 {
			r.Confident--
			changed = true
		}
	}
	if changed {
		r.Verdict = r.verdict()
	}
}

// OddsTimes is the probability whose odds are f times those of p: p·f /
// (p·f + 1 - p), 1 for p = 1.
func OddsTimes(p, f float64) float64 {
	if p >= 1 {
		return 1
	}
	return p * f / (p*f + 1 - p)
}
