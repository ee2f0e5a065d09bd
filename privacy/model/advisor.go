package model

import (
	"fmt"
	"math"
	"slices"

	"github.com/spvfilter/spvfilter/bip37"
)

// Default block shape of the advisor's bandwidth figure.
const (
	// DefaultBlockTxs is a typical number of transactions in a block.
	DefaultBlockTxs = 3000
	// DefaultTxElements is the number of elements Bitcoin Core tests
	// against a filter for a transaction of 2 P2PKH inputs and 2 outputs:
	// the txid, one data push per output script (the key hash), and per
	// input the outpoint and the two pushes of its script (signature and
	// public key).
	DefaultTxElements = 1 + 2*1 + 2*(1+2)
)

// AdviceParams asks for the cheapest filter that keeps a node's confidence
// about a wallet below a target.
type AdviceParams struct {
	// Model describes the wallet, the universe and the attacker; its
	// FPRate is what the advisor chooses: it is ignored, and 0 in the
	// Advice.
	Model Params `json:"model_params"`
	// TargetPH1 and TargetPHAll bound the attacker's confidence,
	// E[P_h(1)] and E[P_h(N)] (p_h_1_exact and p_h_all_exact of the model).
	// Zero leaves one unbounded; at least one must lie in (0,1).
	TargetPH1   float64 `json:"target_p_h_1"`
	TargetPHAll float64 `json:"target_p_h_all"`
	// BlockTxs and TxElements describe a block for the bandwidth figure:
	// its transactions, and the elements tested per transaction. Zero
	// means DefaultBlockTxs and DefaultTxElements.
	BlockTxs   uint32 `json:"block_txs"`
	TxElements uint32 `json:"tx_elements"`
}

// Sizing is one filter the sizing rule builds for a wallet, the rate to
// ask for it, and what it costs and gives away.
type Sizing struct {
	// FPRate is the rate to ask for: a short decimal inside the interval
	// of rates that build this filter, at least a quarter of the
	// interval (on a log scale) from either end, and so are all the
	// numbers that round to it at its digits. FPRateText is that decimal
	// as printed, which parses back to FPRate; JSON shows the same
	// digits.
	FPRate     float64 `json:"fp_rate"`
	FPRateText string  `json:"fp_rate_text"`
	// FPRateMin is the smallest false-positive rate (to float64
	// precision) from which the rule builds this filter, FPRateMax the
	// largest; every rate in between builds the same one. The ends are
	// knife edges: the digits printed of FPRateMin may build another
	// filter.
	FPRateMin   float64 `json:"fp_rate_min"`
	FPRateMax   float64 `json:"fp_rate_max"`
	FilterBytes uint32  `json:"filter_bytes"`
	HashFuncs   uint32  `json:"hash_function_count"`
	// Pf is the false-positive rate per element at the wallet's actual
	// fill, as in the model.
	Pf float64 `json:"false_positive_rate"`
	// PH1Exact and PHAllExact are the attacker's confidence with the
	// advice's number of filters, as the model computes them (at the
	// filter's expected fill).
	PH1Exact   float64 `json:"p_h_1_exact"`
	PHAllExact float64 `json:"p_h_all_exact"`
	// PH1OverFills and PHAllOverFills are the same averaged also over the
	// fill of real filters, which varies from one tweak to the next (see
	// Advise). PH1MostFills and PHAllMostFills are what 95% of real
	// filters built at the rate stay below: the confidence at the 5%
	// quantile of their false-positive rate. The advice keeps all three
	// pairs below the targets: its rate meets them for 95% of the filters
	// it builds, not only on average.
	PH1OverFills   float64 `json:"p_h_1_over_fills"`
	PHAllOverFills float64 `json:"p_h_all_over_fills"`
	PH1MostFills   float64 `json:"p_h_1_95th_percentile"`
	PHAllMostFills float64 `json:"p_h_all_95th_percentile"`
	// FalsePositiveTxsPerBlock is BlockTxs·(1-(1-pf)^TxElements): the
	// transactions of a block that match the filter by chance.
	FalsePositiveTxsPerBlock float64 `json:"expected_false_positive_transactions_per_block"`
}

// AdviceRow is the advice for one number of intersected filters.
type AdviceRow struct {
	Filters uint32 `json:"filter_count"`
	// Reachable is false when no filter the rule builds (at least one
	// byte and one hash function, at most 36,000 bytes and 50 functions)
	// keeps the confidence below the target; Sizing is then the most
	// private of them, to show how far it falls short.
	Reachable bool `json:"reachable"`
	// Sizing is the largest filter that meets the target, the one built
	// from the smallest rates that do. It is also the one with the fewest
	// false-positive transactions, since pf never decreases as the rate
	// grows (see Advise).
	Sizing
	// CoreLargest is true when the answer is the largest filter the rule
	// (Core's, despite the name, or bitcoinj's) builds for this element
	// count: every smaller rate builds the same filter, so any rate up to
	// FPRateMax meets the target.
	CoreLargest bool `json:"core_largest"`
}

// Advice is the advisor's answer: a row for one filter and, when the
// model holds more, a row for all of them.
type Advice struct {
	Params AdviceParams `json:"params"`
	// SizingElements is the element count the filter is sized for:
	// Addresses·ElementsPerAddress + ExtraElements, the --elements of
	// "spvfilter bloom new".
	SizingElements uint32 `json:"sizing_element_count"`
	// SizingsSearched counts the distinct (bytes, hash functions) pairs
	// the rule builds for the element count, all of which were searched.
	SizingsSearched int         `json:"sizings_searched"`
	Rows            []AdviceRow `json:"rows"`
	Warnings        []string    `json:"warnings"`
}

// filterSizing is one distinct filter a rule builds for an element count,
// with the interval of rates that builds it.
type filterSizing struct {
	bytes, hashFuncs uint32
	rateLo, rateHi   float64
	pf               float64
}

// sizings enumerates every filter with at least one byte and one hash
// function that rule builds for sizingElements elements as the rate runs
// over the positive float64 values below 1, from the largest filter to
// the smallest, with the exact rate interval of each. Both rules' sizes
// are non-increasing in the rate, so each boundary is found by bisection
// over the ordered float64 bit patterns, within a narrow bracket around
// the boundary the sizing formula predicts when that bracket holds it.
func sizings(rule SizingRule, sizingElements uint32, inserted uint64) []filterSizing {
	var out []filterSizing
	lo := math.SmallestNonzeroFloat64
	for {
		bytes, k := rule.Size(sizingElements, lo)
		if bytes == 0 || k == 0 {
			return out
		}
		smaller := func(rate float64) bool {
			nb, _ := rule.Size(sizingElements, rate)
			return nb < bytes
		}
		// b ends as the smallest rate that builds a smaller filter, a as
		// the largest that builds this one.
		a, b := boundaryBracket(lo, bytes, sizingElements, smaller)
		for b-a > 1 {
			mid := a + (b-a)/2
			if smaller(math.Float64frombits(mid)) {
				b = mid
			} else {
				a = mid
			}
		}
		out = append(out, filterSizing{
			bytes: bytes, hashFuncs: k, rateLo: lo, rateHi: math.Float64frombits(a),
			pf: falsePositiveRate(uint64(bytes)*8, k, inserted),
		})
		lo = math.Float64frombits(b)
		if lo >= 1 {
			return out
		}
	}
}

// boundaryBracket returns float64 bit patterns a < b with the rate a
// building a filter of bytes bytes (or more) and b a smaller one (or
// b = 1). Both rules build fewer than bytes bytes once the bit count
// -ln(rate)·elements/ln² 2 falls below 8·bytes, so the boundary lies
// within a relative 1e-9 of exp(-8·bytes·ln² 2/elements) whatever the
// rounding of either rule; if the bracket around that point does not
// hold it, the bracket is [lo, 1].
func boundaryBracket(lo float64, bytes, elements uint32, smaller func(float64) bool) (a, b uint64) {
	a, b = math.Float64bits(lo), math.Float64bits(1)
	guess := math.Exp(-8 * float64(bytes) * math.Ln2 * math.Ln2 / float64(elements))
	left, right := guess*(1-1e-9), min(guess*(1+1e-9), 1)
	if left > lo && right > left && !smaller(left) && (right == 1 || smaller(right)) {
		a, b = math.Float64bits(left), math.Float64bits(right)
	}
	return a, b
}

// validate checks the advice's parameters.
func (p AdviceParams) validate() error {
	m := p.Model
	m.FPRate = 0.5 // chosen by the advisor; any valid rate for the check
	if err := m.validate(); err != nil {
		return err
	}
	for _, t := range []struct {
		field string
		x     float64
	}{{"target_p_h_1", p.TargetPH1}, {"target_p_h_all", p.TargetPHAll}} {
		if t.x != 0 && !(t.x > 0 && t.x < 1) {
			return outOf(t.field, t.x, Between("probability", 0, 1, true, true))
		}
	}
	if p.TargetPH1 == 0 && p.TargetPHAll == 0 {
		return fmt.Errorf("%w: no target: give a bound on P_h(1) or P_h(N) in (0,1)", ErrBadParams)
	}
	return nil
}

// Advise finds, for the wallet and universe of p.Model, the largest filter
// the sizing rule p.Model.Sizing builds (Bitcoin Core's by default) that
// keeps the attacker's confidence E[P_h(1)] and E[P_h(N)] (averaged over
// the binomial number of false positives) below the targets, with one
// filter and with p.Model.Filters filters, and a rate to ask for it.
//
// The confidence is bounded twice: as the model computes it, at the
// filter's expected fill, and averaged over the fills of real filters. A
// filter's fill varies from one tweak to the next, and the confidence is
// not linear in the false-positive rate, so real filters average a
// slightly different confidence than the model's, mostly higher (by up to
// 0.0025 for E[P_h(N)] near 0.1 with 100 addresses; checked on real
// filters by the tests).
//
// The search is exhaustive and exact: Advise enumerates every distinct
// filter (bytes, hash functions) the rule builds for the element count,
// with the exact float64 interval of rates that builds each. The
// truncation of the bit and hash-function counts makes pf, and so the
// confidence, a step function of the rate with jumps of up to a factor of
// several where the hash-function count changes, so a bisection on the
// rate alone would land anywhere inside a step. The confidence decreases
// as pf grows (the binomial number of false positives grows
// stochastically with pf, and so does the spread of real fills' rates), so
// the filters that meet a target are those whose pf exceeds a threshold,
// found by bisection over their sorted pf values; the answer is the
// largest of them. For both rules pf also
// never decreases as the rate grows (the hash-function count stays at or
// below the optimum for the actual fill, where pf falls as k grows, or is
// the single function bitcoinj's floor imposes on a 1-byte filter), so
// that filter is also the one that costs the least bandwidth.
//
// The rate advised is not the smallest of its interval, which a rounding
// of its last digit can push into the next, larger filter: it is the
// shortest decimal well inside the interval (see Sizing.FPRate).
func Advise(p AdviceParams) (*Advice, error) {
	if p.Model.Filters == 0 {
		p.Model.Filters = 1
	}
	if p.BlockTxs == 0 {
		p.BlockTxs = DefaultBlockTxs
	}
	if p.TxElements == 0 {
		p.TxElements = DefaultTxElements
	}
	if err := p.validate(); err != nil {
		return nil, err
	}
	p.Model.Sizing = p.Model.Sizing.OrCore()
	m := p.Model
	// The rate is the advisor's answer, not an input.
	p.Model.FPRate = 0
	inserted := uint64(m.Addresses) * uint64(m.ElementsPerAddress)
	elements := p.sizingElements()
	all := sizings(m.Sizing, elements, inserted)
	a := &Advice{Params: p, SizingElements: elements, SizingsSearched: len(all), Warnings: []string{}}
	who := m.Sizing.Implementation()
	if len(all) == 0 {
		a.Warnings = append(a.Warnings, fmt.Sprintf("%s builds no working filter for %d elements: at every rate it has 0 bytes or 0 hash functions and matches everything",
			who, elements))
		return a, nil
	}
	filters := []uint32{1}
	if m.Filters > 1 {
		filters = append(filters, m.Filters)
	}
	for _, b := range filters {
		row := p.adviseFor(b, all)
		with := fmt.Sprintf("with %d filters", b)
		if b == 1 {
			with = "with 1 filter"
		}
		a.Rows = append(a.Rows, row)
		if row.FPRateText == "" {
			a.Warnings = append(a.Warnings, fmt.Sprintf("%s the rates that build the advised filter (%s) span too few float64 values for a robust decimal: "+
				"use exactly %v, or any rate from %v to %v", with, filterShape(row.FilterBytes, row.HashFuncs), row.FPRate, row.FPRateMin, row.FPRateMax))
		}
		switch {
		case !row.Reachable:
			a.Warnings = append(a.Warnings, fmt.Sprintf("%s no filter %s builds (1 to %d bytes, 1 to %d hash functions) keeps the confidence below the target: "+
				"the most private one (%s, rate %v) leaves E[P_h(1)] = %.3g, E[P_h(N)] = %.3g",
				with, who, bip37.MaxFilterSize, bip37.MaxHashFuncs, filterShape(row.FilterBytes, row.HashFuncs), row.FPRate, row.PH1Exact, row.PHAllExact))
		case row.CoreLargest:
			a.Warnings = append(a.Warnings, fmt.Sprintf("%s even the largest filter %s builds for this wallet (%s) meets the target: every rate up to %.3g builds it",
				with, who, filterShape(row.FilterBytes, row.HashFuncs), row.FPRateMax))
		}
	}
	return a, nil
}

// filterShape is a filter's size and hash function count as a warning
// says them: "28 bytes, 1 hash function".
func filterShape(bytes, hashFuncs uint32) string {
	b, k := "bytes", "hash functions"
	if bytes == 1 {
		b = "byte"
	}
	if hashFuncs == 1 {
		k = "hash function"
	}
	return fmt.Sprintf("%d %s, %d %s", bytes, b, hashFuncs, k)
}

// Confidence is E[P_h(1)] and E[P_h(N)] for a wallet of addresses
// addresses when each of others candidates outside it matches what the
// attacker holds with probability q (the joint rate of real filters,
// JointFalsePositiveRate, say): P_h averaged over the binomial number of
// false positives, as Evaluate's p_h_1_exact and p_h_all_exact.
func Confidence(addresses uint32, others uint64, q float64) (ph1, phAll float64) {
	return expectedPH(float64(addresses), float64(others), q)
}

// confidence is E[P_h(1)] and E[P_h(N)] for a filter of per-element rate
// pf, with b filters.
func (p AdviceParams) confidence(pf float64, b uint32) (ph1, phAll float64) {
	m := p.Model
	perCandidate := pf
	if m.PairTest {
		perCandidate *= pf
	}
	// Multiplied out as Evaluate does, so that both give the same bits.
	q := 1.0
	for range b {
		q *= perCandidate
	}
	return Confidence(m.Addresses, m.UniverseSize-uint64(m.Addresses), q)
}

// sizingElements is the element count the filter is sized for.
func (p AdviceParams) sizingElements() uint32 {
	m := p.Model
	return m.Addresses*m.ElementsPerAddress + m.ExtraElements
}

func (p AdviceParams) meets(ph1, phAll float64) bool {
	return (p.TargetPH1 == 0 || ph1 < p.TargetPH1) && (p.TargetPHAll == 0 || phAll < p.TargetPHAll)
}

// meetsWith reports whether b filters of sizing s keep the confidence
// below the targets, at the expected fill, over real fills and for 95% of
// real fills.
func (p AdviceParams) meetsWith(s filterSizing, b uint32) bool {
	return p.meets(p.confidence(s.pf, b)) && p.meets(p.confidenceOverFills(s, b)) && p.meets(p.confidenceForMostFills(s, b))
}

func (p AdviceParams) sizing(s filterSizing, b uint32) Sizing {
	ph1, phAll := p.confidence(s.pf, b)
	fill1, fillAll := p.confidenceOverFills(s, b)
	most1, mostAll := p.confidenceForMostFills(s, b)
	rate, text := s.robustRate(p.Model.Sizing, p.sizingElements())
	return Sizing{
		FPRate: rate, FPRateText: text, FPRateMin: s.rateLo, FPRateMax: s.rateHi,
		FilterBytes: s.bytes, HashFuncs: s.hashFuncs, Pf: s.pf,
		PH1Exact: ph1, PHAllExact: phAll, PH1OverFills: fill1, PHAllOverFills: fillAll, PH1MostFills: most1, PHAllMostFills: mostAll,
		FalsePositiveTxsPerBlock: FalsePositiveTxsPerBlock(s.pf, p.BlockTxs, p.TxElements),
	}
}

// FalsePositiveTxsPerBlock is how many of a block's blockTxs
// transactions, of txElements elements each, a filter matching an
// element outside it with probability pf matches by chance.
func FalsePositiveTxsPerBlock(pf float64, blockTxs, txElements uint32) float64 {
	return float64(blockTxs) * -math.Expm1(float64(txElements)*math.Log1p(-pf))
}

// adviseFor answers for b filters; sizings run from the largest filter
// (smallest rate) to the smallest.
func (p AdviceParams) adviseFor(b uint32, sizings []filterSizing) AdviceRow {
	byPf := make([]int, len(sizings))
	for i := range byPf {
		byPf[i] = i
	}
	slices.SortStableFunc(byPf, func(i, j int) int { return cmpFloat(sizings[i].pf, sizings[j].pf) })
	ok := func(i int) bool { return p.meetsWith(sizings[i], b) }
	// The first position, in increasing pf, from which the target is met.
	j, _ := slices.BinarySearchFunc(byPf, true, func(i int, _ bool) int {
		if ok(i) {
			return 1
		}
		return -1
	})
	if j == len(byPf) {
		return AdviceRow{Filters: b, Sizing: p.sizing(sizings[byPf[len(byPf)-1]], b)}
	}
	threshold := sizings[byPf[j]].pf
	best := -1
	for i, s := range sizings {
		if s.pf >= threshold && ok(i) {
			best = i
			break
		}
	}
	return AdviceRow{Filters: b, Reachable: true, Sizing: p.sizing(sizings[best], b), CoreLargest: best == 0}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
