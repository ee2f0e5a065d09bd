package attack

import (
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// ErrNoFilters reports an analysis without a filter.
var ErrNoFilters = errors.New("privacy: no filter to analyze")

// MaxFilters is the most filters one analysis intersects (one group,
// for AnalyzeGroups, which takes any number of groups).
const MaxFilters = 64

// DefaultMaxMatches bounds the matched candidates an analysis lists (a
// filter that matches everything would otherwise list the whole universe);
// the counts and expectations still cover every candidate.
const DefaultMaxMatches = 100_000

// AnalyzeOptions tune Analyze.
type AnalyzeOptions struct {
	// PairTest requires both the public key and its HASH160 to match for
	// a pubkey candidate, instead of either. A key line marked as the pair
	// of an address (see universe.Candidate.PairAddress) counts as that address,
	// so the pair test replaces the address's hash-only test.
	PairTest bool
	// Workers is the number of parsing goroutines; 0 picks GOMAXPROCS
	// (at most 4), and more than universe.MaxWorkers count as that many
	// (each worker holds its own copy of the filters).
	Workers int
	// MaxMatches bounds the listed matches (of each group, for
	// AnalyzeGroups); 0 means DefaultMaxMatches.
	MaxMatches int
	// Strict ends the analysis at the first universe line that is not a
	// candidate, instead of skipping and counting it.
	Strict bool
}

// FilterReport describes one filter and what it alone reveals.
type FilterReport struct {
	// Number is the filter's place among those analyzed, from 1.
	Number    int     `json:"filter_number"`
	SizeBytes int     `json:"filter_bytes"`
	HashFuncs uint32  `json:"hash_function_count"`
	Tweak     uint32  `json:"tweak"`
	Flags     uint8   `json:"flags"`
	BitsSet   uint64  `json:"bits_set"`
	Density   float64 `json:"density"`
	// EstimatedElements is -m/k·ln(1-X) for X the fraction of bits set
	// (Swamidass and Baldi, 2007); 0 when every bit is set (Saturated).
	EstimatedElements float64 `json:"estimated_elements"`
	Saturated         bool    `json:"saturated,omitempty"`
	// FalsePositiveRate is X^k: the probability that one element not in
	// the filter matches, at this filter's actual fill.
	FalsePositiveRate float64 `json:"false_positive_rate"`
	// Matched counts the candidates this filter alone matches, and
	// ExpectedFalsePositives how many of those are expected by chance.
	Matched                uint64  `json:"matched_count"`
	ExpectedFalsePositives float64 `json:"expected_false_positives"`
}

// IntersectionStep is the attack after intersecting the first Filters
// filters: a candidate must match every one of them (filters of one
// hashing count as one; see the package documentation).
// ExpectedFalsePositives counts the candidates that match them all by
// chance; in an intersection of sessions (Accumulator.Intersect), also
// those only some of the sessions hold that the others match by chance.
type IntersectionStep struct {
	Filters                int     `json:"filter_count"`
	Matched                uint64  `json:"matched_count"`
	ExpectedFalsePositives float64 `json:"expected_false_positives"`
	// EstimatedWallet is max(Matched - ExpectedFalsePositives, 0), and
	// EstimatedWalletLow..EstimatedWalletHigh its 95% interval (see the
	// package documentation), which covers the true size with
	// probability EstimatedWalletLevel (at least 0.95: counts are whole).
	EstimatedWallet      float64 `json:"estimated_wallet"`
	EstimatedWalletLow   float64 `json:"estimated_wallet_low"`
	EstimatedWalletHigh  float64 `json:"estimated_wallet_high"`
	EstimatedWalletLevel float64 `json:"estimated_wallet_level"`
}

// MatchedCandidate is a candidate that matched every filter.
type MatchedCandidate struct {
	Line int `json:"line"`
	// Candidate is the universe line as given, without its comment; for a
	// public key marked as an address's pair, the address (the first
	// "listed" one, else the "pair" one), with the key in PubKey.
	Candidate string        `json:"candidate"`
	Kind      universe.Kind `json:"kind"`
	PubKey    string        `json:"pubkey,omitempty"`
	// PairTested is true when both elements of a pubkey/pubkey-hash pair
	// matched every filter.
	PairTested bool `json:"pair_tested"`
	// Probability is the posterior probability that the candidate belongs
	// to the wallet: π/(π+(1-π)·f) for f its chance of matching every filter
	// by accident and π the share of its class of candidates that is the
	// wallet's (held within what the session's own matches of the class
	// allow), averaged over the wallet's size given the matches (see the
	// package documentation); ProbabilityLow..ProbabilityHigh is its 95%
	// interval, the same at the ends of the wallet size's interval,
	// widened to hold Probability.
	Probability     float64 `json:"probability"`
	ProbabilityLow  float64 `json:"probability_low"`
	ProbabilityHigh float64 `json:"probability_high"`
	class           int     // the candidate's class, for the false-positive rates
}

// Report is the result of Analyze.
type Report struct {
	// UniverseSize counts the candidates: the universe's candidate lines
	// less the address lines that a marked key line takes over.
	UniverseSize uint64 `json:"universe_size"`
	// Pairs counts the key lines marked as an address's pair, each
	// counted as that address; MergedAddressLines the address lines
	// they took over (named in their "listed" fields).
	Pairs              uint64             `json:"pair_count"`
	MergedAddressLines uint64             `json:"address_lines_merged"`
	PairTest           bool               `json:"pair_test"`
	Filters            []FilterReport     `json:"filter_reports"`
	Intersection       []IntersectionStep `json:"intersection_steps"`
	MatchedCount       uint64             `json:"matched_count"`
	// ExpectedFalsePositives is the expected number of candidates that
	// match every filter by chance: the sum over candidates of their
	// false-positive rates, |universe| × FPR for candidates of one element.
	ExpectedFalsePositives float64 `json:"expected_false_positives"`
	// EstimatedWallet is the number of matches estimated to be the
	// wallet's, max(MatchedCount - ExpectedFalsePositives, 0), and
	// EstimatedWalletLow..EstimatedWalletHigh its 95% interval, which
	// covers the true number with probability EstimatedWalletLevel.
	EstimatedWallet      float64 `json:"estimated_wallet"`
	EstimatedWalletLow   float64 `json:"estimated_wallet_low"`
	EstimatedWalletHigh  float64 `json:"estimated_wallet_high"`
	EstimatedWalletLevel float64 `json:"estimated_wallet_level"`
	// PH1 and PHAll are the model's P_h(1) and P_h(N) for the estimated
	// N = EstimatedWallet wallet candidates among the matches:
	// N/(N+S) and 1/C(N+S, N).
	PH1              float64            `json:"p_h_1"`
	PHAll            float64            `json:"p_h_all"`
	Confident        int                `json:"confident_count"` // matches with probability >= 0.95
	Matched          []MatchedCandidate `json:"matched"`
	MatchedTruncated bool               `json:"matched_truncated,omitempty"`
	Summary          string             `json:"summary"`
	// Universe counts the lines read, skipped and tested.
	Universe *universe.Scan `json:"universe"`
	// Warnings name what may make the figures misleading: a filter that
	// matches everything or whose fill is far from one half, skipped
	// universe lines, a truncated match list, many sessions analyzed
	// together that carry no evidence of wallet sizes (see the package
	// documentation).
	Warnings []string `json:"warnings"`

	// joint is the filters' joint rates; sizes, when set, the prior on
	// wallet sizes fitted to the sessions analyzed together, over which
	// the matches' probabilities are weighed.
	joint   *jointRates
	sizes   *sizePrior
	mix     *classMix
	classes []uint64
	// partial is, for an intersection, by class, the chance matches the
	// joint rate does not count: candidates only some members hold (see
	// partialChance); nil for one session.
	partial map[int]float64
}

// Analyze tests every candidate of the universe r (see universe.Parser.Parse
// for its line format) against filters, as a node that received them
// would, and reports what it learns. The universe is read as a stream in
// constant memory (only the matches are kept, at most opts.MaxMatches of
// them). Lines that are not candidates are skipped, counted and the first
// ten named in Report.Universe, unless opts.Strict; a universe without
// candidates is universe.ErrEmpty.
//
// A public key line marked "# pair ADDRESS" counts as that address, and the
// address lines it names in "listed" fields are taken out of every count;
// nothing is looked up across lines, so an address and its key on two
// lines without these markers count as two candidates.
func Analyze(filters []*bip37.Filter, r io.Reader, opts AnalyzeOptions) (*Report, error) {
	reps, err := AnalyzeGroups([][]*bip37.Filter{filters}, r, opts)
	if err != nil {
		return nil, err
	}
	return reps[0], nil
}

// AnalyzeGroups analyzes several groups of filters in one pass over the
// universe: each group is analyzed as Analyze analyzes its filters alone
// (a candidate must match every filter of the group), but for the priors
// its matches' probabilities are weighed under (on wallet sizes, and on
// the wallets' shares of the classes of candidates), which are fitted over
// all the groups; the reports come in the order of the groups. It is how
// the sessions of a capture are analyzed one by one without reading the
// universe once per session: the work per candidate grows with the number
// of filters, the memory with the filters and the matches only. It is an
// Accumulator's ReadUniverse and Reports.
func AnalyzeGroups(groups [][]*bip37.Filter, r io.Reader, opts AnalyzeOptions) ([]*Report, error) {
	a, err := NewAccumulator(groups, opts)
	if err != nil {
		return nil, err
	}
	if err := a.ReadUniverse(r); err != nil {
		return nil, err
	}
	return a.Reports()
}

// filterReport describes filter number index, which alone matched
// candidates of the universe's classes.
func filterReport(index int, f *bip37.Filter, matched uint64, classes []uint64) FilterReport {
	size, set, dens, fpr, est := filterRate(f)
	fr := FilterReport{
		Number: index, SizeBytes: size, HashFuncs: f.HashFuncs(), Tweak: f.Tweak(), Flags: uint8(f.Flags()),
		BitsSet: set, Density: dens, EstimatedElements: est, FalsePositiveRate: fpr, Matched: matched,
		Saturated: dens == 1,
	}
	for cls, n := range classes {
		fr.ExpectedFalsePositives += float64(n) * classRate(cls, fpr)
	}
	return fr
}

// intersectionStep is the attack after filters filters whose joint rates
// are joint, matched by matched candidates.
func intersectionStep(filters int, matched uint64, joint *jointRates, classes []uint64) IntersectionStep {
	st := IntersectionStep{Filters: filters, Matched: matched}
	for cls, n := range classes {
		if n > 0 {
			st.ExpectedFalsePositives += float64(n) * joint.classRate(cls)
		}
	}
	st.estimate()
	return st
}

// estimate estimates the wallet from the step's matches and expected
// false positives.
func (st *IntersectionStep) estimate() {
	st.EstimatedWallet, st.EstimatedWalletLow, st.EstimatedWalletHigh = walletEstimate(float64(st.Matched), st.ExpectedFalsePositives)
	st.EstimatedWalletLevel = rangeLevel(st.ExpectedFalsePositives)
}

// addChance adds x (which may be negative: a correction) to the step's
// expected false positives, at least zero, and estimates the wallet
// again.
func (st *IntersectionStep) addChance(x float64) {
	if x == 0 {
		return
	}
	st.ExpectedFalsePositives = math.Max(st.ExpectedFalsePositives+x, 0)
	st.estimate()
}

// totals fills the counts and the wallet's estimate from the last
// intersection step, and keeps the filters' joint rates: what fitting the
// priors over the reports needs of each, before finish weighs its matches.
func (r *Report) totals(joint *jointRates) {
	last := r.Intersection[len(r.Intersection)-1]
	r.MatchedCount = last.Matched
	r.ExpectedFalsePositives = last.ExpectedFalsePositives
	r.EstimatedWallet, r.EstimatedWalletLow, r.EstimatedWalletHigh = last.EstimatedWallet, last.EstimatedWalletLow, last.EstimatedWalletHigh
	r.EstimatedWalletLevel = last.EstimatedWalletLevel
	r.PH1, r.PHAll, r.Confident = 0, 0, 0
	if r.EstimatedWallet > 0 {
		r.PH1 = r.EstimatedWallet / (r.EstimatedWallet + r.ExpectedFalsePositives)
		r.PHAll = model.ProbAllReal(r.EstimatedWallet, r.ExpectedFalsePositives)
	}
	r.joint = joint
}

// finish fills the totals, the probabilities of the matches, the warnings
// and the summary from the last intersection step and the joint rates of
// all the filters.
func (r *Report) finish(joint *jointRates) {
	r.totals(joint)
	var post *sizePosterior
	if r.sizes != nil {
		post = newSizePosterior(r.sizes, float64(r.MatchedCount), r.ExpectedFalsePositives)
	}
	byClass := map[int]float64{} // the posterior's probability, by class
	bounds := r.classBounds(joint)
	for i := range r.Matched {
		m := &r.Matched[i]
		m.Probability, m.ProbabilityLow, m.ProbabilityHigh = r.matchProbability(joint, m.class, post, bounds, byClass)
		if m.Probability >= 0.95 {
			r.Confident++
		}
	}
	slices.SortFunc(r.Matched, func(a, b MatchedCandidate) int { return a.Line - b.Line })
	r.Warnings = append(r.Warnings[:0], r.warnings()...)
	r.Summary = r.verdict()
}

// matchProbability is the probability that a match of class cls is the
// wallet's, with its interval: averaged over post, the posterior of the
// wallet's size (at the estimate when nil), the class's share of the
// wallet n·scale/U held within the class's bound. byClass keeps the
// posterior's probability by class, computed once.
func (r *Report) matchProbability(joint *jointRates, cls int, post *sizePosterior, bounds map[int]classBound, byClass map[int]float64) (p, lo, hi float64) {
	f := r.chanceRate(joint, cls)
	scale, bound := 1.0, noBound
	if r.mix != nil && cls < len(r.classes) {
		scale = r.mix.scale(cls, r.classes[cls], r.UniverseSize)
		if b, ok := bounds[cls]; ok {
			bound = b
		}
	}
	p = candidateProbability(bound.clamp(scale*r.EstimatedWallet), r.UniverseSize, f)
	lo = candidateProbability(bound.clamp(scale*r.EstimatedWalletLow), r.UniverseSize, f)
	hi = candidateProbability(bound.clamp(scale*r.EstimatedWalletHigh), r.UniverseSize, f)
	if post == nil {
		return p, lo, hi
	}
	q, ok := byClass[cls]
	if !ok {
		q = post.probabilityScaled(scale, bound, r.UniverseSize, f)
		byClass[cls] = q
	}
	return q, math.Min(lo, q), math.Max(hi, q)
}

// crossings counts the report's matches whose probability would cross
// 0.95 under the size prior p (the class shares and chance rates those
// finish weighed under): up, below it now, at or above it under p; down
// the reverse.
func (r *Report) crossings(p *sizePrior) (up, down int) {
	post := newSizePosterior(p, float64(r.MatchedCount), r.ExpectedFalsePositives)
	byClass := map[int]float64{}
	bounds := r.classBounds(r.joint)
	for _, m := range r.Matched {
		q, _, _ := r.matchProbability(r.joint, m.class, post, bounds, byClass)
		switch {
		case m.Probability < 0.95 && q >= 0.95:
			up++
		case m.Probability >= 0.95 && q < 0.95:
			down++
		}
	}
	return up, down
}

// classBounds is, by class of the report's matches, what its own matches
// of the class allow of the wallet's part in it (see classBound); none
// without fitted class shares or when its match list is cut short.
func (r *Report) classBounds(joint *jointRates) map[int]classBound {
	if r.mix == nil || r.MatchedTruncated {
		return nil
	}
	matched := map[int]float64{}
	for _, m := range r.Matched {
		matched[m.class]++
	}
	bounds := make(map[int]classBound, len(matched))
	for cls, k := range matched {
		if cls < len(r.classes) {
			chance := float64(r.classes[cls]) * r.chanceRate(joint, cls)
			bounds[cls] = newClassBound(k, chance, r.classes[cls], r.UniverseSize)
		}
	}
	return bounds
}

// chanceRate is the chance that a candidate of class cls that is not the
// wallet's matches the report's filters: the joint rate, and for an
// intersection the share of the class's candidates that only some
// members hold and the others match by chance (see partialChance).
func (r *Report) chanceRate(joint *jointRates, cls int) float64 {
	f := joint.classRate(cls)
	if x := r.partial[cls]; x != 0 && cls < len(r.classes) && r.classes[cls] > 0 {
		f = math.Min(math.Max(f+x/float64(r.classes[cls]), 0), 1)
	}
	return f
}

// walletEstimate is the estimated size of the wallet among matched
// candidates, of which chance alone is expected to give chance, with its
// interval (see walletRange), the estimate kept inside it.
func walletEstimate(matched, chance float64) (n, lo, hi float64) {
	n = math.Max(matched-chance, 0)
	lo, hi = walletRange(matched, chance)
	return n, math.Min(lo, n), math.Max(hi, n)
}

// candidateProbability is the probability that a match of chance rate f
// is the wallet's when the wallet holds n of the universe's size
// candidates: π/(π+(1-π)·f) for π = n/size.
func candidateProbability(n float64, size uint64, f float64) float64 {
	if n <= 0 || size == 0 {
		return 0
	}
	prior := math.Min(n/float64(size), 1)
	return prior / (prior + (1-prior)*f)
}

// universeWarning says how many of the universe's lines were skipped, not
// candidates, and the first; "" when none was.
func universeWarning(u *universe.Scan) string {
	if u == nil || u.LinesSkipped == 0 {
		return ""
	}
	msg := fmt.Sprintf("%d of %d universe lines skipped, not candidates", u.LinesSkipped, u.LinesRead)
	if len(u.BadLines) > 0 {
		msg += fmt.Sprintf(" (first: line %d: %s)", u.BadLines[0].Line, u.BadLines[0].Reason)
	}
	return msg
}

// warnings names what may make the report misleading.
func (r *Report) warnings() []string {
	var w []string
	for _, f := range r.Filters {
		if msg := filterWarning(f); msg != "" {
			w = append(w, fmt.Sprintf("filter %d: %s", f.Number, msg))
		}
	}
	if msg := universeWarning(r.Universe); msg != "" {
		w = append(w, msg)
	}
	switch {
	case r.MatchedTruncated && len(r.Matched) == 0:
		w = append(w, fmt.Sprintf("the %d matches are not listed: the filters match everything", r.MatchedCount))
	case r.MatchedTruncated:
		w = append(w, fmt.Sprintf("only the first %d matches are listed; the counts cover all %d", len(r.Matched), r.MatchedCount))
	}
	return w
}

// filterWarning says when a filter matches everything or its fill is far
// from one half, the fill a filter has when sized for what it holds.
func filterWarning(f FilterReport) string {
	switch {
	case f.SizeBytes == 0:
		return "0-byte filter: it matches everything and reveals nothing"
	case f.HashFuncs == 0:
		return "no hash functions: the filter matches everything and reveals nothing"
	case f.Saturated:
		return "every bit is set: the filter matches everything and reveals nothing"
	case f.BitsSet == 0:
		return "no bits set: the filter matches nothing"
	case f.Density > 0.5+fillTolerance:
		return fmt.Sprintf("%.1f%% of the bits set, far above one half: many more false positives than the filter was sized for", 100*f.Density)
	case f.Density < 0.5-fillTolerance:
		return fmt.Sprintf("%.1f%% of the bits set, far below one half: fewer elements than the filter was sized for, so fewer false positives hide them", 100*f.Density)
	}
	return ""
}

// fillTolerance is how far from one half a filter's fill may be before
// analyze warns; bip37's Stats uses the same bound.
const fillTolerance = 0.25

// verdict returns the report's plain-words verdict, from its counts (what
// Summary holds): how many candidates match, how many are expected by
// chance, and how many belong to the wallet.
func (r *Report) verdict() string {
	var b strings.Builder
	nf := len(r.Filters)
	fmt.Fprintf(&b, "%d of %d candidates match", r.MatchedCount, r.UniverseSize)
	if nf > 1 {
		fmt.Fprintf(&b, " all %d filters", nf)
	} else {
		b.WriteString(" the filter")
	}
	fmt.Fprintf(&b, "; %.3g of them are expected to be false positives", r.ExpectedFalsePositives)
	switch {
	case r.MatchedCount == 0:
		b.WriteString(", so no candidate is exposed.")
	case r.EstimatedWallet == 0:
		fmt.Fprintf(&b, ", so the matches are indistinguishable from chance (95%% interval of the wallet's: %.0f to %.0f).",
			r.EstimatedWalletLow, r.EstimatedWalletHigh)
	default:
		share := r.EstimatedWallet / float64(r.MatchedCount)
		verb := "are"
		if r.Confident == 1 {
			verb = "is"
		}
		fmt.Fprintf(&b, ", so about %.0f of them (%.1f%%; 95%% interval %.0f to %.0f) belong to the wallet; %d %s exposed with probability >= 95%%.",
			r.EstimatedWallet, 100*share, r.EstimatedWalletLow, r.EstimatedWalletHigh, r.Confident, verb)
	}
	return b.String()
}
