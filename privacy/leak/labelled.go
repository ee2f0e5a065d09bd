package leak

import (
	"math"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// Estimate is a count estimated from a sample, with its 95% interval.
type Estimate struct {
	Count, Low, High float64
}

// labelling is what a client knows that an attacker does not: which
// candidates are its own (its watched scripts and its covers), which of
// those are covers, which others it fetched the blocks of on purpose
// (decoys), and an estimate of the chance matches of one appearance its
// partial index leaves out.
type labelling struct {
	own, cover, decoy func(candidate string) bool
	singles           Estimate
}

// labellingOf is the labelling the options give a report of session id,
// nil without Options.Own.
func labellingOf(opt Options, id string) *labelling {
	if opt.Own == nil {
		return nil
	}
	return &labelling{own: opt.Own, cover: opt.Cover, decoy: opt.Decoy, singles: opt.Singles[id]}
}

// apply sets each class's chance count from the labels: the class's
// groups that hold no own candidate nor a decoy (LabelledChanceGroups:
// a decoy matches because the client fetched its blocks on purpose,
// which the attacker's shifts do not reproduce), a Poisson count
// observed whole. The attacker's null (the shifts' mean) estimates
// the mean of that count, and the count lies above it about half the
// time, which would give the client's scripts lower probabilities than
// the attacker's; so a class of two or more appearances takes as its
// chance (mean and variance) the lower end of the 95% interval of the
// mean the count gives (poissonMeanLow), below which the attacker's
// mean lies in at most 2.5% of the classes. For one appearance, the matches that
// ride in no other's transactions and are in no group holding an own
// candidate or a decoy, plus the lower bound of the estimated chance singles left
// out of the index, which also join the observed singles. With covers,
// each class also carries the share of its own groups that hold a
// watched script (not a cover only).
func (l *labelling) apply(r *Report, classes map[uint64]*classCount, units map[int]*unit, g *matchGroups) {
	type tally struct{ own, watched, made, aloneOwn, aloneWatched, aloneMade float64 }
	by := map[uint64]*tally{}
	for _, u := range units {
		own, watched, made := false, false, false
		for _, i := range u.members {
			c := r.Matched[i].Candidate
			if l.own(c) {
				own = true
				watched = watched || l.cover == nil || !l.cover(c)
			} else if l.decoy != nil && l.decoy(c) {
				made = true
			}
		}
		made = made && !own
		t := by[u.k]
		if t == nil {
			t = &tally{}
			by[u.k] = t
		}
		if own {
			t.own++
		}
		if watched {
			t.watched++
		}
		if made {
			t.made++
		}
		if u.k != 1 {
			continue
		}
		for _, i := range u.members {
			if !g.riding[i] {
				if own {
					t.aloneOwn++
				}
				if watched {
					t.aloneWatched++
				}
				if made {
					t.aloneMade++
				}
			}
		}
	}
	for k, c := range classes {
		t := by[k]
		if t == nil {
			t = &tally{}
		}
		if k == 1 {
			c.extraSingles = math.Max(l.singles.Low, 0)
			c.chanceGroups = float64(c.Matched-c.CoLocated) - t.aloneOwn - t.aloneMade + c.extraSingles
			c.coverShare = share(t.aloneWatched, t.aloneOwn)
		} else {
			c.chanceGroups = float64(c.Groups) - t.own - t.made
			c.coverShare = share(t.watched, t.own)
		}
		c.chanceGroups = math.Max(c.chanceGroups, 0)
		c.LabelledChanceGroups = c.chanceGroups
		if k != 1 {
			c.chanceGroups = poissonMeanLow(c.chanceGroups)
		}
		c.chanceVar = c.chanceGroups
		c.ExpectedGroupsByShifts, c.ExpectedByShifts = 0, 0
	}
}

// share is watched/own, 1 when nothing is own.
func share(watched, own float64) float64 {
	if own == 0 {
		return 1
	}
	return watched / own
}

// poissonMeanLow is the lower end of the central 95% interval
// (model.Level) of the mean of a Poisson count observed at x: the mean
// at which a count of x or more has probability (1-Level)/2: P(X >= x) =
// P(x, mean), the regularized lower incomplete gamma function, so the
// mean is model.GammaQuantile of that probability (0 for x = 0).
func poissonMeanLow(x float64) float64 {
	return model.GammaQuantile((1-model.Level)/2, x)
}
