package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// maxReportBytes bounds the report evaluate reads: an analyze of many
// sessions that match everything lists a hundred thousand matches each.
const maxReportBytes = 4 << 30

type evaluateFlags struct {
	labels, report string
	threshold      float64
	show           int
	requireTargets bool
}

func newPrivacyEvaluateCommand(a *app) *cobra.Command {
	var f evaluateFlags
	c := &cobra.Command{
		Use:   "evaluate --labels FILE --report FILE",
		Short: "Score an analyze or fetches report against the labels of privacy simulate",
		Long: `evaluate scores what an attack answered against the truth "privacy simulate"
wrote: the report is the JSON of "privacy analyze --capture" (with or
without --link and --intersect) or of "privacy fetches", run on the
simulation's files (- reads it from standard input).

A report of another simulation is refused (exit status 2), even of the
same seed and so of the same session IDs: a session's filter of another
size or number of hash functions than the labels say, fewer than half of
the candidates the labels say its sessions are bound to match listed (a
filter matches all it holds), or for fetches an index of another network
or range of heights. When only some of those candidates are not listed,
or, for fetches, whose sessions may fetch none of a wallet's blocks (a
client that kept them from an earlier session), any, it is scored with
a warning.

Candidates. A candidate listed for a session is right when the session's
wallet owns it or watches it (a payee's address it paid); noise and
degenerate sessions have no wallet, so every candidate listed for them is
wrong. With probability at least --threshold a candidate is attributed:
precision is the share of the attributed that are right, recall the share
of the candidates the session's filters hold (for fetches: the wallet's
scripts) that are attributed. Per wallet, the same over all its sessions.

Links and groups (analyze --link). A pair of sessions is right when both
are of one wallet; a pair is linked as the report links it. Precision and
recall as above, recall over every pair of the report's sessions that is
of one wallet (pairs the report does not list count as not linked). A
group is pure when all its sessions are of one wallet, exact when it also
holds all of that wallet's sessions; a group's candidates are right when
a wallet all its sessions are of owns them (sessions of a client several
wallets share are of each), else the one most are of. For fetches, groups of
scripts claimed to hold one of the wallet's are right when they do.

Calibration. Every claim (candidate, pair, group) falls in a bin of its
probability: [0, 0.5), [0.5, 0.8), [0.8, 0.95), [0.95, 0.99), [0.99, 1],
and "P >= 0.95" over the last two. A calibrated report is right about as
often as its probabilities say: the fraction right is shown with its 95%
Wilson score interval beside the mean probability.

Intervals. Any interval the report carries is found by its field names
(X_low and X_high, X_lower and X_upper, X_interval, interval, or an object
with low and high): on the estimated wallet it covers the truth or not,
and the coverage is set against its level (0.95 unless the report gives
"level" or "confidence"); on a probability, the fraction right in each bin
is set against the mean interval. What the report does not give, and
fields that are not scored, are listed under "absent".

The targets the attacks are held to are checked last, for candidates,
groups of candidates and links alike: of the claims given P >= 0.95 at
least 95% right, and the lower end of that share's Wilson interval at
least 0.93; every bin right as often as it says (its mean probability
inside the bin's Wilson interval, or within 0.05 of its fraction right);
no wrong link given P > 0.99; intervals on an estimate covering the truth
at their level within 3 points either way; intervals on probabilities
consistent with the fraction right in every bin. Precision and recall are
printed but are not targets: they measure how much an attack finds, not
whether its probabilities hold. A target with nothing to measure says
n/a. With --require-targets the exit status is 1 when a target is not met
(after the report is printed), for CI; 0 otherwise.`,
		Example: `  spvfilter privacy simulate --out sim
  spvfilter privacy analyze --capture sim/capture.jsonl --universe sim/universe.txt --link --json > report.json
  spvfilter privacy evaluate --labels sim/labels.json --report report.json
  spvfilter privacy fetches --capture sim/fetch-capture.jsonl --index sim/chain.idx --json |
    spvfilter privacy evaluate --labels sim/labels.json --report - --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runEvaluate(a, &f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.labels, "labels", "", "labels.json `FILE` written by \"privacy simulate\" (required)")
	fl.StringVar(&f.report, "report", "", "JSON `FILE` of \"privacy analyze --capture\" or \"privacy fetches\" (- for standard input) (required)")
	fl.Float64Var(&f.threshold, "threshold", simulate.ConfidentP, "probability `P` from which a candidate is attributed to its session, in (0, 1]")
	fl.IntVar(&f.show, "show", 10, "`N` mistakes printed of each kind in the text report")
	wantValues(fl, "want a whole number, at least 0", "show")
	fl.BoolVar(&f.requireTargets, "require-targets", false, "exit with status 1 when a target is not met")
	_ = c.MarkFlagRequired("labels")
	_ = c.MarkFlagRequired("report")
	return c
}

func runEvaluate(a *app, f *evaluateFlags) error {
	switch {
	case !(f.threshold > 0 && f.threshold <= 1):
		return badRange("--threshold", f.threshold, "a probability in (0, 1]")
	case f.show < 0:
		return badRange("--show", f.show, "")
	}
	lf, err := openInputFile("--labels", f.labels)
	if err != nil {
		return err
	}
	lb, err := readJSONDocument("--labels "+f.labels, lf)
	lf.Close()
	if err != nil {
		return err
	}
	labels, err := simulate.DecodeLabels(lb)
	if err != nil {
		return badJSONFile("--labels "+f.labels, lb, err)
	}
	report, err := a.readReport(f.report)
	if err != nil {
		return err
	}
	_, scored := a.bar("scoring the report", -1)
	score, err := simulate.Evaluate(labels, report, simulate.EvalOptions{Threshold: f.threshold})
	scored()
	if errors.Is(err, simulate.ErrMismatch) {
		msg := strings.TrimPrefix(err.Error(), simulate.ErrMismatch.Error()+": ")
		return usageError{&restated{"--report " + f.report + " is not of the simulation of --labels " + f.labels + ": " + msg, err}}
	}
	if errors.Is(err, simulate.ErrBadReport) || errors.Is(err, simulate.ErrBadLabels) {
		if bad := reportSessionsProblem(report); bad != "" {
			// Not "labels of another simulation": the report names no
			// session the labels could know.
			return usageError{&restated{"--report " + f.report + ": " + bad + "; " + wantReport, err}}
		}
		return badJSONFile("--report "+f.report, report, err)
	}
	if err != nil {
		return err
	}
	a.warnBesideResult(score.Warnings)
	if a.json {
		err = a.printJSON(score)
	} else {
		printScore(a.stdout, score, f.show)
	}
	if err == nil && f.requireTargets && !score.TargetsMet() {
		err = missedTargets(score)
	}
	return err
}

// missedTargets is the error of --require-targets: nil when every target
// that could be measured is met, else one naming those that are not.
func missedTargets(s *simulate.Score) error {
	var missed []string
	for _, t := range s.Targets {
		if t.Met != nil && !*t.Met {
			missed = append(missed, fmt.Sprintf("%s: %s (want %s)", t.Name, targetValue(t), t.Want))
		}
	}
	if len(missed) == 0 {
		return nil
	}
	return fmt.Errorf("--require-targets: %d of %d targets not met: %s", len(missed), len(s.Targets), strings.Join(missed, "; "))
}

// wantReport says what --report takes.
const wantReport = "want the JSON of privacy analyze --capture or privacy fetches (with --json)"

// reportSessionsProblem says what is wrong with the sessions of the
// report b, a JSON object, when its "clients" is not a list of objects
// each named by a "session" string, or when it has no "clients" at all:
// "" when they are, or when b is no object or a file of a known kind
// without "clients" (which badJSONFile names). The
// scoring reads such a report as one whose sessions the labels do not
// know.
func reportSessionsProblem(b []byte) string {
	var top map[string]json.RawMessage
	if json.Unmarshal(b, &top) != nil || top == nil {
		return ""
	}
	if _, ok := top["clients"]; !ok {
		if kindOf(b) != kindUnknown {
			return "" // a file of a kind badJSONFile names, as the labels
		}
		return `a JSON object without "clients", not a report of privacy analyze or privacy fetches`
	}
	var doc struct {
		Clients []json.RawMessage `json:"clients"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return words(err)
	}
	if len(doc.Clients) == 0 {
		return `its "clients" lists no session`
	}
	for i, c := range doc.Clients {
		var client struct {
			Session *string `json:"session"`
		}
		if err := json.Unmarshal(c, &client); err != nil {
			return fmt.Sprintf(`client %d of "clients": %s`, i+1, words(err))
		}
		if client.Session == nil || *client.Session == "" {
			return fmt.Sprintf(`client %d of "clients" has no "session"`, i+1)
		}
	}
	return ""
}

// badJSONFile is the error of a file given with what that is not the
// JSON the flag wants, in the tool's words: an empty file, or the labels
// and a report given each for the other, say so.
func badJSONFile(what string, b []byte, err error) error {
	const wantLabels = "want the labels.json that privacy simulate writes"
	want := wantReport
	if strings.HasPrefix(what, "--labels") {
		want = wantLabels
	}
	var top map[string]json.RawMessage
	// null decodes into a map without error, and is no object.
	isObject := json.Unmarshal(b, &top) == nil && top != nil
	isNull := string(bytes.TrimSpace(b)) == "null"
	kind := kindOf(b)
	flag, path, _ := strings.Cut(what, " ")
	switch {
	case len(bytes.TrimSpace(b)) == 0:
		return usageError{&restated{what + ": empty: " + want, err}}
	case want == wantLabels && kind == kindReport:
		return usageError{&restated{what + ": a report of privacy analyze or fetches, not the labels: give it to --report, and the labels.json of privacy simulate to --labels", err}}
	case want == wantReport && kind == kindLabels:
		return usageError{&restated{what + ": the labels of privacy simulate, not a report: give it to --labels, and the JSON of privacy analyze --capture or privacy fetches to --report", err}}
	case kind == kindCapture || kind == kindIndex || kind == kindUniverse || kind == kindBlocks:
		return otherKind(flag, path, kind, err)
	case !json.Valid(b) && binaryHead(b[:min(len(b), 4096)]):
		// Not JSON cut or damaged further on: no text at all.
		return usageError{&restated{what + ": binary data, not JSON; " + want, err}}
	case !json.Valid(b):
		var v any
		return usageError{&restated{what + ": " + words(json.Unmarshal(b, &v)) + "; " + want, err}}
	case want == wantLabels && isNull:
		return usageError{&restated{what + ": it holds JSON null where an object is wanted; " + want, err}}
	case want == wantLabels && isObject && len(top) == 0:
		return usageError{&restated{what + ": it holds an empty JSON object; " + want, err}}
	case want == wantLabels && strings.HasPrefix(words(err), "unknown field "):
		// Go's words for a field the labels do not have.
		field := strings.TrimPrefix(words(err), "unknown field ")
		return usageError{&restated{what + ": field " + field + ": no labels.json has this field; " + want, err}}
	case !isObject || want == wantLabels:
		return usageError{&restated{what + ": " + words(err) + "; " + want, err}}
	}
	return badInputWords(what, err)
}

// readReport reads the --report file, or standard input for -.
func (a *app) readReport(arg string) ([]byte, error) {
	var r io.Reader
	if arg == "-" {
		if err := a.claimStdin("--report"); err != nil {
			return nil, err
		}
		r = a.stdin
	} else {
		file, err := openInputFile("--report", arg)
		if err != nil {
			return nil, err
		}
		defer file.Close()
		var done func()
		r, done = a.withProgress("reading the report", file)
		defer done()
	}
	return readJSONDocument("--report "+arg, r)
}

// readJSONDocument reads the JSON document of the file what names, at
// most maxReportBytes of it. A file whose opening is no JSON value (a
// binary file, a device such as /dev/zero) is refused on its first bytes,
// not after gigabytes of them.
func readJSONDocument(what string, r io.Reader) ([]byte, error) {
	br := bufio.NewReader(r)
	head, _ := br.Peek(4096)
	if t := bytes.TrimLeft(head, " \t\r\n"); len(t) > 0 && !bytes.ContainsRune([]byte(`{["-0123456789tfn`), rune(t[0])) {
		var v any
		return nil, badJSONFile(what, head, json.Unmarshal(head, &v))
	}
	b, err := io.ReadAll(io.LimitReader(br, maxReportBytes+1))
	if err != nil {
		return nil, failureWords(what, err)
	}
	if len(b) > maxReportBytes {
		return nil, badInput("%s: more than %d bytes", what, maxReportBytes)
	}
	return b, nil
}

func printScore(w io.Writer, s *simulate.Score, show int) {
	fmt.Fprintf(w, "report of %s: %d sessions scored, attributed from P >= %g\n", s.ReportKind, len(s.Sessions), s.Threshold)
	what := "every session's matches, right when its wallet owns or watches them"
	if s.ReportKind == "fetches" {
		what = "every session's matched scripts, right when its wallet's"
	}
	printClaims(w, "candidates", what, s.Candidates)
	if l := s.Links; l != nil {
		fmt.Fprintf(w, "\nlinks: %d pairs of sessions, %d of one wallet; %s given P > %g, %d given P > %g\n",
			l.PairCount, l.TruthCount, plural(l.WrongAboveConfident, "wrong link"), simulate.ConfidentP, l.WrongAboveSure, simulate.SureLinkP)
		printClaims(w, "link pairs", "the pairs the report lists, right when both sessions are of one wallet", l.ClaimScore)
	}
	if g := s.Groups; g != nil {
		fmt.Fprintf(w, "\nlink groups: %d, %d pure (one wallet), %d exact (all its sessions), of %d wallets with 2 or more sessions\n",
			g.GroupCount, g.PureCount, g.ExactCount, g.LinkableWalletCount)
		fmt.Fprintf(w, "  pairs inside groups: %d, %d right: precision %s, recall %s\n", g.PairCount, g.PairRight, fmtRatio(g.PairPrecision), fmtRatio(g.PairRecall))
		printClaims(w, "group candidates", "each group's joint matches, against the wallets all its sessions are of", g.Candidates)
	}
	if g := s.Intersection; g != nil {
		fmt.Fprintf(w, "\nintersection of %d sessions (wallets %s): majority %s, pure %v; estimated wallet %s against %d held by all\n",
			len(g.Sessions), strings.Join(g.SessionWallets, ","), orNone(g.Majority), g.Pure, fmtRatio(g.EstimatedWallet), g.WalletCandidates)
	}
	if g := s.CandidateGroups; g != nil {
		printClaims(w, "candidate groups", "groups of scripts, right when one of them is the wallet's", g)
	}
	printIntervals(w, s.Intervals)
	fmt.Fprintln(w, "\ntargets:")
	for _, t := range s.Targets {
		mark := "n/a"
		if t.Met != nil {
			mark = map[bool]string{true: "met", false: "NOT MET"}[*t.Met]
		}
		fmt.Fprintf(w, "  %-8s %s: %s (want %s)\n", mark, t.Name, targetValue(t), t.Want)
	}
	printMistakes(w, s.Mistakes, show)
	if len(s.Absent) > 0 {
		fmt.Fprintln(w, "\nabsent or not scored:")
		for _, x := range s.Absent {
			fmt.Fprintf(w, "  %s\n", x)
		}
	}
}

func printClaims(w io.Writer, name, what string, c *simulate.ClaimScore) {
	fmt.Fprintf(w, "\n%s (%s):\n", name, what)
	fmt.Fprintf(w, "  %d listed, %d attributed, %d right: precision %s; %d true, %d of them attributed: recall %s\n",
		c.ClaimCount, c.AttributedCount, c.RightCount, fmtRatio(c.Precision), c.TruthCount, c.FoundCount, fmtRatio(c.Recall))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  P\tclaims\tright\tfraction right\t95% Wilson\tmean P\t")
	for _, b := range append(append([]simulate.Bin{}, c.Calibration...), c.Confident) {
		fmt.Fprintf(tw, "  %s\t%d\t%d\t%s\t%s\t%s\t\n", binName(b), b.Count, b.Right, fmtRatio(b.FractionRight),
			fmtInterval(b.WilsonLow, b.WilsonHigh), fmtRatio(b.MeanProbability))
	}
	tw.Flush()
}

func binName(b simulate.Bin) string {
	switch {
	case b.PLow == simulate.ConfidentP && b.PHigh == 1:
		return fmt.Sprintf(">= %g (all)", b.PLow)
	case b.PHigh == 1:
		return fmt.Sprintf("[%g, 1]", b.PLow)
	}
	return fmt.Sprintf("[%g, %g)", b.PLow, b.PHigh)
}

func printIntervals(w io.Writer, ivs []simulate.IntervalScore) {
	if len(ivs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nintervals:")
	for _, iv := range ivs {
		if iv.Coverage != nil {
			fmt.Fprintf(w, "  %s, %s (%s): %d of %d cover the truth: %s, nominal %.4g\n",
				iv.Where, iv.Quantity, iv.Field, iv.CoveredCount, iv.IntervalCount, fmtRatio(iv.Coverage), iv.Nominal)
			continue
		}
		fmt.Fprintf(w, "  %s, %s (%s): %d intervals on probabilities, %d of them hold the rate of claims like theirs: %s, nominal %.4g\n",
			iv.Where, iv.Quantity, iv.Field, iv.IntervalCount, iv.HoldingCount, fmtRatio(iv.Holding), iv.Nominal)
		for _, b := range iv.Calibration {
			if b.Count == 0 {
				continue
			}
			fmt.Fprintf(w, "    %s: %d of %d right, %s; mean interval %s: %s; %d of %d intervals hold the rate of claims like theirs\n", binName(b.Bin), b.Right, b.Count,
				fmtInterval(b.WilsonLow, b.WilsonHigh), fmtInterval(b.MeanLow, b.MeanHigh),
				map[bool]string{true: "consistent", false: "INCONSISTENT"}[*b.Consistent], b.HoldingCount, b.Count)
		}
	}
}

func printMistakes(w io.Writer, ms []simulate.Mistake, show int) {
	shown := map[string]int{}
	for _, m := range ms {
		if shown[m.Kind] >= show {
			continue
		}
		if len(shown) == 0 {
			fmt.Fprintln(w, "\nmost confident mistakes:")
		}
		shown[m.Kind]++
		var who []string
		for i, id := range m.Sessions {
			who = append(who, fmt.Sprintf("%s (%s)", id, orNone(m.Wallets[i])))
		}
		line := fmt.Sprintf("  %s, P %.6g: %s", m.Kind, m.Probability, strings.Join(who, " + "))
		if m.Candidate != "" {
			line += fmt.Sprintf(": %s, of %s", m.Candidate, orNone(m.Owner))
		}
		fmt.Fprintln(w, line)
	}
}

func orNone(s string) string {
	if s == "" {
		return "no wallet"
	}
	return s
}

func fmtRatio(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.4g", *v)
}

// targetValue prints a target's value with 4 significant digits, or as
// many more as put the printed value on the same side of the target's
// bounds (read from its Want: ">= X", "X" or "X ± S") as the value
// itself, so that a miss never reads as a value that meets the target
// (0.949996 against >= 0.95 is not "0.95"), nor the reverse. A whole
// number prints whole.
func targetValue(t simulate.Target) string {
	if t.Value == nil {
		return "-"
	}
	v := *t.Value
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	lo, hi, ok := targetBounds(t.Want)
	if t.Met == nil || !ok {
		return fmtRatio(t.Value)
	}
	for digits := 4; digits <= 17; digits++ {
		s := strconv.FormatFloat(v, 'g', digits, 64)
		printed, _ := strconv.ParseFloat(s, 64)
		if (printed >= lo-targetSlack && printed <= hi+targetSlack) == *t.Met {
			return s
		}
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// targetSlack is the rounding allowance of simulate's band targets.
const targetSlack = 1e-12

// targetBounds reads the bounds of a target's Want: ">= X" (X to
// infinity), "X ± S" (X-S to X+S) or a number X (X alone).
func targetBounds(want string) (lo, hi float64, ok bool) {
	if rest, found := strings.CutPrefix(want, ">= "); found {
		x, err := strconv.ParseFloat(rest, 64)
		return x, math.Inf(1), err == nil
	}
	if mid, slack, found := strings.Cut(want, " ± "); found {
		x, err1 := strconv.ParseFloat(mid, 64)
		s, err2 := strconv.ParseFloat(slack, 64)
		return x - s, x + s, err1 == nil && err2 == nil
	}
	x, err := strconv.ParseFloat(want, 64)
	return x, x, err == nil
}

func fmtInterval(lo, hi *float64) string {
	if lo == nil || hi == nil {
		return "-"
	}
	return fmt.Sprintf("%.4g-%.4g", *lo, *hi)
}
