package attack

import (
	"math"
	"slices"
)

// sizePosterior is the posterior of a wallet's size n given its session's
// m matches of which chance alone is expected to give F: the size prior
// (empty with its probability, else n counted as in sizePrior.sized)
// times P(m-n; F), over the sizes whose likelihood is not negligible.
type sizePosterior struct {
	n, w []float64 // the sizes and their normalized weights
}

// newSizePosterior weighs the sizes n of a wallet whose session matched
// matched candidates, chance of them expected by chance, under prior p.
func newSizePosterior(p *sizePrior, matched, chance float64) *sizePosterior {
	width := 12*math.Sqrt(chance+1) + 40
	lo := math.Max(0, math.Floor(matched-chance-width))
	hi := math.Min(matched, math.Ceil(matched-chance+width))
	total := p.normalMass(0, p.span)
	window := 1 + int(math.Max(hi-lo+1, 0)) // the empty wallet, then lo..hi
	post := &sizePosterior{n: make([]float64, 0, window)}
	logs := make([]float64, 0, window)
	top := math.Inf(-1)
	add := func(n, logPrior float64) {
		l := logPrior + logPoisson(matched-n, chance)
		if math.IsInf(l, -1) || math.IsNaN(l) {
			return
		}
		post.n = append(post.n, n)
		logs = append(logs, l)
		top = math.Max(top, l)
	}
	if lo > 0 || hi < lo {
		// Chance alone gives far fewer (or, hi below lo, far more)
		// matches than m: the empty wallet's term is negligible, unless
		// nothing else is.
		add(0, math.Log(p.empty))
	}
	for n := lo; n <= hi; n++ {
		if n == 0 {
			add(0, math.Log(p.empty))
			continue
		}
		a, b := math.Log(n+0.5), math.Log(n+1.5)
		if n == 1 {
			a = 0
		}
		if m := p.normalMass(a, b) / total; m > 0 && total > 0 {
			add(n, math.Log1p(-p.empty)+math.Log(m))
		}
	}
	if len(logs) == 0 {
		return nil
	}
	var sum float64
	post.w = logs // weighed in place
	for i, l := range logs {
		post.w[i] = math.Exp(l - top)
		sum += post.w[i]
	}
	for i := range post.w {
		post.w[i] /= sum
	}
	return post
}

// probabilityScaled is the posterior mean of candidateProbability over
// the wallet's sizes n, at n·scale (see classMix.scale): the probability
// that a match of chance rate f is the wallet's, its size not known.
func (s *sizePosterior) probabilityScaled(scale float64, b classBound, size uint64, f float64) float64 {
	var p float64
	for i, n := range s.n {
		if s.w[i] > 1e-12 {
			p += s.w[i] * candidateProbability(b.clamp(scale*n), size, f)
		}
	}
	return p
}

// classBound is what a session's own matches of one class allow of its
// wallet's part in the class, in the units of n·scale (see classMix.scale):
// at most all of them, at least what chance leaves of them at the 95%
// level (see walletRange). The class shares fitted over all the sessions
// analyzed together move a session's probabilities only within it, so
// that sessions crafted to fill one class (filters holding every
// candidate of a rare class) can neither lift another session's chance
// matches of the class nor take its own wallet from another class.
type classBound struct {
	lo, hi float64
}

// noBound leaves n·scale as it is.
var noBound = classBound{0, math.Inf(1)}

// newClassBound bounds a wallet's part in a class of which its session
// matched matched candidates, chance of them expected by chance, the
// class holding classSize of the universe's size candidates.
func newClassBound(matched, chance float64, classSize, size uint64) classBound {
	if classSize == 0 || size == 0 {
		return noBound
	}
	lo, _ := walletRange(matched, chance)
	unit := float64(size) / float64(classSize)
	return classBound{lo: lo * unit, hi: matched * unit}
}

// clamp holds x, a wallet's n·scale, within the bound; an empty wallet
// stays empty.
func (b classBound) clamp(x float64) float64 {
	if x <= 0 {
		return x
	}
	return math.Min(math.Max(x, b.lo), b.hi)
}

// scale is the wallets' share of class cls over the universe's share of
// it (classSize of size candidates): a wallet of n candidates holds
// n·scale/size of the class's candidates. It is 1 without a fit.
func (m *classMix) scale(cls int, classSize, size uint64) float64 {
	if m == nil || cls >= len(m.share) || classSize == 0 || size == 0 {
		return 1
	}
	return m.share[cls] * float64(size) / float64(classSize)
}

// fitReportSizes fits the prior on wallet sizes (see fitSizes) to the
// reports' own counts, those of the groups of set, leaving out those
// whose filters match everything and weighing the others by the
// evidence they carry (see linkSession.evidence).
func fitReportSizes(reports []*Report, size uint64, set *groupSet) *sizePrior {
	return fitSizes(reportSessions(reports, set), size)
}

// reportSessions is what fitting the size prior needs of the reports of
// the groups of set, those of the same matches counted as copies (see
// weighTwins).
func reportSessions(reports []*Report, set *groupSet) []linkSession {
	sessions := make([]linkSession, len(reports))
	for g, r := range reports {
		s := linkSession{group: g, matched: float64(r.MatchedCount), chance: r.ExpectedFalsePositives,
			blind: set.limit[g] == 0, truncated: r.MatchedTruncated, copies: set.copies[g]}
		if r.joint != nil {
			s.keys = r.joint.keys
		}
		s.lines = make([]int, len(r.Matched))
		for i, m := range r.Matched {
			s.lines[i] = m.Line
		}
		sessions[g] = s
	}
	weighTwins(sessions)
	return sessions
}

// classMix is the wallets' share of each class of candidates (see
// classRate), by class, estimated over the sessions analyzed together:
// a wallet's candidates need not be spread over the classes as the
// universe's are (addresses whose keys no spend has shown are one
// element, others two).
type classMix struct {
	share []float64 // by class; sums to one
}

// fitClassMix estimates the wallets' shares of the classes from the
// reports' matches by expectation maximization: a session of estimated
// wallet N with shares θ expects N·θ(c) of its matches of class c to be
// its wallet's and U(c)·r(c) by chance; each match of class c is its
// wallet's with probability N·θ(c)/(N·θ(c)+U(c)·r(c)), and θ(c) is the
// share of the wallets' matches so counted, from the universe's own
// shares counted as one more wallet. Reports whose match lists are cut
// short, or without an estimated wallet, are left out.
func fitClassMix(reports []*Report, classes []uint64, size uint64) *classMix {
	if size == 0 {
		return nil
	}
	// Per session: its estimated wallet, and by class its matches and
	// their chance count (classes it did not match left out).
	type counts struct {
		n             float64
		cls           []int
		match, chance []float64
	}
	var sessions []counts
	byClass := make([]float64, len(classes))
	for _, r := range reports {
		if r.MatchedTruncated || r.EstimatedWallet <= 0 || r.joint == nil {
			continue
		}
		clear(byClass)
		for _, m := range r.Matched {
			byClass[m.class]++
		}
		c := counts{n: r.EstimatedWallet}
		for cls, k := range byClass {
			if k > 0 {
				c.cls = append(c.cls, cls)
				c.match = append(c.match, k)
				c.chance = append(c.chance, float64(classes[cls])*r.joint.classRate(cls))
			}
		}
		sessions = append(sessions, c)
	}
	start := make([]float64, len(classes))
	for cls, n := range classes {
		start[cls] = float64(n) / float64(size)
	}
	mix := &classMix{share: slices.Clone(start)}
	for range 200 {
		next := slices.Clone(start)
		total := 1.0
		for _, s := range sessions {
			for i, cls := range s.cls {
				own := s.n * mix.share[cls]
				if own <= 0 {
					continue
				}
				x := s.match[i] * own / (own + s.chance[i])
				next[cls] += x
				total += x
			}
		}
		moved := 0.0
		for cls := range next {
			next[cls] /= total
			moved += math.Abs(next[cls] - mix.share[cls])
		}
		mix.share = next
		if moved < 1e-9 {
			break
		}
	}
	return mix
}
