package leak

import (
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// DefaultMaxMatches bounds the matches a Report lists.
const DefaultMaxMatches = 100_000

// Match is a candidate whose every appearance in the scanned range
// lies in a block the client fetched.
type Match struct {
	Candidate string `json:"candidate"`
	// Appearances is k, the blocks of the scanned range it appears in;
	// Heights are those blocks, and Transactions (when the index records
	// them) the positions there of the transactions it appears in.
	Appearances  uint64     `json:"appearance_count"`
	Heights      []int32    `json:"heights"`
	Transactions [][]uint32 `json:"transactions,omitempty"`
	// ChanceProbability is the chance that a candidate not of the wallet
	// has all its k blocks fetched: C(B-k, F-k)/C(B, F).
	// ChanceProbabilityApprox is the usual approximation f^k.
	ChanceProbability       float64 `json:"chance_probability"`
	ChanceProbabilityApprox float64 `json:"chance_probability_approx"`
	// Group is the match's group in Report.Groups, from 1, when
	// other matches cannot be told from it (0: none); CoLocated is true
	// when every appearance of it lies in a transaction of another match.
	Group     int  `json:"group,omitempty"`
	CoLocated bool `json:"co_located,omitempty"`
	// Batched is true when it appears in two or more blocks, at least half
	// of which hold it in a transaction paying more than four matched
	// scripts (a batched payment), where a payer's change reused across
	// batches has the same evidence: its probability is then three
	// quarters of what its class gives.
	Batched bool `json:"batched,omitempty"`
	// Escorted is true when it appears in two or more blocks, does not
	// ride in another's transactions, and in at least half its
	// transactions sits beside another match that appears in a
	// transaction of its own elsewhere: those are the wallet's scripts
	// more often than it is (a payer's change reused across payments to
	// the wallet, beside the wallet's fresh addresses that the wallet
	// later spends), and its probability is three quarters of what it
	// would be.
	Escorted bool `json:"escorted,omitempty"`
	// Nested is true when it is alone, of two or more appearances, and
	// every block of it is a block of a group of as many appearances or
	// more: those downloads explain it, and its probability is half its
	// class's; or when every block of its group's most appearing member
	// is a block of some other group the wallet's more likely than not,
	// no one of which holds them all (pooled): its probability is then
	// half its share, and its group's half its class's (its class's in a
	// session found to fetch for several wallets: SeveralWallets).
	Nested bool `json:"nested,omitempty"`
	// Passenger is true when it is a member of a group, does not ride in
	// another's transactions only because some of its transactions are
	// batched payments (more than four matches), sits beside another match
	// in every transaction, and no other match lies wholly in its
	// transactions: it hosts nothing a wallet's script would (a payer's
	// change reused across payments to the wallet), so it has half its
	// group's probability, as a match riding in another's transactions.
	Passenger bool `json:"passenger,omitempty"`
	// Settled is true when it rides in other matches' transactions, each
	// holding one other match, and one of them created a script that a
	// later block the session scanned and did not fetch holds (its
	// counterparty's, spent elsewhere): the transaction's counterparty is
	// not among its matches, so it has 0.94 of its group's
	// probability, not half (a chained one 0.7, not three tenths).
	Settled bool `json:"settled,omitempty"`
	// Paid is true when it rides in other matches' transactions, appears
	// less than its group's most appearing member, and every transaction
	// of it spends a coin no match holds (a script seen in an earlier
	// block the session did not fetch): a payment to the wallet, or
	// another's transaction, where the scripts riding beside the wallet's
	// are its payer's change and other payees; or every transaction of it
	// holds four matches (a payer's batch). It has a tenth of its
	// group's probability (a client's own report leaves it half).
	Paid bool `json:"paid,omitempty"`
	// BesidePayment is true when it would be settled but the other match
	// of each of its transactions was created there (its first
	// appearance in the index, and in an index recording the roles, a
	// transaction paying it there): the transaction pays that script, so it
	// is no spend of the wallet's with its change but a payment to the
	// wallet, and what rides beside the payment is its payer's change or
	// another payee. It has a tenth of its group's probability, as a paid
	// one (a client's own report leaves it settled).
	BesidePayment bool `json:"beside_payment,omitempty"`
	// Probability is the chance that the candidate is the wallet's, and
	// ProbabilityLow..ProbabilityHigh its 95% interval: its group's share
	// (see the package documentation).
	Probability     float64 `json:"probability"`
	ProbabilityLow  float64 `json:"probability_low"`
	ProbabilityHigh float64 `json:"probability_high"`
	// AmbiguousWith names the members of its group with as many
	// appearances as it has, the group's most, in a block of it: the
	// downloads give the same evidence for each, so one of them (not
	// each) is the wallet's with the group's probability.
	AmbiguousWith []string `json:"ambiguous_with,omitempty"`
	// created is true when its first block in Heights is its first
	// appearance in the index and its creation (creation): the block
	// whose transaction created it.
	created bool
}

// Group is matches that downloads cannot tell apart: the same blocks,
// or every appearance of one in the transactions of another (the payer's
// change beside a payment to the wallet).
type Group struct {
	// Members are the matches' candidates, the one of most appearances
	// first; Appearances is its k.
	Members     []string `json:"members"`
	Appearances uint64   `json:"appearance_count"`
	// Reason says why they are one group. Ambiguous is true when two or
	// more members have the most appearances in a block in common: the
	// downloads give the same evidence for each.
	Reason    string `json:"reason"`
	Ambiguous bool   `json:"ambiguous,omitempty"`
	// Nested is true when every block of its most appearing member is a
	// block of another group of as many appearances or more: the
	// downloads of those blocks explain it whatever its owner, and its
	// probability is half its class's.
	Nested bool `json:"nested,omitempty"`
	// Probability is the chance that one of them is the wallet's, and
	// ProbabilityLow..ProbabilityHigh its 95% interval.
	Probability     float64 `json:"probability"`
	ProbabilityLow  float64 `json:"probability_low"`
	ProbabilityHigh float64 `json:"probability_high"`
}

// Class is the spurious-match model for the candidates of k
// appearances in the scanned range.
type Class struct {
	Appearances uint64 `json:"appearance_count"`
	// Candidates is n_k, and ExpectedByChance n_k·C(B-k, F-k)/C(B, F),
	// the matches chance gives them if their blocks were placed at
	// random. ExpectedByShifts is what the fetched set shifted along the
	// scanned blocks matches on average, and ExpectedGroupsByShifts the
	// groups those matches form: the null the probabilities use (see the
	// package documentation).
	Candidates             uint64  `json:"candidate_count"`
	ExpectedByChance       float64 `json:"expected_by_chance"`
	ExpectedByShifts       float64 `json:"expected_by_shifts"`
	ExpectedGroupsByShifts float64 `json:"expected_groups_by_shifts"`
	// LabelledChanceGroups is, when the client labels its own candidates
	// (Options.Own), the chance count observed: the class's groups that
	// hold no own candidate nor a decoy (Options.Decoy). The probabilities use it instead of the
	// shifts, for two or more appearances at the lower end of its 95%
	// interval (see Options.Own).
	LabelledChanceGroups float64 `json:"labelled_chance_groups,omitempty"`
	// Matched counts the matches, Groups the groups they form (a match
	// alone is a group of one) whose most-appearing member has k
	// appearances, and CoLocated the matches that appear only in the
	// transactions of another match: spurious matches chance does not
	// explain, counted from the index.
	Matched   uint64 `json:"matched_count"`
	Groups    uint64 `json:"group_count"`
	CoLocated uint64 `json:"co_located_count"`
}

// Report is what one session's block downloads reveal.
type Report struct {
	Session   string `json:"session"`
	Client    string `json:"client"`
	UserAgent string `json:"user_agent,omitempty"`
	// ScannedFrom..ScannedTo bounds the scanned range (the union of the
	// session's filter ranges, getcfilters, and fetched blocks, within the
	// index: filter headers, getcfheaders, are synced from the genesis
	// block whatever a client scans, and do not count), nil when nothing
	// was scanned; ScannedBlocks is B, the blocks in it.
	ScannedFrom   *int32 `json:"scanned_from"`
	ScannedTo     *int32 `json:"scanned_to"`
	ScannedBlocks uint64 `json:"blocks_scanned"`
	// FetchedBlocks is F, FetchedHeights their heights; FetchedUnknown
	// counts requested blocks that are not in the index's chain.
	FetchedBlocks  uint64  `json:"blocks_fetched"`
	FetchedHeights []int32 `json:"fetched_heights"`
	FetchedUnknown int     `json:"unknown_blocks_fetched"`
	// FetchedFraction is f = F/B.
	FetchedFraction float64 `json:"fetched_fraction"`
	// UniverseSize counts the index's candidates that appear in the
	// scanned range.
	UniverseSize uint64 `json:"universe_size"`
	// ExpectedFalsePositives is the sum over those candidates of their
	// chance probability: the matches chance alone would give.
	ExpectedFalsePositives float64 `json:"expected_false_positives"`
	MatchedCount           uint64  `json:"matched_count"`
	// CoLocated counts the matches that appear only in the transactions
	// of another match (only when the index records transactions).
	CoLocated uint64 `json:"co_located_count"`
	// EstimatedWalletGroups is the number of groups of matches of two or
	// more appearances that hold a wallet's script, estimated as those
	// groups less the ones chance gives, and
	// EstimatedWalletGroupsLow..EstimatedWalletGroupsHigh its 95%
	// interval, which covers the truth with probability
	// EstimatedWalletGroupsLevel (at least 0.95: the chance count is
	// whole and no more than the groups observed, "The session's count"
	// in the package documentation). It is not the wallet's size:
	// scripts seen once are left
	// out (every script of a fetched block that appears once matches),
	// and a group may hold more than one of the wallet's scripts.
	EstimatedWalletGroups      float64 `json:"estimated_wallet_groups"`
	EstimatedWalletGroupsLow   float64 `json:"estimated_wallet_groups_low"`
	EstimatedWalletGroupsHigh  float64 `json:"estimated_wallet_groups_high"`
	EstimatedWalletGroupsLevel float64 `json:"estimated_wallet_groups_level"`
	// EstimatedWalletSingles is the number of the matches of one
	// appearance riding in no other's transactions that are the
	// wallet's: the sum of what each is given, so at most two a fetched
	// block in the attack's report. Its interval runs from the sum of
	// their low ends to what chance (what the fetched blocks'
	// neighbours carry) leaves of every match of one appearance, riding
	// or not, within the same bound; EstimatedWalletSinglesLevel is the
	// chance count's level (the coverage measured is in "Matches of one
	// appearance", package documentation).
	EstimatedWalletSingles      float64 `json:"estimated_wallet_singles"`
	EstimatedWalletSinglesLow   float64 `json:"estimated_wallet_singles_low"`
	EstimatedWalletSinglesHigh  float64 `json:"estimated_wallet_singles_high"`
	EstimatedWalletSinglesLevel float64 `json:"estimated_wallet_singles_level"`
	// Confident counts the matches the wallet's with probability >= 0.95,
	// ConfidentGroups the groups of two or more one of whose members is.
	Confident       int `json:"confident_count"`
	ConfidentGroups int `json:"confident_group_count"`
	// Transactions is true when the index records the transactions of
	// the appearances in the scanned range (version 2, written with
	// them), which co-location needs.
	Transactions     bool     `json:"has_transactions"`
	ByAppearances    []Class  `json:"by_appearances"`
	Matched          []Match  `json:"matched"`
	Groups           []Group  `json:"groups"`
	MatchedTruncated bool     `json:"matched_truncated,omitempty"`
	Verdict          string   `json:"verdict"`
	Warnings         []string `json:"warnings"`

	first      int32
	fetched    []uint64  // bit set over the index's heights
	scanned    []uint64  // the same
	chances    []float64 // by k, grown on demand
	byK        map[uint64]*kCount
	max        int
	null       *shiftNull
	label      *labelling
	cap        float64     // Options.CoverTarget, 0 for none
	huge       *classCount // the groups of more than hugeGroup members
	hosted     int         // units nestHosted, halved
	passengers int         // matches marked Passenger
	escorted   int         // matches marked Escorted
	pooled     int         // units nestPooled, their members' shares halved
	// pooledWhole are the pooled groups and their class's probability
	// (keepPooledGroups).
	pooledWhole []pooledGroup
	// severalWallets is set when the report is warned of several
	// wallets behind its client's address (warnSharedClients).
	severalWallets bool
	// severalOthers counts the other sessions of its client's address
	// that fetch for other scripts (warnSharedClients).
	severalOthers int
	// paidGroups counts the groups whose members beside their most
	// appearing one are all paid (paidOnly).
	paidGroups int
	// few counts the matches alone of two or more appearances lowered
	// for a session of few blocks (lowerFewBlocks).
	few int
	// singlesInChance is set when the matches of one appearance alone
	// are within chance's range and given none of their share.
	singlesInChance bool
	// left holds the transactions (txKey) of fetched blocks that created
	// a script a later scanned block not fetched holds: its counterparty
	// spent it elsewhere (see Match.Settled). At most one entry per
	// transaction of the fetched blocks.
	left map[uint64]bool
	// paid holds the transactions (txKey) of fetched blocks that hold a
	// script not matched that appeared in an earlier block: a coin
	// received where the session did not fetch, spent there (see
	// Match.Paid). At most one entry per transaction of the fetched
	// blocks.
	paid map[uint64]bool
}

type kCount struct{ candidates, matched uint64 }

// Options tune Analyze.
type Options struct {
	// MaxMatches bounds the matches listed per session, those least
	// explained by chance first (0: DefaultMaxMatches).
	MaxMatches int
	// Intersect adds a last report that joins every session as one
	// client's: its scanned range is the union of theirs, and a block
	// counts as fetched when every session that scanned it fetched it.
	Intersect bool
	// Collude adds a last report that joins every view as colluding
	// nodes see one client: its scanned range is the union of theirs, and
	// so are its fetched blocks. It cannot go with Intersect.
	Collude bool
	// Shifts is the number of shifts of the fetched set along the
	// scanned blocks that make the null (0: DefaultShifts; negative:
	// none, the blocks placed at random instead).
	Shifts int
	// Own, when set, labels the candidates that are the client's own (its
	// watched scripts and its covers): the chance count of each class is
	// then its groups that hold no own candidate (a labelled null), not
	// the shifts of the fetched set, which need blocks around the fetched
	// ones that a client never downloaded. The probabilities are still
	// the attacker's: the share of a class's groups chance does not
	// explain. The labelled count is one draw of what the shifts' mean
	// estimates, above it about half the time, so for two or more
	// appearances it enters at the lower end of its 95% interval (a
	// Poisson mean's): a script's probability then falls below the
	// attacker's only where the shifts' mean lies below that end, in at
	// most 2.5% of the classes by the model (TestLabelledNotBelowShifts
	// measures it on simulated chains). Cover, when set with Own, marks
	// the own candidates that are covers: each probability is then
	// multiplied by the share of the class's own groups that hold a
	// watched script, which gives the wallet's realized share of the
	// class.
	Own, Cover func(candidate string) bool
	// Decoy, when set with Own, marks candidates the client fetched the
	// blocks of on purpose that are not its own (Input.Decoys): their
	// matches are made, not chance, so the labelled chance count leaves
	// out the groups holding one, as it leaves out the own groups.
	Decoy func(candidate string) bool
	// CoverTarget, in (0, 1), caps every probability and interval at it:
	// the calibrated posterior of an attacker who knows the client keeps
	// the wallet's share of every class at most the target with covers it
	// cannot tell from the wallet (a client of PrivacyTarget t). On a
	// client without covers it under-claims.
	CoverTarget float64
	// Singles, per view ID, estimates the chance matches of one
	// appearance that a partial index leaves out (a client samples them):
	// its Low joins both the observed and the chance singles, so that the
	// probability of a match of one appearance stays an upper estimate.
	Singles map[string]Estimate
}

// DefaultShifts is the number of shifts of the fetched set that make the
// null of the block-download attack.
const DefaultShifts = 32

// ErrColludeIntersect reports Options asking for both Collude and
// Intersect: colluding nodes join what each saw of one client at once,
// an intersection joins one client's sessions over time.
var ErrColludeIntersect = errors.New("privacy: the colluding nodes' view (union) and the intersection of sessions cannot be asked for at once")

// ErrNoFetches reports a capture without a block request or filter range.
var ErrNoFetches = errors.New("privacy: the capture holds no block request or filter range")

// HeightRange is the blocks From..To, both included.
type HeightRange struct {
	From int32 `json:"from"`
	To   int32 `json:"to"`
}

// Source yields the entries of an appearance index in increasing order
// of their candidates, as *universe.IndexReader does, and is read once.
// Compute's partial index, built from the blocks a client fetched and
// the filters it holds, is another.
type Source interface {
	Header() *universe.IndexHeader
	Next() (*universe.IndexEntry, error)
}

// View is what a node saw of one client's BIP 157 scan: the blocks
// whose filters it asked for (getcfilters) and the blocks it fetched, by
// height in the index's chain. It is what Analyze needs, from a
// capture (privacy/attack.AnalyzeFetches) or from a client's own
// record of what it asked one peer for.
type View struct {
	ID, Client, UserAgent string
	// Scanned are the ranges of blocks whose filters were asked for;
	// none means every block of the index (with a warning).
	Scanned []HeightRange
	// Fetched are the heights of the blocks fetched.
	Fetched []int32
	// Unknown counts blocks requested that are not in the index's chain,
	// RangesOutside filter ranges that reach outside it, and HeadersOnly
	// is true when filter headers were asked for but no filter (the
	// scanned range is then unknown).
	Unknown, RangesOutside int
	HeadersOnly            bool
}

// Analyze runs the block-download attack on what a node saw of each
// client, in one pass over the index: the candidates whose every
// appearance in the view's scanned range lies in a block the view
// fetched, grouped when downloads cannot tell them apart, and ranked by
// the probability that chance explains them (see the package
// documentation).
func Analyze(views []View, src Source, opt Options) ([]*Report, error) {
	if len(views) == 0 {
		return nil, ErrNoFetches
	}
	if opt.Intersect && opt.Collude {
		return nil, ErrColludeIntersect
	}
	if opt.CoverTarget != 0 && !(opt.CoverTarget > 0 && opt.CoverTarget < 1) {
		return nil, fmt.Errorf("privacy: a cover target of %g: want one in (0, 1)", opt.CoverTarget)
	}
	if opt.MaxMatches <= 0 {
		opt.MaxMatches = DefaultMaxMatches
	}
	if opt.Shifts == 0 {
		opt.Shifts = DefaultShifts
	}
	if opt.Own != nil {
		opt.Shifts = -1 // a labelled null needs no shifts
	}
	reports := make([]*Report, len(views), len(views)+1)
	for i := range views {
		reports[i] = newReport(&views[i], src.Header(), opt)
	}
	if opt.Intersect {
		reports = append(reports, joinReports(reports, opt))
	}
	if opt.Collude {
		c := collusionOf(views)
		reports = append(reports, newReport(&c, src.Header(), opt))
	}
	for {
		e, err := src.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("index: %w", err)
		}
		for _, r := range reports {
			r.test(e)
		}
	}
	for _, r := range reports {
		r.finish()
	}
	paying, shared := false, &sharedContest{}
	if !opt.Collude && opt.Own == nil {
		warnSharedClients(reports[:len(views)])
		for _, r := range reports[:len(views)] {
			r.recalibrate()
		}
		shared = contestShared(reports[:len(views)])
		paying = warnPayingWallets(reports[:len(views)])
	}
	for _, r := range reports {
		r.lowerFewBlocks()
		r.lowerAlone()
	}
	if paying {
		recalibratePaying(reports[:len(views)])
	}
	if !opt.Collude && opt.Own == nil {
		sharedPaying(reports[:len(views)], shared, paying)
		lowerLeadingRiders(reports[:len(views)], paying, shared)
		capWarned(reports[:len(views)], paying)
		coFetched(reports[:len(views)])
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

// newReport is the report of a view, its scanned and fetched blocks
// set from its filter ranges and fetched blocks.
func newReport(v *View, hd *universe.IndexHeader, opt Options) *Report {
	nb := len(hd.Hashes)
	r := emptyReport(hd.First, nb, opt.MaxMatches)
	r.Session, r.Client, r.UserAgent = v.ID, v.Client, v.UserAgent
	r.FetchedUnknown = v.Unknown
	in := func(h int32) bool { return h >= hd.First && h <= hd.Last() }
	for _, h := range v.Fetched {
		if !in(h) {
			r.FetchedUnknown++
			continue
		}
		bitSet(r.fetched, int(h-hd.First))
		bitSet(r.scanned, int(h-hd.First))
	}
	outside := v.RangesOutside
	ranges, beyond := scanRanges(v)
	if beyond > 0 {
		r.warn(fmt.Sprintf("%d fetched block(s) lie outside the filter ranges asked of this node: the client scanned them with filters from elsewhere, so it is taken to have scanned every block from the first to the last it was seen to scan", beyond))
	}
	for _, sr := range ranges {
		from, to := max(sr.From, hd.First), min(sr.To, hd.Last())
		if from != sr.From || to != sr.To {
			outside++
		}
		for h := from; h <= to; h++ {
			bitSet(r.scanned, int(h-hd.First))
		}
	}
	switch {
	case v.HeadersOnly:
		setAll(r.scanned, nb)
		r.warn(fmt.Sprintf("only filter headers (getcfheaders) recorded, no filter range (getcfilters): headers are synced from the genesis block whatever a client scans, so the scanned range is unknown and taken to be every block of the index (%d..%d): f is understated and the probabilities overstated", hd.First, hd.Last()))
	case len(v.Scanned) == 0 && outside == 0:
		setAll(r.scanned, nb)
		r.warn(fmt.Sprintf("no getcfilters range recorded: the scanned range is taken to be every block of the index (%d..%d)", hd.First, hd.Last()))
	}
	if outside > 0 {
		r.warn(fmt.Sprintf("%d filter range(s) reach outside the index's blocks %d..%d (or end at a block it does not hold): only the part inside is counted", outside, hd.First, hd.Last()))
	}
	if r.FetchedUnknown > 0 {
		r.warn(fmt.Sprintf("%d requested block(s) are not in the index's chain (another chain, a stale block, or outside %d..%d): left out", r.FetchedUnknown, hd.First, hd.Last()))
	}
	r.measure(opt.Shifts)
	r.label = labellingOf(opt, r.Session)
	r.cap = opt.CoverTarget
	return r
}

// scanRanges is the view's scanned ranges as the attack takes them
// (see the package documentation): its filter ranges, or, when beyond
// of its fetched blocks lie in none of them, the one range from the
// first block of either to the last.
func scanRanges(v *View) (ranges []HeightRange, beyond int) {
	if len(v.Scanned) == 0 {
		return nil, 0
	}
	hull := v.Scanned[0]
	for _, sr := range v.Scanned {
		hull.From, hull.To = min(hull.From, sr.From), max(hull.To, sr.To)
	}
	for _, h := range v.Fetched {
		if !slices.ContainsFunc(v.Scanned, func(sr HeightRange) bool { return h >= sr.From && h <= sr.To }) {
			beyond++
			hull.From, hull.To = min(hull.From, h), max(hull.To, h)
		}
	}
	if beyond == 0 {
		return v.Scanned, 0
	}
	return []HeightRange{hull}, beyond
}

// setAll sets the first n bits.
func setAll(s []uint64, n int) {
	for i := range n {
		bitSet(s, i)
	}
}

// emptyReport is a report over nb blocks from first, none scanned
// yet.
func emptyReport(first int32, nb int, max int) *Report {
	words := (nb + 63) / 64
	return &Report{Warnings: []string{}, FetchedHeights: []int32{}, Matched: []Match{}, Groups: []Group{},
		ByAppearances: []Class{}, first: first, fetched: make([]uint64, words), scanned: make([]uint64, words),
		byK: map[uint64]*kCount{}, max: max}
}

// measure fills the scanned range, the fetched heights, B, F and f from
// the bit sets, and sets up the null of shifts of the fetched set.
func (r *Report) measure(shifts int) {
	nb := len(r.scanned) * 64
	r.ScannedFrom, r.ScannedTo = nil, nil
	r.FetchedHeights = r.FetchedHeights[:0]
	for i := range nb {
		if bitGet(r.scanned, i) {
			h := r.first + int32(i)
			if r.ScannedFrom == nil {
				r.ScannedFrom = &h
			}
			r.ScannedTo = &h
		}
		if bitGet(r.fetched, i) {
			r.FetchedHeights = append(r.FetchedHeights, r.first+int32(i))
		}
	}
	r.ScannedBlocks = bitCount(r.scanned)
	r.FetchedBlocks = uint64(len(r.FetchedHeights))
	if r.ScannedBlocks > 0 {
		r.FetchedFraction = float64(r.FetchedBlocks) / float64(r.ScannedBlocks)
	}
	r.null = newShiftNull(r.scanned, r.fetched, nb, shifts)
}

// joinReports is the report of the sessions of reports taken as one
// client's: it scanned every block one of them scanned, and fetched a
// block when every one of them that scanned it fetched it (the
// intersection: a candidate must match each session).
func joinReports(reports []*Report, opt Options) *Report {
	n := len(reports[0].scanned)
	j := emptyReport(reports[0].first, 64*n, opt.MaxMatches)
	j.Client = reports[0].Client
	missed := make([]uint64, n) // scanned by a session that did not fetch it
	var ids []string
	for _, r := range reports {
		ids = append(ids, r.Session)
		for w := range n {
			j.scanned[w] |= r.scanned[w]
			j.fetched[w] |= r.fetched[w]
			missed[w] |= r.scanned[w] &^ r.fetched[w]
		}
		if r.Client != j.Client {
			j.Client = ""
		}
	}
	for w := range n {
		j.fetched[w] &^= missed[w]
	}
	j.Session = strings.Join(ids, "+")
	j.measure(opt.Shifts)
	j.label = labellingOf(opt, j.Session)
	j.cap = opt.CoverTarget
	return j
}

// collusionOf joins views as colluding nodes see one client: every range
// any of them scanned, every block any of them was asked for. Its ID joins
// theirs with "|".
func collusionOf(views []View) View {
	c := View{}
	var ids []string
	for _, v := range views {
		ids = append(ids, v.ID)
		c.Scanned = append(c.Scanned, v.Scanned...)
		c.Fetched = append(c.Fetched, v.Fetched...)
		c.Unknown += v.Unknown
		c.RangesOutside += v.RangesOutside
		if c.Client == "" {
			c.Client = v.Client
		} else if v.Client != c.Client {
			c.Client = "several"
		}
	}
	c.ID = strings.Join(ids, "|")
	c.HeadersOnly = len(c.Scanned) == 0 && slices.ContainsFunc(views, func(v View) bool { return v.HeadersOnly })
	slices.Sort(c.Fetched)
	c.Fetched = slices.Compact(c.Fetched)
	return c
}

func (r *Report) warn(s string) { r.Warnings = append(r.Warnings, s) }

// chance returns C(B-k, F-k)/C(B, F), cached by k.
func (r *Report) chance(k uint64) float64 {
	if k >= 4096 {
		return model.ChanceAllFetched(r.ScannedBlocks, r.FetchedBlocks, k)
	}
	for uint64(len(r.chances)) <= k {
		r.chances = append(r.chances, model.ChanceAllFetched(r.ScannedBlocks, r.FetchedBlocks, uint64(len(r.chances))))
	}
	return r.chances[k]
}

// test tests one candidate of the index against the session's downloads.
func (r *Report) test(e *universe.IndexEntry) {
	var k uint64
	all := true
	for _, h := range e.Heights {
		i := int(h - r.first)
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
	r.null.test(r, e, k)
	if !r.Transactions && slices.ContainsFunc(e.Txs, func(txs []uint32) bool { return len(txs) > 0 }) {
		r.Transactions = true
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
		r.markLeft(e)
		r.markPaid(e)
		return
	}
	c.matched++
	r.MatchedCount++
	if r.FetchedBlocks == r.ScannedBlocks {
		return // every block fetched: a match says nothing, and all match
	}
	m := r.matchOf(e, k)
	m.ChanceProbability, m.ChanceProbabilityApprox = p, math.Pow(r.FetchedFraction, float64(k))
	r.Matched = append(r.Matched, m)
	if len(r.Matched) >= 2*r.max {
		r.trim()
	}
}

// markLeft records the transactions of a fetched block that created the
// entry, a script not matched, when a later block the session scanned and
// did not fetch holds it: a wallet fetches the blocks of its own spends,
// so the script is its counterparty's (a payer's change, a payee), spent
// elsewhere. Only the first appearance in the index counts as its
// creation.
func (r *Report) markLeft(e *universe.IndexEntry) {
	if len(e.Heights) < 2 || len(e.Txs) == 0 || len(e.Txs[0]) == 0 {
		return
	}
	first := int(e.Heights[0] - r.first)
	if !bitGet(r.fetched, first) {
		return
	}
	later := false
	for _, h := range e.Heights[1:] {
		if i := int(h - r.first); bitGet(r.scanned, i) && !bitGet(r.fetched, i) {
			later = true
			break
		}
	}
	if !later {
		return
	}
	if r.left == nil {
		r.left = map[uint64]bool{}
	}
	for _, tx := range e.Txs[0] {
		r.left[txKey(e.Heights[0], tx)] = true
	}
}

// markPaid records the transactions of fetched blocks in which the
// entry, a script not matched, appears but for its creation (its first
// appearance in the index, when that is its creation: creation):
// a coin received in another block, of which the session did not fetch
// every one, and spent there (or an address paid again). A transaction
// spending another's coin is a payment to the wallet or another's
// transaction, whose matches beside the wallet's are its payer's change
// and other payees (Match.Paid).
func (r *Report) markPaid(e *universe.IndexEntry) {
	i := 1
	if !creation(e) {
		i = 0
	}
	for ; i < len(e.Heights) && i < len(e.Txs); i++ {
		if h := e.Heights[i]; bitGet(r.fetched, int(h-r.first)) {
			if r.paid == nil {
				r.paid = map[uint64]bool{}
			}
			for _, tx := range e.Txs[i] {
				r.paid[txKey(h, tx)] = true
			}
		}
	}
}

// creation reports whether the entry's first appearance in the index is
// its creation, every transaction of it there (a coin spent in the block
// that paid it, mostly a payer's change chained into its next payment,
// counts with it, as it always has). An index that records the roles
// (version 4) tells: it is when the first of those transactions pays the
// script and does not spend it; a script first seen spent was paid
// before the index's first block, in an index made from a later block.
// An index before version 4, or one whose first appearance has a role
// not recorded, cannot tell: the first appearance is taken for the
// creation, as in an index made from the genesis block. Either way a
// script paid before the index's first block and paid again in it, not
// spent in between, reads as created there.
func creation(e *universe.IndexEntry) bool {
	if len(e.Roles) == 0 || len(e.Txs) == 0 || len(e.Roles[0]) == 0 || len(e.Roles[0]) != len(e.Txs[0]) || e.Roles[0][0] == 0 {
		return true
	}
	return e.Roles[0][0] == universe.RolePaid
}

// matchOf is the entry's appearances in the scanned range, as a match of
// k appearances.
func (r *Report) matchOf(e *universe.IndexEntry, k uint64) Match {
	m := Match{Candidate: e.Candidate, Appearances: k}
	for i, h := range e.Heights {
		if i == 0 {
			m.created = bitGet(r.scanned, int(h-r.first)) && creation(e)
		}
		if bitGet(r.scanned, int(h-r.first)) {
			m.Heights = append(m.Heights, h)
			if e.Txs != nil {
				m.Transactions = append(m.Transactions, e.Txs[i])
			}
		}
	}
	return m
}

// trim keeps the r.max matches least explained by chance: those of most
// appearances.
func (r *Report) trim() {
	sortMatches(r.Matched)
	if len(r.Matched) > r.max {
		r.Matched = r.Matched[:r.max]
		r.MatchedTruncated = true
	}
}
