package attack

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

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

// maxClassElems caps the element count used to classify a candidate for
// the false-positive expectation; scripts with more data pushes than this
// are counted as if they had this many (their rate is slightly
// underestimated).
const maxClassElems = 255

// AnalyzeOptions tune Analyze.
type AnalyzeOptions struct {
	// PairTest requires both the public key and its HASH160 to match for
	// a pubkey candidate, instead of either. A key line marked as the pair
	// of an address (see Candidate.PairAddress) counts as that address,
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
	HashFuncs uint32  `json:"hash_funcs"`
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
// filters: a candidate must match every one of them. Filters with different
// tweaks or sizes are taken to give independent false positives; filters
// of the same size, hash count and tweak (the same filter sent twice, or
// reloaded after filteradd) test the same bits, and count as one filter of
// the bits they all have set.
type IntersectionStep struct {
	Filters                int     `json:"filters"`
	Matched                uint64  `json:"matched_count"`
	ExpectedFalsePositives float64 `json:"expected_false_positives"`
	// EstimatedWallet is max(Matched - ExpectedFalsePositives, 0).
	EstimatedWallet float64 `json:"estimated_wallet"`
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
	// by accident and π the share of the universe estimated to be the
	// wallet's.
	Probability float64 `json:"probability"`
	class       int     // the candidate's class, for the false-positive rates
}

// Report is the result of Analyze.
type Report struct {
	// UniverseSize counts the candidates: the universe's candidate lines
	// less the address lines that a marked key line takes over.
	UniverseSize uint64 `json:"universe_size"`
	// Pairs counts the key lines marked as an address's pair, each
	// counted as that address; MergedAddressLines the address lines
	// they took over (named in their "listed" fields).
	Pairs              uint64             `json:"pairs"`
	MergedAddressLines uint64             `json:"merged_address_lines"`
	PairTest           bool               `json:"pair_test"`
	Filters            []FilterReport     `json:"filter_reports"`
	Intersection       []IntersectionStep `json:"intersection"`
	MatchedCount       uint64             `json:"matched_count"`
	// ExpectedFalsePositives is the expected number of candidates that
	// match every filter by chance: the sum over candidates of their
	// false-positive rates, |universe| × FPR for candidates of one element.
	ExpectedFalsePositives float64 `json:"expected_false_positives"`
	EstimatedWallet        float64 `json:"estimated_wallet"`
	// PH1 and PHAll are the model's P_h(1) and P_h(N) for the estimated
	// N = EstimatedWallet wallet candidates among the matches:
	// N/(N+S) and 1/C(N+S, N).
	PH1              float64            `json:"p_h_1"`
	PHAll            float64            `json:"p_h_all"`
	Confident        int                `json:"confident"` // matches with probability >= 0.95
	Matched          []MatchedCandidate `json:"matched"`
	MatchedTruncated bool               `json:"matched_truncated,omitempty"`
	Summary          string             `json:"summary"`
	// Universe counts the lines read, skipped and tested.
	Universe *universe.Scan `json:"universe"`
	// Warnings name what may make the figures misleading: a filter that
	// matches everything or whose fill is far from one half, skipped
	// universe lines, a truncated match list.
	Warnings []string `json:"warnings"`

	// classes counts the universe's candidates by class (see classRate),
	// for combining reports of one pass (IntersectReports).
	classes []uint64
}

// filterRate returns a filter's size in bytes, its bits set, their
// fraction X, X^k and the element count estimated from X.
func filterRate(f *bip37.Filter) (size int, setBits uint64, density, fpr, est float64) {
	b := f.Bits()
	size = len(b)
	for _, x := range b {
		setBits += uint64(bits.OnesCount8(x))
	}
	m := float64(len(b) * 8)
	k := float64(f.HashFuncs())
	if m == 0 {
		return 0, 0, 1, 1, 0
	}
	density = float64(setBits) / m
	fpr = math.Pow(density, k)
	if k > 0 {
		if density < 1 {
			est = -m / k * math.Log1p(-density)
		}
	}
	return size, setBits, density, fpr, est
}

// classRate is the chance a candidate of class cls matches a filter of
// per-element rate f: class 0 is a pair under the pair test (both must
// match: f²), class t ≥ 1 a candidate of t elements (any may match).
func classRate(cls int, f float64) float64 {
	if cls == 0 {
		return f * f
	}
	return -math.Expm1(float64(cls) * math.Log1p(-f))
}

// batchCandidates turns the batched testing of one-element candidates on;
// tests turn it off to compare with the candidate-at-a-time loop.
var batchCandidates = true

// workerState is one worker's counts: those of every group of filters,
// and what the groups share. The struct is padded so that two workers never
// write to one cache line.
type workerState struct {
	_       [64]byte
	classes [maxClassElems + 1]uint64
	groups  []groupState
	pairs   uint64 // key lines marked as an address's pair
	// undoLines counts the address lines that marked key lines take over;
	// each was also counted as one of classes[1].
	undoLines uint64
	_         [64]byte
}

// groupState is one worker's counts for one group of filters.
type groupState struct {
	// depth[j]: candidates whose first j filters match, not the next; an
	// array, so that indexing it by a trailing-zero count needs no bounds
	// check (one increment per candidate and group).
	depth   *[MaxFilters + 1]uint64
	alone   []uint64
	matches []MatchedCandidate
	// What the address lines that marked key lines take over added to
	// the counts above, to be taken back out: each such line was counted
	// as a one-element candidate matching the filters of its key's hash.
	undoDepth []uint64
	undoAlone []uint64
	delist    []string // those of them that matched every filter
}

// Analyze tests every candidate of universe (see universe.Parser.Parse for
// its line format) against filters, as a node that received them would,
// and reports what it learns. The universe is read as a stream in constant
// memory (only the matches are kept, at most opts.MaxMatches of them).
// Lines that are not candidates are skipped, counted and the first ten
// named in Report.Universe, unless opts.Strict; a universe without
// candidates is universe.ErrEmpty.
//
// A public key line marked "# pair ADDRESS" counts as that address, tested
// by the key and its hash (both under the pair test), and the address lines
// it names in "listed" fields are taken out of every count, so that an
// address and its key count once. Nothing is looked up across lines (that
// would need memory growing with the universe): an address and its key on
// two lines without these markers count as two candidates.
func Analyze(filters []*bip37.Filter, r io.Reader, opts AnalyzeOptions) (*Report, error) {
	reps, err := AnalyzeGroups([][]*bip37.Filter{filters}, r, opts)
	if err != nil {
		return nil, err
	}
	return reps[0], nil
}

// AnalyzeGroups analyzes several groups of filters in one pass over the
// universe: each group is analyzed as Analyze analyzes its filters alone
// (a candidate must match every filter of the group), and the reports come
// in the order of the groups. It is how the sessions of a capture are
// analyzed one by one without reading the universe once per session: the
// work per candidate grows with the number of filters, the memory with the
// filters and the matches only.
func AnalyzeGroups(groups [][]*bip37.Filter, r io.Reader, opts AnalyzeOptions) ([]*Report, error) {
	if len(groups) == 0 {
		return nil, ErrNoFilters
	}
	for g, filters := range groups {
		if len(filters) == 0 {
			return nil, fmt.Errorf("%w (group %d)", ErrNoFilters, g+1)
		}
		if len(filters) > MaxFilters {
			return nil, fmt.Errorf("privacy: group %d: %d filters, at most %d", g+1, len(filters), MaxFilters)
		}
	}
	maxMatches := opts.MaxMatches
	if maxMatches <= 0 {
		maxMatches = DefaultMaxMatches
	}
	full := make([]uint64, len(groups))
	for g, filters := range groups {
		full[g] = ^uint64(0) >> (64 - len(filters))
	}
	listed := make([]atomic.Int64, len(groups))
	truncated := make([]atomic.Bool, len(groups))
	// A group that matches everything lists nothing: its matches reveal
	// nothing, and listing them for many such sessions would hold the
	// universe in memory.
	limit := make([]int64, len(groups))
	for g, filters := range groups {
		limit[g] = int64(maxMatches)
		if slices.ContainsFunc(filters, func(f *bip37.Filter) bool { return !matchesAll(f) }) {
			continue
		}
		limit[g] = 0
	}
	var mu sync.Mutex
	var states []*workerState
	newVisitor := func(int) universe.Visitor {
		st := &workerState{groups: make([]groupState, len(groups))}
		// A Filter is not safe for concurrent use: each worker gets
		// its own copies.
		matchers := make([][]*bip37.Filter, len(groups))
		// Every counter of this worker in one block, padded by a cache
		// line at both ends: small separate allocations of two workers
		// would share cache lines, and each candidate writes to them.
		const pad = 8
		size := 2 * pad
		for _, filters := range groups {
			size += MaxFilters + 1 + 3*len(filters) + 1
		}
		counters := make([]uint64, size)[pad:]
		carve := func(n int) []uint64 {
			c := counters[:n:n]
			counters = counters[n:]
			return c
		}
		for g, filters := range groups {
			nf := len(filters)
			st.groups[g] = groupState{depth: (*[MaxFilters + 1]uint64)(carve(MaxFilters + 1)),
				undoDepth: carve(nf + 1), alone: carve(nf), undoAlone: carve(nf)}
			matchers[g] = make([]*bip37.Filter, nf)
			for i, f := range filters {
				matchers[g][i] = f.Clone()
			}
		}
		mu.Lock()
		states = append(states, st)
		mu.Unlock()
		// found lists a candidate that matched every filter of group g;
		// it is off the hot path.
		found := func(g, line int, c *universe.Candidate, pair bool, cls int) {
			if limit[g] == 0 || listed[g].Add(1) > limit[g] {
				if !truncated[g].Load() {
					truncated[g].Store(true)
				}
				return
			}
			m := MatchedCandidate{Line: line, Candidate: string(c.Text), Kind: c.Kind, PairTested: pair, class: cls}
			if c.PairAddress != nil {
				m.Kind, m.PubKey, m.Candidate = universe.KindAddress, m.Candidate, string(c.PairAddress)
				if len(c.Listed) > 0 {
					m.Candidate = string(c.Listed[0])
				}
			}
			st.groups[g].matches = append(st.groups[g].matches, m)
		}
		// Candidates of one short element, the bulk of a universe, are
		// held back and tested PreparedBatch at a time: each element's
		// hash blocks are scrambled once for every filter, and each
		// filter's bits stay in cache for the whole batch. Any other
		// candidate first flushes the batch, so that matches are still
		// found in the order of the lines.
		b := newCandidateBatch()
		flush := func() {
			if len(b.ps) == 0 {
				return
			}
			for g, ms := range matchers {
				b.testGroup(&st.groups[g], ms)
				for _, j := range b.touched {
					if b.masks[j] == full[g] {
						c := universe.Candidate{Kind: b.kinds[j], Text: b.text[b.textAt[j]:b.textAt[j+1]]}
						found(g, b.lines[j], &c, b.pair[j], int(b.cls[j]))
					}
				}
				b.clearMasks()
			}
			b.reset()
		}
		visit := func(line int, c *universe.Candidate) error {
			pair := opts.PairTest && c.Pair()
			cls := min(len(c.Elems), maxClassElems)
			if pair {
				cls = 0
			}
			st.classes[cls]++
			if batchCandidates && c.PairAddress == nil && len(c.Elems) == 1 && len(c.Elems[0]) <= bip37.MaxPreparedLen {
				if b.add(line, c, pair, cls) {
					flush()
				}
				return nil
			}
			flush()
			if c.PairAddress != nil {
				st.pairs++
				st.undoLines += uint64(len(c.Listed))
			}
			for g, ms := range matchers {
				gs := &st.groups[g]
				var mask uint64
				if c.PairAddress != nil {
					mask = gs.markedPair(ms, c, pair, full[g])
				} else {
					for i, m := range ms {
						if matchCandidate(m, c, pair) {
							mask |= 1 << i
							gs.alone[i]++
						}
					}
				}
				gs.depth[bits.TrailingZeros64(^mask)]++
				if mask == full[g] {
					found(g, line, c, pair, cls)
				}
			}
			return nil
		}
		return visitorFuncs{visit, flush}
	}
	scan, err := universe.ReadParallel(r, universe.ReadOptions{Workers: opts.Workers, Strict: opts.Strict}, newVisitor)
	if err != nil {
		return nil, err
	}
	if err := scan.RequireCandidates(); err != nil {
		return nil, err
	}

	// What the groups share: the candidates by class, and the address
	// lines that marked key lines took over.
	classes := make([]uint64, maxClassElems+1)
	var pairs, undoLines uint64
	for _, st := range states {
		for j := range classes {
			classes[j] += st.classes[j]
		}
		pairs += st.pairs
		undoLines += st.undoLines
	}
	// The counts cannot go below zero even for a universe whose "listed"
	// fields name lines it lacks.
	sub := func(x *uint64, y uint64) { *x -= min(*x, y) }
	sub(&classes[1], undoLines)
	total := scan.CandidatesTested
	sub(&total, undoLines)

	reports := make([]*Report, len(groups))
	for g, filters := range groups {
		r := &Report{PairTest: opts.PairTest, MatchedTruncated: truncated[g].Load(), Universe: scan,
			Matched: []MatchedCandidate{}, Warnings: []string{}, // [] rather than null in JSON
			UniverseSize: total, Pairs: pairs, MergedAddressLines: undoLines, classes: classes}
		nf := len(filters)
		depth := make([]uint64, nf+1)
		alone := make([]uint64, nf)
		undoDepth := make([]uint64, nf+1)
		undoAlone := make([]uint64, nf)
		delist := map[string]int{}
		for _, st := range states {
			gs := &st.groups[g]
			for j := range depth {
				depth[j] += gs.depth[j]
				undoDepth[j] += gs.undoDepth[j]
			}
			for j := range alone {
				alone[j] += gs.alone[j]
				undoAlone[j] += gs.undoAlone[j]
			}
			r.Matched = append(r.Matched, gs.matches...)
			for _, a := range gs.delist {
				delist[a]++
			}
		}
		// Take the address lines that marked key lines took over back out.
		for j := range depth {
			sub(&depth[j], undoDepth[j])
		}
		for j := range alone {
			sub(&alone[j], undoAlone[j])
		}
		if len(delist) > 0 {
			kept := r.Matched[:0]
			for _, m := range r.Matched {
				if m.Kind == universe.KindAddress && m.PubKey == "" && delist[m.Candidate] > 0 {
					delist[m.Candidate]--
					continue
				}
				kept = append(kept, m)
			}
			r.Matched = kept
		}
		for i, f := range filters {
			r.Filters = append(r.Filters, filterReport(i+1, f, alone[i], classes))
		}
		// Intersection steps: candidates matching the first j filters
		// are those whose prefix depth is at least j.
		suffix := make([]uint64, nf+1)
		var atLeast uint64
		for j := nf; j >= 0; j-- {
			atLeast += depth[j]
			suffix[j] = atLeast
		}
		var joint *jointRates
		for j := 1; j <= nf; j++ {
			joint = joint.with(filters[j-1])
			r.Intersection = append(r.Intersection, intersectionStep(j, suffix[j], joint, classes))
		}
		r.finish(joint)
		reports[g] = r
	}
	return reports, nil
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
	st.EstimatedWallet = math.Max(float64(st.Matched)-st.ExpectedFalsePositives, 0)
	return st
}

// finish fills the totals, the probabilities of the matches, the warnings
// and the summary from the last intersection step and the joint rates of
// all the filters.
func (r *Report) finish(joint *jointRates) {
	last := r.Intersection[len(r.Intersection)-1]
	r.MatchedCount = last.Matched
	r.ExpectedFalsePositives = last.ExpectedFalsePositives
	r.EstimatedWallet = last.EstimatedWallet
	r.PH1, r.PHAll, r.Confident = 0, 0, 0
	if r.EstimatedWallet > 0 {
		r.PH1 = r.EstimatedWallet / (r.EstimatedWallet + r.ExpectedFalsePositives)
		r.PHAll = model.ProbAllReal(r.EstimatedWallet, r.ExpectedFalsePositives)
	}
	prior := 0.0
	if r.UniverseSize > 0 {
		prior = last.EstimatedWallet / float64(r.UniverseSize)
	}
	for i := range r.Matched {
		p := joint.classRate(r.Matched[i].class)
		prob := 0.0
		if prior > 0 {
			prob = prior / (prior + (1-prior)*p)
		}
		r.Matched[i].Probability = prob
		if prob >= 0.95 {
			r.Confident++
		}
	}
	slices.SortFunc(r.Matched, func(a, b MatchedCandidate) int { return a.Line - b.Line })
	r.Warnings = append(r.Warnings[:0], r.warnings()...)
	r.Summary = r.Verdict()
}

// warnings names what may make the report misleading.
func (r *Report) warnings() []string {
	var w []string
	for _, f := range r.Filters {
		if msg := filterWarning(f); msg != "" {
			w = append(w, fmt.Sprintf("filter %d: %s", f.Number, msg))
		}
	}
	if u := r.Universe; u != nil && u.LinesSkipped > 0 {
		msg := fmt.Sprintf("%d of %d universe lines skipped, not candidates", u.LinesSkipped, u.LinesRead)
		if len(u.BadLines) > 0 {
			msg += fmt.Sprintf(" (first: line %d: %s)", u.BadLines[0].Line, u.BadLines[0].Reason)
		}
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

// matchesAll reports whether f matches every element: no bytes, no hash
// function, or every bit set.
func matchesAll(f *bip37.Filter) bool {
	if f.Size() == 0 || f.HashFuncs() == 0 {
		return true
	}
	_, set, _, _, _ := filterRate(f)
	return set == uint64(8*f.Size())
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

// jointRates is the chance that an element outside the wallet matches every
// filter so far. Filters of one hashing (same size, hash count and tweak)
// test the same bit positions, so their false positives coincide: a group
// of them matches where all of them have the bit set, and its rate is X^k
// for X the fraction of bits set in all of them (a filter sent twice adds
// nothing; one grown by filteradd adds only its new bits). Groups of
// different hashings are taken as independent.
type jointRates struct {
	keys  []hashingKey
	and   [][]byte
	rates []float64 // per group
}

type hashingKey struct {
	size     int
	k, tweak uint32
}

// with returns j with filter f intersected (j may be nil).
func (j *jointRates) with(f *bip37.Filter) *jointRates {
	if j == nil {
		j = &jointRates{}
	}
	b := f.Bits()
	key := hashingKey{len(b), f.HashFuncs(), f.Tweak()}
	g := slices.Index(j.keys, key)
	if g < 0 {
		j.keys = append(j.keys, key)
		j.and = append(j.and, b)
		j.rates = append(j.rates, 0)
		g = len(j.keys) - 1
	} else {
		for i := range b {
			j.and[g][i] &= b[i]
		}
	}
	var set int
	for _, x := range j.and[g] {
		set += bits.OnesCount8(x)
	}
	m := float64(8 * len(j.and[g]))
	if m == 0 {
		j.rates[g] = 1 // an empty filter matches everything
	} else {
		j.rates[g] = math.Pow(float64(set)/m, float64(key.k))
	}
	return j
}

// classRate is the chance that a candidate of class cls matches every
// filter so far by accident.
func (j *jointRates) classRate(cls int) float64 {
	p := 1.0
	for _, f := range j.rates {
		p *= classRate(cls, f)
	}
	return p
}

// markedPair tests a key line marked as the pair of an address: the
// address's single candidate, tested by the key and its hash (both under
// the pair test, else either). It records in gs what each address line
// the key line takes over added to the counts: those lines were counted
// as one-element candidates matching where the key's hash matches. Memory
// stays constant: a line names what it takes over, nothing is looked up.
func (gs *groupState) markedPair(matchers []*bip37.Filter, c *universe.Candidate, pair bool, full uint64) uint64 {
	var keyMask, hashMask uint64
	for i, m := range matchers {
		if m.Contains(c.Elems[0]) {
			keyMask |= 1 << i
		}
		if m.Contains(c.Elems[1]) {
			hashMask |= 1 << i
		}
	}
	mask := keyMask | hashMask
	if pair {
		mask = keyMask & hashMask
	}
	for i := range matchers {
		if mask&(1<<i) != 0 {
			gs.alone[i]++
		}
	}
	for _, a := range c.Listed {
		gs.undoDepth[bits.TrailingZeros64(^hashMask)]++
		for i := range matchers {
			if hashMask&(1<<i) != 0 {
				gs.undoAlone[i]++
			}
		}
		if hashMask == full {
			gs.delist = append(gs.delist, string(a))
		}
	}
	return mask
}

// matchCandidate tests a candidate against one filter: every element of a
// pair under the pair test, else any element.
func matchCandidate(f *bip37.Filter, c *universe.Candidate, all bool) bool {
	if all {
		for _, e := range c.Elems {
			if !f.Contains(e) {
				return false
			}
		}
		return true
	}
	for _, e := range c.Elems {
		if f.Contains(e) {
			return true
		}
	}
	return false
}

// Verdict returns the report's plain-words verdict, from its counts (what
// Summary holds): how many candidates match, how many are expected by
// chance, and how many belong to the wallet.
func (r *Report) Verdict() string {
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
		b.WriteString(", so the matches are indistinguishable from chance.")
	default:
		share := r.EstimatedWallet / float64(r.MatchedCount)
		fmt.Fprintf(&b, ", so about %.0f of them (%.1f%%) belong to the wallet; %d are exposed with probability >= 95%%.",
			r.EstimatedWallet, 100*share, r.Confident)
	}
	return b.String()
}

// visitorFuncs is a universe.Visitor of two functions.
type visitorFuncs struct {
	visit func(line int, c *universe.Candidate) error
	flush func()
}

func (v visitorFuncs) Visit(line int, c *universe.Candidate) error { return v.visit(line, c) }
func (v visitorFuncs) Flush()                                      { v.flush() }
