package model

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/spvfilter/spvfilter/bip37"
)

// ErrBadParams reports model parameters outside their domain.
var ErrBadParams = errors.New("privacy: bad model parameters")

// FieldError is an input outside its domain that names the field at
// fault by its JSON key, so that a caller can name its own input for it
// (a command-line flag). Kind is what it wraps: ErrBadParams here, and the
// like of other packages that describe their inputs so.
type FieldError struct {
	Kind  error
	Field string // the field's JSON key, such as "fp_rate"
	Value string // its value
	Msg   string // what is wrong with it
	// Range, when not nil, is the values the field takes by a rule of
	// the field alone, as data, so that a caller can state the range in
	// its own words without reading Msg; Msg is then Range.Refusal(),
	// or says more than the range (why the field must hold it).
	Range *Range
	// Other is, for a rule that bounds the field by another, the other
	// field's JSON key, and OtherValue its value; both are "" for a rule
	// of the field alone. (A rule of Params: universe_size by addresses,
	// which it must hold; addresses by extra_elements, beside which the
	// filter's elements must fit its count. Of CompareParams: appearances
	// and wallet_blocks by blocks, wallet_blocks by appearances.)
	Other      string
	OtherValue string
	// Most, when not "", is the largest value of the field the rule
	// allows (given Other's value, for a rule over two fields).
	Most string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("%v: %s %s: %s", e.Kind, e.Field, e.Value, e.Msg)
}

// Unwrap returns the error's kind.
func (e *FieldError) Unwrap() error { return e.Kind }

// OutOfRange is the error, of kind kind, of the field of value v outside
// r: its Msg is r.Refusal(), built from the same data as its Range.
func OutOfRange(kind error, field string, v any, r Range) *FieldError {
	return &FieldError{Kind: kind, Field: field, Value: fmt.Sprint(v), Msg: r.Refusal(), Range: &r}
}

// Range is the values a field takes, as data. A Range with Words takes
// those words (or values) alone. One without is an interval of numbers,
// of whole numbers only if Whole: from Least if HasLeast, to Most if
// HasMost, an end excluded if its LeastOpen or MostOpen is set. Span
// says the field is one value or a pair MIN..MAX of them, each in the
// interval. Of names what a value is ("rate", "probability"), "" for a
// number.
type Range struct {
	Words               []string
	Whole               bool
	Least, Most         float64
	HasLeast, HasMost   bool
	LeastOpen, MostOpen bool
	Span                bool
	Of                  string
}

// WholeAtLeast is the range of the whole numbers from least.
func WholeAtLeast(least int64) Range {
	return Range{Whole: true, Least: float64(least), HasLeast: true}
}

// WholeAtMost is the range of the whole numbers to most (the field's
// type or another rule sets the least).
func WholeAtMost(most int64) Range {
	return Range{Whole: true, Most: float64(most), HasMost: true}
}

// WholeIn is the range of the whole numbers from least to most.
func WholeIn(least, most int64) Range {
	return Range{Whole: true, Least: float64(least), Most: float64(most), HasLeast: true, HasMost: true}
}

// NumberAtLeast is the range of the numbers from least.
func NumberAtLeast(least float64) Range {
	return Range{Least: least, HasLeast: true}
}

// Between is the range of the numbers of what of (a "rate"; "" for
// numbers) from least to most, an end excluded if its open flag is set.
func Between(of string, least, most float64, leastOpen, mostOpen bool) Range {
	return Range{Least: least, Most: most, HasLeast: true, HasMost: true, LeastOpen: leastOpen, MostOpen: mostOpen, Of: of}
}

// OneOf is the range of the words given.
func OneOf(words ...string) Range { return Range{Words: words} }

// Spanned is r for a field that holds one value or a pair MIN..MAX of
// values in r.
func (r Range) Spanned() Range {
	r.Span = true
	return r
}

// Refusal says, in the words of the library's errors, that a value is
// outside r: "not in 0..10000", "must be at least 1", "not a rate in
// (0, 1)", "want 1 or 2".
func (r Range) Refusal() string {
	switch {
	case len(r.Words) > 0:
		return "want " + r.WordList()
	case r.Span:
		return "not within " + r.Interval()
	case r.HasLeast && !r.HasMost && r.Whole:
		return "must be at least " + FormatBound(r.Least)
	case r.HasLeast && !r.HasMost:
		return "must be a number, at least " + FormatBound(r.Least)
	case r.HasMost && !r.HasLeast && r.Whole:
		return "at most " + FormatBound(r.Most)
	case r.HasMost && !r.HasLeast:
		return "must be a number, at most " + FormatBound(r.Most)
	case r.Of != "":
		return "not a " + r.Of + " in " + r.Interval()
	}
	return "not in " + r.Interval()
}

// WordList is r's words as a choice: "1 or 2", "one of a, b, c".
func (r Range) WordList() string {
	switch len(r.Words) {
	case 0:
		return ""
	case 1:
		return r.Words[0]
	case 2:
		return r.Words[0] + " or " + r.Words[1]
	}
	return "one of " + strings.Join(r.Words, ", ")
}

// Interval is r's ends as the library writes them: "0..10000" for whole
// numbers, "(0, 1)" or "[0, 1]" for others, an end r lacks left empty.
func (r Range) Interval() string {
	least, most := "", ""
	if r.HasLeast {
		least = FormatBound(r.Least)
	}
	if r.HasMost {
		most = FormatBound(r.Most)
	}
	if r.Whole {
		return least + ".." + most
	}
	open, shut := "[", "]"
	if r.LeastOpen {
		open = "("
	}
	if r.MostOpen {
		shut = ")"
	}
	return open + least + ", " + most + shut
}

// FormatBound writes an end of a range in digits: 4294967295, 0.5.
func FormatBound(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// badField is an ErrBadParams naming the parameter field of value v.
func badField(field string, v any, format string, args ...any) error {
	return &FieldError{Kind: ErrBadParams, Field: field, Value: fmt.Sprint(v), Msg: fmt.Sprintf(format, args...)}
}

// outOf is an ErrBadParams of the parameter field of value v outside r.
func outOf(field string, v any, r Range) error { return OutOfRange(ErrBadParams, field, v, r) }

// boundBy is an ErrBadParams of the field of value v that a rule bounds
// by the other field, of value ov: it names the other field and its
// value, and most, the most the field may be beside it (nil for a rule
// that sets no most).
func boundBy(field string, v any, other string, ov, most any, format string, args ...any) error {
	fe := &FieldError{Kind: ErrBadParams, Field: field, Value: fmt.Sprint(v), Msg: fmt.Sprintf(format, args...),
		Other: other, OtherValue: fmt.Sprint(ov)}
	if most != nil {
		fe.Most = fmt.Sprint(most)
	}
	return fe
}

// Params describes a wallet, its filters and the attacker's universe.
//
// The wallet has Addresses addresses and inserts ElementsPerAddress elements
// for each (bitcoinj inserts the public key and its HASH160, so 2). The
// filter is sized for Addresses*ElementsPerAddress + ExtraElements elements
// (bitcoinj adds 100 so that new keys rarely force a resize) at FPRate, by
// the Sizing rule (Bitcoin Core's by default), but only the wallet's
// elements are inserted.
//
// UniverseSize is the number of candidate addresses the attacker tests,
// INCLUDING the wallet's own addresses; the false positives come from the
// UniverseSize-Addresses others.
type Params struct {
	Addresses          uint32  `json:"addresses"`
	FPRate             float64 `json:"fp_rate"`
	UniverseSize       uint64  `json:"universe_size"`
	ElementsPerAddress uint32  `json:"elements_per_address"`
	ExtraElements      uint32  `json:"extra_elements"`
	// Filters is the number of filters the attacker holds from the same
	// wallet, each with its own tweak (a restarted client picks a new one).
	// Zero means one.
	Filters uint32 `json:"filters"`
	// PairTest makes the attacker require both the public key and its hash
	// to match, as for every address whose public key is known on chain.
	PairTest bool `json:"pair_test"`
	// Sizing is the rule that sizes the filter: SizingCore (the zero
	// value) or SizingBitcoinj.
	Sizing SizingRule `json:"sizing"`
}

// DefaultParams are the defaults of the model command: a bitcoinj-like
// wallet element layout, sized by Bitcoin Core's rule, over a universe of
// ten million addresses.
func DefaultParams() Params {
	return Params{
		Addresses:          100,
		FPRate:             0.0005,
		UniverseSize:       10_000_000,
		ElementsPerAddress: 2,
		ExtraElements:      100,
		Filters:            1,
		Sizing:             SizingCore,
	}
}

// Step is the state of the attack after intersecting the first Filters
// filters.
type Step struct {
	Filters uint32 `json:"filter_count"`
	// PfCandidate is the probability that a candidate outside the wallet
	// survives every filter so far: Pf, or Pf^2 with the pair test, to
	// the power of the number of filters.
	PfCandidate float64 `json:"candidate_false_positive_rate"`
	// ExpectedFalsePositives is S = (UniverseSize - Addresses) * PfCandidate.
	ExpectedFalsePositives float64 `json:"expected_false_positives"`
	// PH1 is N/(N+S): the probability that one matching address picked
	// at random belongs to the wallet.
	PH1 float64 `json:"p_h_1"`
	// PHAll is 1/C(N+S, N) with the binomial coefficient extended to real
	// S by the Gamma function: the probability that N matching addresses
	// picked at random are exactly the wallet's.
	PHAll float64 `json:"p_h_all"`
	// PH1Exact and PHAllExact are the same probabilities averaged over the
	// distribution of the false-positive count (binomial over the
	// candidates outside the wallet) instead of taken at its mean S. The
	// papers' formulas plug in S; the two agree when S is large and part
	// when it is small: for S = 0.16 and N = 20, P_h(N) is 0.58 at the
	// mean but 0.86 in expectation, since most attacks then see no false
	// positive at all.
	PH1Exact   float64 `json:"p_h_1_exact"`
	PHAllExact float64 `json:"p_h_all_exact"`
}

// Result holds the figures of the analytic model.
type Result struct {
	Params Params `json:"params"`
	// SizingElements is the element count the filter was sized for and
	// Elements the count actually inserted.
	SizingElements uint64 `json:"sizing_element_count"`
	Elements       uint64 `json:"element_count"`
	FilterBytes    uint32 `json:"filter_bytes"`
	FilterBits     uint64 `json:"filter_bits"`
	HashFuncs      uint32 `json:"hash_function_count"`
	// Pf is the probability that one element not in the filter matches,
	// at the actual fill: (1-(1-1/m)^(k*n))^k.
	Pf float64 `json:"false_positive_rate"`
	// PfApprox is the usual approximation (1-e^(-k*n/m))^k.
	PfApprox float64 `json:"approx_false_positive_rate"`
	// Step holds the figures after all the filters, the last of Steps; its
	// fields appear at the top level of the JSON object.
	Step
	// Steps shows the attack after 1, 2, ... Filters filters.
	Steps []Step `json:"steps"`
	// Warnings say when the inputs make the model's figures or the
	// papers' approximations meaningless.
	Warnings []string `json:"warnings"`
}

// maxFilters is the most filters Params holds.
const maxFilters = 1000

// validate checks the parameters' domain.
func (p Params) validate() error {
	switch {
	case p.Addresses == 0:
		return outOf("addresses", p.Addresses, WholeAtLeast(1))
	case !(p.FPRate > 0 && p.FPRate < 1):
		return outOf("fp_rate", p.FPRate, Between("rate", 0, 1, true, true))
	case p.ElementsPerAddress == 0:
		return outOf("elements_per_address", p.ElementsPerAddress, WholeAtLeast(1))
	case p.PairTest && p.ElementsPerAddress < 2:
		return badField("pair_test", p.PairTest, "needs 2 elements per address (the key and its hash), not %d", p.ElementsPerAddress)
	case p.UniverseSize < uint64(p.Addresses):
		// A least, not a most: the universe holds the wallet's addresses.
		return boundBy("universe_size", p.UniverseSize, "addresses", p.Addresses, nil,
			"smaller than the wallet's %d addresses, which it includes", p.Addresses)
	case p.Filters > maxFilters:
		return outOf("filters", p.Filters, WholeAtMost(maxFilters))
	}
	if err := checkSizing(p.Sizing); err != nil {
		return err
	}
	n := uint64(p.Addresses)*uint64(p.ElementsPerAddress) + uint64(p.ExtraElements)
	if n > math.MaxUint32 {
		// The most addresses beside the extra elements (0: none fit),
		// at the elements per address.
		most := (math.MaxUint32 - uint64(p.ExtraElements)) / uint64(p.ElementsPerAddress)
		return boundBy("addresses", p.Addresses, "extra_elements", p.ExtraElements, most, "%d elements do not fit a filter", n)
	}
	return nil
}

// Evaluate computes the analytic model.
func Evaluate(p Params) (*Result, error) {
	if p.Filters == 0 {
		p.Filters = 1
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	p.Sizing = p.Sizing.OrCore()
	r := &Result{Params: p}
	r.Elements = uint64(p.Addresses) * uint64(p.ElementsPerAddress)
	r.SizingElements = r.Elements + uint64(p.ExtraElements)
	size, k := p.Sizing.Size(uint32(r.SizingElements), p.FPRate)
	r.FilterBytes, r.HashFuncs = size, k
	r.FilterBits = uint64(size) * 8
	r.Pf = falsePositiveRate(r.FilterBits, k, r.Elements)
	r.PfApprox = falsePositiveRateApprox(r.FilterBits, k, r.Elements)

	perCandidate := r.Pf
	if p.PairTest {
		perCandidate *= r.Pf
	}
	others := float64(p.UniverseSize - uint64(p.Addresses))
	n := float64(p.Addresses)
	pf := 1.0
	for b := uint32(1); b <= p.Filters; b++ {
		pf *= perCandidate
		s := others * pf
		ph1Exact, phAllExact := expectedPH(n, others, pf)
		r.Steps = append(r.Steps, Step{
			Filters:                b,
			PfCandidate:            pf,
			ExpectedFalsePositives: s,
			PH1:                    n / (n + s),
			PHAll:                  ProbAllReal(n, s),
			PH1Exact:               ph1Exact,
			PHAllExact:             phAllExact,
		})
	}
	r.Step = r.Steps[len(r.Steps)-1]
	r.Warnings = r.warnings()
	return r, nil
}

// approxTolerance is the relative gap from which the model warns that an
// approximation no longer describes the filter.
const approxTolerance = 0.05

// warnings names what makes the figures meaningless or the papers'
// formulas misleading for these inputs.
func (r *Result) warnings() []string {
	w := []string{}
	p := r.Params
	switch {
	case r.FilterBytes == 0 || r.HashFuncs == 0:
		w = append(w, fmt.Sprintf("%s sizes this filter at %d bytes with %d hash functions: it matches every candidate, "+
			"so the node learns nothing from it and the model's formulas, made for a working filter, do not apply", p.Sizing.Implementation(), r.FilterBytes, r.HashFuncs))
	case r.Pf > 2*p.FPRate && (r.FilterBytes == bip37.MaxFilterSize || r.HashFuncs == bip37.MaxHashFuncs):
		w = append(w, fmt.Sprintf("the filter is capped at %d bytes and %d hash functions: its false-positive rate %.3g is well above the %g requested",
			bip37.MaxFilterSize, bip37.MaxHashFuncs, r.Pf, p.FPRate))
	}
	if r.Pf > 0 && math.Abs(r.PfApprox-r.Pf) > approxTolerance*r.Pf {
		w = append(w, fmt.Sprintf("the usual approximation (1-e^(-kn/m))^k = %.3g is off from the false-positive rate %.3g by more than %.0f%%",
			r.PfApprox, r.Pf, 100*approxTolerance))
	}
	if math.Abs(r.PH1-r.PH1Exact) > approxTolerance || math.Abs(r.PHAll-r.PHAllExact) > approxTolerance {
		w = append(w, fmt.Sprintf("with S = %.3g false positives expected, the papers' P_h at the mean S (%.3g, %.3g) differs from P_h averaged over the number of false positives (%.3g, %.3g): read the averaged figures",
			r.ExpectedFalsePositives, r.PH1, r.PHAll, r.PH1Exact, r.PHAllExact))
	}
	return w
}

// falsePositiveRateApprox is the common approximation (1-e^(-k*n/m))^k.
func falsePositiveRateApprox(bits uint64, k uint32, n uint64) float64 {
	if bits == 0 {
		return 1
	}
	fill := -math.Expm1(-float64(k) * float64(n) / float64(bits))
	return math.Pow(fill, float64(k))
}

// ProbAllReal is the probability that n items drawn without replacement
// from n real items mixed with s false ones are all real: 1/C(n+s, n) =
// Γ(n+1)Γ(s+1)/Γ(n+s+1), defined for real s ≥ 0. It is computed in log
// space without cancellation, so that it holds for any universe size: for
// s = 10^19 and n = 100 it is e^-4011 (0 in float64), not the 1 that the
// difference of two Lgamma values near 4·10^20 gives.
func ProbAllReal(n, s float64) float64 {
	if s <= 0 {
		return 1
	}
	return math.Exp(logProbAllReal(n, s))
}

// logProbAllReal is the natural logarithm of ProbAllReal(n, s).
func logProbAllReal(n, s float64) float64 {
	if s <= 0 {
		return 0
	}
	a, b := math.Max(n, s), math.Min(n, s)
	// log C(a+b, b) = [lgamma(a+1+b) - lgamma(a+1)] - lgamma(b+1)
	lb, _ := math.Lgamma(b + 1)
	return lb - lgammaRise(a+1, b)
}

// lgammaRise is lgamma(x+d) - lgamma(x) for x ≥ 1 and 0 ≤ d < x. For
// large x the two terms are huge and nearly equal, so their difference is
// taken from Stirling's series instead: (x-1/2)·log1p(d/x) + d·ln(x+d) - d
// plus the difference of the series' remainders, whose first omitted term
// is below 1/(1680·x^7) (Abramowitz and Stegun 6.1.41).
func lgammaRise(x, d float64) float64 {
	if x < 10 {
		hi, _ := math.Lgamma(x + d)
		lo, _ := math.Lgamma(x)
		return hi - lo
	}
	y := x + d
	return (x-0.5)*math.Log1p(d/x) + d*math.Log(y) - d + stirlingRemainder(y) - stirlingRemainder(x)
}

// stirlingRemainder is lgamma(z) - [(z-1/2)·ln z - z + ln(2π)/2] to the
// z^-5 term.
func stirlingRemainder(z float64) float64 {
	z2 := z * z
	return (1.0/12 - (1.0/360-1.0/(1260*z2))/z2) / z
}

// maxExpectationTerms bounds the terms binomialTerms gives exactly; beyond,
// the binomial is sampled on a grid of about this many points.
const maxExpectationTerms = 4096

// expectedPH returns P_h(1) and P_h(N) averaged over the number of false
// positives J ~ Binomial(others, pf): E[n/(n+J)] and E[1/C(n+J, n)].
func expectedPH(n, others, pf float64) (ph1, phAll float64) {
	if pf <= 0 || others <= 0 {
		return 1, 1
	}
	if pf >= 1 {
		return n / (n + others), ProbAllReal(n, others)
	}
	mass := binomialTerms(others, pf, func(j, w float64) {
		ph1 += w * n / (n + j)
		phAll += w * ProbAllReal(n, j)
	})
	// Renormalise the truncated mass (it differs from 1 by rounding only).
	return ph1 / mass, phAll / mass
}

// binomialTerms calls add(j, w) for the values j of J ~ Binomial(others,
// pf), 0 < pf < 1, that hold all but a negligible part of its mass, with
// weights w proportional to their probabilities, and returns the sum of
// the weights. The values run over J within 12 standard deviations of its
// mean (plus a margin for small means); when that range holds more than a
// few thousand values the standard deviation exceeds 170, the binomial is
// normal to within its skewness 1/sd, and the values are a grid weighted
// by the normal density instead.
func binomialTerms(others, pf float64, add func(j, w float64)) (mass float64) {
	mean := others * pf
	sd := math.Sqrt(mean * (1 - pf))
	lo := math.Max(0, math.Floor(mean-12*sd-10))
	hi := math.Min(others, math.Ceil(mean+12*sd+10))
	if hi-lo+1 > maxExpectationTerms {
		step := (hi - lo) / maxExpectationTerms
		for i := 0; i <= maxExpectationTerms; i++ {
			j := lo + float64(i)*step
			z := (j - mean) / sd
			w := math.Exp(-z * z / 2)
			mass += w
			add(j, w)
		}
		return mass
	}
	lgOthers, _ := math.Lgamma(others + 1)
	logP, log1mP := math.Log(pf), math.Log1p(-pf)
	for j := lo; j <= hi; j++ {
		a, _ := math.Lgamma(j + 1)
		b, _ := math.Lgamma(others - j + 1)
		w := math.Exp(lgOthers - a - b + j*logP + (others-j)*log1mP)
		mass += w
		add(j, w)
	}
	return mass
}
