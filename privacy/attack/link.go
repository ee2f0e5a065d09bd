package attack

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
)

// ErrBadLink reports sessions or options that Link or Intersect cannot use.
var ErrBadLink = errors.New("privacy: cannot link sessions")

// maxListedLinks bounds the pairs a Linkage lists when some share no match:
// with more sessions than that many pairs, only the pairs that share a
// match are listed (the others are not linked; see Linkage).
const maxListedLinks = 5000

// maxLinkSessions bounds the sessions Link compares: the pairs are
// quadratic in their number.
const maxLinkSessions = 5000

// LinkOptions tune Accumulator.Link.
type LinkOptions struct {
	// Threshold is the probability above which two sessions are linked:
	// 0 means 0.5; it must lie in [0.5, 1).
	Threshold float64
	// Prior is the probability, before looking at the matches, that two
	// given sessions share a wallet, and also that they are of two wallets
	// one of which paid the other; it must lie in (0, 0.5). 0 estimates
	// both from every pair of the capture (see the package
	// documentation); priors given here are held (the other parameters
	// are still fitted), and the probabilities' intervals are then single
	// points.
	Prior float64
}

// SessionLink compares the matches of two sessions A and B (indexes of the
// accumulator's groups).
type SessionLink struct {
	A int `json:"a"`
	B int `json:"b"`
	// Shared counts the candidates that match both sessions' filters.
	Shared uint64 `json:"shared"`
	// ExpectedByChance is the number of shared matches expected if the
	// sessions are of different wallets that share nothing: false
	// positives of both, and each wallet's candidates matching the
	// other's filters by chance.
	ExpectedByChance float64 `json:"expected_by_chance"`
	// ExpectedIfSameWallet is the number expected if they are one
	// wallet's: the false positives of both and the wallet's candidates,
	// as many as the two sessions' own estimates of their wallet on
	// average.
	ExpectedIfSameWallet float64 `json:"expected_if_same_wallet"`
	// Probability is the posterior probability that the sessions share a
	// wallet, and ProbabilityLow..ProbabilityHigh its 95% interval (its
	// spread over the parameters fitted on resampled pairs and with the
	// shares the capture cannot tell held, its upper end raised to what
	// the counts cannot rule out: the probability that the sessions share
	// addresses, and for a pair below the prior, the prior; from 0 for a
	// pair whose session is linked to nothing, which may be of no wallet;
	// for a pair no group links, the rate at which such pairs were of one
	// wallet on simulated captures; and both ends to the rates pairs like
	// it reached on the simulated captures of most spread; see the
	// package documentation). A
	// session whose matches lie within those of two sessions of different
	// wallets has its pairs weighed together (it is not of both), and a
	// pair above the threshold whose sessions' groups together do not
	// hold what their pairs are sure of has its odds cut a hundredfold;
	// both only lower them. A pair a group links, given less than 0.94,
	// has its log odds raised by what linked pairs were right on
	// simulated captures, to at most 0.94. Where the capture looks like
	// one whose wallets pay each other several addresses, a pair of the
	// counts payments and one wallet give alike (many shared candidates,
	// each session holding many of its own beyond chance) is given at most
	// the rate its class was right on simulated captures, which a warning
	// says.
	// ProbabilityShared is that of different wallets one of which paid
	// the other (its filters hold some of the other's addresses). See the
	// package documentation.
	Probability       float64 `json:"probability"`
	ProbabilityLow    float64 `json:"probability_low"`
	ProbabilityHigh   float64 `json:"probability_high"`
	ProbabilityShared float64 `json:"probability_shared_addresses"`
	// ProbabilityLevel is the share of such intervals that held the rate
	// at which pairs like theirs were of one wallet on simulated captures
	// apart from those their learned ends were fitted on (see the package
	// documentation): the level the interval has, stated beside it; 0
	// where the learned ends are not taken (priors or a threshold given in
	// LinkOptions).
	ProbabilityLevel float64 `json:"probability_level,omitempty"`
	// Third is -1 when the two sessions' own matches give the
	// probability, else a third session (an index of the accumulator's
	// groups) whose matches, shared with both, make one wallet of the
	// three more probable than the pair alone does (see the package
	// documentation).
	Third int `json:"third"`
	// Linked is true when the sessions are in one of the Linkage's
	// Groups: their probability is above the threshold, and so is that
	// of every other pair of the group.
	Linked bool `json:"linked"`
}

// Linkage is the result of Accumulator.Link.
type Linkage struct {
	// Prior is the prior probability that two sessions share a wallet,
	// and PriorLow..PriorHigh its 95% interval: estimated from every pair,
	// or LinkOptions.Prior as given. PaymentPrior is that of two wallets
	// one of which paid the other, with its interval.
	Prior            float64 `json:"prior"`
	PriorLow         float64 `json:"prior_low"`
	PriorHigh        float64 `json:"prior_high"`
	PaymentPrior     float64 `json:"payment_prior"`
	PaymentPriorLow  float64 `json:"payment_prior_low"`
	PaymentPriorHigh float64 `json:"payment_prior_high"`
	// PaymentSizes is the estimated distribution of the number of
	// addresses a payment shares (the payee's addresses its payer's
	// filters hold), by classes of sizes; Growth is the estimated
	// probability that a session of a wallet holds candidates another of
	// its sessions does not, GrowthFar the share of such differences
	// beyond twice what the sessions share, WholePayee that a payee's every address is
	// one its payer watches.
	PaymentSizes []PaymentSizes `json:"payment_sizes"`
	Growth       float64        `json:"growth"`
	GrowthFar    float64        `json:"growth_far"`
	WholePayee   float64        `json:"whole_payee"`
	// WalletSizes is the prior on a wallet's number of candidates in the
	// universe, estimated from the sessions' own matches.
	WalletSizes SizePrior `json:"wallet_size_prior"`
	Threshold   float64   `json:"threshold"`
	// PairsCompared is the number of session pairs, n(n-1)/2; Pairs lists
	// them all, or for more than maxListedLinks pairs those that share a
	// match (PairsListedShared is then true): a pair that shares none is
	// at most a few times as probable as the prior, never linked.
	PairsCompared     int           `json:"pairs_compared"`
	PairsListedShared bool          `json:"pairs_listed_shared_only,omitempty"`
	Pairs             []SessionLink `json:"pairs"`
	// Groups are the sets of sessions every pair of which is linked,
	// each of two or more sessions, in order of their first session; a
	// group whose joint matches fall below what its pairs share is split
	// (a warning says so).
	Groups   [][]int  `json:"groups"`
	Warnings []string `json:"warnings"`
}

// PaymentSizes is a class of payments: those that share from MinAddresses
// to MaxAddresses addresses, and their estimated share of all payments.
type PaymentSizes struct {
	MinAddresses int     `json:"min_address_count"`
	MaxAddresses int     `json:"max_address_count"`
	Share        float64 `json:"share"`
}

// SizePrior is the prior on the number N of a wallet's candidates in the
// universe that Link estimates from the sessions: no candidate with
// probability Empty, else ln(1+N) normal of mean LogMean and deviation
// LogDeviation (cut to the universe's size). Median is e^LogMean - 1.
type SizePrior struct {
	Empty        float64 `json:"empty"`
	LogMean      float64 `json:"log_mean"`
	LogDeviation float64 `json:"log_deviation"`
	Median       float64 `json:"median"`
}

// Link finds, among the groups it is given (nil: all of them), the
// sessions that probably belong to one wallet, such as a wallet that
// reconnected with a new tweak, each group of filters being one session.
// Two sessions of one wallet share its candidates; sessions of different
// wallets share only chance matches, whose number is predictable from the
// filters' rates, or a few addresses when they paid each other (see the
// package documentation). The links and groups name sessions by their
// index among the accumulator's groups.
func (a *Accumulator) Link(groups []int, opts LinkOptions) (*Linkage, error) {
	if groups == nil {
		groups = make([]int, len(a.set.filters))
		for g := range groups {
			groups[g] = g
		}
	}
	seen := map[int]bool{}
	for _, g := range groups {
		if g < 0 || g >= len(a.set.filters) || seen[g] {
			return nil, fmt.Errorf("%w: session %d of %d, or named twice", ErrBadLink, g+1, len(a.set.filters))
		}
		seen[g] = true
	}
	if len(groups) > maxLinkSessions {
		return nil, fmt.Errorf("%w: %d sessions, at most %d are compared", ErrBadLink, len(groups), maxLinkSessions)
	}
	l := &Linkage{Threshold: opts.Threshold, PairsCompared: len(groups) * (len(groups) - 1) / 2,
		Pairs: []SessionLink{}, Groups: [][]int{}, Warnings: []string{}}
	if l.Threshold == 0 {
		l.Threshold = 0.5
	}
	if !(l.Threshold >= 0.5 && l.Threshold < 1) {
		return nil, fmt.Errorf("%w: threshold %v not in [0.5, 1)", ErrBadLink, opts.Threshold)
	}
	if opts.Prior != 0 && !(opts.Prior > 0 && opts.Prior < 0.5) {
		return nil, fmt.Errorf("%w: prior %v not in (0, 0.5)", ErrBadLink, opts.Prior)
	}
	u, err := a.finished()
	if err != nil {
		return nil, err
	}
	lk := a.newLinker(groups, u)
	lk.weigh(l.PairsCompared <= maxListedLinks)
	l.PairsListedShared = l.PairsCompared > maxListedLinks
	fit := lk.fitPriors(opts.Prior)
	l.Prior, l.PriorLow, l.PriorHigh = fit.spread(func(q *linkParams) float64 { return q.priors[sameWallet] })
	l.PaymentPrior, l.PaymentPriorLow, l.PaymentPriorHigh = fit.spread(func(q *linkParams) float64 { return q.priors[sharedAddress] })
	l.Growth, l.GrowthFar, l.WholePayee = fit.est.growth, fit.est.far, fit.est.whole
	l.PaymentSizes = []PaymentSizes{}
	for j, share := range fit.est.payment {
		if lo, hi := binRange(j); share >= 1e-4 {
			l.PaymentSizes = append(l.PaymentSizes, PaymentSizes{MinAddresses: int(lo), MaxAddresses: int(hi) - 1, Share: share})
		}
	}
	l.WalletSizes = lk.prior.public()
	for _, w := range []string{paymentsWarning(&fit.est), smallWalletsWarning(lk.prior), severalWalletsWarning(&fit.est), priorWarning(lk.sessions)} {
		if w != "" {
			lk.warnings = append(lk.warnings, w)
		}
	}
	l.Pairs = lk.links(&fit)
	lk.triangles(&fit, l.Pairs, l.Threshold)
	lk.hubs(l.Pairs, fit.est.priors[sameWallet])
	if paymentsWarning(&fit.est) != "" {
		// Where wallets pay each other several addresses, a session out
		// of order among two it is linked to reads as a payer's.
		if w := lk.order(l.Pairs); w != "" {
			lk.warnings = append(lk.warnings, w)
		}
	}
	l.Groups = lk.group(l.Pairs, l.Threshold)
	lk.apart(l.Pairs, l.Groups, l.Threshold)
	// The learned steps were fitted on the estimated priors and the
	// default threshold's links: given either, they are not taken.
	if opts.Prior == 0 && l.Threshold == 0.5 {
		reachRates(l.Pairs)
		shiftLinked(l.Pairs, l.WalletSizes.Median)
		spreadRates(l.Pairs)
	}
	lk.bound(l.Pairs, &fit.est)
	l.Warnings = append(l.Warnings, lk.warnings...)
	if top := lk.unlistedMax(&fit); top > l.Threshold {
		l.Warnings = append(l.Warnings, fmt.Sprintf("a pair of sessions that share no match has probability %.3g of one wallet, above the threshold, but is not listed", top))
	}
	return l, nil
}

// paymentsWarning says when the capture resembles one whose wallets pay
// each other several addresses, on which a payer watching a whole payee
// and one wallet whose sessions differ cannot be told apart: the fitted
// prior of a payment above that of one wallet, and payments of 4
// addresses or more at the median.
func paymentsWarning(q *linkParams) string {
	median := math.Exp(q.payLog)
	if q.priors[sharedAddress] <= q.priors[sameWallet] || median < 4 {
		return ""
	}
	return fmt.Sprintf("the capture looks like one whose wallets pay each other several addresses (a payment between two sessions' wallets estimated %.2g times as likely as one wallet, payments of %.0f addresses at the median): "+
		"a payer watching a payee's addresses then looks like one wallet whose sessions differ, and on simulated captures of that kind (privacy simulate --regime payments) links given P from 0.5 to 0.95 were right more often than they say, many sessions of one wallet given less than 0.95; weigh the links' intervals",
		q.priors[sharedAddress]/q.priors[sameWallet], median)
}

// Where a capture resembles those on which the pairs given P below 0.5
// are of one wallet far more often than said, and no parameter held in
// the intervals' spread explains it: wallets of a median below
// smallWallets candidates, or sessions of one wallet that differ in
// growingShare of the pairs or more while payments seem likelier than one
// wallet.
const (
	smallWallets = 10
	growingShare = 0.6
)

// smallWalletsWarning says when the sessions' wallets look small (a
// median below smallWallets candidates, or more than mostEmpty of the
// sessions showing none): a wallet of a few candidates shares one or two of
// them between its sessions, which chance gives other pairs too.
func smallWalletsWarning(p *sizePrior) string {
	median := math.Expm1(p.mu)
	if median >= smallWallets && p.empty <= mostEmpty {
		return ""
	}
	if median >= smallWallets {
		return fmt.Sprintf("the sessions' wallets look small (%.0f%% of the sessions show none, the others %.0f candidates at the median): sessions"+smallWalletsRest, 100*p.empty, median)
	}
	return fmt.Sprintf("the sessions' wallets look small (%.0f candidates at the median): sessions"+smallWalletsRest, median)
}

// mostEmpty is the share of sessions whose matches show no wallet from
// which the sessions' wallets look small: on simulated captures of
// wallets of heavy-tailed sizes the fit may call most sessions empty, and
// the others large.
const mostEmpty = 0.75

// smallWalletsRest is what smallWalletsWarning says after the sizes.
const smallWalletsRest = " of a wallet of a few candidates share one or two of them, as chance makes other sessions do, and on simulated captures of that kind (privacy simulate --regime heavy-tail) pairs given P below 0.5 were of one wallet several times as often as said, beyond their intervals"

// severalWalletsWarning says when sessions of one wallet seem to differ
// in most pairs (grown, or holding another wallet beside it) and payments
// seem likelier than one wallet: sessions of several wallets behind one
// client, or wallets that keep change, read as payments.
func severalWalletsWarning(q *linkParams) string {
	differ := q.growth + q.several
	if differ < growingShare || q.priors[sharedAddress] <= q.priors[sameWallet] {
		return ""
	}
	return fmt.Sprintf("sessions of one wallet seem to differ in %.0f%% of their pairs and payments between sessions' wallets seem %.2g times as likely as one wallet: the capture looks like one of sessions of several wallets behind one client, or of wallets that keep change, and on simulated captures of that kind (privacy simulate --regime mixed) pairs given P below 0.5 were of one wallet several times as often as said, which only their intervals' upper ends reach",
		100*differ, q.priors[sharedAddress]/q.priors[sameWallet])
}

// Intersect runs the intersection attack over the sessions members
// (indexes of the accumulator's groups, each named once) without reading
// the universe again: a candidate must match every filter of every
// member, so the joint matches are those every member's report lists.
// The steps add one session at a time. A member whose match list was truncated makes the counts lower
// bounds, which a warning says.
//
// What the members share is what they all hold, and chance adds to it
// the candidates that match all their filters without all of them
// holding them: those none holds (the joint rate) and those only some
// hold, which the others match by chance (a wallet whose earlier session
// held fewer addresses: its later sessions' addresses match the earlier
// filter at its rate). The latter are estimated from the numbers of
// candidates each set of members lists (see partialChance). The joint
// matches are weighed as a single session's are, under the priors fitted
// over every session (see the package documentation).
func (a *Accumulator) Intersect(members []int) (*Report, error) {
	if len(members) == 0 {
		return nil, fmt.Errorf("%w: no session to intersect", ErrBadLink)
	}
	seen := make(map[int]bool, len(members))
	for _, m := range members {
		if m < 0 || m >= len(a.set.filters) || seen[m] {
			return nil, fmt.Errorf("%w: session %d of %d, or named twice", ErrBadLink, m+1, len(a.set.filters))
		}
		seen[m] = true
	}
	u, err := a.finished()
	if err != nil {
		return nil, err
	}
	r := &Report{UniverseSize: u.size, Pairs: a.t.pairs, MergedAddressLines: a.t.undoLines,
		PairTest: a.set.opts.PairTest, Universe: u.scan, Warnings: []string{}}
	var joint *jointRates
	var kept map[int]MatchedCandidate
	var truncated []int
	var own []*jointRates // each member's filters' rates
	listed := map[int]*listedBy{}
	for step, m := range members {
		rep := a.report(m, u)
		if rep.MatchedTruncated {
			truncated = append(truncated, m+1)
		}
		var mine *jointRates
		for i, f := range a.set.filters[m] {
			joint = joint.with(f)
			mine = mine.with(f)
			fr := rep.Filters[i]
			fr.Number = len(r.Filters) + 1
			r.Filters = append(r.Filters, fr)
		}
		own = append(own, mine)
		next := make(map[int]MatchedCandidate, len(rep.Matched))
		for _, mc := range rep.Matched {
			if _, ok := kept[mc.Line]; ok || step == 0 {
				next[mc.Line] = mc
			}
			l := listed[mc.Line]
			if l == nil {
				l = &listedBy{class: mc.class}
				listed[mc.Line] = l
			}
			l.members = append(l.members, step)
		}
		kept = next
		st := intersectionStep(len(r.Filters), uint64(len(kept)), joint, u.classes)
		r.partial = partialChance(listed, own, u.classes)
		var extra float64
		for _, cls := range slices.Sorted(maps.Keys(r.partial)) {
			extra += r.partial[cls]
		}
		st.addChance(extra)
		r.Intersection = append(r.Intersection, st)
	}
	r.Matched = make([]MatchedCandidate, 0, len(kept))
	for _, mc := range kept {
		r.Matched = append(r.Matched, mc)
	}
	// The joint matches are weighed as a single session's are (see the
	// package documentation), under the priors fitted over every session.
	fit := a.priors(u, nil)
	r.sizes, r.mix, r.classes = fit.sizes, fit.mix, u.classes
	r.finish(joint)
	if len(truncated) > 0 {
		r.Warnings = append(r.Warnings, fmt.Sprintf("the match lists of sessions %v were truncated: the joint matches are a lower bound", truncated))
	}
	return r, nil
}

// listedBy is a candidate some members of an intersection list: its
// class, and the members (by step) that list it.
type listedBy struct {
	class   int
	members []int
}

// memberSet is a set of an intersection's members, by step, as a bitset.
type memberSet []uint64

func newMemberSet(n int) memberSet { return make(memberSet, (n+63)/64) }

func (m memberSet) add(i int)      { m[i/64] |= 1 << (i % 64) }
func (m memberSet) has(i int) bool { return m[i/64]&(1<<(i%64)) != 0 }
func (m memberSet) key() string    { return fmt.Sprint([]uint64(m)) }
func (m memberSet) within(o memberSet) bool {
	for i := range m {
		if m[i]&^o[i] != 0 {
			return false
		}
	}
	return true
}

// heldBy is the candidates of one class listed by exactly the members
// of a set: their count, and the estimated number held by exactly them.
type heldBy struct {
	members memberSet
	size    int
	listed  float64
	held    float64
}

// partialChance corrects the joint rate's count of chance matches for
// the candidates some members hold (see Intersect): a candidate held by
// exactly the members T, not all, is a joint match when the others'
// filters all match it by chance, and the joint rate's count took it as
// held by none. Class by class, the number H_T held by exactly T is
// estimated from the numbers n_L listed by exactly L (a candidate held
// by T is listed by T and by each other member whose filters match it):
// n_L = Σ_{T ⊆ L} H_T·Π_{i ∈ L\T} r_i·Π_{j ∉ L} (1-r_j), for r a
// member's rate, solved for H_L from the smallest sets up (a negative
// solution taken as none), with H_∅ the class's candidates less those
// held, settled in a few passes. The correction is then Σ_T H_T·Π_{i ∉
// T} r_i, less (U - H_∅)·Π_i r_i for the held candidates the joint
// rate's count took as held by none; it is returned by class (nil for
// fewer than two members).
func partialChance(listed map[int]*listedBy, own []*jointRates, classes []uint64) map[int]float64 {
	n := len(own)
	if n < 2 {
		return nil
	}
	byClass := map[int]map[string]*heldBy{}
	for _, l := range listed {
		set := newMemberSet(n)
		for _, m := range l.members {
			set.add(m)
		}
		k := set.key()
		sets := byClass[l.class]
		if sets == nil {
			sets = map[string]*heldBy{}
			byClass[l.class] = sets
		}
		if sets[k] == nil {
			sets[k] = &heldBy{members: set, size: len(l.members)}
		}
		sets[k].listed++
	}
	out := make(map[int]float64, len(byClass))
	for cls, sets := range byClass {
		if cls < len(classes) {
			out[cls] = classPartialChance(sets, own, cls, float64(classes[cls]))
		}
	}
	return out
}

// classPartialChance is partialChance's correction for the candidates
// of one class, size of them in the universe, listed by the sets.
func classPartialChance(byKey map[string]*heldBy, own []*jointRates, cls int, size float64) float64 {
	n := len(own)
	r := make([]float64, n)
	all := 1.0
	for i, o := range own {
		r[i] = o.classRate(cls)
		all *= r[i]
	}
	var sets []*heldBy
	var everyone float64 // listed by every member
	for _, k := range slices.Sorted(maps.Keys(byKey)) {
		if h := byKey[k]; h.size < n {
			sets = append(sets, h)
		} else {
			everyone = h.listed
		}
	}
	slices.SortStableFunc(sets, func(a, b *heldBy) int { return a.size - b.size })
	// product of f(i) over the members in (in) or out of (!in) a set
	product := func(s memberSet, in bool, f func(i int) float64) float64 {
		p := 1.0
		for i := range n {
			if s.has(i) == in {
				p *= f(i)
			}
		}
		return p
	}
	rate := func(i int) float64 { return r[i] }
	miss := func(i int) float64 { return 1 - r[i] }
	none := size
	for range 3 {
		var held float64
		for i, l := range sets {
			out := product(l.members, false, miss)
			if out < 1e-12 {
				l.held = 0
				continue
			}
			expected := none * product(l.members, true, rate) * out
			for _, t := range sets[:i] {
				if t.size < l.size && t.members.within(l.members) {
					expected += t.held * product(l.members, true, func(j int) float64 {
						if t.members.has(j) {
							return 1
						}
						return r[j]
					}) * out
				}
			}
			l.held = math.Max(l.listed-expected, 0) / out
			held += l.held
		}
		var joint float64 // of the joint matches, those held by a proper subset or by none
		for _, l := range sets {
			joint += l.held * product(l.members, false, rate)
		}
		held += math.Max(everyone-joint-none*all, 0)
		none = math.Max(size-held, 0)
	}
	var extra float64
	for _, l := range sets {
		extra += l.held * product(l.members, false, rate)
	}
	return extra - (size-none)*all
}
