package simulate

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
)

// ErrBadReport reports a report that Evaluate cannot score: not JSON, of
// no known kind, or of sessions the labels do not name.
var ErrBadReport = errors.New("privacy: cannot score the report")

// ErrMismatch reports a report that is not of the labels' simulation:
// its chain, or the filters and matches of its sessions, are not those the
// labels describe (labels of another simulation with the same session
// IDs: the same seed, another regime or other flags).
var ErrMismatch = errors.New("privacy: the report is not of the labels' simulation")

// EvalOptions tune Evaluate.
type EvalOptions struct {
	// Threshold is the probability from which a listed candidate (or a
	// group of scripts) is attributed to its session's wallet; 0 means
	// ConfidentP. Links are attributed as the report links them.
	Threshold float64
}

// Known fields of the reports, which are read or deliberately left out;
// any other field is named in Score.Absent as not scored (unless it is an
// interval). The names reports had before the CLI's JSON keys were made
// one vocabulary (links, intersection for the steps, confident,
// merged_address_lines, appearances, scanned_blocks, fetched_blocks,
// fetched_unknown) are read too.
var (
	knownTop     = []string{"universe", "clients", "intersection", "link_report", "links", "warnings", "warning_sessions", "index"}
	knownSession = []string{"session", "client", "user_agent", "captured", "universe_size", "pair_count", "address_lines_merged", "merged_address_lines",
		"pair_test", "filter_reports", "intersection_steps", "intersection", "matched_count", "expected_false_positives", "estimated_wallet",
		"p_h_1", "p_h_all", "confident_count", "confident", "matched", "matched_truncated", "summary", "universe", "warnings", "sessions", "groups"}
	knownMatch = []string{"line", "candidate", "kind", "pubkey", "pair_tested", "probability",
		"appearance_count", "appearances", "heights", "chance_probability", "chance_probability_approx"}
	knownLinks = []string{"prior", "threshold", "pairs_compared", "pairs_listed_shared_only", "pairs", "groups", "warnings",
		"payment_prior", "payment_sizes", "growth", "growth_far", "whole_payee", "wallet_size_prior", "wallet_sizes"}
	knownPair  = []string{"a", "b", "shared", "expected_by_chance", "expected_if_same_wallet", "probability", "linked"}
	knownFetch = []string{"session", "client", "user_agent", "scanned_from", "scanned_to", "blocks_scanned", "scanned_blocks",
		"blocks_fetched", "fetched_blocks", "fetched_heights", "unknown_blocks_fetched", "fetched_unknown", "fetched_fraction",
		"universe_size", "expected_false_positives", "matched_count", "confident_count", "confident", "matched", "matched_truncated",
		"verdict", "warnings", "warning_indexes", "groups"}
	knownScriptGroup = []string{"candidates", "members", "scripts", "probability", "reason", "why"}
)

// Evaluate scores a report against the labels: the JSON of "spvfilter
// privacy analyze --capture" (with or without --link and --intersect) or
// of "spvfilter privacy fetches". Fields it does not know are ignored and
// named in Score.Absent, so that reports may grow.
func Evaluate(l *Labels, report []byte, opts EvalOptions) (*Score, error) {
	if l.truth == nil {
		if err := l.check(); err != nil {
			return nil, err
		}
	}
	thr := opts.Threshold
	if thr == 0 {
		thr = ConfidentP
	}
	if !(thr > 0 && thr <= 1) {
		return nil, fmt.Errorf("%w: threshold %v not in (0, 1]", ErrBadReport, thr)
	}
	doc := decodeReport(report)
	if doc == nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrBadReport)
	}
	e := &evaluator{l: l, t: l.truth, thr: thr, wallets: map[string]*walletTally{}, intervals: map[string]*intervalTally{},
		unscored: map[string]bool{}, s: &Score{Threshold: thr, Candidates: newClaimScore(), Sessions: []SessionScore{},
			Wallets: []WalletScore{}, Intervals: []IntervalScore{}, Targets: []Target{}, Absent: []string{}, Warnings: []string{}}}
	var err error
	switch _, fetches := doc["index"]; {
	case fetches:
		if err = e.fetchChainFits(doc); err == nil {
			err = e.fetches(doc)
		}
	case doc["clients"] != nil:
		err = e.analyze(doc)
	default:
		err = fmt.Errorf("%w: neither the JSON of analyze --capture nor that of fetches (no \"clients\")", ErrBadReport)
	}
	if err == nil {
		err = e.fit.check(e)
	}
	if err != nil {
		return nil, err
	}
	e.noteUnscored("the report", unknownKeys(doc, knownTop, nil))
	e.finish()
	return e.s, nil
}

// evaluator holds the tallies of one evaluation.
type evaluator struct {
	l         *Labels
	t         *truth
	thr       float64
	s         *Score
	known     []string // the report's sessions that the labels name, in order
	wallets   map[string]*walletTally
	intervals map[string]*intervalTally
	unscored  map[string]bool
	noProb    int // listed items without a probability
	mistakes  []Mistake
	fit       fitTally
}

// fitTally gathers what tells a report of the labels' simulation from one
// of another: the filters of its sessions (the capture's, which the labels
// describe exactly) and the candidates the labels say its wallet sessions
// hold, which a filter always matches (a report of the same simulation
// lists every one of them, unless it says its list is cut short).
type fitTally struct {
	filters, filtersOff int    // sessions whose first filter was compared, and those unlike the labels'
	firstOff            string // the first unlike, in words
	held, heldListed    int    // candidates held by sessions whose matches are all listed, and those listed
	heldSessions        int
	firstMissing        string // a session listing none of its held candidates
}

// check refuses (ErrMismatch) a report that is surely of another
// simulation: a session's filter unlike the labels' (the report read
// another capture), or fewer than half of the candidates the labels say
// its sessions are bound to match listed (a filter matches all it holds;
// in a report of analyze only); and warns when some are not.
func (f *fitTally) check(e *evaluator) error {
	const another = "the labels of another simulation (the same seed, so the same session IDs, but another regime or other flags)"
	if f.filtersOff > 0 {
		return fmt.Errorf("%w: the filters of %d of its %d sessions are not those the labels describe (first: %s): are they %s?", ErrMismatch, f.filtersOff, f.filters, f.firstOff, another)
	}
	const bound = "the labels say %d of %s sessions are bound to match (a filter matches all it holds, a wallet's downloads all its scripts)"
	// A fetches report's sessions may fetch none of a wallet's blocks (a
	// real client that kept them from an earlier session): there too few
	// listed is only warned of.
	if f.held > 0 && 2*f.heldListed < f.held && e.s.ReportKind == "analyze" {
		none := ""
		if f.firstMissing != "" {
			none = " (none of " + f.firstMissing + ")"
		}
		return fmt.Errorf("%w: of the %d candidates "+bound+", it lists %d%s: are they %s?",
			ErrMismatch, f.held, f.heldSessions, "its", f.heldListed, none, another)
	}
	if f.heldListed < f.held {
		e.warn(fmt.Sprintf("of the %d candidates "+bound+", it lists %d: does it list part of its matches, or are they %s?",
			f.held, f.heldSessions, "the report's", f.heldListed, another))
	}
	return nil
}

// filterFits compares a session's first filter in the report with the
// labels' (analyze --capture writes each filter's size and hash functions).
func (f *fitTally) filterFits(c object, s *Session) {
	frs := c.objects("filter_reports")
	if len(frs) == 0 {
		return
	}
	size, funcs := frs[0].num("filter_bytes"), frs[0].num("hash_function_count")
	if size == nil || funcs == nil {
		return
	}
	f.filters++
	if int(*size) != s.FilterBytes || int(*funcs) != s.HashFuncs {
		f.filtersOff++
		if f.firstOff == "" {
			f.firstOff = fmt.Sprintf("session %s: %.0f bytes, %.0f hash functions in the report, %d and %d in the labels", s.ID, *size, *funcs, s.FilterBytes, s.HashFuncs)
		}
	}
}

// heldFits counts the candidates a session holds by the labels (truth)
// that its report lists, when it lists its matches (some, and not cut
// short).
func (f *fitTally) heldFits(c object, id string, matched []object, truth map[string]bool) {
	if len(truth) == 0 || len(matched) == 0 {
		return
	}
	if t, _ := c.boolean("matched_truncated"); t {
		return
	}
	listed := 0
	seen := map[string]bool{}
	for _, m := range matched {
		if cand := m.str("candidate"); truth[cand] && !seen[cand] {
			seen[cand] = true
			listed++
		}
	}
	f.held += len(truth)
	f.heldListed += listed
	f.heldSessions++
	if listed == 0 && f.firstMissing == "" {
		f.firstMissing = fmt.Sprintf("the %d of session %s", len(truth), id)
	}
}

// fetchChainFits refuses a fetches report whose index is of another
// network or range of heights than the labels' chain.
func (e *evaluator) fetchChainFits(doc object) error {
	fl, ix := e.l.Fetch, decodeObject(doc["index"])
	if fl == nil || ix == nil {
		return nil // e.fetches says what is missing
	}
	if n := ix.str("network"); n != "" && n != fl.Network {
		return fmt.Errorf("%w: its index is of %s, the labels' chain of %s", ErrMismatch, n, fl.Network)
	}
	from, to := ix.num("from"), ix.num("to")
	last := int64(fl.FirstHeight) + int64(fl.BlockCount) - 1
	if from != nil && to != nil && (int64(*from) != int64(fl.FirstHeight) || int64(*to) != last) {
		return fmt.Errorf("%w: its index covers heights %.0f..%.0f, the labels' chain %d..%d: are they the labels of another simulation?", ErrMismatch, *from, *to, fl.FirstHeight, last)
	}
	return nil
}

// claimContext says whose claims are scored: the sessions of a report
// (one, or a group's) and where in the report.
type claimContext struct {
	where    string
	sessions []string
}

// mistake records a wrong claim, keeping the most probable ones.
func (e *evaluator) mistake(m Mistake) {
	if m.Wallets == nil {
		for _, id := range m.Sessions {
			m.Wallets = append(m.Wallets, e.sessionWallet(id))
		}
	}
	e.mistakes = append(e.mistakes, m)
	if len(e.mistakes) > 8*MaxMistakes {
		e.trimMistakes()
	}
}

// trimMistakes keeps the MaxMistakes most probable mistakes of each kind.
func (e *evaluator) trimMistakes() {
	slices.SortStableFunc(e.mistakes, func(a, b Mistake) int {
		return cmp.Or(strings.Compare(a.Kind, b.Kind), cmp.Compare(b.Probability, a.Probability))
	})
	kept := e.mistakes[:0]
	per := map[string]int{}
	for _, m := range e.mistakes {
		if per[m.Kind] < MaxMistakes {
			per[m.Kind]++
			kept = append(kept, m)
		}
	}
	e.mistakes = kept
}

// walletTally gathers a wallet's candidates over its sessions.
type walletTally struct {
	sessions   int
	claims     int
	attributed map[string]bool
	truth      map[string]bool
	right      func(string) bool
}

func (e *evaluator) wallet(id string, right func(string) bool) *walletTally {
	w := e.wallets[id]
	if w == nil {
		w = &walletTally{attributed: map[string]bool{}, truth: map[string]bool{}, right: right}
		e.wallets[id] = w
	}
	return w
}

// sessionCase is a labelled session of a report, whichever the attack:
// the candidates it is bound to match, and whose candidates are right.
type sessionCase struct {
	id, wallet string
	kind       SessionKind
	truth      map[string]bool
	owns       func(string) bool // nil: no candidate is right
	fields     []string          // the report fields the scoring knows
	// counts gives, from the session's report and the labels, the
	// truth of estimates other than the wallet's (nil: none), with
	// its "matched" decoded.
	counts func(c object, matched []object) map[string]int
}

// sessions scores every session of the report's clients that label
// knows.
func (e *evaluator) sessions(clients []object, label func(id string) (sessionCase, bool)) error {
	var unknown []string
	for _, c := range clients {
		id := c.str("session")
		sc, ok := label(id)
		if !ok {
			unknown = append(unknown, id)
			continue
		}
		e.known = append(e.known, id)
		e.session(c, sc)
	}
	if len(e.known) == 0 {
		first := "none"
		if len(unknown) > 0 {
			first = fmt.Sprintf("%q", unknown[0])
		}
		return fmt.Errorf("%w: none of its %d sessions is in the labels (first: %s): labels of another simulation?", ErrBadReport, len(unknown), first)
	}
	if len(unknown) > 0 {
		e.warn(fmt.Sprintf("%d of the report's sessions are not in the labels and are left out (first: %s)", len(unknown), unknown[0]))
	}
	return nil
}

// analyze scores the JSON of analyze --capture.
func (e *evaluator) analyze(doc object) error {
	e.s.ReportKind = "analyze"
	clients := doc.objects("clients")
	err := e.sessions(clients, func(id string) (sessionCase, bool) {
		s := e.t.sessions[id]
		if s == nil {
			return sessionCase{}, false
		}
		return sessionCase{id: id, wallet: e.sessionWallet(id), kind: s.Kind, truth: e.l.sessionTruth(s), fields: knownSession,
			owns: e.t.sessionOwns(s.Wallet, s.Wallets)}, true
	})
	if err != nil {
		return err
	}
	for _, c := range clients {
		if s := e.t.sessions[c.str("session")]; s != nil {
			e.fit.filterFits(c, s)
		}
	}
	if u := clients[0].num("universe_size"); u != nil && int(*u) != e.l.UniverseSize {
		e.warn(fmt.Sprintf("the report's universe holds %.0f candidates, the labels' %d: another universe file?", *u, e.l.UniverseSize))
	}
	if ix := decodeObject(doc["intersection"]); ix != nil {
		g, _ := e.group("intersection", ix)
		e.s.Intersection = &g
	} else {
		e.absent("intersection: the report has none (analyze --intersect)")
	}
	links := decodeObject(doc["link_report"])
	if links == nil {
		links = decodeObject(doc["links"]) // the key before link_report
	}
	if links != nil {
		e.links(links)
	} else {
		e.absent("links and groups: the report has none (analyze --link)")
	}
	return nil
}

// session scores one session's report: its listed candidates, its
// groups of candidates if it has any, and its intervals.
func (e *evaluator) session(c object, sc sessionCase) {
	matched := c.objects("matched")
	e.fit.heldFits(c, sc.id, matched, sc.truth)
	cs := e.claims(claimContext{"session matches", []string{sc.id}}, matched, sc.owns, sc.truth)
	if t, _ := c.boolean("matched_truncated"); t && len(sc.truth) > 0 {
		e.warn(fmt.Sprintf("session %s: the report lists only part of its matches: its recall is a lower bound", sc.id))
	}
	if sc.owns != nil {
		w := e.wallet(sc.wallet, sc.owns)
		w.sessions++
		for a := range sc.truth {
			w.truth[a] = true
		}
		e.attribute(w, matched)
	}
	if groups := c.objects("groups"); groups != nil {
		e.candidateGroups(sc, groups)
	}
	ivs, used := findIntervals(c)
	var other map[string]int
	if sc.counts != nil {
		other = sc.counts(c, matched)
	}
	e.countIntervals("sessions", ivs, len(sc.truth), other)
	e.noteUnscored("session reports", unknownKeys(c, sc.fields, used))
	e.s.Candidates.merge(cs)
	cs.finish()
	e.s.Sessions = append(e.s.Sessions, SessionScore{Session: sc.id, Kind: sc.kind, Wallet: sc.wallet,
		EstimatedWallet: c.num("estimated_wallet"), WalletCandidates: len(sc.truth), Counts: cs.Counts})
}

// claims scores listed matches: right when right says so (nil: never),
// found when attributed and in truth.
func (e *evaluator) claims(ctx claimContext, matched []object, right func(string) bool, truth map[string]bool) *ClaimScore {
	cs := newClaimScore()
	cs.TruthCount = len(truth)
	for _, m := range matched {
		cand := m.str("candidate")
		ok := right != nil && right(cand)
		p, attributed, scored := e.claim(cs, ctx.where, m, knownMatch, ok)
		if scored && attributed && !ok {
			e.mistake(Mistake{Kind: "candidate", Where: ctx.where, Sessions: ctx.sessions, Candidate: cand,
				Owner: e.t.owner[cand], Probability: p})
		}
		if attributed && truth[cand] {
			cs.FoundCount++
		}
	}
	return cs
}

// claim counts one listed item, right or not, into cs by its
// probability, with the intervals it carries; an item without a
// probability is not scored.
func (e *evaluator) claim(cs *ClaimScore, where string, item object, fields []string, right bool) (p float64, attributed, scored bool) {
	prob := item.num("probability")
	ivs, used := findIntervals(item)
	e.probIntervals(where, ivs, prob, right)
	e.noteUnscored(where, unknownKeys(item, fields, used))
	if prob == nil {
		e.noProb++
		return 0, false, false
	}
	attributed = *prob >= e.thr
	cs.add(*prob, attributed, right)
	return *prob, attributed, true
}

// attribute adds a session's attributed candidates to its wallet's.
func (e *evaluator) attribute(w *walletTally, matched []object) {
	for _, m := range matched {
		p := m.num("probability")
		if p != nil {
			w.claims++
		}
		if p != nil && *p >= e.thr {
			w.attributed[m.str("candidate")] = true
		}
	}
}

func (e *evaluator) warn(s string)   { e.s.Warnings = append(e.s.Warnings, s) }
func (e *evaluator) absent(s string) { e.s.Absent = append(e.s.Absent, s) }

// noteUnscored remembers fields of the report that are not scored.
func (e *evaluator) noteUnscored(where string, keys []string) {
	for _, k := range keys {
		e.unscored[where+": "+k] = true
	}
}

// finish fills the wallets, the intervals, the targets and the notes.
func (e *evaluator) finish() {
	e.s.Candidates.finish()
	if e.s.CandidateGroups != nil {
		e.s.CandidateGroups.finish()
	}
	for _, id := range slices.Sorted(maps.Keys(e.wallets)) {
		w := e.wallets[id]
		ws := WalletScore{Wallet: id, SessionCount: w.sessions, Counts: Counts{ClaimCount: w.claims,
			AttributedCount: len(w.attributed), TruthCount: len(w.truth)}}
		for a := range w.attributed {
			if w.right(a) {
				ws.RightCount++
			}
			if w.truth[a] {
				ws.FoundCount++
			}
		}
		ws.finish()
		e.s.Wallets = append(e.s.Wallets, ws)
	}
	for _, t := range e.intervals {
		t.finish()
		e.s.Intervals = append(e.s.Intervals, t.score)
	}
	slices.SortFunc(e.s.Intervals, func(a, b IntervalScore) int {
		return cmp.Or(strings.Compare(a.Where, b.Where), strings.Compare(a.Quantity, b.Quantity), strings.Compare(a.Field, b.Field))
	})
	if len(e.s.Intervals) == 0 {
		e.absent("intervals: the report gives none (no field X_low and X_high, X_interval or interval)")
	}
	if e.noProb > 0 {
		e.absent(fmt.Sprintf("%d listed items have no probability and are not scored", e.noProb))
	}
	for _, k := range slices.Sorted(maps.Keys(e.unscored)) {
		e.absent("not scored: " + k)
	}
	e.trimMistakes()
	e.s.Mistakes = append([]Mistake{}, e.mistakes...)
	e.s.Targets = targets(e.s)
}

// The targets the attacks are held to (see targets).
const (
	// TargetRight is the least share right of the claims given P >=
	// ConfidentP, and TargetWilsonLow the least lower end of its 95%
	// Wilson interval: the share must be established, not only observed.
	TargetRight     = 0.95
	TargetWilsonLow = 0.93
	// TargetBinSlack is how far a bin's fraction right may lie from its
	// mean probability when the mean lies outside the bin's Wilson
	// interval.
	TargetBinSlack = 0.05
	// TargetCoverageSlack is how far an interval's coverage may lie from
	// its nominal level, either way.
	TargetCoverageSlack = 0.03
	// SureLinkP is the probability above which no link may be wrong.
	SureLinkP = 0.99
)

// targets measures the report against the targets the attacks are held
// to, for every kind of claim it makes (candidates, groups of candidates,
// links): of the claims given P >= 0.95 at least 95% right, the lower end
// of that share's Wilson interval at least 0.93; every bin of probability
// right as often as it says (its mean probability inside the bin's
// Wilson interval, or within 0.05 of its fraction right); no wrong link
// given P > 0.99; every interval on an estimate covering the truth at its
// nominal rate within 3 points either way (an interval that always covers
// is wider than it says); every interval on a probability consistent
// with the fraction right in each bin, and, for links, holding the rate
// at which pairs like its own are right (IntervalScore.Holding) at its
// nominal rate within 3 points either way (measured for the other
// probabilities' intervals too, not yet a target). Precision and recall
// measure the
// attack's power, not whether its probabilities hold, and are not
// targets. A target with nothing to measure (no claim given P >= 0.95)
// has no value and is neither met nor missed.
func targets(s *Score) []Target {
	out := []Target{}
	add := func(name, want string, v *float64, met func(float64) bool) {
		t := Target{Name: name, Want: want, Value: v}
		if v != nil {
			m := met(*v)
			t.Met = &m
		}
		out = append(out, t)
	}
	atLeast := func(x float64) func(float64) bool { return func(v float64) bool { return v >= x } }
	none := func(v float64) bool { return v == 0 }
	claims := func(what string, c *ClaimScore) {
		add(what+" given P >= 0.95: fraction right", fmt.Sprintf(">= %g", TargetRight), c.Confident.FractionRight, atLeast(TargetRight))
		add(what+" given P >= 0.95: Wilson lower bound", fmt.Sprintf(">= %g", TargetWilsonLow), c.Confident.WilsonLow, atLeast(TargetWilsonLow))
		off := float64(offBins(c.Calibration))
		add(what+": bins not right as often as they say", "0", &off, none)
	}
	claims("candidates", s.Candidates)
	if s.CandidateGroups != nil {
		claims("candidate groups", s.CandidateGroups)
	}
	if l := s.Links; l != nil {
		claims("links", l.ClaimScore)
		wrong := float64(l.WrongAboveSure)
		add(fmt.Sprintf("links: wrong links given P > %g", SureLinkP), "0", &wrong, none)
	}
	for _, iv := range s.Intervals {
		if iv.Coverage != nil {
			add(fmt.Sprintf("intervals (%s, %s): coverage", iv.Where, iv.Field), fmt.Sprintf("%.2f ± %g", iv.Nominal, TargetCoverageSlack), iv.Coverage, nearNominal(iv.Nominal))
			continue
		}
		if iv.Calibration != nil {
			n := 0
			for _, b := range iv.Calibration {
				if b.Consistent != nil && !*b.Consistent {
					n++
				}
			}
			v := float64(n)
			add(fmt.Sprintf("intervals (%s, %s): bins whose fraction right lies outside the mean interval", iv.Where, iv.Field), "0", &v, none)
			if iv.Where == "links" {
				add(fmt.Sprintf("intervals (%s, %s): holding the rate of claims like theirs", iv.Where, iv.Field), fmt.Sprintf("%.2f ± %g", iv.Nominal, TargetCoverageSlack), iv.Holding, nearNominal(iv.Nominal))
			}
		}
	}
	return out
}

// nearNominal is met by a coverage within TargetCoverageSlack of the
// nominal level, either way (an interval that always covers is wider than
// it says).
func nearNominal(nominal float64) func(float64) bool {
	return func(v float64) bool {
		return v >= nominal-TargetCoverageSlack-1e-12 && v <= nominal+TargetCoverageSlack+1e-12
	}
}

// offBins counts the bins of claims that are not right as often as they
// say: the mean probability outside the bin's Wilson interval and more
// than TargetBinSlack from its fraction right.
func offBins(bins []Bin) int {
	n := 0
	for _, b := range bins {
		if b.Count == 0 {
			continue
		}
		m, f := *b.MeanProbability, *b.FractionRight
		if (m < *b.WilsonLow || m > *b.WilsonHigh) && math.Abs(m-f) > TargetBinSlack {
			n++
		}
	}
	return n
}

// TargetsMet reports whether every target that could be measured is met.
func (s *Score) TargetsMet() bool {
	for _, t := range s.Targets {
		if t.Met != nil && !*t.Met {
			return false
		}
	}
	return true
}
