package attack

import "math"

// rateKnot is a point of a learned rate: pairs whose probability has
// log odds said were of one wallet at log odds right, with standard
// error se.
type rateKnot struct {
	said, right, se float64
}

// unlinkedRate is the rate at which the pairs that no group links were
// of one wallet, by their probability, on simulated captures (package
// simulate's ten link regimes, seeds 1 to 8, 30 wallets, 600 blocks of
// 30 transactions: 283,129 such pairs, 7,408 of one wallet): the 57,227
// given log odds -6 to 4.6 (6,176 of one wallet), in cells half a unit
// wide, the cells pooled where their rates fell with the log odds
// (isotonic), each knot a cell's mean log odds said and the log odds of
// its rate, (right+½)/(n+1), with that rate's standard error; the first
// knot anchors the map to the identity below it. See the package
// documentation, "Linking sessions".
var unlinkedRate = [...]rateKnot{
	{-7, -7, 0},
	{-5.743, -4.020, 0.083},
	{-5.246, -3.502, 0.063},
	{-4.756, -3.003, 0.051},
	{-4.002, -2.829, 0.030},
	{-3.244, -1.673, 0.044},
	{-2.770, -0.895, 0.055},
	{-2.249, -0.159, 0.060},
	{-1.760, 0.198, 0.058},
	{-1.047, 0.740, 0.056},
	{-0.270, 1.448, 0.114},
	{0.245, 1.876, 0.213},
	{1.293, 1.902, 0.163},
	{2.764, 2.833, 0.840},
	{3.472, 2.833, 0.651},
	{4.282, 3.555, 1.434},
}

// rateReachTop bounds what unlinkedReach raises an upper end to: the
// learned rate never makes a pair's interval reach above 0.99 that did
// not before.
const rateReachTop = 0.99

// unlinkedReach is the upper end the learned rate gives a pair that no
// group links, of probability p: the 97.5% point of unlinkedRate at p's
// log odds, at most rateReachTop; p itself where p is 0, or rateReachTop
// or more. The knots' 97.5% points are taken as the highest up to each
// (a wider cell may sit above a narrower one), linear between knots, the
// last one's beyond it, so the reach never falls as p grows.
func unlinkedReach(p float64) float64 {
	if p <= 0 || p >= rateReachTop {
		return p
	}
	z := logOdds(p)
	k := unlinkedRate[:]
	if z <= k[0].said {
		return p
	}
	top := func(i int) float64 { return k[i].right + 1.96*k[i].se }
	hi := top(0)
	for i := 1; i < len(k); i++ {
		prev := hi
		hi = math.Max(hi, top(i))
		if z <= k[i].said {
			t := (z - k[i-1].said) / (k[i].said - k[i-1].said)
			hi = prev + t*(hi-prev)
			break
		}
	}
	high := fromLogOdds(hi)
	return math.Max(p, math.Min(high, rateReachTop))
}

// reachRates raises the upper end of every pair that no group links to
// unlinkedReach of its probability, where that is higher. Probabilities,
// lower ends and links do not change.
func reachRates(pairs []SessionLink) {
	for i := range pairs {
		if p := &pairs[i]; !p.Linked {
			p.ProbabilityHigh = math.Max(p.ProbabilityHigh, unlinkedReach(p.Probability))
		}
	}
}

// linkedShift is the log odds by which the pairs a group links were of
// one wallet more often than said, on the same captures as unlinkedRate:
// a logistic fit, over the 1,513 linked pairs given log odds -0.7 to 4.6
// (1,475 of one wallet), of their being one wallet's with offset their
// log odds z and terms a + b·z + c·ln(1+median), the median of the
// capture's fitted wallet sizes (Linkage.WalletSizes): pairs of captures
// of small wallets were right less often.
var linkedShift = struct{ a, b, c float64 }{-2.677, -0.264, 2.233}

// linkedTop bounds what linkedShift raises a probability to: the shift
// never carries a pair to 0.95 or above, where links are claimed and
// their share right is held to 95%, nor past 0.99.
const linkedTop = 0.94

// shiftLinked raises the probability of every pair a group links, below
// linkedTop, by linkedShift for a capture of median wallet size median,
// to at most linkedTop, and its upper end with it. Lower ends, links and
// pairs no group links do not change.
func shiftLinked(pairs []SessionLink, median float64) {
	for i := range pairs {
		p := &pairs[i]
		if !p.Linked || p.Probability <= 0 || p.Probability >= linkedTop {
			continue
		}
		z := logOdds(p.Probability)
		z += linkedShift.a + linkedShift.b*z + linkedShift.c*math.Log1p(math.Max(median, 0))
		q := math.Min(math.Max(fromLogOdds(z), p.Probability), linkedTop)
		p.Probability = q
		p.ProbabilityHigh = math.Max(p.ProbabilityHigh, q)
	}
}

// logOdds is the log odds of probability p, in (0, 1).
func logOdds(p float64) float64 { return math.Log(p / (1 - p)) }

// fromLogOdds is the probability of log odds z.
func fromLogOdds(z float64) float64 { return 1 / (1 + math.Exp(-z)) }
