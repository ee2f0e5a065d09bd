package simulate

import "github.com/spvfilter/spvfilter/privacy/model"

// bins are the probability ranges calibration is measured in: a claim of
// probability p falls in the bin with low <= p < high (the last bin holds
// p = 1).
var bins = [][2]float64{{0, 0.5}, {0.5, 0.8}, {0.8, 0.95}, {0.95, 0.99}, {0.99, 1}}

// ConfidentP is the probability from which a claim counts as confident:
// the reports' own "confident" counts start there, and so does the
// calibration target (of the claims given P >= 0.95, at least 95% right).
const ConfidentP = 0.95

// Bin is the calibration of the claims whose probability lies in
// [PLow, PHigh): how many there are, how many are right, the fraction
// right with its 95% Wilson score interval, and their mean probability,
// which a calibrated report matches. Ratios are null when the bin is
// empty.
type Bin struct {
	PLow            float64  `json:"p_low"`
	PHigh           float64  `json:"p_high"`
	Count           int      `json:"claim_count"`
	Right           int      `json:"right_count"`
	FractionRight   *float64 `json:"fraction_right"`
	WilsonLow       *float64 `json:"wilson_low"`
	WilsonHigh      *float64 `json:"wilson_high"`
	MeanProbability *float64 `json:"mean_probability"`

	sumP float64
}

func (b *Bin) add(p float64, right bool) {
	b.Count++
	b.sumP += p
	if right {
		b.Right++
	}
}

// finish fills the ratios.
func (b *Bin) finish() {
	if b.Count == 0 {
		return
	}
	b.FractionRight = ratio(b.Right, b.Count)
	lo, hi := Wilson(b.Right, b.Count)
	b.WilsonLow, b.WilsonHigh = &lo, &hi
	m := b.sumP / float64(b.Count)
	b.MeanProbability = &m
}

// Pool adds o's claims to b, a bin of the same range scored apart (on
// another capture), and fills b's ratios again for both together, the
// mean probability weighed by each bin's count.
func (b *Bin) Pool(o Bin) {
	if o.Count == 0 {
		return
	}
	sum := float64(o.Count) * *o.MeanProbability
	if b.Count > 0 {
		sum += float64(b.Count) * *b.MeanProbability
	}
	b.Count += o.Count
	b.Right += o.Right
	b.sumP = sum
	b.finish()
}

// Wilson returns the 95% Wilson score interval of a proportion of k
// successes in n trials (0 and 1 for n = 0): model.Wilson.
func Wilson(k, n int) (low, high float64) { return model.Wilson(k, n) }

// ratio returns a/b, or nil for b = 0.
func ratio(a, b int) *float64 {
	if b == 0 {
		return nil
	}
	r := float64(a) / float64(b)
	return &r
}

// ClaimScore scores a set of claims, each an item (a candidate of a
// session, a pair of sessions, a group of scripts) given a probability of
// being right. Claims at or above the threshold are attributed; precision
// is the share of the attributed that are right, recall the share of the
// true items that are attributed. Calibration counts every claim in its
// bin of probability, [0, 0.5), [0.5, 0.8), [0.8, 0.95), [0.95, 0.99)
// and [0.99, 1]; Confident is the bin of P >= ConfidentP.
type ClaimScore struct {
	Counts
	Calibration []Bin `json:"calibration"`
	Confident   Bin   `json:"confident_bin"`
}

// Counts are the claims of a ClaimScore without their calibration.
type Counts struct {
	ClaimCount      int      `json:"claim_count"`
	AttributedCount int      `json:"attributed_count"`
	RightCount      int      `json:"right_count"`
	TruthCount      int      `json:"truth_count"`
	FoundCount      int      `json:"found_count"`
	Precision       *float64 `json:"precision"`
	Recall          *float64 `json:"recall"`
}

// finish fills the ratios.
func (c *Counts) finish() {
	c.Precision = ratio(c.RightCount, c.AttributedCount)
	c.Recall = ratio(c.FoundCount, c.TruthCount)
}

func newClaimScore() *ClaimScore {
	c := &ClaimScore{Confident: Bin{PLow: ConfidentP, PHigh: 1}}
	for _, b := range bins {
		c.Calibration = append(c.Calibration, Bin{PLow: b[0], PHigh: b[1]})
	}
	return c
}

// add counts a claim of probability p, attributed or not, right or not.
func (c *ClaimScore) add(p float64, attributed, right bool) {
	c.ClaimCount++
	if attributed {
		c.AttributedCount++
		if right {
			c.RightCount++
		}
	}
	for i := range c.Calibration {
		b := &c.Calibration[i]
		if p >= b.PLow && (p < b.PHigh || i == len(c.Calibration)-1) {
			b.add(p, right)
			break
		}
	}
	if p >= ConfidentP {
		c.Confident.add(p, right)
	}
}

// merge adds o's counts to c.
func (c *ClaimScore) merge(o *ClaimScore) {
	c.ClaimCount += o.ClaimCount
	c.AttributedCount += o.AttributedCount
	c.RightCount += o.RightCount
	c.TruthCount += o.TruthCount
	c.FoundCount += o.FoundCount
	for i := range c.Calibration {
		mergeBin(&c.Calibration[i], &o.Calibration[i])
	}
	mergeBin(&c.Confident, &o.Confident)
}

func mergeBin(b, o *Bin) {
	b.Count += o.Count
	b.Right += o.Right
	b.sumP += o.sumP
}

// finish fills the ratios.
func (c *ClaimScore) finish() {
	c.Counts.finish()
	for i := range c.Calibration {
		c.Calibration[i].finish()
	}
	c.Confident.finish()
}

// Score is the result of Evaluate.
type Score struct {
	// ReportKind is "analyze" or "fetches".
	ReportKind string  `json:"report_kind"`
	Threshold  float64 `json:"threshold"`
	// Candidates scores the candidates every session's report lists,
	// against the session's wallet; Sessions and Wallets break them down.
	Candidates *ClaimScore    `json:"candidate_score"`
	Sessions   []SessionScore `json:"sessions"`
	Wallets    []WalletScore  `json:"wallets"`
	// Links scores the session pairs of analyze --link, Groups its groups;
	// Intersection the --intersect report. Absent when the report has none.
	Links        *LinkScore   `json:"link_score,omitempty"`
	Groups       *GroupScore  `json:"link_group_score,omitempty"`
	Intersection *GroupReport `json:"intersection_group,omitempty"`
	// CandidateGroups scores a fetches report's groups of scripts, each
	// claimed to hold one of the wallet's with its probability.
	CandidateGroups *ClaimScore `json:"candidate_group_score,omitempty"`
	// Intervals scores every interval the report gives on a quantity
	// whose truth the labels know.
	Intervals []IntervalScore `json:"intervals"`
	// Targets are the targets the attacks are held to (see Targets),
	// met or not on this report.
	Targets []Target `json:"targets"`
	// Mistakes are the most confident wrong claims, at most MaxMistakes
	// of each kind, the most probable first.
	Mistakes []Mistake `json:"mistakes"`
	// Absent says what the report does not give (and so is not scored),
	// and which of its fields are not scored.
	Absent   []string `json:"absent"`
	Warnings []string `json:"warnings"`
}

// SessionScore is one session's candidates: the report's estimate of its
// wallet's candidates beside the truth, and its claims.
type SessionScore struct {
	Session string      `json:"session"`
	Kind    SessionKind `json:"kind"`
	Wallet  string      `json:"wallet,omitempty"`
	// EstimatedWallet is the report's figure (null if absent),
	// WalletCandidates the candidates its filters hold (or, for fetches,
	// the wallet's scripts).
	EstimatedWallet  *float64 `json:"estimated_wallet"`
	WalletCandidates int      `json:"wallet_candidate_count"`
	Counts
}

// WalletScore is a wallet's candidates over all its sessions: those
// attributed in any of them, against those any of them holds.
type WalletScore struct {
	Wallet       string `json:"wallet"`
	SessionCount int    `json:"session_count"`
	Counts
}

// LinkScore scores session links: a pair is right when both sessions are
// of one wallet. Pairs the report does not list count as not linked.
// WrongAboveConfident counts the wrong pairs given P > ConfidentP,
// WrongAboveSure those given P > SureLinkP.
type LinkScore struct {
	*ClaimScore
	PairCount           int `json:"pair_count"`
	WrongAboveConfident int `json:"wrong_above_confident"`
	WrongAboveSure      int `json:"wrong_above_sure"`
}

// GroupScore scores the groups of linked sessions: a group is pure when
// all its sessions are of one wallet, exact when it is pure and holds all
// of that wallet's sessions in the report. The pairs inside groups are
// scored as links (PairPrecision, PairRecall), and each group's candidates
// against the wallets all its sessions are of (else the one most are of).
type GroupScore struct {
	GroupCount          int           `json:"group_count"`
	PureCount           int           `json:"pure_count"`
	ExactCount          int           `json:"exact_count"`
	LinkableWalletCount int           `json:"linkable_wallet_count"`
	PairCount           int           `json:"pair_count"`
	PairRight           int           `json:"pair_right_count"`
	PairPrecision       *float64      `json:"pair_precision"`
	PairRecall          *float64      `json:"pair_recall"`
	Groups              []GroupReport `json:"groups"`
	Candidates          *ClaimScore   `json:"candidate_score"`
}

// GroupReport is one group (or the --intersect report): its sessions,
// their wallets, the wallet most of them are of, and the report's
// estimate against the candidates every member's filters hold.
type GroupReport struct {
	Sessions         []string `json:"sessions"`
	SessionWallets   []string `json:"session_wallets"`
	Majority         string   `json:"majority_wallet"`
	Pure             bool     `json:"pure"`
	EstimatedWallet  *float64 `json:"estimated_wallet"`
	WalletCandidates int      `json:"wallet_candidate_count"`
	Candidates       Counts   `json:"candidate_score"`
}

// IntervalScore scores the intervals found at one place of the report on
// one quantity. For a count (the estimated wallet), Coverage is the share
// of intervals that hold the truth, against their Nominal level: the mean
// of the levels the intervals state (an X_level field beside X_low and
// X_high, or an interval object's level), 0.95 where they state none. For a
// probability, whose truth is a yes or no, Calibration bins the claims by
// probability and sets the fraction right (with its Wilson interval)
// beside the mean of the intervals' bounds, and HoldingCount (Holding, its
// share of IntervalCount) counts the claims whose interval holds the rate
// at which claims like them are right (those whose probabilities lie
// within a unit of log-odds; see holdingClaims): an interval on a
// probability that states 95% should hold that rate 95% of the time,
// neither always (wider than it says) nor far less (too narrow).
type IntervalScore struct {
	Where         string        `json:"where"`
	Quantity      string        `json:"quantity"`
	Field         string        `json:"field"`
	IntervalCount int           `json:"interval_count"`
	CoveredCount  int           `json:"covered_count"`
	Coverage      *float64      `json:"coverage"`
	Nominal       float64       `json:"nominal"`
	Calibration   []IntervalBin `json:"calibration,omitempty"`
	HoldingCount  int           `json:"holding_count,omitempty"`
	Holding       *float64      `json:"holding,omitempty"`
}

// IntervalBin is a bin of probability intervals: the fraction right among
// its claims, with its Wilson interval, is consistent with the intervals
// when the two ranges [WilsonLow, WilsonHigh] and [MeanLow, MeanHigh]
// overlap, or the fraction right lies within TargetBinSlack of the mean
// interval. HoldingCount counts the bin's claims whose own interval holds
// the rate of the claims like them (see IntervalScore), and Holding is
// their share of the bin's claims.
type IntervalBin struct {
	Bin
	MeanLow      *float64 `json:"mean_low"`
	MeanHigh     *float64 `json:"mean_high"`
	Consistent   *bool    `json:"consistent"`
	HoldingCount int      `json:"holding_count"`
	Holding      *float64 `json:"holding"`

	sumLow, sumHigh float64
}

// Target is one of the targets the attacks are held to, measured on
// this report.
type Target struct {
	Name  string   `json:"name"`
	Want  string   `json:"want"`
	Value *float64 `json:"value"`
	Met   *bool    `json:"met"`
}

// MaxMistakes bounds the wrong claims of each kind a Score lists.
const MaxMistakes = 20

// Mistake is a wrong claim of a report: a candidate given to a session
// that is not its wallet's, or a link between sessions of different
// wallets. Owner names the wallet the candidate is really of ("" for
// none), Wallets the sessions' wallets.
type Mistake struct {
	Kind        string   `json:"kind"` // "candidate", "link", "candidate group"
	Where       string   `json:"where"`
	Sessions    []string `json:"sessions"`
	Wallets     []string `json:"session_wallets"`
	Candidate   string   `json:"candidate,omitempty"`
	Owner       string   `json:"owner,omitempty"`
	Probability float64  `json:"probability"`
}
