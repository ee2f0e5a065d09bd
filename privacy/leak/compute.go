package leak

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// Input is what a client holds after its scans: what it asked of each
// peer, the blocks it fetched, the filters it still holds and its own
// scripts.
type Input struct {
	// Params names candidates as the index does (their addresses).
	Params *chaincfg.Params
	// Views are what each peer was asked, one per peer address (View.ID):
	// the filter ranges (getcfilters) and every block asked of it,
	// served or not.
	Views []View
	// Tip is the chain's height: a view without a filter range is taken
	// to have scanned 0..Tip, as the attack takes a capture without one.
	Tip int32
	// Blocks returns every fetched block (the union of the views'
	// Fetched): the candidates of the partial index are named from them.
	Blocks func(height int32) (*wire.MsgBlock, bool)
	// Filters returns the verified basic filters of scanned heights the
	// client still holds (nil: none). A scanned height not fetched whose
	// filter is not held is untested (see Compute).
	Filters FilterSource
	// Watched are the wallet's output scripts, in watch-list order
	// (ScriptLeak.WatchItem indexes them); Covers are the client's cover
	// scripts, its own but not the wallet's (nil without covers).
	Watched, Covers [][]byte
	// Decoys are scripts neither watched nor covers whose blocks the
	// client fetched on purpose: the candidate chains a client with
	// covers explored, and those it drew and then left out, fetched
	// once. Their matches are made by the fetching, not by chance, and
	// the attacker's null does not reproduce them; the report's chance
	// count leaves out the groups holding one (see the package
	// documentation), which only raises the probabilities.
	Decoys [][]byte
	// Target is the client's privacy target (0: none): the attack it
	// reports is then cover-aware (Options.CoverTarget), as privacy
	// fetches --cover-target gives on a capture of it.
	Target float64
	// Seed draws the sample of scripts seen once.
	Seed uint64
}

// FilterSource gives the BIP 158 basic filter of a height as a client
// holds it: its bytes with their element count first (NBytes), and the
// key of its block (gcs.BasicKey); ok is false when it is not held.
type FilterSource interface {
	Filter(height int32) (nbytes []byte, key [16]byte, ok bool)
}

// Limits bound Compute's work.
type Limits struct {
	// MaxQueries bounds the candidates seen in two or more fetched blocks
	// (with those of their transactions) that are tested against the held
	// filters (0: DefaultMaxQueries); those of fewest fetched appearances
	// beyond it are left untested, and the report is conservative. The
	// own scripts and the candidates of their transactions are always
	// tested.
	MaxQueries int
	// MaxSingles bounds the sample of candidates seen once in the fetched
	// blocks from which the chance matches of one appearance are
	// estimated (0: DefaultMaxSingles).
	MaxSingles int
	// Workers test the held filters at once (0: DefaultWorkers).
	Workers int
}

// Compute's default limits.
const (
	DefaultMaxQueries = 2048
	DefaultMaxSingles = 1024
	DefaultWorkers    = 2
)

// Leak is what the peers a client asked could conclude about its
// watched scripts, by the block-download attack (see the package
// documentation): per peer, and all of them colluding.
type Leak struct {
	WatchedScripts int `json:"watched_script_count"`
	// Peers has one entry per view given, in their order.
	Peers []PeerLeak `json:"peers"`
	// Collusion is every view joined, as colluding nodes see them: the
	// union of what was scanned and of what was fetched.
	Collusion PeerLeak `json:"collusion"`
	// Warnings are the limits of the computation, and, named by the
	// view, those of a view's warnings that change how its figures read
	// (a session of few blocks: FewBlocks).
	Warnings []string `json:"warnings"`
}

// PeerLeak is what one view (a peer, or the peers colluding) reveals.
type PeerLeak struct {
	// Address is the peer's (View.ID), null for the collusion.
	Address *string `json:"address"`
	// BlocksScanned is B, the blocks of its filter ranges and fetched
	// blocks; BlocksFetched is F, the blocks asked of it, at
	// FetchedHeights; FetchedFraction is F/B.
	BlocksScanned   uint64  `json:"blocks_scanned"`
	BlocksFetched   uint64  `json:"blocks_fetched"`
	FetchedHeights  []int32 `json:"fetched_heights"`
	FetchedFraction float64 `json:"fetched_fraction"`
	// Confident counts the watched scripts it attributes at probability
	// >= 0.95, Likely those at >= 0.5.
	Confident int `json:"confident_count"`
	Likely    int `json:"likely_count"`
	// GroupConfident counts the watched scripts whose group (or the
	// script alone) it attributes at >= 0.95, GroupLikely at >= 0.5, and
	// LargestConfidentGroup is the size of the largest such group at
	// >= 0.95 (0: none): it knows one of those scripts is the wallet's.
	GroupConfident        int `json:"group_confident_count"`
	GroupLikely           int `json:"group_likely_count"`
	LargestConfidentGroup int `json:"largest_confident_group"`
	// Highest is the highest probability of a watched script, and
	// HighestHigh the highest upper end of their intervals (null when no
	// watched script matched).
	Highest     *float64 `json:"highest_probability"`
	HighestHigh *float64 `json:"highest_probability_high"`
	// Conservative is true when some candidate could not be tested
	// against some scanned block (its filter was not held, or the
	// candidates were too many): it is then taken to appear there, which
	// only raises the probabilities.
	Conservative bool `json:"conservative"`
	// Scripts are the watched scripts that match at this view.
	Scripts []ScriptLeak `json:"scripts"`
	// ChanceGroups is, per class k (1..MaxProfileClass, the last class
	// holding every larger one), the groups of the view that hold none
	// of the client's own scripts nor a decoy (Class.LabelledChanceGroups): what
	// chance gives, which dilutes the wallet's groups as covers do
	// (Need's chance).
	ChanceGroups map[int]float64 `json:"chance_groups_by_class"`
	// Warnings are the attack's on this view (Report.Warnings): how its
	// probabilities were weighed, and where they may read high or low.
	Warnings []string `json:"warnings"`
	// Bloom is the filter attack on the BIP 37 filters the peer received
	// (Bloom), null for a BIP 157 scan: Compute leaves it null, and a
	// client that loaded filters sets it.
	Bloom *BloomLeak `json:"bloom_filter_attack"`
}

// ScriptLeak is one watched script as the attack sees it at a view.
type ScriptLeak struct {
	// WatchItem indexes Input.Watched.
	WatchItem int `json:"watch_item"`
	// Appearances is k, its blocks in the view's scanned range.
	Appearances uint64 `json:"appearance_count"`
	// Probability is the attack's that it is the wallet's, with its 95%
	// interval.
	Probability     float64 `json:"probability"`
	ProbabilityLow  float64 `json:"probability_low"`
	ProbabilityHigh float64 `json:"probability_high"`
	// Group numbers, from 1, the group of matches it cannot be told from
	// (null: alone); scripts of one view with the same group are one
	// group. CoLocated is true when it appears only in transactions of
	// other matches, Ambiguous when members of its group give the same
	// evidence as it.
	Group     *int `json:"group"`
	CoLocated bool `json:"co_located"`
	Ambiguous bool `json:"ambiguous"`
	// GroupProbability is the attack's that its group holds a script of
	// the wallet's (Probability when it is alone), and GroupSize the
	// group's members (1 alone): at a high GroupProbability the peer
	// knows that one of GroupSize scripts is the wallet's, even when
	// Probability, the script's share, is low.
	GroupProbability float64 `json:"group_probability"`
	GroupSize        int     `json:"group_size"`
}

// ErrMissingBlock reports a fetched height whose block Input.Blocks does
// not give.
var ErrMissingBlock = errors.New("leak: a fetched block is not given")

// Compute is the client's own report of what its downloads reveal: the
// block-download attack each peer, and all of them colluding, can make
// on what it was asked (Analyze), with the chance count labelled by the
// client's knowledge of its own scripts (Options.Own), on a partial
// index built from the fetched blocks and the held filters:
//
//   - every candidate of the fetched blocks is found as the index finds
//     it (universe.ScriptAppearances);
//   - the own scripts and the candidates of their transactions, those
//     seen in two or more fetched blocks with the candidates of their
//     transactions (at most MaxQueries, the most appearing first), and a
//     sample of MaxSingles of the others with the candidates of their
//     transactions are tested against every held filter of a scanned
//     height not fetched (gcs.Filter.MatchEach), which gives their other
//     appearances, until one shows they can match at no view (nothing
//     else of them is read);
//   - the chance matches of one appearance are estimated from the
//     sample, at the lower end of their 95% interval (Options.Singles).
//
// Untested means conservative: a candidate that could not be tested
// against a scanned height is taken to appear there, so that it matches
// nothing, the chance count shrinks and every probability grows; the view
// says conservative. With every filter held and the limits above the
// counts, each watched script gets the probability Analyze gives it on
// the full index with Own (TestComputeEqualsAnalyzeOnFullIndex).
//
// Its cost is one decode and one MatchEach of each held filter of a
// scanned height not fetched, plus naming the fetched blocks'
// appearances once (hashing the scripts their inputs spend), both on
// Limits.Workers; its memory is the partial index.
func Compute(in Input, lim Limits) (*Leak, error) {
	if in.Params == nil {
		return nil, errors.New("leak: Compute needs the chain's parameters")
	}
	lim = lim.withDefaults()
	out := &Leak{WatchedScripts: len(in.Watched), Peers: []PeerLeak{}, Warnings: []string{},
		Collusion: PeerLeak{FetchedHeights: []int32{}, Scripts: []ScriptLeak{}, Warnings: []string{}}}
	if len(in.Views) == 0 {
		return out, nil
	}
	views := make([]View, 0, len(in.Views)+1)
	for _, v := range in.Views {
		if len(v.Scanned) == 0 {
			v.Scanned = []HeightRange{{From: 0, To: in.Tip}}
		}
		views = append(views, v)
	}
	all := append(slices.Clone(views), colluding(in.Views, in.Tip))
	for i := range all {
		// The partial index tests what the report takes as scanned.
		all[i].Scanned, _ = scanRanges(&all[i])
	}
	p, err := newPartial(in, all, lim)
	if err != nil {
		return nil, err
	}
	reps, err := Analyze(all, p.source(), Options{Own: p.isOwn, Decoy: p.isDecoy, Singles: p.singles, MaxMatches: len(p.entries) + 1, CoverTarget: in.Target})
	if err != nil {
		return nil, fmt.Errorf("leak: %w", err)
	}
	for i, r := range reps {
		pl := p.peerLeak(&all[i], r)
		who := "peer " + all[i].ID
		if i == len(reps)-1 {
			pl.Address, who = nil, "the peers together"
			out.Collusion = pl
		} else {
			out.Peers = append(out.Peers, pl)
		}
		out.Warnings = append(out.Warnings, userWarnings(who, r.Warnings)...)
	}
	out.Warnings = append(out.Warnings, p.warnings...)
	return out, nil
}

// userWarnings are the warnings of a view's report (PeerLeak.Warnings)
// that change how its figures read, which Leak.Warnings repeats, named
// by who saw the view: that a session of few blocks (FewBlocks) is
// given more here than the attack on it would give.
func userWarnings(who string, warnings []string) []string {
	var out []string
	for _, w := range warnings {
		if strings.HasPrefix(w, FewBlocks) {
			out = append(out, who+": "+w)
		}
	}
	return out
}

// colluding is the view of all views colluding as the attack joins them
// (collusionOf): their filter ranges and fetched blocks, a view without
// a range adding its fetched blocks only; 0..tip when none has a range.
// Filling each view's missing range with 0..tip first, as a view alone
// is taken, would stretch the collusion over blocks no peer was asked
// the filters of, whose filters the client does not hold: every other
// candidate would then be taken to appear there and match nothing, and
// the report would over-state far above the attack.
func colluding(views []View, tip int32) View {
	c := collusionOf(views)
	if len(c.Scanned) == 0 {
		c.Scanned = []HeightRange{{From: 0, To: tip}}
	}
	return c
}

func (l Limits) withDefaults() Limits {
	if l.MaxQueries <= 0 {
		l.MaxQueries = DefaultMaxQueries
	}
	if l.MaxSingles <= 0 {
		l.MaxSingles = DefaultMaxSingles
	}
	if l.Workers <= 0 {
		l.Workers = DefaultWorkers
	}
	return l
}

// peerLeak reads a view's report for the watched scripts.
func (p *partial) peerLeak(v *View, r *Report) PeerLeak {
	id := v.ID
	pl := PeerLeak{Address: &id, BlocksScanned: r.ScannedBlocks, FetchedHeights: r.FetchedHeights, Warnings: append([]string{}, r.Warnings...),
		FetchedFraction: r.FetchedFraction, Conservative: p.conservative(v), Scripts: []ScriptLeak{}}
	pl.ChanceGroups = map[int]float64{}
	for _, c := range r.ByAppearances {
		if c.LabelledChanceGroups > 0 {
			pl.ChanceGroups[int(min(c.Appearances, MaxProfileClass))] += c.LabelledChanceGroups
		}
	}
	fetched := slices.Clone(v.Fetched)
	slices.Sort(fetched)
	pl.BlocksFetched = uint64(len(slices.Compact(fetched)))
	for _, m := range r.Matched {
		for _, w := range p.watchItems[m.Candidate] {
			s := ScriptLeak{WatchItem: w, Appearances: m.Appearances, Probability: m.Probability,
				ProbabilityLow: m.ProbabilityLow, ProbabilityHigh: m.ProbabilityHigh,
				CoLocated: m.CoLocated, Ambiguous: len(m.AmbiguousWith) > 0}
			s.GroupProbability, s.GroupSize = m.Probability, 1
			if m.Group > 0 {
				g := m.Group
				s.Group = &g
				if m.Group <= len(r.Groups) {
					grp := r.Groups[m.Group-1]
					s.GroupProbability, s.GroupSize = grp.Probability, len(grp.Members)
				}
			}
			pl.Scripts = append(pl.Scripts, s)
		}
	}
	slices.SortFunc(pl.Scripts, func(a, b ScriptLeak) int { return a.WatchItem - b.WatchItem })
	for _, s := range pl.Scripts {
		if s.Probability >= 0.95 {
			pl.Confident++
		}
		if s.Probability >= 0.5 {
			pl.Likely++
		}
		if s.GroupProbability >= 0.95 {
			pl.GroupConfident++
			pl.LargestConfidentGroup = max(pl.LargestConfidentGroup, s.GroupSize)
		}
		if s.GroupProbability >= 0.5 {
			pl.GroupLikely++
		}
		if pl.Highest == nil || s.Probability > *pl.Highest {
			h := s.Probability
			pl.Highest = &h
		}
		if pl.HighestHigh == nil || s.ProbabilityHigh > *pl.HighestHigh {
			h := s.ProbabilityHigh
			pl.HighestHigh = &h
		}
	}
	return pl
}
