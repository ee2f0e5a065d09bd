package attack

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// The three hypotheses Link weighs for a pair of sessions (see the
// package documentation).
const (
	sameWallet    = iota // one wallet
	otherWallets         // two wallets that share nothing
	sharedAddress        // two wallets, one paying some of the other's addresses
	hypotheses
)

const (
	// minSizeDeviation bounds the fitted deviation of log wallet sizes
	// from below, so that a capture of a few sessions of one size does
	// not make every other size impossible.
	minSizeDeviation = 0.3
	// paymentBins are the classes of the number k of addresses a payment
	// shares: bin j holds k in [2^j, 2^(j+1)).
	paymentBins = 17
	// bootstrapFits is the number of fits on resampled pairs whose spread
	// gives the probabilities' intervals.
	bootstrapFits = 24
	// emRounds bounds the steps of a fit.
	emRounds = 400
	// fitTolerance ends the fit of the estimate, spreadTolerance those of
	// the spread (each from the estimate): when a step moves the
	// parameters (the priors relatively) by less in all.
	fitTolerance, spreadTolerance = 1e-7, 1e-3
)

// Pseudo-counts of the fit's priors (see mixture.fit): the growth and the
// sessions of several wallets as a Dirichlet prior (a session that
// neither grew nor holds another wallet counted growthPseudoNo times);
// the payment sizes as one payment of log size startPayLog,
// and their deviation at least minPayDeviation.
const (
	growthPseudoYes, growthPseudoNo = 1.0, 9.0
	severalPseudo                   = 1.0
	farPseudo                       = 1.0
	paymentPseudo                   = 1.0
	startPayLog, startPayDeviation  = 0.5, 0.7
	minPayDeviation                 = 0.35
)

// wholeShares are the shares of whole payees (a payee every address of
// which its payer watches) Link weighs: the capture cannot tell a whole
// payee from one wallet whose later session gained addresses (both make
// one session's matches hold the other's), so the share is not fitted but
// held at one half, and the spread of the probabilities over the other
// two gives their intervals (with that of the fits on resampled pairs).
var wholeShares = [3]float64{0.5, 0.2, 0.8}

// farShares are the shares of far growth (see linkParams.far) held in the
// fits beside the one that estimates it: the capture tells a wallet that
// grew far from a payment no better than a whole payee from a grown
// wallet, so the probabilities' intervals take the spread over a
// wallet's sessions that never differ by more than twice what they share
// and one whose differences are all far.
var farShares = [2]float64{0.02, 0.98}

// linkSession is what Link needs of one session.
type linkSession struct {
	group   int     // the accumulator's group
	matched float64 // m: candidates matching every filter
	chance  float64 // F: of them expected by chance
	exposed float64 // max(m-F, 0): the session's own estimate of its wallet
	rho     float64 // chance that a one-element candidate matches
	rates   []float64
	// exposedBy is exposed by the linker's classes: the session's matches
	// of each less those chance gives it (nil when its match list is
	// truncated, and then exposed is taken as of one-element candidates).
	exposedBy []float64
	keys      []hashingKey
	blind     bool // its filters match everything: nothing to link by
	truncated bool // its match list is cut short: nothing to link by either
	// copies is how many sessions of the capture hold the very same
	// filters, itself among them (0 read as 1).
	copies int
	lines  []int
	// What a pair that shares no match needs of the session, computed
	// once: the log likelihood of m for a wallet of any size.
	logAny float64
}

// exposedMatching is the number of s's exposed candidates expected to
// match the filters of every one of others by chance, by class: a wallet
// whose keys its transactions show has candidates of two elements, which
// a filter matches about twice as often as the universe's one-element
// bulk.
func (s *linkSession) exposedMatching(others ...*linkSession) float64 {
	if s.exposedBy == nil {
		e := s.exposed
		for _, o := range others {
			e *= o.rho
		}
		return e
	}
	var sum float64
	for i, e := range s.exposedBy {
		for _, o := range others {
			e *= o.rates[i]
		}
		sum += e
	}
	return sum
}

// unlinkable reports whether the session's pairs keep the prior: its
// filters match everything, or its match list is cut short (its shared
// matches would be undercounted).
func (s *linkSession) unlinkable() bool { return s.blind || s.truncated }

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
	p.setZero()
	return p
}

// setZero computes zero at the prior's parameters.
func (p *sizePrior) setZero() { p.zero = p.someSize(0, 0, 0) }

// public is the prior as Linkage shows it.
func (p *sizePrior) public() SizePrior {
	return SizePrior{Empty: p.empty, LogMean: p.mu, LogDeviation: p.sigma, Median: math.Expm1(p.mu)}
}

// weight is the density of y for a part of at least from candidates.
func (p *sizePrior) weight(from float64) yWeight {
	mass := p.normalMass(math.Log1p(from), p.span)
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
	l, _, _ := p.sized(k, base, from)
	return l
}

// countedSizes is the size below which a wallet part's candidates are
// counted one by one (see sized): above it, a count of mean base plus
// a part of e^y - 1 candidates is taken as Poisson, which spreads it by
// the root of the part, little beside the prior's own spread there.
const countedSizes = 64

// sized is the log likelihood of a count k of a part of n candidates, at
// least from (the wallet's, each matching every filter), plus a Poisson
// count of mean base (chance), n of the prior, and the posterior mean and
// mean square of y = ln(1+n). Below countedSizes, n is counted: each n
// takes the prior's mass of the y that round to it (those below the
// first n to it), and P(k-n; base) is exact. Above, the Poisson integral
// over y.
func (p *sizePrior) sized(k, base, from float64) (logL, m1, m2 float64) {
	y0 := math.Log1p(from)
	total := p.normalMass(y0, p.span)
	if total <= 0 {
		return math.Inf(-1), 0, 0
	}
	first := math.Max(1, math.Ceil(from))
	width := 12*math.Sqrt(base+1) + 40
	var terms, ys []float64
	for n := first; n < countedSizes && n <= k; n++ {
		a, b := math.Log(n+0.5), math.Log(n+1.5)
		if n == first {
			a = y0
		}
		if b <= a || k-n > base+width {
			continue
		}
		if m := p.normalMass(a, b) / total; m > 0 {
			terms = append(terms, math.Log(m)+logPoisson(k-n, base))
			ys = append(ys, math.Log1p(n))
		}
	}
	tail := math.Inf(-1)
	var t1, t2 float64
	if cut := math.Max(math.Log(countedSizes+0.5), y0); cut < p.span {
		if l, a, b := poissonIntegral(k, base-1, p.weight(from), cut, p.span); !math.IsNaN(l) {
			tail, t1, t2 = l, a, b
		}
	}
	top := tail
	for _, t := range terms {
		top = math.Max(top, t)
	}
	if math.IsInf(top, -1) || math.IsNaN(top) {
		return math.Inf(-1), 0, 0
	}
	var sum float64
	if !math.IsInf(tail, -1) {
		v := math.Exp(tail - top)
		sum, m1, m2 = v, v*t1, v*t2
	}
	for i, t := range terms {
		v := math.Exp(t - top)
		sum += v
		m1 += v * ys[i]
		m2 += v * ys[i] * ys[i]
	}
	return top + math.Log(sum), m1 / sum, m2 / sum
}

// normalMass is the mass of the normal law of y (uncut) on [a, b], both
// cut to span: the one computation of the size prior's mass, which
// weight, sized and massAbove share.
func (p *sizePrior) normalMass(a, b float64) float64 {
	cdf := func(y float64) float64 { return math.Erf((math.Min(y, p.span) - p.mu) / (p.sigma * math.Sqrt2)) }
	return math.Max((cdf(b)-cdf(a))/2, 0)
}

// The laws of what a wallet gains or loses between two sessions, as a
// multiple of what they share (see grownPart): near, up to twice it (a
// wallet whose earlier session held at least half its addresses); far, up
// to farGrowth times it (a wallet that kept change addresses, or whose
// sessions each held a part of it, or a session of several wallets).
const (
	nearGrowth = 2
	farGrowth  = 20
)

// grownPart is the log likelihood of a count k of mean base plus what a
// wallet of shared candidates gained (or lost) between two sessions: a
// part g of at least one candidate, log(1+g) uniform up to span times the
// shared part, and g at least from (the law's mass below it lost: none
// when from is beyond its range).
func grownPart(k, base, shared, span, from float64) float64 {
	if shared < 1 {
		return math.Inf(-1)
	}
	y0, y1 := math.Ln2, math.Log(2+span*shared)
	lo := math.Max(y0, math.Log1p(from))
	if lo >= y1 {
		return math.Inf(-1)
	}
	l, _, _ := poissonIntegral(k, base-1, yWeight{offset: -math.Log(y1 - y0)}, lo, y1)
	return l
}

// evidence is the weight of the session's count in fitting the size
// prior (see fitSizes), before the sessions that matched nothing are
// weighed together (see evidenceWeights): from 0 to 1, a session that
// matched nothing of the universe weighs the chance its filters had to
// match something, 1-e^(-F) for F chance matches expected (filters with
// no bit set weigh nothing), and a session whose filters others of the
// capture hold too weighs its share of the copies, all of them one
// session together.
func (s *linkSession) evidence() float64 {
	w := 1.0
	if s.copies > 1 {
		w /= float64(s.copies)
	}
	if s.matched == 0 {
		w *= -math.Expm1(-s.chance)
	}
	return w
}

// evidenceWeights are the sessions' weights in fitting the size prior:
// each its evidence, and those that matched nothing of the universe
// together at most one session. A count of zero says only that a
// session's wallet is empty, which any client can say at will (filters
// of no bit, or of elements no candidate holds); the empty share is
// learnt from the sessions whose matches chance may explain instead. A
// blind session weighs nothing.
func evidenceWeights(sessions []linkSession) []float64 {
	weights := make([]float64, len(sessions))
	var none float64
	for i := range sessions {
		if s := &sessions[i]; !s.blind {
			weights[i] = s.evidence()
			if s.matched == 0 {
				none += weights[i]
			}
		}
	}
	if none > 1 {
		for i := range sessions {
			if sessions[i].matched == 0 {
				weights[i] /= none
			}
		}
	}
	return weights
}

// priorWarningShare is the share of a capture's sessions (not blind)
// carrying no evidence of sizes from which priorWarning speaks.
const priorWarningShare = 0.1

// priorWarning says when many of the sessions carry no evidence of
// wallet sizes (see evidenceWeights): sessions that matched nothing of
// the universe, or whose filters another session holds too, as a node
// would inject into its own capture to move the prior every match is
// weighed under, or clients loading empty filters give. Their weight is
// bounded; the warning names how many there were and what they weighed
// in all. "" when fewer than two, or than a tenth of the sessions, are
// such.
func priorWarning(sessions []linkSession) string {
	weights := evidenceWeights(sessions)
	var counted, few, none, copies int
	var weight float64
	for i := range sessions {
		s := &sessions[i]
		if s.blind {
			continue
		}
		counted++
		if s.matched > 0 && s.copies <= 1 {
			continue
		}
		few++
		weight += weights[i]
		if s.matched == 0 {
			none++
		} else {
			copies++
		}
	}
	if few < 2 || float64(few) < priorWarningShare*float64(counted) {
		return ""
	}
	return fmt.Sprintf("%d of %d sessions carry no evidence of wallet sizes (%d matched nothing of the universe, %d repeat another's filters), "+
		"as new or empty wallets give, and as sessions injected to move the prior on sizes would: the prior counts them as %.2g sessions in all",
		few, counted, none, copies, weight)
}

// fitSizes estimates the prior on wallet sizes from the sessions' own
// matches, by expectation maximization: each session's posterior of an
// empty wallet and the posterior moments of its log size give the next
// prior, with the broad start counted as one more session. Each session
// counts by its weight (see evidenceWeights): sessions that carry no
// evidence of sizes (filters with no bit set, or matching nothing of the
// universe, copies of one session's filters) move the prior as one
// session together.
func fitSizes(sessions []linkSession, size uint64) *sizePrior {
	p := newSizePrior(size)
	start := *p
	weights := evidenceWeights(sessions)
	for range 100 {
		n, empty, w, s1, s2 := 1.0, 0.5, 1.0, start.mu, start.sigma*start.sigma+start.mu*start.mu
		for i := range sessions {
			sx := &sessions[i]
			weight := weights[i]
			if weight == 0 {
				continue
			}
			none := math.Log(p.empty) + logPoisson(sx.matched, sx.chance)
			some, m1, m2 := p.sized(sx.matched, sx.chance, 0)
			some += math.Log1p(-p.empty)
			r := math.Exp(none - logAddExp(none, some))
			if math.IsNaN(r) {
				continue
			}
			n += weight
			empty += weight * r
			w += weight * (1 - r)
			s1 += weight * (1 - r) * m1
			s2 += weight * (1 - r) * m2
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
	p.setZero()
	return p
}

// memberTerms are the log likelihoods of one session's own matches (those
// the others of a pair or triangle do not share), only of them, of mean
// chance: chance alone (own), chance plus a part of at least one
// candidate of the size prior (some), chance plus what one wallet gained
// or lost between sessions, up to twice the shared part (grown) or far
// more (far), chance plus a wallet of any size (any).
type memberTerms struct {
	own, some, grown, far, anyWallet float64
	// shares is true when the sessions share a part of one wallet (at
	// least one candidate beyond chance) that the member's own matches
	// may have grown from or sit beside.
	shares bool
}

// pairEvidence is what the matches of two sessions (or three, for a
// triangle) say about the hypotheses, as terms whose mixture the fitted
// parameters weigh (see linkParams.logLikes).
type pairEvidence struct {
	x, y    int // indexes among the linked sessions
	shared  uint64
	both    float64 // expected shared matches of no session's wallet
	chance  float64 // expected shared matches if the wallets differ
	ifSame  float64 // expected shared matches if one wallet
	members []memberTerms
	// The shared matches under each hypothesis: one wallet of any size
	// (same), chance and the wallets matching each other's filters by
	// chance (other), and a payment of k shared addresses, k averaged
	// over each bin of sizes (pay).
	same, other float64
	pay         [paymentBins]float64
	// directed is true for a pair: one session is the payer (its own
	// matches a wallet of at least one candidate), the other the payee
	// (its own matches maybe none: a payee all of whose addresses its
	// payer watches).
	directed bool
	// sides are, for three sessions, what each two of them share beyond
	// what all three do (see sideTerms).
	sides []memberTerms
	// payee are, for a pair, what each member's matches say as the payee
	// of a payment from the other (see payeeTerms).
	payee [2]payeeTerms
	// binned is true for a pair that shares nothing listed beside its
	// count among the mixture's binned pairs, which the fit reads instead.
	binned bool
}

// binRange is the sizes of payment bin j: [2^j, 2^(j+1)).
func binRange(j int) (lo, hi float64) { return math.Ldexp(1, j), math.Ldexp(1, j+1) }

// paymentTerms is, per bin of payment sizes k, the log of the mean over
// the bin's k (log-uniform within it) of P(shared = k + X) for X a count
// of mean lambda and the given variance (a negative binomial when the
// wallets' own estimates widen it).
func paymentTerms(shared, lambda, variance float64) [paymentBins]float64 {
	var out [paymentBins]float64
	width := 12*math.Sqrt(variance+1) + 20
	for j := range out {
		lo, hi := binRange(j)
		out[j] = math.Inf(-1)
		from := math.Max(lo, math.Floor(shared-lambda-width))
		to := math.Min(hi-1, shared)
		if from > to {
			continue
		}
		total := math.Log(hi / lo)
		for k := from; k <= to; k++ {
			w := math.Log(math.Log((k+1)/k) / total)
			out[j] = logAddExp(out[j], w+logNegBinomial(shared-k, lambda, variance))
		}
	}
	return out
}

// evidence weighs the shared matches of sessions sx and sy, sharing
// shared candidates of which chance alone (both sessions' filters
// matching a candidate of neither wallet) gives both: each wallet's own
// candidates may also match the other's filters by chance.
func (p *sizePrior) evidence(sx, sy *linkSession, shared uint64, both float64) pairEvidence {
	return p.evidenceBeyond(sx, sy, shared, both, [2]float64{})
}

// evidenceBeyond is evidence when other sessions show each of the two
// holding at least beyond[i] candidates the other does not (see
// linker.beyond): its own matches are then not chance alone, and what it
// holds beside the shared part (what a wallet gained, another wallet, a
// payee's other addresses, a payer's own wallet) is at least that large.
func (p *sizePrior) evidenceBeyond(sx, sy *linkSession, shared uint64, both float64, beyond [2]float64) pairEvidence {
	cross := sx.exposedMatching(sy) + sy.exposedMatching(sx)
	spread := sy.rho*sy.rho*sx.chance + sx.rho*sx.rho*sy.chance
	if shared == 0 {
		// The sessions' own terms were computed once, at their own chance
		// (both is at most a few here). A payment shares at least one
		// address, so it cannot share none; nor can one wallet, unless
		// its candidates all missed (a wallet has one: sessions of no
		// wallet, the size prior's empty share, are of no wallet
		// together).
		ev := pairEvidence{both: both, chance: both + cross, directed: true}
		ev.ifSame = both + (sx.exposed+sy.exposed)/2
		ev.same = p.zero - both
		ev.other = logNegBinomial(0, ev.chance, ev.chance+spread)
		for i := range ev.pay {
			ev.pay[i] = math.Inf(-1)
		}
		for _, m := range []*linkSession{sx, sy} {
			chance := math.Max(m.chance-both, 0)
			ev.members = append(ev.members, memberTerms{own: logPoisson(m.matched, chance), some: math.Inf(-1),
				grown: math.Inf(-1), far: math.Inf(-1), anyWallet: m.logAny})
		}
		return ev
	}
	ev := p.weighBeyond([]*linkSession{sx, sy}, shared, both, cross, spread, beyond[:])
	ev.directed = true
	for i, m := range []*linkSession{sx, sy} {
		only, chance := math.Max(m.matched-float64(shared), 0), math.Max(m.chance-both, 0)
		ev.payee[i] = p.payeeTerms(float64(shared), ev.chance, ev.chance+spread, only, chance, beyond[i], &ev.pay)
	}
	return ev
}

// payeeTerms are what a payee's matches say of a payment of k of its N
// addresses (k ≤ N), per bin j of k (see paymentTerms): the payer meant
// to pay K addresses, of the law of payment sizes, and paid k = min(K,
// N), so a payee of few addresses is paid whole (K ≥ N) far more often
// than one of many. rest is log Σ P(K = k)·P(shared | k)·P(N > k,
// the payee's own matches) over the bin's k, less the bin's mass;
// whole is log Σ P(shared | k)·P(N = k)·P(the payee's own matches are
// chance), to be weighed by P(K ≥ k) at logK, the bin's mean ln k under
// the shared matches.
type payeeTerms struct {
	rest, whole, logK [paymentBins]float64
}

// payeeTerms weighs a payee's own matches, only of them of mean chance,
// against payments of k of its addresses sharing shared matches (chance
// and the wallets' cross matches of mean lambda and the given variance
// beside them), pay the bins' terms of paymentTerms; the payee holds at
// least beyond candidates its payer does not (none when it is below one).
func (p *sizePrior) payeeTerms(shared, lambda, variance, only, chance, beyond float64, pay *[paymentBins]float64) payeeTerms {
	var out payeeTerms
	width := 12*math.Sqrt(variance+1) + 20
	nonEmpty := p.massAbove(math.Ln2)
	own := logPoisson(only, chance)
	rest := 1.0
	if beyond >= 1 {
		own += math.Log(beyondTail)
		rest = beyond
	}
	for j := range out.rest {
		out.rest[j], out.whole[j] = math.Inf(-1), math.Inf(-1)
		if math.IsInf(pay[j], -1) {
			continue
		}
		lo, hi := binRange(j)
		from := math.Max(lo, math.Floor(shared-lambda-width))
		to := math.Min(hi-1, shared)
		total := math.Log(hi / lo)
		var sumW, sumLog float64
		for k := from; k <= to; k++ {
			l := logNegBinomial(shared-k, lambda, variance)
			w := math.Exp(math.Log(math.Log((k+1)/k)/total) + l - pay[j])
			sumW += w
			sumLog += w * math.Log(k)
			exact := math.Log(math.Max(p.massAbove(math.Log1p(k))-p.massAbove(math.Log(2+k)), 1e-300) / nonEmpty)
			out.whole[j] = logAddExp(out.whole[j], l+exact)
		}
		out.whole[j] += own
		out.logK[j] = sumLog / math.Max(sumW, 1e-300)
		k := math.Round(math.Exp(out.logK[j]))
		above := math.Log(math.Max(p.massAbove(math.Log1p(k+rest)), 1e-300) / nonEmpty)
		out.rest[j] = pay[j] + above + p.someSize(only, chance-k, k+rest)
	}
	return out
}

// massAbove is the share of the size prior's nonempty wallets whose log
// size ln(1+N) lies above y.
func (p *sizePrior) massAbove(y float64) float64 {
	return p.normalMass(y, p.span) / math.Max(p.normalMass(0, p.span), 1e-300)
}

// weigh weighs the candidates that every one of members matches, shared
// of them, of which chance alone (every member's filters matching a
// candidate of no member's wallet) gives both, and the members' wallets
// matching the others' filters by chance cross more (with variance
// spread, from the estimates it rests on). See the package documentation
// for the hypotheses.
func (p *sizePrior) weigh(members []*linkSession, shared uint64, both, cross, spread float64) pairEvidence {
	return p.weighBeyond(members, shared, both, cross, spread, nil)
}

// weighBeyond is weigh with, for each member (nil: none), the candidates
// other sessions show it holds beyond what the members share (see
// evidenceBeyond).
func (p *sizePrior) weighBeyond(members []*linkSession, shared uint64, both, cross, spread float64, beyond []float64) pairEvidence {
	s := float64(shared)
	ev := pairEvidence{shared: shared, both: both, chance: both + cross}
	common := math.Max(s-both, 0)
	ev.same = p.someSize(s, both, 0)
	ev.other = logNegBinomial(s, ev.chance, ev.chance+spread)
	ev.pay = paymentTerms(s, ev.chance, ev.chance+spread)
	for i, m := range members {
		only, chance := math.Max(m.matched-s, 0), math.Max(m.chance-both, 0)
		ev.ifSame += m.exposed / float64(len(members))
		var from float64
		if beyond != nil {
			from = beyond[i]
		}
		t := p.sideTermsBeyond(only, chance, common, from)
		t.anyWallet = p.anySizeBeyond(only, chance, from)
		ev.members = append(ev.members, t)
	}
	ev.ifSame += both
	return ev
}

// linkParams are the priors Link fits on a capture: of the hypotheses
// (for a pair of sessions), of a wallet's sessions differing (one holding
// candidates the other does not: growth) and how far, and of the number of addresses
// a payment shares (payment, by bins of sizes); and the share of whole
// payees (a payee all of whose candidates its payer watches), held (see
// wholeShares).
type linkParams struct {
	priors [hypotheses]float64
	growth float64
	// several is the share of one wallet's sessions that hold another
	// wallet's candidates beside it (several wallets behind one client):
	// the session's own matches are then a wallet of any size, not what
	// the wallet gained.
	several float64
	// far is the share of what a wallet gains or loses between sessions
	// that lies beyond twice what they share (see grownPart); holdFar
	// keeps it as set instead of fitting it.
	far     float64
	holdFar bool
	whole   float64
	payment [paymentBins]float64
	// payLog and payDeviation are the mean and deviation of ln k, for k
	// the addresses a payment shares: payment is that log-normal law's
	// mass on each bin.
	payLog, payDeviation float64
}

// setPayment sets the payment sizes' law: ln k normal of mean mu and
// deviation sigma, cut to k ≥ 1, its mass taken on each bin.
func (q *linkParams) setPayment(mu, sigma float64) {
	q.payLog, q.payDeviation = mu, sigma
	cdf := func(x float64) float64 { return math.Erfc(-(x-mu)/(sigma*math.Sqrt2)) / 2 }
	var sum float64
	for j := range q.payment {
		lo, hi := binRange(j)
		q.payment[j] = math.Max(cdf(math.Log(hi))-cdf(math.Log(lo)), 1e-300)
		sum += q.payment[j]
	}
	for j := range q.payment {
		q.payment[j] /= sum
	}
}

// paramLogs are the logs of the parameters that logLikes weighs by,
// computed once for every pair a step of a fit weighs.
type paramLogs struct {
	payment                      [paymentBins]float64
	whole, notWhole, far, notFar float64
	growth, several, neither     float64
	// payAny is the mass of the law of ln K above 0 (K ≥ 1).
	payAny float64
	// payAbove is, per bin, the law's mass on it and the bins above.
	payAbove [paymentBins]float64
}

// logs computes the parameters' logs.
func (q *linkParams) logs() *paramLogs {
	lg := &paramLogs{whole: math.Log(q.whole), notWhole: math.Log1p(-q.whole), far: math.Log(q.far), notFar: math.Log1p(-q.far),
		growth: math.Log(q.growth), several: math.Log(q.several), neither: math.Log1p(-q.growth - q.several), payAny: q.payTail(0)}
	for j, w := range q.payment {
		lg.payment[j] = math.Log(w)
	}
	for j := paymentBins - 1; j >= 0; j-- {
		lg.payAbove[j] = q.payment[j]
		if j+1 < paymentBins {
			lg.payAbove[j] += lg.payAbove[j+1]
		}
	}
	return lg
}

// mixLog is log((1-w)·e^a + w·e^b) for lw = log w and lv = log(1-w).
func mixLog(lv, lw, a, b float64) float64 {
	return logAddExp(lv+a, lw+b)
}

// logLikes is the log likelihood of the evidence under each hypothesis
// at the parameters: one wallet, its sessions each holding what the
// wallet gained or lost with probability growth; other wallets, each
// session's own matches a wallet of any size; a payment of a size drawn
// from the payment prior, the payer's own matches a wallet of at least
// one candidate, the payee's none with probability whole (for three
// sessions, each session's own matches none with probability whole).
func (q *linkParams) logLikes(ev *pairEvidence) [hypotheses]float64 {
	return q.logLikesAt(ev, q.logs())
}

// logLikesAt is logLikes with the parameters' logs lg.
func (q *linkParams) logLikesAt(ev *pairEvidence, lg *paramLogs) [hypotheses]float64 {
	var paid [2]float64
	if ev.directed {
		paid = [2]float64{q.paidTo(&ev.payee[0], lg, nil), q.paidTo(&ev.payee[1], lg, nil)}
	}
	return q.logLikesPaid(ev, lg, paid)
}

// logLikesPaid is logLikesAt with, for a pair, paid the log likelihoods
// of the shared matches and each member's own as the payee (paidTo).
func (q *linkParams) logLikesPaid(ev *pairEvidence, lg *paramLogs, paid [2]float64) [hypotheses]float64 {
	var out [hypotheses]float64
	out[sameWallet] = ev.same
	out[otherWallets] = ev.other
	pay := math.Inf(-1)
	for j, l := range ev.pay {
		if !math.IsInf(l, -1) {
			pay = logAddExp(pay, lg.payment[j]+l)
		}
	}
	payee := func(m memberTerms) float64 { return mixLog(lg.notWhole, lg.whole, m.some, m.own) }
	for _, m := range ev.members {
		out[sameWallet] += q.grewAt(m, lg)
		out[otherWallets] += m.anyWallet
	}
	if ev.directed {
		a, b := ev.members[0], ev.members[1]
		out[sharedAddress] = logAddExp(a.some+paid[1], b.some+paid[0]) - math.Ln2
	} else {
		out[sharedAddress] = pay
		for _, m := range ev.members {
			out[sharedAddress] += payee(m)
		}
		same, alt := q.sidesLikes(ev.sides, lg)
		out[sameWallet] += same
		out[sharedAddress] += alt
	}
	return out
}

// paidTo is the log likelihood of the shared matches and the payee's own
// under a payment to a payee of terms t, at the law of payment sizes:
// per bin, the payer meaning to pay fewer than the payee's addresses, or
// at least all of them. With into, the bins' shares of it are added to
// into, a whole payee's spread over its bin and those above it as K is.
func (q *linkParams) paidTo(t *payeeTerms, lg *paramLogs, into *[paymentBins]float64) float64 {
	// Each bin's two terms, summed at the largest (one exponential each).
	var terms [paymentBins][2]float64
	top := math.Inf(-1)
	for j := range t.rest {
		terms[j] = [2]float64{math.Inf(-1), math.Inf(-1)}
		if math.IsInf(t.rest[j], -1) && math.IsInf(t.whole[j], -1) {
			continue
		}
		terms[j][0] = lg.payment[j] + t.rest[j]
		if !math.IsInf(t.whole[j], -1) {
			terms[j][1] = math.Log(q.payAtLeast(t.logK[j], lg.payAny)) + t.whole[j]
		}
		top = math.Max(top, math.Max(terms[j][0], terms[j][1]))
	}
	if math.IsInf(top, -1) || math.IsNaN(top) {
		return top
	}
	var sum float64
	for j := range terms {
		for h := range terms[j] {
			terms[j][h] = math.Exp(terms[j][h] - top)
			sum += terms[j][h]
		}
	}
	if into != nil {
		for j := range terms {
			into[j] += terms[j][0] / sum
			if whole := terms[j][1] / sum; whole != 0 {
				for i := j; i < paymentBins; i++ {
					into[i] += whole * q.payment[i] / lg.payAbove[j]
				}
			}
		}
	}
	return top + math.Log(sum)
}

// payAtLeast is the probability that a payer means to pay at least k
// addresses, for ln k = logK, under the law of payment sizes, any the
// law's mass at k ≥ 1.
func (q *linkParams) payAtLeast(logK, any float64) float64 {
	return math.Max(math.Min(q.payTail(logK)/any, 1), 1e-300)
}

// payTail is the mass of the normal law of ln K above x.
func (q *linkParams) payTail(x float64) float64 {
	return math.Erfc((x-q.payLog)/(q.payDeviation*math.Sqrt2)) / 2
}

// sidesLikes is the log likelihood of what each two of three sessions
// share beyond what all three do: under one wallet, chance or what the
// wallet gained or lost (each side, as a member's own matches); under
// addresses shared without one wallet, two of the three (any two) one
// wallet's sessions sharing the rest of that wallet (none with
// probability whole: a payee all of whose candidates were paid), the
// other two sides what the third's wallet gained or lost, as under one
// wallet.
func (q *linkParams) sidesLikes(sides []memberTerms, lg *paramLogs) (same, alt float64) {
	if len(sides) == 0 {
		return 0, 0
	}
	alt = math.Inf(-1)
	for i, s := range sides {
		same += q.grewAt(s, lg)
		l := mixLog(lg.notWhole, lg.whole, s.some, s.own) - math.Log(float64(len(sides)))
		for j, o := range sides {
			if j != i {
				l += q.grewAt(o, lg)
			}
		}
		alt = logAddExp(alt, l)
	}
	return same, alt
}

// sideTerms are the terms of what two of three sessions share beyond
// what all three do, excess of them, chance giving it a mean of chance:
// chance alone (own), a wallet's candidates of at least one (some), what
// one wallet of common candidates gained or lost (grown).
func (p *sizePrior) sideTerms(excess, chance, common float64) memberTerms {
	return p.sideTermsBeyond(excess, chance, common, 0)
}

// beyondTail is at most the probability that chance makes a session look
// as if it held candidates beyond a pair's shared part (see
// linker.beyond): the likelihood of its own matches being chance alone is
// scaled by it when other sessions show such candidates.
const beyondTail = 0.001

// sideTermsBeyond is sideTerms for a member other sessions show holding
// at least from candidates beyond the shared part (none when from is
// below one): the parts of its own matches are then at least that
// large, each term keeping only the prior's mass there, and chance alone
// is scaled by beyondTail.
func (p *sizePrior) sideTermsBeyond(excess, chance, common, from float64) memberTerms {
	t := memberTerms{own: logPoisson(excess, chance), shares: common >= 1}
	if from < 1 {
		t.some = p.someSize(excess, chance, 1)
		t.grown, t.far = grownPart(excess, chance, common, nearGrowth, 1), grownPart(excess, chance, common, farGrowth, 1)
		return t
	}
	t.own += math.Log(beyondTail)
	t.some = p.someSize(excess, chance, from) + math.Log(math.Max(p.massAbove(math.Log1p(from))/p.massAbove(math.Ln2), 1e-300))
	t.grown, t.far = grownPart(excess, chance, common, nearGrowth, from), grownPart(excess, chance, common, farGrowth, from)
	return t
}

// anySizeBeyond is anySize for a wallet part of at least from candidates
// (see sideTermsBeyond).
func (p *sizePrior) anySizeBeyond(k, base, from float64) float64 {
	if from < 1 {
		return p.anySize(k, base)
	}
	some := p.someSize(k, base, from) + math.Log(math.Max(p.massAbove(math.Log1p(from)), 1e-300))
	return logAddExp(math.Log(p.empty)+logPoisson(k, base)+math.Log(beyondTail), math.Log1p(-p.empty)+some)
}

// grewAt is the log likelihood of a member's own matches under one wallet:
// chance, or with probability growth chance and what the wallet gained or
// lost (far with probability far, else near), or with probability several
// chance and another wallet's candidates of any size (a session of
// several wallets); a wallet with no shared candidate has nothing to grow
// from. lg are the parameters' logs.
func (q *linkParams) grewAt(m memberTerms, lg *paramLogs) float64 {
	if !m.shares {
		return m.own
	}
	l := logAddExp(lg.neither+m.own, lg.growth+gainedAt(m, lg))
	if q.several > 0 {
		l = logAddExp(l, lg.several+m.some)
	}
	return l
}

// gainedAt is the log likelihood of a member's own matches under one
// wallet that gained or lost them.
func gainedAt(m memberTerms, lg *paramLogs) float64 { return mixLog(lg.notFar, lg.far, m.grown, m.far) }

// posterior is the probability of each hypothesis given the evidence
// and the parameters.
func (q *linkParams) posterior(ev *pairEvidence) [hypotheses]float64 {
	return posteriorOf(q.priors, q.logLikes(ev))
}

// posteriorOf weighs log likelihoods by priors.
func posteriorOf(priors, logLikes [hypotheses]float64) [hypotheses]float64 {
	var logs [hypotheses]float64
	top := math.Inf(-1)
	for h := range logs {
		logs[h] = math.Log(priors[h]) + logLikes[h]
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

// startParams are the parameters a fit starts from, and its pseudo-counts
// lean to: one wallet and a payment each with probability p, growth one
// in ten, half of it far, payment sizes of prior 1/k², and whole payees at the share held.
func startParams(p float64) linkParams {
	q := linkParams{priors: [hypotheses]float64{sameWallet: p, otherWallets: 1 - 2*p, sharedAddress: p}, growth: 0.1, several: startSeveral, far: 0.5, whole: wholeShares[0]}
	q.setPayment(startPayLog, startPayDeviation)
	return q
}

// startSeveral is the share of sessions of several wallets a fit starts
// from (see linkParams.several).
const startSeveral = 0.05

// severalWeight is 1 when the fit weighs sessions of several wallets,
// else 0.
func (q *linkParams) severalWeight() float64 {
	if q.several > 0 {
		return 1
	}
	return 0
}

// mixture is the pairs' evidence gathered for fitting the parameters: the
// pairs that share matches one by one, those that share none by their
// log likelihood ratio of one wallet against other wallets rounded to a
// hundredth (their number is quadratic in the sessions, their ratios
// few; a payment cannot share none).
type mixture struct {
	pairs  []pairEvidence
	binned map[int32]float64 // (same - other), in hundredths: count
	keys   []int32           // binned's keys, in order
}

func (m *mixture) addBinned(ev *pairEvidence) {
	q := startParams(0.25) // the terms of a pair that shares nothing depend on no parameter
	l := q.logLikes(ev)
	key := int32(math.Round(math.Max(-2e7, math.Min(2e7, 100*(l[sameWallet]-l[otherWallets])))))
	if _, ok := m.binned[key]; !ok {
		m.keys = append(m.keys, key)
	}
	m.binned[key]++
}

// binnedEvidence is the evidence of the binned pairs of one key.
func binnedEvidence(key int32) [hypotheses]float64 {
	return [hypotheses]float64{sameWallet: float64(key) / 100, otherWallets: 0, sharedAddress: math.Inf(-1)}
}

// linkFit is the parameters fitted on a capture, and those fitted on
// resampled pairs, whose spread gives the intervals.
type linkFit struct {
	est  linkParams
	boot []linkParams
}

// fit estimates the parameters by expectation maximization from init,
// each step setting each to its expected share over the pairs at the
// previous parameters, with the pseudo-counts of start: the hypotheses'
// priors weigh as many pairs as weight at start, the others as the
// constants above. weights (nil: one each) count each listed pair, binned
// (nil: the mixture's) the binned pairs. fixed > 0 holds the priors of one
// wallet and payment at it.
func (m *mixture) fit(init, start linkParams, weight, fixed, tol float64, weights []float64, binned map[int32]float64) linkParams {
	if binned == nil {
		binned = m.binned
	}
	cur := init
	if fixed > 0 {
		cur.priors = [hypotheses]float64{sameWallet: fixed, otherWallets: 1 - 2*fixed, sharedAddress: fixed}
	}
	for range emRounds {
		var c expected
		hyp := &c.hyp
		lg := cur.logs()
		for i := range m.pairs {
			w := 1.0
			if weights != nil {
				w = weights[i]
			}
			if w == 0 || m.pairs[i].binned {
				continue
			}
			cur.expect(&m.pairs[i], w, lg, &c)
		}
		for _, k := range m.keys {
			post := posteriorOf(cur.priors, binnedEvidence(k))
			for h := range hyp {
				hyp[h] += binned[k] * post[h]
			}
		}
		next := cur
		var total float64
		for h := range hyp {
			total += hyp[h] + weight*start.priors[h]
		}
		if fixed == 0 {
			for h := range hyp {
				next.priors[h] = (hyp[h] + weight*start.priors[h]) / total
			}
		}
		sides := c.sides + growthPseudoYes + growthPseudoNo + severalPseudo*start.severalWeight()
		next.growth = (c.grew + growthPseudoYes) / sides
		if start.several > 0 {
			next.several = (c.several + severalPseudo) / sides
		}
		if !cur.holdFar {
			next.far = (c.far + farPseudo*start.far) / (c.grew + farPseudo)
		}
		next.setPayment(paymentMoments(c.pay, start))
		moved := math.Abs(next.growth-cur.growth) + math.Abs(next.far-cur.far) + math.Abs(next.payLog-cur.payLog) + math.Abs(next.payDeviation-cur.payDeviation)
		for h := range hyp {
			moved += math.Abs(next.priors[h]-cur.priors[h]) / cur.priors[h]
		}
		cur = next
		if moved < tol {
			break
		}
	}
	return cur
}

// paymentMoments are the mean and deviation of ln k over the payments'
// expected counts per bin (ln k uniform within a bin) and the pseudo-count
// of start's.
func paymentMoments(pay [paymentBins]float64, start linkParams) (mu, sigma float64) {
	n := paymentPseudo
	s1 := paymentPseudo * start.payLog
	s2 := paymentPseudo * (start.payDeviation*start.payDeviation + start.payLog*start.payLog)
	for j, c := range pay {
		lo, hi := binRange(j)
		a, b := math.Log(lo), math.Log(hi)
		m := (a + b) / 2
		n += c
		s1 += c * m
		s2 += c * (m*m + (b-a)*(b-a)/12)
	}
	mu = s1 / n
	return mu, math.Max(math.Sqrt(math.Max(s2/n-mu*mu, 0)), minPayDeviation)
}

// expected are the counts one step of a fit expects at the parameters:
// of each hypothesis (hyp), of the sessions among one wallet's that could
// have grown (sides) and did (grew), far (far), and of each bin of
// payment sizes (pay).
type expected struct {
	hyp                       [hypotheses]float64
	grew, sides, far, several float64
	pay                       [paymentBins]float64
}

// expect adds one pair's expected counts, of weight w, at the parameters
// (of logs lg).
func (q *linkParams) expect(ev *pairEvidence, w float64, lg *paramLogs, c *expected) {
	// A pair's payments are weighed once, their bins' shares kept for
	// expectPaid.
	var paid [2]float64
	var to [2][paymentBins]float64
	if ev.directed {
		paid = [2]float64{q.paidTo(&ev.payee[0], lg, &to[0]), q.paidTo(&ev.payee[1], lg, &to[1])}
	}
	post := posteriorOf(q.priors, q.logLikesPaid(ev, lg, paid))
	for h := range c.hyp {
		c.hyp[h] += w * post[h]
	}
	for _, m := range ev.members {
		if !m.shares || post[sameWallet] == 0 {
			continue
		}
		all := q.grewAt(m, lg)
		if math.IsInf(all, -1) {
			continue
		}
		if q.several > 0 {
			c.several += w * post[sameWallet] * math.Exp(lg.several+m.some-all)
		}
		c.sides += w * post[sameWallet]
		if gained := gainedAt(m, lg); !math.IsInf(gained, -1) {
			g := w * post[sameWallet] * math.Exp(lg.growth+gained-all)
			c.grew += g
			c.far += g * math.Exp(lg.far+m.far-gained)
		}
	}
	if post[sharedAddress] == 0 {
		return
	}
	if ev.directed && ev.shared > 0 {
		expectPaid(ev, w*post[sharedAddress], paid, &to, c)
		return
	}
	total := math.Inf(-1)
	for j, l := range ev.pay {
		if !math.IsInf(l, -1) {
			total = logAddExp(total, lg.payment[j]+l)
		}
	}
	for j, l := range ev.pay {
		if !math.IsInf(l, -1) {
			c.pay[j] += w * post[sharedAddress] * math.Exp(lg.payment[j]+l-total)
		}
	}
}

// expectPaid adds the expected counts of payment sizes of a pair,
// weight w under a payment, either member the payee: paid are the log
// likelihoods of each member as the payee and to their bins' shares
// (paidTo).
func expectPaid(ev *pairEvidence, w float64, paid [2]float64, to *[2][paymentBins]float64, c *expected) {
	a, b := ev.members[0], ev.members[1]
	la, lb := b.some+paid[0], a.some+paid[1]
	top := logAddExp(la, lb)
	if math.IsInf(top, -1) {
		return
	}
	wa, wb := w*math.Exp(la-top), w*math.Exp(lb-top)
	for j := range c.pay {
		c.pay[j] += wa*to[0][j] + wb*to[1][j]
	}
}

// fitAll fits the parameters on the pairs at each of wholeShares, and
// again on bootstrapFits resamplings of the pairs (each pair, and each
// binned pair, counted a Poisson number of times of mean one, from a
// fixed seed so that a capture always gives the same answer); fixed > 0
// holds the priors and fits once.
func (m *mixture) fitAll(start linkParams, weight, fixed float64) linkFit {
	start.whole = wholeShares[0]
	f := linkFit{est: m.fit(start, start, weight, fixed, fitTolerance, nil, nil)}
	if fixed > 0 {
		return f
	}
	for _, whole := range wholeShares[1:] {
		q := start
		q.whole = whole
		init := f.est
		init.whole = whole
		f.boot = append(f.boot, m.fit(init, q, weight, 0, spreadTolerance, nil, nil))
	}
	for _, far := range farShares {
		q := start
		q.far, q.holdFar = far, true
		init := f.est
		init.far, init.holdFar = far, true
		f.boot = append(f.boot, m.fit(init, q, weight, 0, spreadTolerance, nil, nil))
	}
	rng := rand.New(rand.NewPCG(0x11c4, uint64(len(m.pairs))))
	weights := make([]float64, len(m.pairs))
	for range bootstrapFits {
		for i := range weights {
			weights[i] = float64(poissonDraw(rng, 1))
		}
		binned := make(map[int32]float64, len(m.binned))
		for _, k := range m.keys {
			binned[k] = float64(poissonDraw(rng, m.binned[k]))
		}
		f.boot = append(f.boot, m.fit(f.est, start, weight, 0, spreadTolerance, weights, binned))
	}
	return f
}

// poissonDraw draws a Poisson count of mean lambda: by inversion for a
// small mean, else by the normal approximation rounded.
func poissonDraw(rng *rand.Rand, lambda float64) int {
	if lambda > 50 {
		return max(0, int(math.Round(lambda+math.Sqrt(lambda)*rng.NormFloat64())))
	}
	limit, p, k := math.Exp(-lambda), rng.Float64(), 0
	for p > limit {
		p *= rng.Float64()
		k++
	}
	return k
}

// interval is the probability of one wallet at the fitted parameters and
// its 95% interval (a point when the priors are held): the 2.5% and
// 97.5% points of its values at the parameters fitted on resampled pairs
// and with the shares the capture cannot tell held, the upper end raised
// to what the capture cannot rule out (see the package documentation,
// "Linking sessions"): to the 97.5% point of the probability that the
// sessions share addresses (one wallet, or a payment), and, for a pair
// whose probability lies below the prior of one wallet, to the prior's
// 97.5% point.
func (f *linkFit) interval(ev *pairEvidence) (p, lo, hi float64) {
	return f.boundedSpread(func(q *linkParams) [hypotheses]float64 { return q.posterior(ev) })
}

// boundedSpread is interval for the posteriors post gives at each
// fitted parameters.
func (f *linkFit) boundedSpread(post func(q *linkParams) [hypotheses]float64) (p, lo, hi float64) {
	at := post(&f.est)
	p = at[sameWallet]
	if len(f.boot) == 0 {
		return p, p, p
	}
	one := make([]float64, 0, len(f.boot)+1)
	shares := make([]float64, 0, len(f.boot)+1)
	priors := make([]float64, 0, len(f.boot)+1)
	add := func(q *linkParams, at [hypotheses]float64) {
		one = append(one, at[sameWallet])
		shares = append(shares, at[sameWallet]+at[sharedAddress])
		priors = append(priors, q.priors[sameWallet])
	}
	add(&f.est, at)
	for i := range f.boot {
		add(&f.boot[i], post(&f.boot[i]))
	}
	lo, hi = percentiles(one)
	_, shareHigh := percentiles(shares)
	_, priorHigh := percentiles(priors)
	hi = math.Max(hi, math.Min(shareHigh, 1))
	if p < priorHigh {
		hi = math.Max(hi, priorHigh)
	}
	return p, math.Min(lo, p), math.Max(hi, p)
}

// percentiles are the 2.5% and 97.5% points of vs, which it sorts.
func percentiles(vs []float64) (lo, hi float64) {
	slices.Sort(vs)
	n := float64(len(vs) - 1)
	return vs[int(math.Floor(0.025*n))], vs[int(math.Ceil(0.975*n))]
}

// spread is value at the fitted parameters and the 2.5% and 97.5% points
// of its values at the bootstrap fits, the fitted one among them.
func (f *linkFit) spread(value func(q *linkParams) float64) (p, lo, hi float64) {
	p = value(&f.est)
	if len(f.boot) == 0 {
		return p, p, p
	}
	vs := make([]float64, 0, len(f.boot)+1)
	vs = append(vs, p)
	for i := range f.boot {
		vs = append(vs, value(&f.boot[i]))
	}
	lo, hi = percentiles(vs)
	return p, math.Min(lo, p), math.Max(hi, p)
}
