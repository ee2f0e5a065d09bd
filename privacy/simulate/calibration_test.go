package simulate_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/simulate"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// calibrationSeed is the first seed of the calibration test: no other
// test uses seeds from it on, and none of the attacks' constants was
// chosen on them.
const calibrationSeed = 4001

// regimeRun is one regime's simulation attacked and scored.
type regimeRun struct {
	sc               *simulate.Scenario
	links            *attack.LinkReport
	analyze, fetches *simulate.Score
	analyzeWarnings  []string
	fetchWarnings    []string
	fetchReports     []*attack.FetchReport
}

// regimeScenario simulates regime r from seed, smaller than the
// command's defaults: 30 wallets, a chain of 600 blocks of 30
// transactions, 12 BIP 157 wallets.
func regimeScenario(t *testing.T, r simulate.Regime, seed uint64) *simulate.Scenario {
	t.Helper()
	o, err := simulate.RegimeOptions(r)
	if err != nil {
		t.Fatal(err)
	}
	o.Seed, o.Wallets = seed, 30
	o.Addresses.Max = min(o.Addresses.Max, 2000)
	o.Chain = simulate.ChainOptions{Blocks: 600, TxsPerBlock: 30}
	o.Fetch.Wallets = 12
	sc, err := simulate.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// analyzeLinks runs analyze --link on a scenario's capture and universe
// as the command does, and returns the report and its JSON.
func analyzeLinks(t *testing.T, sc *simulate.Scenario) (*attack.CaptureReport, []byte) {
	t.Helper()
	return captureReport(t, sc, nil, attack.ReportOptions{Link: true})
}

// runRegime simulates regime r from seed (see regimeScenario), runs
// analyze --link and fetches on the files as the commands do, and scores
// both against the labels.
func runRegime(t *testing.T, r simulate.Regime, seed uint64) regimeRun {
	t.Helper()
	sc := regimeScenario(t, r, seed)
	run := regimeRun{sc: sc}
	rep, doc := analyzeLinks(t, sc)
	run.analyzeWarnings, run.links = rep.Warnings, rep.Links
	var err error
	if run.analyze, err = simulate.Evaluate(sc.Labels, doc, simulate.EvalOptions{}); err != nil {
		t.Fatal(err)
	}
	var index, fcapt bytes.Buffer
	if err := sc.WriteIndex(&index); err != nil {
		t.Fatal(err)
	}
	if err := sc.WriteFetchCapture(&fcapt); err != nil {
		t.Fatal(err)
	}
	run.fetches, run.fetchReports = attackFetches(t, sc, &fcapt, &index, attack.FetchOptions{})
	for _, r := range run.fetchReports {
		run.fetchWarnings = append(run.fetchWarnings, r.Warnings...)
	}
	return run
}

// attackFetches runs "privacy fetches" with opts on a scenario's fetch
// capture and appearance index, as the command does, and scores its
// reports against the labels.
func attackFetches(t *testing.T, sc *simulate.Scenario, fcapt, index *bytes.Buffer, opts attack.FetchOptions) (*simulate.Score, []*attack.FetchReport) {
	t.Helper()
	reps := fetchReports(t, fcapt, index, opts)
	score, err := simulate.Evaluate(sc.Labels, fetchesDoc(t, reps), simulate.EvalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return score, reps
}

// fetchReports runs the block-download attack on a fetch capture and
// its appearance index.
func fetchReports(t testing.TB, fcapt, index *bytes.Buffer, opts attack.FetchOptions) []*attack.FetchReport {
	t.Helper()
	frecs, err := capture.Read(fcapt)
	if err != nil {
		t.Fatal(err)
	}
	fsessions, err := capture.FetchSessions(frecs)
	if err != nil {
		t.Fatal(err)
	}
	ir, err := universe.NewIndexReader(index)
	if err != nil {
		t.Fatal(err)
	}
	reps, err := attack.AnalyzeFetches(fsessions, ir, opts)
	if err != nil {
		t.Fatal(err)
	}
	return reps
}

// fetchesDoc is the JSON of "privacy fetches" with reps.
func fetchesDoc(t testing.TB, reps []*attack.FetchReport) []byte {
	t.Helper()
	doc, err := json.Marshal(map[string]any{"index": map[string]any{}, "clients": reps})
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// below95 reports whether a bin's claims are right measurably less often
// than 95%: the upper end of their Wilson interval below it.
func below95(b simulate.Bin) bool {
	return b.Count > 0 && b.WilsonHigh != nil && *b.WilsonHigh < simulate.TargetRight
}

// Warnings the attacks give where a regime breaks them.
const (
	paymentsWarning  = "pay each other several addresses"
	clusteredWarning = "the chain's scripts cluster"
	batchedWarning   = "(batched payments)"
	// Linking's warnings of captures on which pairs given P below 0.5 are
	// of one wallet far more often than said.
	smallWalletsWarning   = "the sessions' wallets look small"
	severalWalletsWarning = "sessions of several wallets behind one client"
)

// claimKind is one kind of claim a regime's run is scored on.
type claimKind struct {
	name  string
	score func(*regimeRun) *simulate.ClaimScore
	// warning, when not empty, is what the report must say where the
	// claims given P >= 0.95 are measurably below 95% right, and
	// warnings the report's warnings.
	warning  string
	warnings func(*regimeRun) []string
}

var claimKinds = []claimKind{
	{name: "analyze: candidates", score: func(r *regimeRun) *simulate.ClaimScore { return r.analyze.Candidates }},
	{name: "analyze: links", score: func(r *regimeRun) *simulate.ClaimScore { return r.analyze.Links.ClaimScore },
		warning: paymentsWarning, warnings: func(r *regimeRun) []string { return r.analyzeWarnings }},
	{name: "fetches: scripts", score: func(r *regimeRun) *simulate.ClaimScore { return r.fetches.Candidates },
		warning: batchedWarning, warnings: func(r *regimeRun) []string { return r.fetchWarnings }},
	{name: "fetches: groups", score: func(r *regimeRun) *simulate.ClaimScore { return r.fetches.CandidateGroups }},
}

// unwarnedShortfalls are the regimes and kinds whose claims given P >=
// 0.95 are measurably below 95% right on the calibration seeds, with no
// warning of the attack to say so (privacy/README.md, "Scores of the
// attacks", states them as targets not met). None is left: the change
// regime's one wrong script at P >= 0.95 (one claim, none right) now
// sits among the wallet's scripts a group's most appearing member leads
// (8 of 9 right). A shortfall anywhere fails the test.
var unwarnedShortfalls = map[string]bool{}

// linkIntervals names the link intervals' shortfall among a run's.
const linkIntervals = "links: intervals"

// linkIntervalShortfalls are the regimes whose link intervals, on the
// calibration seeds, hold the rate at which pairs like theirs are right
// less often than their nominal 95% less 3 points (too narrow), with no
// warning of the capture to say so (privacy/README.md, "Scores of the
// attacks", states them as targets not met). A shortfall elsewhere that
// no warning names fails the test, as does a regime here that no longer
// falls short. (Intervals that hold more often than nominal plus 3 points
// are a target not met too, which the test logs: where every group's
// rate is consistent with its pairs' probabilities, every interval holds
// it, so the measure reads 1.000.)
var linkIntervalShortfalls = map[simulate.Regime]bool{}

// linkWarned reports whether the warnings say the capture resembles one
// on which linking's probabilities do not hold: wallets that pay each
// other several addresses, small wallets, or sessions of several wallets.
func linkWarned(warnings []string) bool {
	all := strings.Join(warnings, "\n")
	return strings.Contains(all, paymentsWarning) || strings.Contains(all, smallWalletsWarning) || strings.Contains(all, severalWalletsWarning)
}

// linkIntervalScore is the score of the report's link intervals, nil if
// it has none.
func linkIntervalScore(s *simulate.Score) *simulate.IntervalScore {
	for i, iv := range s.Intervals {
		if iv.Where == "links" && iv.Holding != nil {
			return &s.Intervals[i]
		}
	}
	return nil
}

// binCell is a bin as a table's cell: said (the mean probability) against
// observed, its Wilson interval and its count.
func binCell(b simulate.Bin) string {
	if b.Count == 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f / %.3f [%.2f, %.2f] n=%d", *b.MeanProbability, *b.FractionRight, *b.WilsonLow, *b.WilsonHigh, b.Count)
}

// calibrationTable is a regime's scores as the Markdown table of
// privacy/README.md: per kind of claim, said against observed in each
// bin, and the claims given P >= 0.95.
func calibrationTable(r simulate.Regime, run *regimeRun) string {
	var b strings.Builder
	fmt.Fprintf(&b, "\n**%s**\n\n| claims | [0, 0.5) | [0.5, 0.8) | [0.8, 0.95) | [0.95, 0.99) | [0.99, 1] | P ≥ 0.95: right, Wilson low |\n|---|---|---|---|---|---|---|\n", r)
	for _, k := range claimKinds {
		c := k.score(run)
		if c == nil {
			continue
		}
		fmt.Fprintf(&b, "| %s |", k.name)
		for _, bin := range c.Calibration {
			fmt.Fprintf(&b, " %s |", binCell(bin))
		}
		if cb := c.Confident; cb.Count > 0 {
			fmt.Fprintf(&b, " %d of %d (%.3f), %.3f |\n", cb.Right, cb.Count, *cb.FractionRight, *cb.WilsonLow)
		} else {
			b.WriteString(" none |\n")
		}
	}
	var cover []string
	for _, s := range []*simulate.Score{run.analyze, run.fetches} {
		for _, tg := range s.Targets {
			if strings.Contains(tg.Name, "coverage") && tg.Value != nil {
				cover = append(cover, fmt.Sprintf("%s %s %.3f (want %s)", s.ReportKind, strings.TrimPrefix(tg.Name, "intervals "), *tg.Value, tg.Want))
			}
		}
	}
	fmt.Fprintf(&b, "\nWrong links above 0.99: %d. Interval coverage: %s. %s\n", run.analyze.Links.WrongAboveSure, strings.Join(cover, "; "), linkHolding(run.analyze))
	return b.String()
}

// linkHolding says how many link probability intervals hold the rate of
// pairs like theirs, in all and by bin.
func linkHolding(s *simulate.Score) string {
	for _, iv := range s.Intervals {
		if iv.Where != "links" || iv.Holding == nil {
			continue
		}
		var by []string
		for _, b := range iv.Calibration {
			if b.Count > 0 {
				end := ")"
				if b.PHigh == 1 {
					end = "]"
				}
				by = append(by, fmt.Sprintf("[%g, %g%s %d of %d", b.PLow, b.PHigh, end, b.HoldingCount, b.Count))
			}
		}
		return fmt.Sprintf("Link intervals holding the rate of pairs like theirs: %d of %d (%.3f; nominal %.2f): %s.", iv.HoldingCount, iv.IntervalCount, *iv.Holding, iv.Nominal, strings.Join(by, ", "))
	}
	return "No link intervals."
}

// TestCalibrationRegimes scores both attacks on every regime of package
// simulate, on seeds no test tunes on, against the targets (evaluate's)
// and logs every target not met and each regime's table of
// privacy/README.md, "Scores of the attacks" (go test
// ./privacy/simulate -run TestCalibrationRegimes -v). It holds the
// attacks to what they claim: no link given P > 0.99 is wrong in any
// regime; in every regime, of every kind of claim, those given P >= 0.95
// are not measurably below 95% right (the upper end of their Wilson
// interval reaches it), unless the report warns of what the regime
// breaks (links: wallets that pay each other several addresses, which the
// payments regime must be warned of; the block-download attack's
// scripts: batched payments, which the payments and mixed regimes must
// be warned of, and the clustered chain's payouts draw too) or the
// shortfall is one stated as a
// target not met (unwarnedShortfalls, which must still fall short: a
// fixed attack must leave that list); the link intervals hold the rate of
// pairs like theirs at least at their nominal rate less 3 points, unless
// the report warns of what linking cannot tell (linkWarned) or the
// shortfall is stated (linkIntervalShortfalls); the block-download attack's groups
// given P >= 0.95 over all regimes are not measurably below 95% right;
// and the clustered chain is warned of. Links, candidates and the
// block-download attack's scripts and groups are held to the issue's
// stricter targets too, each pooled over further captures of its regime
// until its claims given P >= 0.95 meet the target or fall measurably
// short of it, or a bound of captures is reached (checkPooled): a Wilson
// lower bound of at least 0.93 for those
// given P >= 0.95 (a kind that gives none falls short: untested is not
// met), no bin over-confident, and no wrong link given P > 0.99 in any
// capture, unless the shortfall is stated (linkPooledShortfalls,
// pooledShortfalls); the block-download attack's scripts are held to the
// bins once more by shape, with [0, 0.5) split at 0.2 (holdShapes,
// shapeShortfalls); each regime's table is followed by a line of its
// pooled figures. The stricter targets on the one capture (Wilson lower
// bound >= 0.93, every bin right as often as it says, coverage within 3
// points) are logged as NOT MET where they are not: on one capture of
// this size most kinds have too few claims for 0.93.
func TestCalibrationRegimes(t *testing.T) {
	regimes := simulate.Regimes()
	results := make([]regimeResult, len(regimes))
	t.Run("regimes", func(t *testing.T) {
		for i, ri := range regimes {
			r := ri.Regime
			if r == simulate.RegimeCovered {
				continue // scored with the attack told the target: TestCoverTargetCalibrated
			}
			t.Run(string(r), func(t *testing.T) {
				t.Parallel()
				run := runRegime(t, r, calibrationSeed+uint64(i))
				results[i] = checkRegime(t, r, &run)
				short, line := checkPooled(t, &regimePool{t: t, r: r, i: uint64(i)}, &run)
				results[i].short = append(results[i].short, short...)
				results[i].table += line
			})
		}
	})
	var groupsRight, groupsCount int
	var tables strings.Builder
	short := map[string]bool{}
	for _, res := range results {
		tables.WriteString(res.table)
		for _, k := range res.short {
			short[k] = true
		}
		groupsRight += res.groupsRight
		groupsCount += res.groupsCount
	}
	for key := range unwarnedShortfalls {
		if !short[key] {
			t.Errorf("%s: no longer below 95%% right given P >= 0.95: take it out of unwarnedShortfalls and privacy/README.md's targets not met", key)
		}
	}
	for _, stated := range []struct {
		name string
		keys map[string]bool
	}{{"linkPooledShortfalls", linkPooledShortfalls}, {"pooledShortfalls", pooledShortfalls}, {"sessionCoverShortfalls", sessionCoverShortfalls}, {"shapeShortfalls", shapeShortfalls}} {
		for key := range stated.keys {
			if !short[key] {
				t.Errorf("%s: now met over the pooled captures: take it out of %s and privacy/README.md's targets not met", key, stated.name)
			}
		}
	}
	for r := range linkIntervalShortfalls {
		if !short[string(r)+" "+linkIntervals] {
			t.Errorf("%s: link intervals now hold the rate of pairs like theirs at their nominal rate: take it out of linkIntervalShortfalls and privacy/README.md's targets not met", r)
		}
	}
	t.Logf("the tables of privacy/README.md:\n%s", tables.String())
	t.Logf("fetch groups given P >= 0.95 over every regime: %d of %d right", groupsRight, groupsCount)
	if _, high := simulate.Wilson(groupsRight, groupsCount); groupsCount == 0 || high < simulate.TargetRight {
		t.Errorf("fetch groups given P >= 0.95: %d of %d right over the regimes", groupsRight, groupsCount)
	}
}

// regimeResult is what TestCalibrationRegimes gathers of one regime's
// run: its table, the keys of its shortfalls (see unwarnedShortfalls and
// linkIntervals) and its block-download groups given P >= 0.95.
type regimeResult struct {
	table                    string
	short                    []string
	groupsRight, groupsCount int
}

// checkRegime holds one regime's run to the targets of
// TestCalibrationRegimes, and returns what the test gathers over the
// regimes.
func checkRegime(t *testing.T, r simulate.Regime, run *regimeRun) regimeResult {
	a, f := run.analyze, run.fetches
	res := regimeResult{table: calibrationTable(r, run)}
	for _, s := range []*simulate.Score{a, f} {
		for _, tg := range s.Targets {
			if tg.Met != nil && !*tg.Met {
				t.Logf("%s: %s NOT MET: %s: %.4g (want %s)", r, s.ReportKind, tg.Name, *tg.Value, tg.Want)
			}
		}
	}
	if n := a.Links.WrongAboveSure; n > 0 {
		t.Errorf("%s: %d links of two wallets given P > 0.99", r, n)
	}
	if iv := linkIntervalScore(a); iv != nil && *iv.Holding < iv.Nominal-simulate.TargetCoverageSlack {
		res.short = append(res.short, string(r)+" "+linkIntervals)
		if !linkIntervalShortfalls[r] && !linkWarned(run.analyzeWarnings) {
			t.Errorf("%s: link intervals hold the rate of pairs like theirs %.3f of the time (nominal %.2f), and no warning says so", r, *iv.Holding, iv.Nominal)
		}
	}
	for _, k := range claimKinds {
		c := k.score(run)
		if c == nil || !below95(c.Confident) {
			continue
		}
		key := string(r) + " " + k.name
		res.short = append(res.short, key)
		warned := k.warning != "" && strings.Contains(strings.Join(k.warnings(run), "\n"), k.warning)
		if !warned && !unwarnedShortfalls[key] {
			t.Errorf("%s: given P >= 0.95: %d of %d right, and no warning says so", key, c.Confident.Right, c.Confident.Count)
		}
	}
	if r == simulate.RegimePayments && !strings.Contains(strings.Join(run.analyzeWarnings, "\n"), paymentsWarning) {
		t.Errorf("%s: no warning that the wallets pay each other several addresses; warnings %q", r, run.analyzeWarnings)
	}
	if r == simulate.RegimeClustered && !strings.Contains(strings.Join(run.fetchWarnings, "\n"), clusteredWarning) {
		t.Errorf("%s: no warning that the chain's scripts cluster", r)
	}
	batched := strings.Contains(strings.Join(run.fetchWarnings, "\n"), batchedWarning)
	if (r == simulate.RegimeMixed || r == simulate.RegimePayments) && !batched {
		t.Errorf("%s: BIP 157 wallets paid in batches, and no warning of batched payments", r)
	}
	if batched {
		t.Logf("%s: warned of batched payments", r)
	}
	if g := f.CandidateGroups; g != nil {
		res.groupsRight, res.groupsCount = g.Confident.Right, g.Confident.Count
	}
	return res
}

// linkSeeds reads the seeds of SPVFILTER_LINK_SEEDS ("4001-4010"), nil
// when it is not set.
func linkSeeds(t *testing.T) []uint64 { return envSeeds(t, "SPVFILTER_LINK_SEEDS") }

// envSeeds reads the seeds of the environment variable name (see
// ParseSeeds: "4001-4010", "2,5,9-12"), nil when it is not set.
func envSeeds(t *testing.T, name string) []uint64 {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return nil
	}
	seeds, err := simulate.ParseSeeds(v)
	if err != nil {
		t.Fatalf("%s %q: %v", name, v, err)
	}
	return seeds
}

// claimTally gathers claims over captures: those given P >= 0.95 and
// those right, and every claim in its bin of probability (linkBinEdges,
// the bins of simulate's calibration).
type claimTally struct {
	confident, confidentRight int
	bins                      [5]struct {
		n, right int
		sumP     float64
	}
}

// addClaim counts one claim of probability p.
func (c *claimTally) addClaim(p float64, right bool) {
	if p >= simulate.ConfidentP {
		c.confident++
		if right {
			c.confidentRight++
		}
	}
	edges := linkBinEdges[1 : len(linkBinEdges)-1]
	i := 0
	for i < len(edges) && p >= edges[i] {
		i++
	}
	c.bins[i].n++
	c.bins[i].sumP += p
	if right {
		c.bins[i].right++
	}
}

// addScore counts the claims of a score's calibration (none for nil),
// whose bins must be the tally's.
func (c *claimTally) addScore(s *simulate.ClaimScore) {
	if s == nil {
		return
	}
	for i, b := range s.Calibration {
		if i >= len(c.bins) || b.PLow != linkBinEdges[i] || b.PHigh != linkBinEdges[i+1] {
			panic(fmt.Sprintf("claimTally: calibration bin %d is [%g, %g), not the tally's", i, b.PLow, b.PHigh))
		}
	}
	c.confident += s.Confident.Count
	c.confidentRight += s.Confident.Right
	for i, b := range s.Calibration {
		c.bins[i].n += b.Count
		c.bins[i].right += b.Right
		if b.MeanProbability != nil {
			c.bins[i].sumP += *b.MeanProbability * float64(b.Count)
		}
	}
}

// merge adds o's counts.
func (c *claimTally) merge(o *claimTally) {
	c.confident += o.confident
	c.confidentRight += o.confidentRight
	for i := range c.bins {
		c.bins[i].n += o.bins[i].n
		c.bins[i].right += o.bins[i].right
		c.bins[i].sumP += o.bins[i].sumP
	}
}

// The verdicts of a kind's claims given P >= 0.95 on the stricter
// target (claimTally.verdict).
const (
	verdictMet       = "met"        // the lower end of their Wilson interval reaches simulate.TargetWilsonLow
	verdictUndecided = "undecided"  // too few to tell: it does not, and the upper end reaches 95%
	verdictBelow     = "below 95%"  // measurably below 95% right: the upper end does not reach it
	verdictNone      = "none given" // no claim given P >= 0.95
)

// verdict is the verdict of the tally's claims given P >= 0.95.
func (c *claimTally) verdict() string {
	lo, hi := simulate.Wilson(c.confidentRight, c.confident)
	switch {
	case c.confident == 0:
		return verdictNone
	case lo >= simulate.TargetWilsonLow:
		return verdictMet
	case hi >= simulate.TargetRight:
		return verdictUndecided
	}
	return verdictBelow
}

// confidentFigure is the claims given P >= 0.95 as a pooled line gives
// them: "X of Y, Wilson low W", or "none given P ≥ 0.95".
func (c *claimTally) confidentFigure() string {
	if c.confident == 0 {
		return "none given P ≥ 0.95"
	}
	lo, _ := simulate.Wilson(c.confidentRight, c.confident)
	return fmt.Sprintf("%d of %d, Wilson low %.3f", c.confidentRight, c.confident, lo)
}

// linkTally gathers linking's pairs over captures: the links (pairs
// linked) and those right, those given P > 0.99 that are wrong, and
// every pair as a claim (claimTally).
type linkTally struct {
	claimTally
	pairs, linked, linkedRight int
	wrongSure                  int
	hold, holdN                int
}

// add counts one pair.
func (l *linkTally) add(p float64, linked, right bool) {
	l.pairs++
	if linked {
		l.linked++
		if right {
			l.linkedRight++
		}
	}
	if p > simulate.SureLinkP && !right {
		l.wrongSure++
	}
	l.addClaim(p, right)
}

// merge adds o's counts.
func (l *linkTally) merge(o *linkTally) {
	l.claimTally.merge(&o.claimTally)
	l.pairs += o.pairs
	l.linked += o.linked
	l.linkedRight += o.linkedRight
	l.wrongSure += o.wrongSure
	l.hold += o.hold
	l.holdN += o.holdN
}

// String is the tally as one line: pairs, precision of the links, those
// given P >= 0.95 right with their Wilson interval, the wrong ones given
// P > 0.99, each bin said
// against observed with its Wilson interval (! when the said lies
// outside it), and the intervals holding the rate of pairs like theirs.
func (l *linkTally) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "n=%d linked=%d precision=%.3f", l.pairs, l.linked, float64(l.linkedRight)/math.Max(float64(l.linked), 1))
	if l.confident > 0 {
		lo, hi := simulate.Wilson(l.confidentRight, l.confident)
		fmt.Fprintf(&b, " P>=0.95: %d/%d=%.3f [%.3f, %.3f]", l.confidentRight, l.confident, float64(l.confidentRight)/float64(l.confident), lo, hi)
	}
	fmt.Fprintf(&b, " wrong P>0.99: %d%s", l.wrongSure, l.binsFigure())
	if l.holdN > 0 {
		fmt.Fprintf(&b, " | holding %d/%d=%.3f", l.hold, l.holdN, float64(l.hold)/float64(l.holdN))
	}
	return b.String()
}

// linkScenario is regimeScenario without its BIP 157 wallets, which
// linking does not read.
func linkScenario(t *testing.T, r simulate.Regime, seed uint64) *simulate.Scenario {
	t.Helper()
	o, err := simulate.RegimeOptions(r)
	if err != nil {
		t.Fatal(err)
	}
	o.Seed, o.Wallets = seed, 30
	o.Addresses.Max = min(o.Addresses.Max, 2000)
	o.Chain = simulate.ChainOptions{Blocks: 600, TxsPerBlock: 30}
	o.Fetch.Wallets = 0
	sc, err := simulate.Generate(o)
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

// TestLinkCalibrationSweep scores linking alone on every regime over the
// seeds of SPVFILTER_LINK_SEEDS (skipped without it), one capture per
// regime and seed, and logs per regime the pairs, the precision of the
// links, those given P >= 0.95 right with their Wilson interval, the
// bins said against observed and the intervals holding; with
// SPVFILTER_LINK_DUMP=FILE it writes every pair as a tab-separated line:
// regime, seed, probability and its interval, probability of a payment,
// shared matches, expected by chance and if one wallet, right, weighed
// with a third session, linked, the two sessions, the capture's priors of
// one wallet and of a payment, each session's matches, estimated wallet
// and expected false positives, the capture's sessions, and its fitted
// share of empty wallets, median wallet size, growth and far growth.
func TestLinkCalibrationSweep(t *testing.T) {
	seeds := linkSeeds(t)
	if seeds == nil {
		t.Skip("set SPVFILTER_LINK_SEEDS=FROM-TO to sweep linking over seeds")
	}
	var dump strings.Builder
	var total linkTally
	for _, ri := range simulate.Regimes() {
		r := ri.Regime
		if r == simulate.RegimeCovered {
			continue
		}
		if only := os.Getenv("SPVFILTER_LINK_REGIMES"); only != "" && !slices.Contains(strings.Split(only, ","), string(r)) {
			continue
		}
		var tally linkTally
		var evidence sharingEvidence
		for _, seed := range seeds {
			sc := linkScenario(t, r, seed)
			rep, doc := analyzeLinks(t, sc)
			l := rep.Links.Linkage
			t.Logf("%s seed %d: prior %.3g [%.3g, %.3g], payments %.3g, growth %.3g far %.3g, sizes %+v, payment sizes %+v; warnings %q", r, seed, l.Prior, l.PriorLow, l.PriorHigh,
				l.PaymentPrior, l.Growth, l.GrowthFar, l.WalletSizes, l.PaymentSizes, l.Warnings)
			s, err := simulate.Evaluate(sc.Labels, doc, simulate.EvalOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if iv := linkIntervalScore(s); iv != nil {
				tally.hold += iv.HoldingCount
				tally.holdN += iv.IntervalCount
			}
			for p, right := range labelledPairs(sc.Labels, rep.Links) {
				tally.add(p.Probability, p.Linked, right)
				evidence.add(p, l, right)
				a, b := rep.Clients[p.SessionLink.A].Report, rep.Clients[p.SessionLink.B].Report
				fmt.Fprintf(&dump, "%s\t%d\t%.6f\t%.6f\t%.6f\t%.6f\t%d\t%.4f\t%.4f\t%t\t%t\t%t\t%s\t%s\t%.6g\t%.6g\t%d\t%d\t%.4f\t%.4f\t%.4f\t%.4f\t%d\t%.4g\t%.4g\t%.4g\t%.4g\n", r, seed, p.Probability, p.ProbabilityLow, p.ProbabilityHigh,
					p.ProbabilityShared, p.Shared, p.ExpectedByChance, p.ExpectedIfSameWallet, right, p.Third != "", p.Linked, p.A, p.B,
					l.Prior, l.PaymentPrior, a.MatchedCount, b.MatchedCount, a.EstimatedWallet, b.EstimatedWallet, a.ExpectedFalsePositives, b.ExpectedFalsePositives, len(rep.Clients),
					l.WalletSizes.Empty, l.WalletSizes.Median, l.Growth, l.GrowthFar)
			}
		}
		total.merge(&tally)
		t.Logf("%-13s %v", r, &tally)
		t.Logf("%-13s %v", r, &evidence)
	}
	t.Logf("%-13s %v", "all", &total)
	if path := os.Getenv("SPVFILTER_LINK_DUMP"); path != "" {
		if err := os.WriteFile(path, []byte(dump.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sharingEvidence gathers, over captures, the pairs linking takes to
// share addresses (P(one wallet) + P(payment) at least 0.9, from their
// own matches: no third session), by a unit of their log likelihood
// ratio of one wallet against a payment, ln(P/P(payment)) less the log
// of the priors' ratio; per unit, how many are of one wallet and how
// many not. Where linking's probabilities hold, the log odds of one
// wallet rise by one per unit of that ratio; a steeper rise means the
// pairs' own matches tell one wallet from a payment better than the
// model says, which no prior corrects.
type sharingEvidence struct {
	bins map[int][2]int
}

// sharingEvidenceLow and sharingEvidenceHigh bound the units
// sharingEvidence keeps apart: ratios beyond them count in the end ones.
const sharingEvidenceLow, sharingEvidenceHigh = -5, 6

// add counts one pair of a capture whose linkage is l.
func (e *sharingEvidence) add(p attack.LinkPair, l *attack.Linkage, right bool) {
	if p.Third != "" || p.Probability <= 0 || p.ProbabilityShared <= 0 || p.Probability+p.ProbabilityShared < 0.9 ||
		l.Prior <= 0 || l.PaymentPrior <= 0 {
		return
	}
	lr := math.Log(p.Probability/p.ProbabilityShared) - math.Log(l.Prior/l.PaymentPrior)
	unit := min(max(int(math.Floor(lr)), sharingEvidenceLow), sharingEvidenceHigh)
	if e.bins == nil {
		e.bins = map[int][2]int{}
	}
	b := e.bins[unit]
	if right {
		b[0]++
	} else {
		b[1]++
	}
	e.bins[unit] = b
}

// String is the units as one line: the ratio's unit, the pairs of one
// wallet and not, and their log odds (each count plus one half).
func (e *sharingEvidence) String() string {
	var parts []string
	for unit := sharingEvidenceLow; unit <= sharingEvidenceHigh; unit++ {
		b, ok := e.bins[unit]
		if !ok {
			continue
		}
		parts = append(parts, fmt.Sprintf("ln LR [%d, %d): %d of one wallet, %d not (ln odds %.1f)", unit, unit+1, b[0], b[1],
			math.Log((float64(b[0])+0.5)/(float64(b[1])+0.5))))
	}
	if len(parts) == 0 {
		return "no pair shares addresses"
	}
	return "sharing pairs by their evidence: " + strings.Join(parts, "; ")
}

// labelledPairs yields every pair of a link report with whether its
// sessions share a wallet, by the labels.
func labelledPairs(labels *simulate.Labels, links *attack.LinkReport) iter.Seq2[attack.LinkPair, bool] {
	wallets := map[string][]string{}
	for _, ls := range labels.Sessions {
		wallets[ls.ID] = append([]string{ls.Wallet}, ls.Wallets...)
	}
	return func(yield func(attack.LinkPair, bool) bool) {
		for _, p := range links.Pairs {
			wb := wallets[p.B]
			right := slices.ContainsFunc(wallets[p.A], func(w string) bool { return w != "" && slices.Contains(wb, w) })
			if !yield(p, right) {
				return
			}
		}
	}
}

// minPooledConfident is the least number of claims given P >= 0.95 a
// regime's pooled score of a kind rests on: fewer, even all right, leave
// the lower end of their Wilson interval below simulate.TargetWilsonLow
// (0.93 wants 52 right of 52). Past it, captures are pooled while the
// claims leave the target undecided (undecided). maxLinkCaptures bounds
// the captures pooled for links (of linking alone) and candidates (as
// the regime's own): in the payments regime, where most sessions of one
// wallet are given less than 0.95, four captures give 51 links.
// maxFetchCaptures bounds the captures pooled for the block-download
// attack's scripts and groups: each simulates a chain (some 2 s of a
// core), and most regimes give 3 to 20 scripts P >= 0.95 a capture:
// eight captures (206 s of CPU for the test against 148 s at four)
// decided the groups of five regimes more (met) and the scripts of none.
const (
	minPooledConfident = 52
	maxLinkCaptures    = 8
	maxFetchCaptures   = 4
)

// linkPooledShortfalls are the targets of the pooled links (see
// checkPooledLinks) not met on the calibration seeds, each a regime and
// what falls short ("links: P >= 0.95 undecided" or "links: P >= 0.95"
// for the lower end of the Wilson interval, as pooledShortfalls has
// them, "links: [lo, hi)" for a bin whose probabilities say more than
// its pairs are right), stated in privacy/README.md, "Scores of the
// attacks", as targets not met. A shortfall elsewhere fails the test, as
// does one here that no longer falls short. None is stated: in the
// payments regime, where a session whose own matches do not show its
// wallet is held to what its other sessions show it holding beyond the
// pair, four captures gave 51 pairs P >= 0.95, all right, one short of
// the 52 a Wilson lower bound of 0.93 needs, so further captures are
// pooled (maxLinkCaptures).
var linkPooledShortfalls = map[string]bool{}

// regimePool makes a regime's further captures, each once, for every
// kind of claim pooled over them (checkPooled): capture k >= 1 is
// simulated from seed calibrationSeed + 100k + i, i the regime's index,
// as a capture of linking alone (linkScenario) for the links, and as the
// regime's own is (regimeScenario) for the candidates and the
// block-download attack's scripts and groups, each attack run on it once
// asked.
type regimePool struct {
	t     *testing.T
	r     simulate.Regime
	i     uint64
	links []*linkCapture
	full  []*fullCapture
}

// linkCapture is one further capture of linking alone: its labels and
// its report's links.
type linkCapture struct {
	labels *simulate.Labels
	links  *attack.LinkReport
}

// fullCapture is one further capture simulated as the regime's own (nil
// once released), and the attacks' scores of it, nil until asked.
type fullCapture struct {
	sc               *simulate.Scenario
	analyze, fetches *simulate.Score
	shapes           shapeTally
}

// seed is the seed of the regime's further capture k.
func (p *regimePool) seed(k int) uint64 { return calibrationSeed + 100*uint64(k) + p.i }

// link is further capture k (from 1) of linking alone.
func (p *regimePool) link(k int) *linkCapture {
	for len(p.links) < k {
		sc := linkScenario(p.t, p.r, p.seed(len(p.links)+1))
		rep, _ := analyzeLinks(p.t, sc)
		p.links = append(p.links, &linkCapture{labels: sc.Labels, links: rep.Links})
	}
	return p.links[k-1]
}

// capture is further capture k (from 1) simulated as the regime's own.
func (p *regimePool) capture(k int) *fullCapture {
	for len(p.full) < k {
		p.full = append(p.full, &fullCapture{sc: regimeScenario(p.t, p.r, p.seed(len(p.full)+1))})
	}
	return p.full[k-1]
}

// analyze is analyze's score of further capture k (from 1).
func (p *regimePool) analyze(k int) *simulate.Score {
	c := p.capture(k)
	if c.analyze == nil {
		_, doc := analyzeLinks(p.t, c.sc)
		s, err := simulate.Evaluate(c.sc.Labels, doc, simulate.EvalOptions{})
		if err != nil {
			p.t.Fatal(err)
		}
		c.analyze = s
		p.release(k)
	}
	return c.analyze
}

// release lets go of further capture k's simulation once no score of it
// is left to compute: the analyze's and, within maxFetchCaptures, the
// block-download attack's.
func (p *regimePool) release(k int) {
	if c := p.full[k-1]; c.analyze != nil && (c.fetches != nil || k > maxFetchCaptures) {
		c.sc = nil
	}
}

// fetch is the block-download attack's score of further capture k (from
// 1).
func (p *regimePool) fetch(k int) *simulate.Score {
	c := p.capture(k)
	if c.fetches == nil {
		var index, fcapt bytes.Buffer
		if err := c.sc.WriteIndex(&index); err != nil {
			p.t.Fatal(err)
		}
		if err := c.sc.WriteFetchCapture(&fcapt); err != nil {
			p.t.Fatal(err)
		}
		var reps []*attack.FetchReport
		c.fetches, reps = attackFetches(p.t, c.sc, &fcapt, &index, attack.FetchOptions{})
		c.shapes = shapeTally{}
		c.shapes.addReports(c.sc.Labels.Fetch, reps)
		p.release(k)
	}
	return c.fetches
}

// fetchShapes is the block-download attack's scripts of further capture
// k (from 1) by shape.
func (p *regimePool) fetchShapes(k int) shapeTally {
	p.fetch(k)
	return p.full[k-1].shapes
}

// pooledKind is a kind of claim besides links pooled over a regime's
// captures: its name (as claimKinds has it), its name in a pooled line,
// its score in a run's and in a further capture's, and the bound of the
// captures pooled.
type pooledKind struct {
	name, short string
	inRun       func(*regimeRun) *simulate.ClaimScore
	further     func(p *regimePool, k int) *simulate.ClaimScore
	maxCaptures int
}

var pooledKinds = []pooledKind{
	{name: "analyze: candidates", short: "candidates", maxCaptures: maxLinkCaptures,
		inRun:   func(r *regimeRun) *simulate.ClaimScore { return r.analyze.Candidates },
		further: func(p *regimePool, k int) *simulate.ClaimScore { return p.analyze(k).Candidates }},
	{name: "fetches: scripts", short: "fetch scripts", maxCaptures: maxFetchCaptures,
		inRun:   func(r *regimeRun) *simulate.ClaimScore { return r.fetches.Candidates },
		further: func(p *regimePool, k int) *simulate.ClaimScore { return p.fetch(k).Candidates }},
	{name: "fetches: groups", short: "fetch groups", maxCaptures: maxFetchCaptures,
		inRun:   func(r *regimeRun) *simulate.ClaimScore { return r.fetches.CandidateGroups },
		further: func(p *regimePool, k int) *simulate.ClaimScore { return p.fetch(k).CandidateGroups }},
}

// pooledShortfalls are the targets of the pooled candidates and
// block-download scripts and groups (see checkPooled) not met on the
// calibration seeds, each a regime, a kind and what falls short: "P >=
// 0.95 undecided" where the claims given P >= 0.95 leave the lower end of
// their Wilson interval below 0.93 but its upper end at 95% or more (too
// few to tell), "P >= 0.95" where they are measurably below 95% right,
// "none given P >= 0.95" where the kind makes no such claim in any
// capture pooled, "[lo, hi)" for an over-confident bin. A shortfall
// elsewhere fails the test, as does one here that no longer falls short.
// None of the claims given P >= 0.95 is measurably below 95% right; the
// scripts and groups of every regime but mixed are undecided within
// maxFetchCaptures (all right or one to four wrong of 6 to 96), and
// candidates are met everywhere.
var pooledShortfalls = map[string]bool{
	// Scripts given P >= 0.95 over four captures, too few to tell: standard
	// 24 of 24, clustered 17 of 17, shared-client 28 of 29, shrink 12 of 12,
	// lookahead 13 of 13, heavy-tail 6 of 6, change 42 of 42, reuse 29 of
	// 29, payments 41 of 41 (standard 28 of 28, reuse 34 of 35 and
	// payments 42 of 42 before groups were weighed as claims of co-fetched
	// units too; payments 66 of 66, met, before a capture warned that
	// its wallets pay each other had its scripts kept at 0.94: see
	// package leak's capWarned; standard 29 of 29 and reuse 38 of 39
	// before claims on a unit whose blocks sessions of other addresses
	// fetched too were given their share: package leak's coFetched, which
	// lowered only right ones here). Sixteen captures meet the target in
	// every regime but clustered and for every kind but heavy-tail's and
	// shrink's scripts, which stay undecided (TestFetchConfidentRegimes).
	"standard fetches: scripts: P >= 0.95 undecided":      true,
	"clustered fetches: scripts: P >= 0.95 undecided":     true,
	"shared-client fetches: scripts: P >= 0.95 undecided": true,
	"shrink fetches: scripts: P >= 0.95 undecided":        true,
	"lookahead fetches: scripts: P >= 0.95 undecided":     true,
	"heavy-tail fetches: scripts: P >= 0.95 undecided":    true,
	"change fetches: scripts: P >= 0.95 undecided":        true,
	"reuse fetches: scripts: P >= 0.95 undecided":         true,
	"payments fetches: scripts: P >= 0.95 undecided":      true,
	// Groups given P >= 0.95 over four captures, too few to tell: standard
	// 33 of 33, clustered 17 of 17, shared-client 40 of 41, shrink 22 of 22,
	// lookahead 35 of 35, heavy-tail 13 of 13, change 49 of 49, reuse 63 of
	// 64 (payments met: 56 of 56 over three; standard 34 of 34, change 51
	// of 51 and reuse 68 of 69 before coFetched, reuse 64 of 65 and
	// payments 57 of 57 before it weighed groups as claims too).
	"standard fetches: groups: P >= 0.95 undecided":      true,
	"clustered fetches: groups: P >= 0.95 undecided":     true,
	"shared-client fetches: groups: P >= 0.95 undecided": true,
	"shrink fetches: groups: P >= 0.95 undecided":        true,
	"lookahead fetches: groups: P >= 0.95 undecided":     true,
	"heavy-tail fetches: groups: P >= 0.95 undecided":    true,
	"change fetches: groups: P >= 0.95 undecided":        true,
	"reuse fetches: groups: P >= 0.95 undecided":         true,
	// Groups' over-confident bins: heavy-tail's in [0.5, 0.8), none right
	// at 0.513 said (n = 12, one session); change's in [0.8, 0.95), its one
	// group (0.938) wrong; standard's in [0.8, 0.95), its one group (0.801)
	// wrong, alone in the bin since groups are weighed as claims of
	// co-fetched units; four captures each.
	"heavy-tail fetches: groups: [0.5, 0.8)": true,
	"change fetches: groups: [0.8, 0.95)":    true,
	"standard fetches: groups: [0.8, 0.95)":  true,
}

// undecided reports whether the claims given P >= 0.95 of a tally are
// too few to tell whether they meet the stricter target: fewer than
// minPooledConfident, or the lower end of their Wilson interval below
// simulate.TargetWilsonLow while its upper end reaches 95%. With one
// wrong claim, 52 are not enough (51 of 52 right: 0.899 to 0.997); the
// pooling goes on until the claims meet the target, or fall measurably
// below 95% right, or the bound of captures is reached.
func (c *claimTally) undecided() bool {
	return c.confident < minPooledConfident || c.verdict() == verdictUndecided
}

// checkPooled pools each kind of claim of a regime's run with those of
// its further captures (pool), while they leave the target undecided
// (undecided) and the kind's bound of captures is not reached, and holds
// each to the stricter targets (holdPooled): links with linkPooledShortfalls
// (checkPooledLinks), the others with pooledShortfalls. It returns the
// keys of the shortfalls and the pooled figures as one line under the
// regime's table.
func checkPooled(t *testing.T, pool *regimePool, run *regimeRun) (short []string, line string) {
	short, links := checkPooledLinks(t, pool, run)
	figures := []string{links}
	coverShort, cover := checkPooledSessionCover(t, pool, run)
	short = append(short, coverShort...)
	shapes := shapeTally{}
	shapes.addReports(run.sc.Labels.Fetch, run.fetchReports)
	shapeCaptures := 1
	for _, k := range pooledKinds {
		var tally claimTally
		tally.addScore(k.inRun(run))
		captures := 1
		for ; tally.undecided() && captures < k.maxCaptures; captures++ {
			tally.addScore(k.further(pool, captures))
		}
		name := string(pool.r) + " " + k.name
		t.Logf("%s over %d captures: %s (%s)%s", name, captures, tally.confidentFigure(), tally.verdict(), tally.binsFigure())
		short = append(short, holdPooled(t, name, &tally, captures, pooledShortfalls)...)
		figures = append(figures, fmt.Sprintf("%s %s over %s (%s)", k.short, tally.confidentFigure(), plural(captures, "capture"), tally.verdict()))
		if k.name == "fetches: scripts" {
			shapeCaptures = captures
		}
	}
	for k := 1; k < shapeCaptures; k++ {
		shapes.merge(pool.fetchShapes(k))
	}
	shapeShort, shapeFigure := holdShapes(t, pool.r, shapes, shapeCaptures)
	short = append(short, shapeShort...)
	return short, "\nPooled, P ≥ 0.95: " + strings.Join(figures, "; ") + ". " + cover + " " + shapeFigure + "\n"
}

// sessionCoverCaptures is the number of further captures over which the
// sessions' wallet-size intervals are pooled with the regime's own. One
// capture's 65 to 150 sessions measure a coverage near 0.96 to within
// 0.016 to 0.024 (one standard error), so that an interval of exactly
// its nominal coverage leaves the band of simulate.TargetCoverageSlack on
// one capture as often as one time in seven; five captures narrow the
// error to about 0.01.
const sessionCoverCaptures = 4

// sessionCoverShortfalls are the regimes whose sessions' wallet-size
// intervals, pooled over the regime's capture and sessionCoverCaptures
// further ones, cover the true size further than
// simulate.TargetCoverageSlack from their nominal level, stated in
// privacy/README.md as targets not met. A shortfall elsewhere fails the
// test, as does a regime here that no longer falls short.
var sessionCoverShortfalls = map[string]bool{}

// sessionCoverKey names the pooled sessions' interval coverage among a
// run's shortfalls.
const sessionCoverKey = "sessions: interval coverage"

// sessionIntervalScore is the score of the sessions' wallet-size
// intervals in s, nil if it has none.
func sessionIntervalScore(s *simulate.Score) *simulate.IntervalScore {
	for i, iv := range s.Intervals {
		if iv.Where == "sessions" && iv.Quantity == "estimated_wallet" && iv.IntervalCount > 0 {
			return &s.Intervals[i]
		}
	}
	return nil
}

// checkPooledSessionCover pools the sessions' wallet-size intervals of a
// regime's run with those of sessionCoverCaptures further captures (pool)
// and holds their coverage to within simulate.TargetCoverageSlack of
// their nominal level (the mean of each interval's own). It returns the
// key of the shortfall, if any (see sessionCoverShortfalls), and the
// pooled figure as a sentence of the regime's table.
func checkPooledSessionCover(t *testing.T, pool *regimePool, run *regimeRun) ([]string, string) {
	var covered, count int
	var nominal float64
	add := func(s *simulate.Score) {
		if iv := sessionIntervalScore(s); iv != nil {
			covered += iv.CoveredCount
			count += iv.IntervalCount
			nominal += iv.Nominal * float64(iv.IntervalCount)
		}
	}
	add(run.analyze)
	for k := 1; k <= sessionCoverCaptures; k++ {
		add(pool.analyze(k))
	}
	key := string(pool.r) + " " + sessionCoverKey
	if count == 0 {
		t.Errorf("%s: no session interval over %d captures", key, sessionCoverCaptures+1)
		return []string{key}, ""
	}
	cover, want := float64(covered)/float64(count), nominal/float64(count)
	figure := fmt.Sprintf("Session wallet-size intervals: %d of %d cover the size (%.3f; want %.2f ± %g) over %s.",
		covered, count, cover, want, simulate.TargetCoverageSlack, plural(sessionCoverCaptures+1, "capture"))
	t.Logf("%s: %d of %d (%.3f), nominal %.3f, over %d captures", key, covered, count, cover, want, sessionCoverCaptures+1)
	if math.Abs(cover-want) <= simulate.TargetCoverageSlack {
		return nil, figure
	}
	if !sessionCoverShortfalls[key] {
		t.Errorf("%s: %d of %d (%.3f) over %d captures, want %.3f ± %g", key, covered, count, cover, sessionCoverCaptures+1, want, simulate.TargetCoverageSlack)
	}
	return []string{key}, figure
}

// plural is n and what it counts, with an s unless n is 1.
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// checkPooledLinks pools the links of a regime's run with those of its
// further captures of linking alone (pool), while they leave the target
// undecided (undecided) and fewer than maxLinkCaptures are pooled, and
// holds them to the targets: no pair of two wallets given P >
// 0.99 in any of the captures (the regime's own capture is held to it by
// checkRegime too), and those of holdPooled. It returns the keys of the
// shortfalls (see linkPooledShortfalls) and the pooled figure.
func checkPooledLinks(t *testing.T, pool *regimePool, run *regimeRun) ([]string, string) {
	var tally linkTally
	for p, right := range labelledPairs(run.sc.Labels, run.links) {
		tally.add(p.Probability, p.Linked, right)
	}
	captures := 1
	for ; tally.undecided() && captures < maxLinkCaptures; captures++ {
		c := pool.link(captures)
		for p, right := range labelledPairs(c.labels, c.links) {
			tally.add(p.Probability, p.Linked, right)
		}
	}
	r := pool.r
	t.Logf("%s: links over %d captures: %v", r, captures, &tally)
	if tally.wrongSure > 0 {
		t.Errorf("%s links: %d pairs of two wallets given P > 0.99 over %d captures", r, tally.wrongSure, captures)
	}
	short := holdPooled(t, string(r)+" links", &tally.claimTally, captures, linkPooledShortfalls)
	return short, fmt.Sprintf("links %s over %s (%s)", tally.confidentFigure(), plural(captures, "capture"), tally.verdict())
}

// holdPooled holds a kind's claims pooled over captures (its key's
// start: the regime and the kind) to the stricter targets: the
// lower end of the Wilson interval of those given P >= 0.95 at least
// simulate.TargetWilsonLow (short of it, "P >= 0.95 undecided" where the
// upper end reaches 95%, "P >= 0.95" where it does not; a kind with no
// claim given P >= 0.95 falls short too, as "none given P >= 0.95": it is
// not met, only untested), and no bin whose mean probability lies above
// its Wilson interval and more than simulate.TargetBinSlack above the
// share right (a bin below, under-confident, is logged). A shortfall not
// in stated fails the test. It returns the keys of the shortfalls.
func holdPooled(t *testing.T, kind string, c *claimTally, captures int, stated map[string]bool) []string {
	var short []string
	fail := func(key, format string, args ...any) {
		short = append(short, key)
		if stated[key] {
			t.Logf(key+": "+format+" (a stated target not met)", args...)
		} else {
			t.Errorf(key+": "+format, args...)
		}
	}
	lo, hi := simulate.Wilson(c.confidentRight, c.confident)
	switch c.verdict() {
	case verdictNone:
		fail(kind+": none given P >= 0.95", "no claim given P >= 0.95 over %d captures", captures)
	case verdictUndecided:
		fail(kind+": P >= 0.95 undecided", "%d of %d right over %d captures, Wilson interval [%.4f, %.4f]: too few to tell whether the lower bound reaches %g",
			c.confidentRight, c.confident, captures, lo, hi, simulate.TargetWilsonLow)
	case verdictBelow:
		fail(kind+": P >= 0.95", "%d of %d right over %d captures, Wilson interval [%.4f, %.4f]: measurably below 95%% right",
			c.confidentRight, c.confident, captures, lo, hi)
	}
	for _, b := range c.binScores() {
		switch {
		case b.over:
			fail(kind+": "+b.name, "said %.3f, right %.3f [%.3f, %.3f] of %d: over-confident", b.said, b.right, b.lo, b.hi, b.n)
		case b.under:
			t.Logf("%s: %s: said %.3f, right %.3f [%.3f, %.3f] of %d: under-confident (a target not met)", kind, b.name, b.said, b.right, b.lo, b.hi, b.n)
		}
	}
	return short
}

// binsFigure is the tally's bins as a line's end: each said against
// observed with its Wilson interval and count (! where off its diagonal).
func (c *claimTally) binsFigure() string {
	var b strings.Builder
	for _, bin := range c.binScores() {
		mark := " "
		if bin.over || bin.under {
			mark = "!"
		}
		fmt.Fprintf(&b, " | %s %.3f/%.3f [%.2f,%.2f] n=%d%s", bin.name, bin.said, bin.right, bin.lo, bin.hi, bin.n, mark)
	}
	return b.String()
}

// binScore is a bin of a claimTally: its name, the mean probability said
// and the share right with its Wilson interval, and whether the said lies
// above (over) or below (under) that interval and more than
// simulate.TargetBinSlack from the share right.
type binScore struct {
	name                string
	said, right, lo, hi float64
	n                   int
	over, under         bool
}

// scoreBin scores bin i of those edges bound (the last closed), holding
// n claims, right of them right, whose probabilities sum to sumP.
func scoreBin(edges []float64, i, n, right int, sumP float64) binScore {
	end := ")"
	if i == len(edges)-2 {
		end = "]"
	}
	b := binScore{name: fmt.Sprintf("[%g, %g%s", edges[i], edges[i+1], end), n: n,
		said: sumP / float64(n), right: float64(right) / float64(n)}
	b.lo, b.hi = simulate.Wilson(right, n)
	far := math.Abs(b.said-b.right) > simulate.TargetBinSlack
	b.over, b.under = far && b.said > b.hi, far && b.said < b.lo
	return b
}

// linkBinEdges are the edges of a claimTally's bins.
var linkBinEdges = []float64{0, 0.5, 0.8, 0.95, 0.99, 1}

// binScores scores the tally's bins that hold a claim.
func (l *claimTally) binScores() []binScore {
	var out []binScore
	for i, bin := range l.bins {
		if bin.n == 0 {
			continue
		}
		out = append(out, scoreBin(linkBinEdges, i, bin.n, bin.right, bin.sumP))
	}
	return out
}

// TestLinkTallyBins checks the bins checkPooledLinks holds linking to:
// six pairs said 0.89 and none right are over-confident, 56 said 0.87
// and all right under-confident, ten said 0.9 and nine right neither,
// and pairs at 0.95 or more count among the confident, the wrong ones
// above 0.99 as wrong given P > 0.99.
func TestLinkTallyBins(t *testing.T) {
	for _, tc := range []struct {
		name        string
		p           float64
		n, right    int
		over, under bool
	}{
		{"over", 0.89, 6, 0, true, false},
		{"under", 0.87, 56, 56, false, true},
		{"on its diagonal", 0.9, 10, 9, false, false},
		{"sure", 0.995, 60, 60, false, false},
		{"sure but wrong", 0.995, 60, 57, false, false},
	} {
		var l linkTally
		for k := range tc.n {
			l.add(tc.p, true, k < tc.right)
		}
		bins := l.binScores()
		if len(bins) != 1 || bins[0].over != tc.over || bins[0].under != tc.under || bins[0].n != tc.n {
			t.Errorf("%s: bins %+v, want one of %d pairs, over %t, under %t", tc.name, bins, tc.n, tc.over, tc.under)
		}
		if wantConfident := tc.p >= simulate.ConfidentP; (l.confident == tc.n) != wantConfident {
			t.Errorf("%s: %d of %d pairs counted given P >= 0.95", tc.name, l.confident, tc.n)
		}
		if wantWrong := tc.n - tc.right; tc.p > simulate.SureLinkP && l.wrongSure != wantWrong || tc.p <= simulate.SureLinkP && l.wrongSure != 0 {
			t.Errorf("%s: %d pairs counted wrong given P > 0.99, of %d wrong", tc.name, l.wrongSure, wantWrong)
		}
	}
}

// TestSharingEvidenceUnits checks the units sharingEvidence counts pairs
// in: a pair said 0.5 of one wallet and 0.5 of a payment, at priors of
// 0.01 and 0.1, has a ratio of ln 10 (unit 2); a pair lifted by a third
// session, or one likelier of two wallets that share nothing, is left
// out; ratios beyond the bounds count in the end units.
func TestSharingEvidenceUnits(t *testing.T) {
	l := &attack.Linkage{Prior: 0.01, PaymentPrior: 0.1}
	pair := func(p, shared float64, third string) attack.LinkPair {
		return attack.LinkPair{Third: third, SessionLink: attack.SessionLink{Probability: p, ProbabilityShared: shared}}
	}
	var e sharingEvidence
	e.add(pair(0.5, 0.5, ""), l, true)
	e.add(pair(0.5, 0.5, ""), l, false)
	e.add(pair(0.5, 0.5, "s3"), l, true)
	e.add(pair(0.3, 0.3, ""), l, true)
	e.add(pair(1-1e-9, 1e-9, ""), l, true)
	e.add(pair(1e-9, 1-1e-9, ""), l, false)
	want := map[int][2]int{2: {1, 1}, sharingEvidenceHigh: {1, 0}, sharingEvidenceLow: {0, 1}}
	if !reflect.DeepEqual(e.bins, want) {
		t.Errorf("units %v, want %v", e.bins, want)
	}
}

// TestHoldPooled checks the shortfalls holdPooled finds and when pooling
// goes on (undecided): no claim given P >= 0.95 is a shortfall (untested,
// not met), 51 right of 51 one too, undecided (Wilson lower bound 0.930
// wants 52), 52 of 52 none; 55 of 60 (0.819 to 0.964) is undecided, 40
// of 60 (0.541 to 0.773) measurably below 95%; six claims said 0.89 with none
// right are an over-confident bin. Each is stated, so the test's own
// holding only logs.
func TestHoldPooled(t *testing.T) {
	for _, tc := range []struct {
		name      string
		p         float64
		n, right  int
		want      []string
		undecided bool
	}{
		{"none confident", 0.6, 10, 6, []string{"k: none given P >= 0.95"}, true},
		{"51 of 51", 0.97, 51, 51, []string{"k: P >= 0.95 undecided"}, true},
		{"52 of 52", 0.97, 52, 52, nil, false},
		{"55 of 60", 0.96, 60, 55, []string{"k: P >= 0.95 undecided"}, true},
		{"40 of 60", 0.97, 60, 40, []string{"k: P >= 0.95", "k: [0.95, 0.99)"}, false},
		{"over-confident", 0.89, 6, 0, []string{"k: none given P >= 0.95", "k: [0.8, 0.95)"}, true},
	} {
		var c claimTally
		for k := range tc.n {
			c.addClaim(tc.p, k < tc.right)
		}
		stated := map[string]bool{"k: none given P >= 0.95": true, "k: P >= 0.95 undecided": true, "k: P >= 0.95": true,
			"k: [0.8, 0.95)": true, "k: [0.95, 0.99)": true}
		if got := holdPooled(t, "k", &c, 1, stated); !slices.Equal(got, tc.want) {
			t.Errorf("%s: shortfalls %q, want %q", tc.name, got, tc.want)
		}
		if c.undecided() != tc.undecided {
			t.Errorf("%s: undecided %t, want %t", tc.name, c.undecided(), tc.undecided)
		}
	}
}
