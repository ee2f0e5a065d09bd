package simulate

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ErrBadReport reports a report that Evaluate cannot score: not JSON, of
// no known kind, or of sessions the labels do not name.
var ErrBadReport = errors.New("privacy: cannot score the report")

// EvalOptions tune Evaluate.
type EvalOptions struct {
	// Threshold is the probability from which a listed candidate (or a
	// group of scripts) is attributed to its session's wallet; 0 means
	// ConfidentP. Links are attributed as the report links them.
	Threshold float64
}

// Known fields of the reports, which are read or deliberately left out;
// any other field is named in Score.Absent as not scored (unless it is an
// interval).
var (
	knownTop     = []string{"universe", "clients", "intersection", "links", "warnings", "index"}
	knownSession = []string{"session", "client", "user_agent", "captured", "universe_size", "pairs", "merged_address_lines",
		"pair_test", "filter_reports", "intersection", "matched_count", "expected_false_positives", "estimated_wallet",
		"p_h_1", "p_h_all", "confident", "matched", "matched_truncated", "summary", "universe", "warnings", "sessions"}
	knownMatch = []string{"line", "candidate", "kind", "pubkey", "pair_tested", "probability",
		"appearances", "heights", "chance_probability", "chance_probability_approx"}
	knownLinks = []string{"prior", "threshold", "pairs_compared", "pairs_listed_shared_only", "pairs", "groups", "warnings"}
	knownPair  = []string{"a", "b", "shared", "expected_by_chance", "expected_if_same_wallet", "probability", "linked"}
	knownFetch = []string{"session", "client", "user_agent", "scanned_from", "scanned_to", "scanned_blocks", "fetched_blocks",
		"fetched_heights", "fetched_unknown", "fetched_fraction", "universe_size", "expected_false_positives",
		"matched_count", "confident", "matched", "matched_truncated", "verdict", "warnings", "groups"}
	knownScriptGroup = []string{"candidates", "members", "scripts", "probability", "reason", "why"}
)

// walletQuantities are the names an interval on a report's estimate of
// the wallet's candidates may go by.
var walletQuantities = []string{"", "estimated_wallet", "estimated_wallet_size", "wallet", "wallet_size", "wallet_candidates"}

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
	doc := decodeObject(report)
	if doc == nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrBadReport)
	}
	e := &evaluator{l: l, t: l.truth, thr: thr, wallets: map[string]*walletTally{}, intervals: map[string]*intervalTally{},
		unscored: map[string]bool{}, s: &Score{Threshold: thr, Candidates: newClaimScore(), Sessions: []SessionScore{},
			Wallets: []WalletScore{}, Intervals: []IntervalScore{}, Targets: []Target{}, Absent: []string{}, Warnings: []string{}}}
	var err error
	switch _, fetches := doc["index"]; {
	case fetches:
		err = e.fetches(doc)
	case doc["clients"] != nil:
		err = e.analyze(doc)
	default:
		err = fmt.Errorf("%w: neither the JSON of analyze --capture nor that of fetches (no \"clients\")", ErrBadReport)
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

// analyze scores the JSON of analyze --capture.
func (e *evaluator) analyze(doc object) error {
	e.s.ReportKind = "analyze"
	var unknown []string
	for _, c := range doc.objects("clients") {
		id := c.str("session")
		s := e.t.sessions[id]
		if s == nil {
			unknown = append(unknown, id)
			continue
		}
		e.known = append(e.known, id)
		e.session(c, s)
		if u := c.num("universe_size"); u != nil && int(*u) != e.l.UniverseSize && len(e.known) == 1 {
			e.warn(fmt.Sprintf("the report's universe holds %.0f candidates, the labels' %d: another universe file?", *u, e.l.UniverseSize))
		}
	}
	if err := e.checkKnown(unknown); err != nil {
		return err
	}
	if ix := decodeObject(doc["intersection"]); ix != nil {
		g, _ := e.group("intersection", ix)
		e.s.Intersection = &g
	} else {
		e.absent("intersection: the report has none (analyze --intersect)")
	}
	if links := decodeObject(doc["links"]); links != nil {
		e.links(links)
	} else {
		e.absent("links and groups: the report has none (analyze --link)")
	}
	return nil
}

// checkKnown refuses a report none of whose sessions the labels name, and
// warns about those they do not.
func (e *evaluator) checkKnown(unknown []string) error {
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

// session scores one session's report.
func (e *evaluator) session(c object, s *Session) {
	truth := e.l.sessionTruth(s)
	wt := e.t.wallets[s.Wallet]
	var owns func(string) bool
	if wt != nil {
		owns = wt.owns
	}
	matched := c.objects("matched")
	cs := e.claims(claimContext{"session matches", []string{s.ID}}, matched, owns, truth)
	e.truncated(c, s.ID, len(truth))
	if wt != nil {
		w := e.wallet(s.Wallet, owns)
		w.sessions++
		for a := range truth {
			w.truth[a] = true
		}
		e.attribute(w, matched)
	}
	ivs, used := findIntervals(c)
	e.countIntervals("sessions", ivs, len(truth))
	e.noteUnscored("session reports", unknownKeys(c, knownSession, used))
	e.s.Candidates.merge(cs)
	cs.finish()
	e.s.Sessions = append(e.s.Sessions, SessionScore{Session: s.ID, Kind: s.Kind, Wallet: s.Wallet,
		EstimatedWallet: c.num("estimated_wallet"), WalletCandidates: len(truth), Counts: cs.Counts})
}

// claims scores listed matches: right when right says so (nil: never),
// found when attributed and in truth.
func (e *evaluator) claims(ctx claimContext, matched []object, right func(string) bool, truth map[string]bool) *ClaimScore {
	cs := newClaimScore()
	cs.TruthCount = len(truth)
	for _, m := range matched {
		cand, p := m.str("candidate"), m.num("probability")
		ok := right != nil && right(cand)
		ivs, used := findIntervals(m)
		e.probIntervals(ctx.where, ivs, p, ok)
		e.noteUnscored(ctx.where, unknownKeys(m, knownMatch, used))
		if p == nil {
			e.noProb++
			continue
		}
		attributed := *p >= e.thr
		cs.add(*p, attributed, ok)
		if attributed && !ok {
			e.mistake(Mistake{Kind: "candidate", Where: ctx.where, Sessions: ctx.sessions, Candidate: cand,
				Owner: e.t.owner[cand], Probability: *p})
		}
		if attributed && truth[cand] {
			cs.FoundCount++
		}
	}
	return cs
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

// truncated warns about a session with candidates to find whose match
// list the report cut.
func (e *evaluator) truncated(c object, id string, truth int) {
	if t, _ := c.boolean("matched_truncated"); t && truth > 0 {
		e.warn(fmt.Sprintf("session %s: the report lists only part of its matches: its recall is a lower bound", id))
	}
}

// sessionWallet returns the wallet of a labelled session ("" for none).
func (e *evaluator) sessionWallet(id string) string {
	if s := e.t.sessions[id]; s != nil {
		return s.Wallet
	}
	if s := e.t.fetchSessions[id]; s != nil {
		return s.Wallet
	}
	return ""
}

// links scores the pairs and the groups of analyze --link.
func (e *evaluator) links(links object) {
	inReport := map[string]bool{}
	for _, id := range e.known {
		inReport[id] = true
	}
	ls := &LinkScore{ClaimScore: newClaimScore()}
	n := len(e.known)
	ls.PairCount = n * (n - 1) / 2
	ls.TruthCount = e.truePairs()
	threshold := 0.5
	if t := links.num("threshold"); t != nil {
		threshold = *t
	}
	listed := map[[2]string]bool{}
	outside := 0
	for _, p := range links.objects("pairs") {
		a, b := p.str("a"), p.str("b")
		key := [2]string{min(a, b), max(a, b)}
		if !inReport[a] || !inReport[b] || a == b || listed[key] {
			outside++
			continue
		}
		listed[key] = true
		prob := p.num("probability")
		wa := e.sessionWallet(a)
		right := wa != "" && wa == e.sessionWallet(b)
		ivs, used := findIntervals(p)
		e.probIntervals("links", ivs, prob, right)
		e.noteUnscored("link pairs", unknownKeys(p, knownPair, used))
		if prob == nil {
			e.noProb++
			continue
		}
		linked, ok := p.boolean("linked")
		if !ok {
			linked = *prob > threshold
		}
		ls.add(*prob, linked, right)
		if linked && right {
			ls.FoundCount++
		}
		if !right && *prob > ConfidentP {
			ls.WrongAboveConfident++
		}
		if linked && !right {
			e.mistake(Mistake{Kind: "link", Where: "links", Sessions: []string{a, b}, Probability: *prob})
		}
	}
	if outside > 0 {
		e.warn(fmt.Sprintf("%d link pairs name a session outside the report's labelled sessions, or repeat a pair: left out", outside))
	}
	if shared, _ := links.boolean("pairs_listed_shared_only"); shared {
		e.absent("links: the report lists only the pairs that share a match; the others count as not linked")
	}
	ls.finish()
	e.s.Links = ls
	e.noteUnscored("links", unknownKeys(links, knownLinks, nil))
	e.linkGroups(links.objects("groups"))
}

// truePairs counts the pairs of the report's sessions that are of one
// wallet.
func (e *evaluator) truePairs() int {
	per := map[string]int{}
	for _, id := range e.known {
		if w := e.sessionWallet(id); w != "" {
			per[w]++
		}
	}
	n := 0
	for _, k := range per {
		n += k * (k - 1) / 2
	}
	return n
}

// linkGroups scores the groups of linked sessions.
func (e *evaluator) linkGroups(groups []object) {
	gs := &GroupScore{Groups: []GroupReport{}, Candidates: newClaimScore()}
	per := map[string]int{}
	for _, id := range e.known {
		if w := e.sessionWallet(id); w != "" {
			per[w]++
		}
	}
	for _, k := range per {
		if k > 1 {
			gs.LinkableWalletCount++
		}
	}
	pairs := map[[2]string]bool{}
	for _, g := range groups {
		gr, claims := e.group("link groups", g)
		gs.GroupCount++
		if gr.Pure {
			gs.PureCount++
			if len(gr.Sessions) == per[gr.Majority] {
				gs.ExactCount++
			}
		}
		for i, a := range gr.Sessions {
			for _, b := range gr.Sessions[i+1:] {
				key := [2]string{min(a, b), max(a, b)}
				if a == b || pairs[key] {
					continue
				}
				pairs[key] = true
				gs.PairCount++
				if w := e.sessionWallet(a); w != "" && w == e.sessionWallet(b) {
					gs.PairRight++
				}
			}
		}
		gs.Candidates.merge(claims)
		gs.Groups = append(gs.Groups, gr)
	}
	gs.PairPrecision = ratio(gs.PairRight, gs.PairCount)
	gs.PairRecall = ratio(gs.PairRight, e.truePairs())
	gs.Candidates.finish()
	e.s.Groups = gs
}

// group scores a report over several sessions (a linked group, or the
// --intersect report) against the wallet most of them are of: its
// candidates are right when that wallet's, and its estimate is set
// against the candidates every member's filters hold.
func (e *evaluator) group(where string, g object) (GroupReport, *ClaimScore) {
	gr := GroupReport{Sessions: g.strs("sessions"), SessionWallets: []string{}, EstimatedWallet: g.num("estimated_wallet")}
	if gr.Sessions == nil {
		gr.Sessions = []string{}
	}
	count := map[string]int{}
	var truth map[string]bool
	for i, id := range gr.Sessions {
		w := e.sessionWallet(id)
		gr.SessionWallets = append(gr.SessionWallets, w)
		if w != "" {
			count[w]++
		}
		st := map[string]bool{}
		if s := e.t.sessions[id]; s != nil {
			st = e.l.sessionTruth(s)
		}
		if i == 0 {
			truth = st
		} else {
			maps.DeleteFunc(truth, func(a string, _ bool) bool { return !st[a] })
		}
	}
	for _, w := range slices.Sorted(maps.Keys(count)) {
		if count[w] > count[gr.Majority] {
			gr.Majority = w
		}
	}
	gr.Pure = gr.Majority != "" && count[gr.Majority] == len(gr.Sessions)
	gr.WalletCandidates = len(truth)
	var owns func(string) bool
	if wt := e.t.wallets[gr.Majority]; wt != nil {
		owns = wt.owns
	}
	cs := e.claims(claimContext{where + " matches", gr.Sessions}, g.objects("matched"), owns, truth)
	cs.finish()
	gr.Candidates = cs.Counts
	ivs, used := findIntervals(g)
	e.countIntervals(where, ivs, len(truth))
	e.noteUnscored(where, unknownKeys(g, knownSession, used))
	return gr, cs
}

// intervalTally gathers the intervals of one place and quantity.
type intervalTally struct {
	score  IntervalScore
	binary bool
	bins   []IntervalBin
}

func (e *evaluator) tally(where string, iv interval, binary bool) *intervalTally {
	key := where + "\x00" + iv.quantity + "\x00" + iv.key
	t := e.intervals[key]
	if t == nil {
		t = &intervalTally{binary: binary, score: IntervalScore{Where: where, Quantity: iv.quantity, Field: iv.key, Nominal: iv.level}}
		if binary {
			for _, b := range Bins {
				t.bins = append(t.bins, IntervalBin{Bin: Bin{PLow: b[0], PHigh: b[1]}})
			}
		}
		e.intervals[key] = t
	}
	return t
}

// countIntervals scores intervals on the estimated wallet against its
// truth; intervals on other quantities are named as not scored.
func (e *evaluator) countIntervals(where string, ivs []interval, truth int) {
	for _, iv := range ivs {
		if !slices.Contains(walletQuantities, iv.quantity) {
			e.noteUnscored(where, []string{iv.key + " (an interval on a quantity the labels do not know)"})
			continue
		}
		if iv.quantity == "" {
			iv.quantity = "estimated_wallet"
		}
		t := e.tally(where, iv, false)
		t.score.IntervalCount++
		if iv.low <= float64(truth) && float64(truth) <= iv.high {
			t.score.CoveredCount++
		}
	}
}

// probIntervals scores intervals on a claim's probability, whose truth
// is right or wrong, in the bins of its probability (the interval's
// middle when the claim has none).
func (e *evaluator) probIntervals(where string, ivs []interval, p *float64, right bool) {
	for _, iv := range ivs {
		if iv.quantity != "" && iv.quantity != "probability" {
			e.noteUnscored(where, []string{iv.key + " (an interval on a quantity the labels do not know)"})
			continue
		}
		iv.quantity = "probability"
		t := e.tally(where, iv, true)
		t.score.IntervalCount++
		at := (iv.low + iv.high) / 2
		if p != nil {
			at = *p
		}
		for i := range t.bins {
			b := &t.bins[i]
			if at >= b.PLow && (at < b.PHigh || i == len(t.bins)-1) {
				b.add(at, right)
				b.sumLow += iv.low
				b.sumHigh += iv.high
				break
			}
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

func (t *intervalTally) finish() {
	if !t.binary {
		t.score.Coverage = ratio(t.score.CoveredCount, t.score.IntervalCount)
		return
	}
	for i := range t.bins {
		b := &t.bins[i]
		b.finish()
		if b.Count > 0 {
			lo, hi := b.sumLow/float64(b.Count), b.sumHigh/float64(b.Count)
			ok := *b.WilsonLow <= hi && lo <= *b.WilsonHigh
			b.MeanLow, b.MeanHigh, b.Consistent = &lo, &hi, &ok
		}
	}
	t.score.Calibration = t.bins
}

// targets measures the report against the targets the attacks are held
// to: of the candidates given P >= 0.95 at least 95% right; links of
// precision 0.99 and recall 0.95, none wrong given P > 0.95; intervals
// covering the truth at their nominal rate, within 3 points.
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
	add("candidates given P >= 0.95: fraction right", ">= 0.95", s.Candidates.Confident.FractionRight, atLeast(0.95))
	if s.CandidateGroups != nil {
		add("candidate groups given P >= 0.95: fraction right", ">= 0.95", s.CandidateGroups.Confident.FractionRight, atLeast(0.95))
	}
	if l := s.Links; l != nil {
		add("links: precision", ">= 0.99", l.Precision, atLeast(0.99))
		add("links: recall", ">= 0.95", l.Recall, atLeast(0.95))
		wrong := float64(l.WrongAboveConfident)
		add("links: wrong links given P > 0.95", "0", &wrong, func(v float64) bool { return v == 0 })
	}
	for _, iv := range s.Intervals {
		if iv.Coverage != nil {
			nominal := iv.Nominal
			add(fmt.Sprintf("intervals (%s, %s): coverage", iv.Where, iv.Field), fmt.Sprintf("%.2f ± 0.03", nominal), iv.Coverage,
				func(v float64) bool { return v >= nominal-0.03 && v <= nominal+0.03 })
		}
	}
	return out
}
