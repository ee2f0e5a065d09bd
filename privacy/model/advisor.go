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

// Sizing is one filter Bitcoin Core can build for a wallet, and what it
// costs and gives away.
type Sizing struct {
	// FPRate is the smallest false-positive rate (to float64 precision)
	// from which Core builds this filter, FPRateMax the largest; every
	// rate in between builds the same one.
	FPRate      float64 `json:"fp_rate"`
	FPRateMax   float64 `json:"fp_rate_max"`
	FilterBytes uint32  `json:"filter_bytes"`
	HashFuncs   uint32  `json:"hash_funcs"`
	// Pf is the false-positive rate per element at the wallet's actual
	// fill, as in the model.
	Pf float64 `json:"pf"`
	// PH1Exact and PHAllExact are the attacker's confidence with the
	// advice's number of filters, as the model computes them.
	PH1Exact   float64 `json:"p_h_1_exact"`
	PHAllExact float64 `json:"p_h_all_exact"`
	// FalsePositiveTxsPerBlock is BlockTxs·(1-(1-pf)^TxElements): the
	// transactions of a block that match the filter by chance.
	FalsePositiveTxsPerBlock float64 `json:"false_positive_txs_per_block"`
}

// AdviceRow is the advice for one number of intersected filters.
type AdviceRow struct {
	Filters uint32 `json:"filters"`
	// Reachable is false when no filter Core builds (at least one byte
	// and one hash function, at most 36,000 bytes and 50 functions) keeps
	// the confidence below the target; Sizing is then the most private
	// of them, to show how far it falls short.
	Reachable bool `json:"reachable"`
	// Sizing is the filter of the smallest rate that meets the target.
	// It is also the one with the fewest false-positive transactions,
	// since pf never decreases as the rate grows (see Advise).
	Sizing
	// CoreLargest is true when the answer is the largest filter Core
	// builds for this element count: every smaller rate builds the same
	// filter, so any rate up to FPRateMax meets the target.
	CoreLargest bool `json:"core_largest"`
}

// Advice is the advisor's answer: a row for one filter and, when the
// model holds more, a row for all of them.
type Advice struct {
	Params AdviceParams `json:"params"`
	// SizingsSearched counts the distinct (bytes, hash functions) pairs
	// Core can build for the element count, all of which were searched.
	SizingsSearched int         `json:"sizings_searched"`
	Rows            []AdviceRow `json:"rows"`
	Warnings        []string    `json:"warnings"`
}

// coreSizing is one distinct filter Core builds for an element count, with
// the interval of rates that builds it.
type coreSizing struct {
	bytes, hashFuncs uint32
	rateLo, rateHi   float64
	pf               float64
}

// coreSizings enumerates every filter with at least one byte and one hash
// function that bip37.OptimalSize builds for sizingElements elements as
// the rate runs over the positive float64 values below 1, from the
// largest filter to the smallest, with the exact rate interval of each.
// OptimalSize is non-increasing in the rate, so each boundary is found by
// bisection over the ordered float64 bit patterns.
func coreSizings(sizingElements uint32, inserted uint64) []coreSizing {
	var out []coreSizing
	lo := math.SmallestNonzeroFloat64
	oneBits := math.Float64bits(1)
	for {
		bytes, k := bip37.OptimalSize(sizingElements, lo)
		if bytes == 0 || k == 0 {
			return out
		}
		// The smallest rate that builds a smaller filter.
		a, b := math.Float64bits(lo), oneBits
		for b-a > 1 {
			mid := a + (b-a)/2
			if nb, _ := bip37.OptimalSize(sizingElements, math.Float64frombits(mid)); nb < bytes {
				b = mid
			} else {
				a = mid
			}
		}
		out = append(out, coreSizing{
			bytes: bytes, hashFuncs: k, rateLo: lo, rateHi: math.Float64frombits(a),
			pf: falsePositiveRate(uint64(bytes)*8, k, inserted),
		})
		lo = math.Float64frombits(b)
		if lo >= 1 {
			return out
		}
	}
}

// validate checks the advice's parameters.
func (p AdviceParams) validate() error {
	m := p.Model
	m.FPRate = 0.5 // chosen by the advisor; any valid rate for the check
	if err := m.validate(); err != nil {
		return err
	}
	for _, t := range []struct {
		name string
		x    float64
	}{{"P_h(1)", p.TargetPH1}, {"P_h(N)", p.TargetPHAll}} {
		if t.x != 0 && !(t.x > 0 && t.x < 1) {
			return fmt.Errorf("%w: target %s %v not in (0,1)", ErrBadParams, t.name, t.x)
		}
	}
	if p.TargetPH1 == 0 && p.TargetPHAll == 0 {
		return fmt.Errorf("%w: no target: give a bound on P_h(1) or P_h(N) in (0,1)", ErrBadParams)
	}
	return nil
}

// Advise finds, for the wallet and universe of p.Model, the smallest
// false-positive rate whose filter, sized as Bitcoin Core sizes it, keeps
// the attacker's confidence E[P_h(1)] and E[P_h(N)] (averaged over the
// binomial number of false positives) below the targets, with one filter
// and with p.Model.Filters filters.
//
// The search is exhaustive and exact: Advise enumerates every distinct
// filter (bytes, hash functions) Core builds for the element count, with
// the exact float64 interval of rates that builds each. Core's truncation
// of the bit and hash-function counts makes pf, and so the confidence, a
// step function of the rate with jumps of up to a factor of several where
// the hash-function count changes, so a bisection on the rate alone would
// land anywhere inside a step. The confidence decreases as pf grows (the
// binomial number of false positives grows stochastically with pf), so
// the filters that meet a target are exactly those whose pf exceeds a
// threshold, found by bisection over their sorted pf values; the answer is
// the largest of them, built from the smallest rate. For Core's sizing pf
// also never decreases as the rate grows (the hash-function count stays at
// or below the optimum for the actual fill, where pf falls as k grows), so
// that filter is also the one that costs the least bandwidth.
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
	m := p.Model
	// The rate is the advisor's answer, not an input.
	p.Model.FPRate = 0
	inserted := uint64(m.Addresses) * uint64(m.ElementsPerAddress)
	sizings := coreSizings(uint32(inserted+uint64(m.ExtraElements)), inserted)
	a := &Advice{Params: p, SizingsSearched: len(sizings), Warnings: []string{}}
	if len(sizings) == 0 {
		a.Warnings = append(a.Warnings, fmt.Sprintf("Bitcoin Core builds no working filter for %d elements: at every rate it has 0 bytes or 0 hash functions and matches everything",
			inserted+uint64(m.ExtraElements)))
		return a, nil
	}
	filters := []uint32{1}
	if m.Filters > 1 {
		filters = append(filters, m.Filters)
	}
	for _, b := range filters {
		row := p.adviseFor(b, sizings)
		a.Rows = append(a.Rows, row)
		switch {
		case !row.Reachable:
			a.Warnings = append(a.Warnings, fmt.Sprintf("with %d filter(s) no filter Bitcoin Core builds (1 to %d bytes, 1 to %d hash functions) keeps the confidence below the target: "+
				"the most private one (%d bytes, %d hash functions, rate %.3g) leaves E[P_h(1)] = %.3g, E[P_h(N)] = %.3g",
				b, bip37.MaxFilterSize, bip37.MaxHashFuncs, row.FilterBytes, row.HashFuncs, row.FPRateMax, row.PH1Exact, row.PHAllExact))
		case row.CoreLargest:
			a.Warnings = append(a.Warnings, fmt.Sprintf("with %d filter(s) even the largest filter Bitcoin Core builds for this wallet (%d bytes, %d hash functions) meets the target: every rate up to %.3g builds it",
				b, row.FilterBytes, row.HashFuncs, row.FPRateMax))
		}
	}
	return a, nil
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
	return expectedPH(float64(m.Addresses), float64(m.UniverseSize-uint64(m.Addresses)), q)
}

func (p AdviceParams) meets(ph1, phAll float64) bool {
	return (p.TargetPH1 == 0 || ph1 < p.TargetPH1) && (p.TargetPHAll == 0 || phAll < p.TargetPHAll)
}

func (p AdviceParams) sizing(s coreSizing, b uint32) Sizing {
	ph1, phAll := p.confidence(s.pf, b)
	return Sizing{
		FPRate: s.rateLo, FPRateMax: s.rateHi, FilterBytes: s.bytes, HashFuncs: s.hashFuncs, Pf: s.pf,
		PH1Exact: ph1, PHAllExact: phAll,
		FalsePositiveTxsPerBlock: float64(p.BlockTxs) * -math.Expm1(float64(p.TxElements)*math.Log1p(-s.pf)),
	}
}

// adviseFor answers for b filters; sizings run from the largest filter
// (smallest rate) to the smallest.
func (p AdviceParams) adviseFor(b uint32, sizings []coreSizing) AdviceRow {
	byPf := make([]int, len(sizings))
	for i := range byPf {
		byPf[i] = i
	}
	slices.SortStableFunc(byPf, func(i, j int) int { return cmpFloat(sizings[i].pf, sizings[j].pf) })
	ok := func(i int) bool { return p.meets(p.confidence(sizings[i].pf, b)) }
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
