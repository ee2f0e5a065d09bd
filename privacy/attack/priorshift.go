package attack

import "fmt"

// fewMatches is the most matches a session may hold to be among those
// the size prior's fit is repeated without (see measurePriorShift).
const fewMatches = 3

// priorShift is how the matches of a capture would fare if the size
// prior were fitted without its sessions of few matches (one to
// fewMatches): what a mass of sessions each holding a candidate or
// three of the universe, as a node injecting sessions into its own
// capture may make them, does to the probabilities of the others'.
type priorShift struct {
	few, counted int     // sessions of few matches; sessions not blind
	weight       float64 // what the few weigh in the fit
	// confident counts the other sessions' matches at P >= 0.95; up
	// those of them below 0.95 that would reach it under the prior
	// fitted without the few, down those at 0.95 or more that would
	// fall below.
	confident, up, down int
	fitted, apart       SizePrior
}

// measurePriorShift repeats the fit of the size prior (see fitSizes)
// over sessions without those of one to fewMatches matches, and counts
// the other sessions' matches that would cross 0.95 under it; reports
// are the sessions' own, finished under fitted.
func measurePriorShift(reports []*Report, sessions []linkSession, size uint64, fitted *sizePrior) priorShift {
	sh := priorShift{fitted: fitted.public(), apart: fitted.public()}
	weights := evidenceWeights(sessions)
	kept := make([]linkSession, 0, len(sessions))
	for i := range sessions {
		s := &sessions[i]
		if !s.blind {
			sh.counted++
		}
		if !s.blind && s.matched >= 1 && s.matched <= fewMatches {
			sh.few++
			sh.weight += weights[i]
			continue
		}
		kept = append(kept, *s)
	}
	for _, s := range kept {
		sh.confident += reports[s.group].Confident
	}
	if sh.few == 0 {
		return sh
	}
	apart := fitSizes(kept, size)
	sh.apart = apart.public()
	for _, s := range kept {
		up, down := reports[s.group].crossings(apart)
		sh.up += up
		sh.down += down
	}
	return sh
}

// fragileMatches is the least number of matches crossing 0.95 that
// priorShift.warning speaks of.
const fragileMatches = 10

// warning says when the sessions of few matches decide what the others'
// matches are worth: fitted without them, at least fragileMatches of
// the others' matches, and a tenth of those at P >= 0.95, would cross
// 0.95. "" otherwise.
func (sh priorShift) warning() string {
	d := sh.up + sh.down
	if d < fragileMatches || 10*d < sh.confident {
		return ""
	}
	return fmt.Sprintf("%d of %d sessions matched 1 to %d candidates each and weigh %.0f sessions in the prior on wallet sizes (median %.1f, empty %.2f); "+
		"fitted without them (median %.1f, empty %.2f), %d more of the other sessions' matches would reach P >= 0.95 and %d fall below it (%d are at 0.95 or more): "+
		"their probabilities rest on those sessions, which sessions injected into the capture could be",
		sh.few, sh.counted, fewMatches, sh.weight, sh.fitted.Median, sh.fitted.Empty, sh.apart.Median, sh.apart.Empty, sh.up, sh.down, sh.confident)
}
