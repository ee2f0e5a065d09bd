package attack

import (
	"math"
	"slices"
)

// The three hypotheses Link weighs for a pair of sessions (see the
// package documentation).
const (
	sameWallet    = iota // one wallet
	otherWallets         // two wallets that share nothing
	sharedAddress        // two wallets that share a few addresses
	hypotheses
)

const (
	// growthPrior is the prior probability that one session of a wallet
	// holds candidates the other does not (the wallet grew between them);
	// the grown part is then log-uniform up to the shared part's size.
	growthPrior = 0.1
	// e2At1 is the exponential integral E2(1) (Abramowitz and Stegun,
	// table 5.1): the integral of the payment prior against a count of
	// zero.
	e2At1 = 0.14849550677592205
	// minSizeDeviation bounds the fitted deviation of log wallet sizes
	// from below, so that a capture of a few sessions of one size does
	// not make every other size impossible.
	minSizeDeviation = 0.3
)

// linkSession is what Link needs of one session.
type linkSession struct {
	group     int     // the accumulator's group
	matched   float64 // m: candidates matching every filter
	chance    float64 // F: of them expected by chance
	exposed   float64 // max(m-F, 0): the session's own estimate of its wallet
	rho       float64 // chance that a one-element candidate matches
	rates     []float64
	keys      []hashingKey
	blind     bool // its filters match everything: nothing to link by
	truncated bool // its match list is cut short
	lines     []int
	// What a pair that shares no match needs of the session, computed
	// once: the log likelihood of m for a wallet of any size, and for one
	// of at least one candidate.
	logAny, logSome float64
}

// sizePrior is the prior on the number N of a wallet's candidates in the
// universe: none with probability empty, else y = ln(1+N) normal of mean
// mu and deviation sigma, cut to [0, span] for span = ln(1+U) and U the
// universe's size. fitSizes estimates it from the sessions.
type sizePrior struct {
	empty, mu, sigma, span float64
	// zero is log ∫ e^(1-e^y)·density(y) dy: the likelihood of a count of
	// zero for a part of some size, less its chance term.
	zero float64
}

// newSizePrior is the broad prior a fit starts from: half the sessions
// without a candidate, the others' log sizes spread over the universe.
func newSizePrior(size uint64) *sizePrior {
	span := math.Log1p(float64(max(size, 1)))
	p := &sizePrior{empty: 0.5, mu: span / 2, sigma: span / 4, span: span}
	p.zero, _, _ = poissonIntegral(0, -1, p.weight(0), 0, span)
	return p
}

// public is the prior as Linkage shows it.
func (p *sizePrior) public() SizePrior {
	return SizePrior{Empty: p.empty, LogMean: p.mu, LogDeviation: p.sigma, Median: math.Expm1(p.mu)}
}

// weight is the density of y for a part of at least from candidates.
func (p *sizePrior) weight(from float64) yWeight {
	y0 := math.Log1p(from)
	mass := (math.Erf((p.span-p.mu)/(p.sigma*math.Sqrt2)) - math.Erf((y0-p.mu)/(p.sigma*math.Sqrt2))) / 2
	return yWeight{mu: p.mu, sigma: p.sigma, offset: -math.Log(p.sigma*math.Sqrt(2*math.Pi)) - math.Log(math.Max(mass, 1e-300))}
}

// anySize is the log likelihood of a count k of mean base plus a wallet
// part of unknown size, empty or not.
func (p *sizePrior) anySize(k, base float64) float64 {
	return logAddExp(math.Log(p.empty)+logPoisson(k, base), math.Log1p(-p.empty)+p.someSize(k, base, 0))
}

// someSize is the log likelihood of a count k of mean base plus a part
// of at least from candidates.
func (p *sizePrior) someSize(k, base, from float64) float64 {
	l, _, _ := poissonIntegral(k, base-1, p.weight(from), math.Log1p(from), p.span)
	return l
}

// anySizeZero is anySize at a count of zero.
func (p *sizePrior) anySizeZero(base float64) float64 {
	return logAddExp(math.Log(p.empty)-base, math.Log1p(-p.empty)+p.zero-base)
}

// grown is the log likelihood of a count k of mean base plus what a
// wallet of shared candidates may have gained: nothing with probability
// 1-growthPrior, else a part log-uniform up to shared.
func grown(k, base, shared float64) float64 {
	none := logPoisson(k, base)
	if shared < 1 {
		return none
	}
	span := math.Log1p(shared)
	some, _, _ := poissonIntegral(k, base-1, yWeight{offset: -math.Log(span)}, 0, span)
	return logAddExp(math.Log1p(-growthPrior)+none, math.Log(growthPrior)+some)
}

// payment is the log likelihood of a shared count k of mean base plus the
// addresses two wallets share, at least one, their number S of prior
// density 1/S² (a payment shares one or a few).
func payment(k, base float64) float64 {
	if k == 0 {
		return -base + math.Log(e2At1)
	}
	l, _, _ := poissonIntegral(k, base, yWeight{decay: 1}, 0, 40)
	return l
}

// fitSizes estimates the prior on wallet sizes from the sessions' own
// matches, by expectation maximization: each session's posterior of an
// empty wallet and the posterior moments of its log size give the next
// prior, with the broad start counted as one more session.
func fitSizes(sessions []linkSession, size uint64) *sizePrior {
	p := newSizePrior(size)
	start := *p
	for range 100 {
		n, empty, w, s1, s2 := 1.0, 0.5, 1.0, start.mu, start.sigma*start.sigma+start.mu*start.mu
		for i := range sessions {
			sx := &sessions[i]
			if sx.blind {
				continue
			}
			none := math.Log(p.empty) + logPoisson(sx.matched, sx.chance)
			some, m1, m2 := poissonIntegral(sx.matched, sx.chance-1, p.weight(0), 0, p.span)
			some += math.Log1p(-p.empty)
			r := math.Exp(none - logAddExp(none, some))
			if math.IsNaN(r) {
				continue
			}
			n++
			empty += r
			w += 1 - r
			s1 += (1 - r) * m1
			s2 += (1 - r) * m2
		}
		next := *p
		next.empty = math.Min(math.Max(empty/n, 0.01), 0.99)
		next.mu = s1 / w
		next.sigma = math.Max(math.Sqrt(math.Max(s2/w-next.mu*next.mu, 0)), minSizeDeviation)
		moved := math.Abs(next.empty-p.empty) + math.Abs(next.mu-p.mu) + math.Abs(next.sigma-p.sigma)
		*p = next
		if moved < 1e-6 {
			break
		}
	}
	p.zero, _, _ = poissonIntegral(0, -1, p.weight(0), 0, p.span)
	return p
}

// pairEvidence is what the matches of two sessions (or three, for a
// triangle) say about the hypotheses.
type pairEvidence struct {
	x, y     int // indexes among the linked sessions
	shared   uint64
	both     float64 // expected shared matches of no session's wallet
	chance   float64 // expected shared matches if the wallets differ
	ifSame   float64 // expected shared matches if one wallet
	logLikes [hypotheses]float64
}

// evidence weighs the shared matches of sessions sx and sy, sharing
// shared candidates of which chance alone (both sessions' filters
// matching a candidate of neither wallet) gives both: each wallet's own
// candidates may also match the other's filters by chance.
func (p *sizePrior) evidence(sx, sy *linkSession, shared uint64, both float64) pairEvidence {
	cross := sx.exposed*sy.rho + sy.exposed*sx.rho
	spread := sy.rho*sy.rho*sx.chance + sx.rho*sx.rho*sy.chance
	if shared == 0 {
		// The sessions' own terms were computed once, at their own chance
		// (both is at most a few here).
		ev := pairEvidence{both: both, chance: both + cross}
		ev.ifSame = both + (sx.exposed+sy.exposed)/2
		onlyX, onlyY := sx.matched, sy.matched
		chanceX, chanceY := math.Max(sx.chance-both, 0), math.Max(sy.chance-both, 0)
		ev.logLikes[sameWallet] = p.anySizeZero(both) + logPoisson(onlyX, chanceX) + logPoisson(onlyY, chanceY)
		ev.logLikes[otherWallets] = logNegBinomial(0, ev.chance, ev.chance+spread) + sx.logAny + sy.logAny
		ev.logLikes[sharedAddress] = payment(0, ev.chance) + 2*math.Log1p(-p.empty) + sx.logSome + sy.logSome
		return ev
	}
	return p.weigh([]*linkSession{sx, sy}, shared, both, cross, spread)
}

// weigh weighs the candidates that every one of members matches, shared
// of them, of which chance alone (every member's filters matching a
// candidate of no member's wallet) gives both, and the members' wallets
// matching the others' filters by chance cross more (with variance
// spread, from the estimates it rests on). The hypotheses (see the
// package documentation): one wallet, whose candidates are all shared
// and each member's other matches chance (or what the wallet gained);
// other wallets, sharing by chance, each member's other matches a
// wallet's of any size; wallets that share a few addresses, each holding
// more than those.
func (p *sizePrior) weigh(members []*linkSession, shared uint64, both, cross, spread float64) pairEvidence {
	s := float64(shared)
	ev := pairEvidence{shared: shared, both: both, chance: both + cross}
	common := math.Max(s-both, 0)
	ev.logLikes[sameWallet] = p.anySize(s, both)
	ev.logLikes[otherWallets] = logNegBinomial(s, ev.chance, ev.chance+spread)
	ev.logLikes[sharedAddress] = payment(s, ev.chance)
	for _, m := range members {
		only, chance := math.Max(m.matched-s, 0), math.Max(m.chance-both, 0)
		ev.ifSame += m.exposed / float64(len(members))
		ev.logLikes[sameWallet] += grown(only, chance, common)
		ev.logLikes[otherWallets] += p.anySize(only, chance)
		ev.logLikes[sharedAddress] += math.Log1p(-p.empty) + p.someSize(only, chance, 1)
	}
	ev.ifSame += both
	return ev
}

// posterior is the probability of each hypothesis given the evidence
// and the priors.
func (ev *pairEvidence) posterior(priors [hypotheses]float64) [hypotheses]float64 {
	var logs [hypotheses]float64
	top := math.Inf(-1)
	for h := range logs {
		logs[h] = math.Log(priors[h]) + ev.logLikes[h]
		top = math.Max(top, logs[h])
	}
	var out [hypotheses]float64
	if math.IsInf(top, -1) || math.IsNaN(top) {
		return priors // no hypothesis explains the counts: nothing learnt
	}
	var sum float64
	for h := range logs {
		out[h] = math.Exp(logs[h] - top)
		sum += out[h]
	}
	for h := range out {
		out[h] /= sum
	}
	return out
}

// priorFit is the estimate of the hypotheses' priors from every pair of a
// capture, with its interval.
type priorFit struct {
	priors, low, high [hypotheses]float64
}

// tied is the priors when one wallet and shared addresses each have
// probability p: the capture alone cannot tell how common payments are
// (a payment of a few addresses is lost in the chance matches of all but
// the sparsest filters), so the matches alone decide between the two.
func tied(p float64) [hypotheses]float64 {
	return [hypotheses]float64{sameWallet: p, otherWallets: 1 - 2*p, sharedAddress: p}
}

// mixture is the pairs' evidence gathered for fitting the priors: the
// pairs that share matches one by one, those that share none by their log
// likelihood ratios rounded to a hundredth (their number is quadratic in
// the sessions, their ratios few).
type mixture struct {
	pairs  []pairEvidence
	binned map[[2]int32]float64 // (same, shared address) - other, in hundredths: count
}

func (m *mixture) addBinned(ev *pairEvidence) {
	d := ev.logLikes[otherWallets]
	key := [2]int32{binRatio(ev.logLikes[sameWallet] - d), binRatio(ev.logLikes[sharedAddress] - d)}
	m.binned[key]++
}

func binRatio(r float64) int32 {
	return int32(math.Round(math.Max(-2e7, math.Min(2e7, 100*r))))
}

// fit estimates the tied prior p: each step sets it to the expected share
// of the pairs that are one wallet's at the previous p, with the
// pseudo-counts of as many pairs as weight at start, until it settles;
// fixed > 0 holds it there. Its interval takes the expected count of
// pairs of one wallet as a Poisson count (Garwood's interval).
func (m *mixture) fit(start, weight, fixed float64) priorFit {
	if fixed > 0 {
		return priorFit{priors: tied(fixed), low: tied(fixed), high: tied(fixed)}
	}
	pairs := float64(len(m.pairs))
	for _, n := range m.binned {
		pairs += n
	}
	cur := start
	var same float64
	for range 500 {
		same = m.expectedCounts(tied(cur))[sameWallet]
		next := (same + weight*start) / (pairs + weight)
		moved := math.Abs(next-cur) / cur
		cur = next
		if moved < 1e-7 {
			break
		}
	}
	lo, hi := garwood(same)
	return priorFit{priors: tied(cur), low: tied((lo + weight*start) / (pairs + weight)),
		high: tied(math.Min((hi+weight*start)/(pairs+weight), 0.49))}
}

// expectedCounts is the expected number of pairs under each hypothesis.
func (m *mixture) expectedCounts(priors [hypotheses]float64) [hypotheses]float64 {
	var counts [hypotheses]float64
	for i := range m.pairs {
		post := m.pairs[i].posterior(priors)
		for h := range counts {
			counts[h] += post[h]
		}
	}
	keys := make([][2]int32, 0, len(m.binned))
	for k := range m.binned {
		keys = append(keys, k)
	}
	// A fixed order, so that the sums are the same from run to run.
	slices.SortFunc(keys, func(a, b [2]int32) int {
		if a[0] != b[0] {
			return int(a[0] - b[0])
		}
		return int(a[1] - b[1])
	})
	for _, k := range keys {
		ev := pairEvidence{logLikes: [hypotheses]float64{float64(k[0]) / 100, 0, float64(k[1]) / 100}}
		post := ev.posterior(priors)
		for h := range counts {
			counts[h] += m.binned[k] * post[h]
		}
	}
	return counts
}

// interval is the probability of one wallet at the ends of the prior's
// interval (it grows with the prior).
func (f *priorFit) interval(ev *pairEvidence) (p, lo, hi float64) {
	p = ev.posterior(f.priors)[sameWallet]
	lo = ev.posterior(f.low)[sameWallet]
	hi = ev.posterior(f.high)[sameWallet]
	return p, math.Min(lo, p), math.Max(hi, p)
}
