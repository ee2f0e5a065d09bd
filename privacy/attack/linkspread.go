package attack

import "math"

// spreadShift is how far, in log odds, the rate at which pairs like a
// pair were of one wallet lay from what they were said, on the captures
// of most spread: down and up, the farthest below and above (each none
// where no capture lay that way).
type spreadShift struct{ down, up float64 }

// spreadUnitLow and spreadUnitHigh bound the units of log odds
// spreadShifts keeps apart: a pair beyond them takes the end unit's
// shifts.
const spreadUnitLow, spreadUnitHigh = -14, 13

// spreadShifts are, for the pairs no group links ([0]) and those a
// group links ([1]), by unit of the log odds of their probability (from
// spreadUnitLow, a unit from ⌊z⌋ to ⌊z⌋+1), how far the rate at which the
// pairs of a unit were of one wallet lay from their mean probability, in
// log odds, on the captures where it lay farthest: package simulate's ten
// link regimes, seeds 1 to 8 (80 captures of 30 wallets, 600 blocks of
// 30 transactions; 287,996 pairs, their probabilities read at six
// decimals), each capture's rate taken at the end of its 95% Wilson
// interval nearest the probability, and none where that interval holds
// it. Shifts above are rounded up, those below down.
// See the package documentation, "Linking sessions".
var spreadShifts = [2][spreadUnitHigh - spreadUnitLow + 1]spreadShift{
	{ // no group links the pair
		{0, 12.01}, {0, 7.81}, {0, 7.46}, {0, 7.27}, {0, 5.83}, {0, 4.81}, {0, 4.19}, {0, 3.76}, // -14 to -7
		{0, 2.71}, {-0.09, 3.53}, {-0.64, 2.91}, {0, 3.57}, {0, 4.71}, {0, 3.07}, // -6 to -1
		{0, 2.06}, {-0.83, 0.29}, {0, 0}, {-1.32, 0}, // 0 to 3
	},
	{ // a group links the pair
		15: {0, 0.29}, 16: {-1.41, 0.38}, 17: {-1.32, 0}, // 1 to 3
	},
}

// spreadUnit is the unit of log odds z falls in, as an index of a row of
// spreadShifts.
func spreadUnit(z float64) int {
	u := int(math.Floor(z))
	return min(max(u, spreadUnitLow), spreadUnitHigh) - spreadUnitLow
}

// spreadLevel is the share of pairs whose interval, once widened by
// spreadShifts, held the rate of pairs like theirs (those of their
// capture in the same unit of log odds, at the 95% Wilson interval of
// their rate carried to the pair's own probability) on package
// simulate's ten link regimes, seeds 9 to 16, apart from the seeds the
// shifts were fitted on (311,246 of 311,271 pairs, at least 0.9995 in
// every regime), rounded down: the level the intervals have (see
// SessionLink.ProbabilityLevel).
const spreadLevel = 0.999

// spreadFloor is the probability a pair given none is taken at by
// spreadRates: the rates it reaches are those of the pairs given least.
const spreadFloor = 1e-12

// spreadRates widens every pair's interval to reach the rates that pairs
// like it reached on the captures of most spread (spreadShifts), the
// upper end to at most rateReachTop unless it lay above, and states the
// intervals' level, spreadLevel. Probabilities and links do not change.
func spreadRates(pairs []SessionLink) {
	for i := range pairs {
		p := &pairs[i]
		p.ProbabilityLevel = spreadLevel
		if p.Probability >= 1 {
			continue
		}
		z := logOdds(math.Max(p.Probability, spreadFloor))
		row := 0
		if p.Linked {
			row = 1
		}
		s := spreadShifts[row][spreadUnit(z)]
		p.ProbabilityLow = math.Min(p.ProbabilityLow, fromLogOdds(z+s.down))
		p.ProbabilityHigh = math.Max(p.ProbabilityHigh, math.Min(fromLogOdds(z+s.up), rateReachTop))
	}
}
