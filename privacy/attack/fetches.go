package attack

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// DefaultMaxFetchMatches bounds the matches a FetchReport lists.
const DefaultMaxFetchMatches = 100_000

// FetchMatch is a candidate whose every appearance in the scanned range
// lies in a block the client fetched.
type FetchMatch struct {
	Candidate string `json:"candidate"`
	// Appearances is k, the blocks of the scanned range it appears in;
	// Heights are those blocks.
	Appearances uint64  `json:"appearances"`
	Heights     []int32 `json:"heights"`
	// ChanceProbability is the chance that a candidate not of the wallet
	// has all its k blocks fetched: C(B-k, F-k)/C(B, F).
	// ChanceProbabilityApprox is the usual approximation f^k.
	ChanceProbability       float64 `json:"chance_probability"`
	ChanceProbabilityApprox float64 `json:"chance_probability_approx"`
	// Probability is the chance that the candidate is the wallet's,
	// max(0, 1 - n_k·p_k/M_k) for n_k candidates with k appearances, M_k
	// of them matched (see the package documentation).
	Probability float64 `json:"probability"`
}

// FetchReport is what one session's block downloads reveal.
type FetchReport struct {
	Session   string `json:"session"`
	Client    string `json:"client"`
	UserAgent string `json:"user_agent,omitempty"`
	// ScannedFrom..ScannedTo bounds the scanned range (the union of the
	// session's filter ranges and fetched blocks, within the index);
	// ScannedBlocks is B, the blocks in it.
	ScannedFrom   int32  `json:"scanned_from"`
	ScannedTo     int32  `json:"scanned_to"`
	ScannedBlocks uint64 `json:"scanned_blocks"`
	// FetchedBlocks is F, FetchedHeights their heights; FetchedUnknown
	// counts requested blocks that are not in the index's chain.
	FetchedBlocks  uint64  `json:"fetched_blocks"`
	FetchedHeights []int32 `json:"fetched_heights"`
	FetchedUnknown int     `json:"fetched_unknown"`
	// FetchedFraction is f = F/B.
	FetchedFraction float64 `json:"fetched_fraction"`
	// UniverseSize counts the index's candidates that appear in the
	// scanned range.
	UniverseSize uint64 `json:"universe_size"`
	// ExpectedFalsePositives is the sum over those candidates of their
	// chance probability: the matches chance alone would give.
	ExpectedFalsePositives float64 `json:"expected_false_positives"`
	MatchedCount           uint64  `json:"matched_count"`
	// Confident counts the matches the wallet's with probability >= 0.95.
	Confident        int          `json:"confident"`
	Matched          []FetchMatch `json:"matched"`
	MatchedTruncated bool         `json:"matched_truncated,omitempty"`
	Verdict          string       `json:"verdict"`
	Warnings         []string     `json:"warnings"`

	fetched []uint64 // bit set over the index's heights
	scanned []uint64
	chances []float64 // by k, grown on demand
	byK     map[uint64]*kCount
	max     int
}

type kCount struct{ candidates, matched uint64 }

// FetchOptions tune AnalyzeFetches.
type FetchOptions struct {
	// MaxMatches bounds the matches listed per session, those least
	// explained by chance first (0: DefaultMaxFetchMatches).
	MaxMatches int
}

// ErrNoFetches reports a capture without a block request or filter range.
var ErrNoFetches = errors.New("privacy: the capture holds no block request or filter range")

// AnalyzeFetches runs the block-download attack on every session in one
// pass over the index: the candidates whose every appearance in the
// session's scanned range lies in a block the session fetched, ranked by
// the probability that chance explains them.
func AnalyzeFetches(sessions []*capture.FetchSession, ir *universe.IndexReader, opt FetchOptions) ([]*FetchReport, error) {
	if len(sessions) == 0 {
		return nil, ErrNoFetches
	}
	if opt.MaxMatches <= 0 {
		opt.MaxMatches = DefaultMaxFetchMatches
	}
	hd := ir.Header()
	reports := make([]*FetchReport, len(sessions))
	for i, s := range sessions {
		reports[i] = newFetchReport(s, ir, opt.MaxMatches)
	}
	first := hd.First
	for {
		e, err := ir.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		for _, r := range reports {
			r.test(e, first)
		}
	}
	for _, r := range reports {
		r.finish()
	}
	return reports, nil
}

func bitSet(s []uint64, i int) { s[i/64] |= 1 << (i % 64) }
func bitGet(s []uint64, i int) bool {
	return s[i/64]&(1<<(i%64)) != 0
}
func bitCount(s []uint64) uint64 {
	n := 0
	for _, w := range s {
		n += bits.OnesCount64(w)
	}
	return uint64(n)
}

func newFetchReport(s *capture.FetchSession, ir *universe.IndexReader, max int) *FetchReport {
	hd := ir.Header()
	nb := len(hd.Hashes)
	r := &FetchReport{Session: s.ID, Client: s.Client, UserAgent: s.UserAgent, Warnings: []string{},
		FetchedHeights: []int32{}, Matched: []FetchMatch{},
		fetched: make([]uint64, (nb+63)/64), scanned: make([]uint64, (nb+63)/64), byK: map[uint64]*kCount{}, max: max}
	for _, h := range s.Blocks {
		height, ok := ir.Height(h)
		if !ok {
			r.FetchedUnknown++
			continue
		}
		bitSet(r.fetched, int(height-hd.First))
		bitSet(r.scanned, int(height-hd.First))
	}
	rangesOutside := 0
	for _, fr := range s.Ranges {
		stop, ok := ir.Height(fr.StopHash)
		if !ok {
			rangesOutside++
			continue
		}
		start := max32(int32(min(fr.StartHeight, 1<<31-1)), hd.First)
		if int64(fr.StartHeight) < int64(hd.First) {
			rangesOutside++
		}
		for h := start; h <= stop; h++ {
			bitSet(r.scanned, int(h-hd.First))
		}
	}
	if len(s.Ranges) == 0 {
		for h := range nb {
			bitSet(r.scanned, h)
		}
		r.warn(fmt.Sprintf("no getcfilters or getcfheaders range recorded: the scanned range is taken to be every block of the index (%d..%d)", hd.First, hd.Last()))
	}
	if rangesOutside > 0 {
		r.warn(fmt.Sprintf("%d filter range(s) reach outside the index's blocks %d..%d (or end at a block it does not hold): only the part inside is counted", rangesOutside, hd.First, hd.Last()))
	}
	if r.FetchedUnknown > 0 {
		r.warn(fmt.Sprintf("%d requested block(s) are not in the index's chain (another chain, a stale block, or outside %d..%d): left out", r.FetchedUnknown, hd.First, hd.Last()))
	}
	r.ScannedFrom, r.ScannedTo = -1, -1
	for i := range nb {
		if bitGet(r.scanned, i) {
			if r.ScannedFrom < 0 {
				r.ScannedFrom = hd.First + int32(i)
			}
			r.ScannedTo = hd.First + int32(i)
		}
		if bitGet(r.fetched, i) {
			r.FetchedHeights = append(r.FetchedHeights, hd.First+int32(i))
		}
	}
	r.ScannedBlocks = bitCount(r.scanned)
	r.FetchedBlocks = uint64(len(r.FetchedHeights))
	if r.ScannedBlocks > 0 {
		r.FetchedFraction = float64(r.FetchedBlocks) / float64(r.ScannedBlocks)
	}
	return r
}

func max32(a, b int32) int32 {
	if a > b {
		return a
	}
	return b
}

func (r *FetchReport) warn(s string) { r.Warnings = append(r.Warnings, s) }

// chance returns C(B-k, F-k)/C(B, F), cached by k.
func (r *FetchReport) chance(k uint64) float64 {
	if k >= 4096 {
		return model.ChanceAllFetched(r.ScannedBlocks, r.FetchedBlocks, k)
	}
	for uint64(len(r.chances)) <= k {
		r.chances = append(r.chances, model.ChanceAllFetched(r.ScannedBlocks, r.FetchedBlocks, uint64(len(r.chances))))
	}
	return r.chances[k]
}

func (r *FetchReport) test(e *universe.IndexEntry, first int32) {
	var k uint64
	all := true
	for _, h := range e.Heights {
		i := int(h - first)
		if !bitGet(r.scanned, i) {
			continue
		}
		k++
		if all && !bitGet(r.fetched, i) {
			all = false
		}
	}
	if k == 0 {
		return
	}
	r.UniverseSize++
	c := r.byK[k]
	if c == nil {
		c = &kCount{}
		r.byK[k] = c
	}
	c.candidates++
	p := r.chance(k)
	r.ExpectedFalsePositives += p
	if !all {
		return
	}
	c.matched++
	r.MatchedCount++
	if r.FetchedBlocks == r.ScannedBlocks {
		return // every block fetched: a match says nothing, and all match
	}
	var hs []int32
	for _, h := range e.Heights {
		if bitGet(r.scanned, int(h-first)) {
			hs = append(hs, h)
		}
	}
	r.Matched = append(r.Matched, FetchMatch{Candidate: e.Candidate, Appearances: k, Heights: hs,
		ChanceProbability: p, ChanceProbabilityApprox: math.Pow(r.FetchedFraction, float64(k))})
	if len(r.Matched) >= 2*r.max {
		r.trim()
	}
}

// trim keeps the r.max matches least explained by chance.
func (r *FetchReport) trim() {
	slices.SortStableFunc(r.Matched, func(a, b FetchMatch) int {
		switch {
		case a.Appearances != b.Appearances:
			return int(int64(b.Appearances) - int64(a.Appearances)) // more appearances: less chance
		default:
			return strings.Compare(a.Candidate, b.Candidate)
		}
	})
	if len(r.Matched) > r.max {
		r.Matched = r.Matched[:r.max]
		r.MatchedTruncated = true
	}
}

func (r *FetchReport) finish() {
	r.trim()
	// A script that appears once, in a fetched block, matches whether or
	// not it is the wallet's: the other outputs of the wallet's own
	// transactions do. Such a match is at best one of its block's.
	single := map[int32]int{}
	for _, m := range r.Matched {
		if m.Appearances == 1 {
			single[m.Heights[0]]++
		}
	}
	for i := range r.Matched {
		m := &r.Matched[i]
		c := r.byK[m.Appearances]
		m.Probability = math.Max(0, 1-float64(c.candidates)*m.ChanceProbability/float64(c.matched))
		if m.Appearances == 1 {
			m.Probability = math.Min(m.Probability, 1/float64(single[m.Heights[0]]))
		}
		if m.Probability >= 0.95 {
			r.Confident++
		}
	}
	if n := r.byK[1]; n != nil && n.matched > 0 && r.FetchedBlocks < r.ScannedBlocks {
		r.warn(fmt.Sprintf("%d match(es) appear in a single block: every script that appears once in a fetched block matches, the other outputs of the wallet's own transactions too, so chance does not explain them; their probability is at most one over the single-appearance matches of their block", n.matched))
	}
	if r.MatchedTruncated {
		r.warn(fmt.Sprintf("%d matches, only the %d least explained by chance are listed", r.MatchedCount, len(r.Matched)))
	}
	switch {
	case r.ScannedBlocks == 0:
		r.Verdict = "the session scanned no block of the index: nothing to say"
	case r.FetchedBlocks == 0:
		r.Verdict = fmt.Sprintf("the session fetched none of the %d blocks it scanned: its downloads reveal nothing", r.ScannedBlocks)
	case r.FetchedBlocks == r.ScannedBlocks:
		r.warn("the session fetched every block it scanned: every candidate matches, and the downloads reveal nothing")
		r.Verdict = fmt.Sprintf("the session fetched all %d blocks it scanned: its downloads reveal nothing", r.ScannedBlocks)
	case r.MatchedCount == 0:
		r.Verdict = fmt.Sprintf("no candidate has every appearance among the %d blocks fetched of %d: the downloads name no script of this index", r.FetchedBlocks, r.ScannedBlocks)
	default:
		r.Verdict = fmt.Sprintf("%d of %d candidates have every appearance among the %d blocks fetched of %d (f = %.3g); chance explains about %.3g of them: %d are the wallet's with probability at least 0.95",
			r.MatchedCount, r.UniverseSize, r.FetchedBlocks, r.ScannedBlocks, r.FetchedFraction, r.ExpectedFalsePositives, r.Confident)
	}
}
