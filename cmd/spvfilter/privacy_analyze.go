package main

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

type analyzeFlags struct {
	filters       []string
	capture       string
	client        string
	universe      string
	pairTest      bool
	strict        bool
	intersect     bool
	link          bool
	linkThreshold float64
	// linkThresholdGiven: --link-threshold was given.
	linkThresholdGiven bool
	workers            int
	maxMatches         int
	show               int
}

// analyzeLong is the help of privacy analyze: the filters and the universe
// it reads, and what it reports for each filter.
const analyzeLong = `analyze does what a node that received the filters can do: it tests every
candidate of the universe file against them and reports what it learns.

Filters are filterload payloads in hex (--filter, repeatable; @FILE and -
accepted), intersected as filters of one wallet, or the sessions recorded
by "spvfilter privacy capture" (--capture FILE). A session is one client
connection, named by its client address and port and its session id; its
filterload and filteradd messages are replayed into its filters. Each
session is analyzed on its own, all of them in one pass over the universe:
the filters of different connections may be of different wallets and are
never intersected unless asked. --client HOST, HOST:PORT or SESSION keeps
those sessions only. --intersect also intersects all the kept sessions, as
if they were one wallet's, and names them first. --link compares every
pair of sessions: the candidates both match against the number expected by
chance, and the probability that the two share a wallet (a wallet that
reconnected with a new tweak), set against two wallets that share a few
addresses (a payment between them); the prior, which corrects for
comparing every pair, is estimated from the capture. Three sessions whose
joint matches exceed what chance gives all three strengthen their pairs.
Linked sessions (probability above --link-threshold, for every pair of a
group) are grouped, a group whose joint matches collapse is split, and
each group gets the intersection attack.

The universe file (- for standard input) holds one candidate per line:
a base58 or bech32 address of any standard type and network (P2PKH, P2SH,
P2WPKH, P2WSH, P2TR: tested by the hash or program a wallet inserts), the
hex of a 33/65-byte public key (tested with its HASH160), of a 20/32-byte
hash, or of a script (tested by its data pushes); hex may start with 0x
and lines may end in CRLF. Text after # and blank lines are ignored, except
on a public key's line: "# pair ADDRESS" there (as "privacy universe"
writes it) makes the line stand for that address of the key's HASH160,
counted once as the address, tested by the key and its hash; "listed
ADDRESS" fields name lines of the same hash elsewhere in the file that it
takes over, so that an address and its key count once. The file is read as
a stream, in constant memory: nothing is looked up, so an address and its
key written on two lines without these markers still count as two
candidates. A line that is not a candidate is skipped and counted, and the
first ten are named with the reason, unless --strict, which stops at the
first; a universe without a candidate is an error. The report says how many
lines were read, skipped and tested.

For each filter: its parameters, the element count estimated from its bit
density, its false-positive rate at that fill, the candidates it matches and
the false positives expected among them (|universe| x rate). With several
filters a candidate must match them all (the intersection attack), and the
report shows how each added filter shrinks the false positives; filters of
the same size and tweak (one filter sent twice, or grown by filteradd) test
the same bits and count as one. --pair-test requires both the key and its
hash to match for public-key candidates, and so for an address whose key
is known (its key's line marked "# pair"), in place of the hash alone. Each
match gets the probability that it belongs to the wallet. The estimated
wallet size, each match's probability and each link's come with a 95%
interval (JSON keys ending in _low and _high). A filter that matches
everything, or whose fill is far from one half, is warned about on
standard error, or with --json in "warnings". The text report ends with what
to run next: the same run with --json, with --link when several sessions
were not linked, and privacy evaluate when the capture lies beside the
labels of privacy simulate.`

// analyzeExample shows privacy analyze on filters given in hex and on a
// capture, with the pair test, linked sessions and one client's sessions
// intersected.
const analyzeExample = `  spvfilter privacy analyze --filter @filter1.hex --filter @filter2.hex --universe addresses.txt
  spvfilter privacy analyze --capture capture.jsonl --universe universe.txt --pair-test --json
  spvfilter privacy analyze --capture capture.jsonl --universe universe.txt --link
  spvfilter privacy analyze --capture capture.jsonl --client 127.0.0.1 --intersect --universe universe.txt`

func newPrivacyAnalyzeCommand(a *app) *cobra.Command {
	var f analyzeFlags
	c := &cobra.Command{
		Use:     "analyze (--filter HEX [--filter HEX ...] | --capture FILE) --universe FILE",
		Short:   "Test a universe of candidate addresses against captured BIP 37 filters",
		Long:    analyzeLong,
		Example: analyzeExample,
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f.linkThresholdGiven = cmd.Flags().Changed("link-threshold")
			return runAnalyze(a, &f)
		},
	}
	f.register(c.Flags())
	c.MarkFlagsMutuallyExclusive("filter", "capture")
	_ = c.MarkFlagRequired("universe")
	return c
}

// register defines the flags of privacy analyze on fl, bound to f.
func (f *analyzeFlags) register(fl *pflag.FlagSet) {
	fl.StringArrayVar(&f.filters, "filter", nil, "filterload payload in `HEX` (repeatable; default: none, give --capture)")
	fl.StringVar(&f.capture, "capture", "", "capture `FILE` written by \"privacy capture\" (default: none, give --filter)")
	fl.StringVar(&f.client, "client", "", "with --capture: only the sessions of this `CLIENT`, a HOST, HOST:PORT or SESSION id (default: every session)")
	fl.StringVar(&f.universe, "universe", "", "candidate `FILE`, one per line (- for standard input) (required)")
	fl.BoolVar(&f.pairTest, "pair-test", false, "public keys, and addresses whose key is known, match only if key and hash both match")
	fl.BoolVar(&f.strict, "strict", false, "stop at the first universe line that is not a candidate instead of skipping it")
	fl.BoolVar(&f.intersect, "intersect", false, "with --capture: also intersect the filters of all the kept sessions")
	fl.BoolVar(&f.link, "link", false, "with --capture: link sessions that probably share a wallet, and intersect each group")
	fl.Float64Var(&f.linkThreshold, "link-threshold", 0.5, "with --link: probability `P` above which two sessions are linked, in [0.5, 1)")
	fl.IntVar(&f.workers, "workers", 0, "`N` parsing goroutines (default: number of CPUs, at most 4)")
	fl.IntVar(&f.maxMatches, "max-matches", attack.DefaultMaxMatches, "at most `N` matches listed per report (counts cover all)")
	fl.IntVar(&f.show, "show", 20, "`N` matches printed in each text report")
	wantValues(fl, fmt.Sprintf("want a whole number from 0 to %d (0: as many as CPUs, at most 4)", universe.MaxWorkers), "workers")
	wantValues(fl, "want a whole number, at least 1", "max-matches")
	wantValues(fl, "want a whole number, at least 0", "show")
	exampleValue(fl, "workers", "2")
}

func runAnalyze(a *app, f *analyzeFlags) error {
	if f.capture == "" && len(f.filters) == 0 {
		return badInput("--filter or --capture: give the filters to analyze, as filterload payloads or a capture file")
	}
	switch {
	case f.workers < 0 || f.workers > universe.MaxWorkers:
		return badRange("--workers", f.workers, "")
	case f.maxMatches < 1:
		return badRange("--max-matches", f.maxMatches, "")
	case f.show < 0:
		return badRange("--show", f.show, "")
	case f.capture == "" && f.client != "":
		return badInput("--client %s needs --capture: it keeps sessions of a capture (--filter filters are one wallet's, always intersected)", f.client)
	case f.capture == "" && f.link:
		return badInput("--link needs --capture: it compares the sessions of a capture (--filter filters are one wallet's, always intersected)")
	case f.capture == "" && f.intersect:
		return badInput("--intersect needs --capture: --filter filters are always intersected, as one wallet's")
	case !(f.linkThreshold >= 0.5 && f.linkThreshold < 1):
		return badRange("--link-threshold", f.linkThreshold, "a probability in [0.5, 1)")
	case f.linkThresholdGiven && !f.link:
		return badInput("--link-threshold %v needs --link: without it no session is linked", f.linkThreshold)
	}
	opts := attack.AnalyzeOptions{PairTest: f.pairTest, Workers: f.workers, MaxMatches: f.maxMatches, Strict: f.strict}
	if f.capture != "" {
		return runAnalyzeCapture(a, f, opts)
	}
	if len(f.filters) > attack.MaxFilters {
		return badInput("--filter: %d given, at most %d", len(f.filters), attack.MaxFilters)
	}
	payloads, err := a.readHexArgs("--filter", f.filters)
	if err != nil {
		return err
	}
	var filters []*bip37.Filter
	for i, p := range payloads {
		flt, err := bip37.DecodeFilterLoad(p)
		if err != nil {
			return filterLoadError(fmt.Sprintf("--filter %d", i+1), p, err)
		}
		filters = append(filters, flt)
	}
	_, reps, read, err := analyzeUniverse(a, f.universe, [][]*bip37.Filter{filters}, opts)
	if err != nil {
		return err
	}
	rep := reps[0]
	rep.Warnings = read.skipWarnings(rep.Warnings)
	a.warnBesideResult(rep.Warnings)
	if a.json {
		return a.printJSON(rep)
	}
	printAnalyze(a.stdout, rep, nil, f.show)
	printNext(a.stdout, analyzeNext(f, 0))
	return nil
}

// analyzeUniverse analyzes the groups of filters over the --universe
// argument, a file or - for standard input, and returns the accumulator
// (for linking and intersecting) and its reports.
func analyzeUniverse(a *app, arg string, groups [][]*bip37.Filter, opts attack.AnalyzeOptions) (*attack.Accumulator, []*attack.Report, *universeRead, error) {
	var r io.Reader = a.stdin
	name := "-"
	if arg == "-" {
		if err := a.claimStdin("--universe"); err != nil {
			return nil, nil, nil, err
		}
	} else {
		file, err := openInputFile("--universe", arg)
		if err != nil {
			return nil, nil, nil, err
		}
		defer file.Close()
		var done func()
		r, done = a.withProgress("testing the universe", file)
		defer done()
		name = file.Name()
	}
	// Read once: the kind of a refused file is told from what was read
	// (a named pipe or standard input cannot be opened again).
	seen := newHeadReader(r)
	read := &universeRead{name: name, r: seen}
	br := bufio.NewReader(read)
	if head, _ := br.Peek(4096); binaryHead(head) {
		err := fmt.Errorf("%w: binary data", universe.ErrBadCandidate)
		if k := seen.kind(); k != kindUnknown && k != kindUniverse {
			return nil, nil, nil, otherKind("--universe", name, k, err)
		}
		return nil, nil, nil, usageError{&restated{fmt.Sprintf("--universe %s: binary data, not a universe: want one candidate per line (an address, or a public key or script in hex), as privacy universe and privacy simulate write", name), err}}
	}
	acc, reps, err := accumulate(groups, br, opts)
	if err != nil {
		return nil, nil, nil, universeError(name, seen, err)
	}
	return acc, reps, read, nil
}

// binaryHead reports whether the opening bytes of a file of text lines
// hold a control character no such file has (a NUL, say): binary data,
// or a device that never ends, such as /dev/urandom.
func binaryHead(head []byte) bool {
	for _, c := range head {
		if c < 0x20 && !strings.ContainsRune("\t\n\v\f\r", rune(c)) || c == 0x7f {
			return true
		}
	}
	return false
}

// universeError is an error of reading the --universe named name, read
// through head: a line that is not a candidate, or a universe without
// one, is bad input; a failure to read it is the machine's.
func universeError(name string, head *headReader, err error) error {
	if errors.Is(err, universe.ErrEmpty) || errors.Is(err, universe.ErrBadCandidate) {
		if k := head.kind(); k != kindUnknown && k != kindUniverse {
			return otherKind("--universe", name, k, err)
		}
	}
	if errors.Is(err, universe.ErrEmpty) {
		return usageError{&restated{fmt.Sprintf("--universe %s: %s; want one candidate per line (an address, or a public key or script in hex), as privacy universe and privacy simulate write", name, words(err)), err}}
	}
	if errors.Is(err, universe.ErrBadCandidate) {
		return badInputWords("--universe "+name, err)
	}
	return failureWords("--universe "+name, err)
}

// accumulate reads the universe r into an accumulator of the groups and
// finishes its reports.
func accumulate(groups [][]*bip37.Filter, r io.Reader, opts attack.AnalyzeOptions) (*attack.Accumulator, []*attack.Report, error) {
	acc, err := attack.NewAccumulator(groups, opts)
	if err != nil {
		return nil, nil, err
	}
	if err := acc.ReadUniverse(r); err != nil {
		return nil, nil, err
	}
	reps, err := acc.Reports()
	return acc, reps, err
}

// selectSessions reads the capture and keeps the sessions --client names.
func selectSessions(f *analyzeFlags) ([]*capture.Session, error) {
	records, err := readCapture(f.capture)
	if err != nil {
		return nil, err
	}
	all, err := capture.Sessions(records)
	if err != nil {
		return nil, badInputWords("--capture "+f.capture, err)
	}
	var kept []*capture.Session
	for _, s := range all {
		host, _, err := net.SplitHostPort(s.Client)
		if f.client == "" || err == nil && host == f.client || s.Client == f.client || s.ID == f.client {
			kept = append(kept, s)
		}
	}
	if len(kept) == 0 {
		return nil, noSessions(f.capture, f.client, records, "filterload", fetchCommands, "BIP 157 downloads: give it to privacy fetches --capture")
	}
	return kept, nil
}

func runAnalyzeCapture(a *app, f *analyzeFlags, opts attack.AnalyzeOptions) error {
	sessions, err := selectSessions(f)
	if err != nil {
		return err
	}
	var groups [][]*bip37.Filter
	var all []*bip37.Filter
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		fs := s.BloomFilters()
		if len(fs) > attack.MaxFilters {
			return badInput("--capture %s: session %s (%s) loaded %d filters, at most %d are analyzed together", f.capture, s.ID, s.Client, len(fs), attack.MaxFilters)
		}
		groups = append(groups, fs)
		all = append(all, fs...)
		ids[i] = s.ID
	}
	if f.intersect {
		if len(all) > attack.MaxFilters {
			return badInput("--intersect: the %d sessions loaded %d filters, at most %d can be intersected", len(sessions), len(all), attack.MaxFilters)
		}
		// Said before the work starts: the join is an assumption (with
		// --json, the intersection's "sessions" name them).
		if !a.json {
			fmt.Fprintf(a.stderr, "spvfilter: --intersect joins %s as one wallet's: %s\n", plural(len(sessions), "session"), strings.Join(ids, ", "))
		}
		groups = append(groups, all)
	}
	// The reports, checked here, are made again by the capture report
	// (their cost is small beside the universe's reading).
	acc, _, read, err := analyzeUniverse(a, f.universe, groups, opts)
	if err != nil {
		return err
	}
	what := "reporting the sessions"
	if f.link {
		what = "linking the sessions"
	}
	_, done := a.bar(what, -1)
	out, err := attack.NewCaptureReport(sessions, acc, attack.ReportOptions{Intersect: f.intersect, Link: f.link, LinkThreshold: f.linkThreshold})
	done()
	if errors.Is(err, attack.ErrBadLink) {
		return badInputWords("--link", err)
	}
	if err != nil {
		return err
	}
	out.Warnings = read.skipWarnings(out.Warnings)
	a.warnBesideResult(out.Warnings)
	if a.json {
		return a.printJSON(out)
	}
	printCaptureAnalysis(a.stdout, out, f.show)
	printNext(a.stdout, analyzeNext(f, len(sessions)))
	return nil
}

// maxNextLine bounds the command printed as what to run next: filters
// given in hex may be kilobytes long, and are then not repeated.
const maxNextLine = 400

// analyzeNext is what to run after a text report of privacy analyze: the
// same run with --json, which holds every figure and each report's
// warnings (as "the same command with --json" when the filters given in
// hex would make it too long to print); with --capture of several
// sessions not linked, the run with --link; and, when the capture lies
// beside the labels of privacy simulate, the scoring of that report.
// sessions is the number of sessions of the capture analyzed.
func analyzeNext(f *analyzeFlags, sessions int) []string {
	args := []string{"spvfilter", "privacy", "analyze"}
	for _, v := range f.filters {
		args = append(args, "--filter", shellWord(v))
	}
	if f.capture != "" {
		args = append(args, "--capture", shellWord(f.capture))
	}
	if f.client != "" {
		args = append(args, "--client", shellWord(f.client))
	}
	args = append(args, "--universe", shellWord(f.universe))
	for _, b := range []struct {
		flag string
		set  bool
	}{{"--pair-test", f.pairTest}, {"--strict", f.strict}, {"--intersect", f.intersect}, {"--link", f.link}} {
		if b.set {
			args = append(args, b.flag)
		}
	}
	if f.linkThresholdGiven {
		args = append(args, "--link-threshold", strconv.FormatFloat(f.linkThreshold, 'g', -1, 64))
	}
	if f.maxMatches != attack.DefaultMaxMatches {
		args = append(args, "--max-matches", strconv.Itoa(f.maxMatches))
	}
	run := strings.Join(args, " ")
	if len(run) > maxNextLine {
		return []string{"the same command with --json    # every figure, and each report's warnings"}
	}
	next := []string{run + " --json > report.json    # every figure, and each report's warnings"}
	if f.capture != "" && !f.link && sessions > 1 {
		next = append(next, run+" --link    # which sessions probably share a wallet")
	}
	return append(next, evaluateNext(f.capture, "report.json")...)
}

func printCaptureAnalysis(w io.Writer, out *attack.CaptureReport, show int) {
	printUniverse(w, out.Clients[0].Report)
	for i, c := range out.Clients {
		fmt.Fprintf(w, "\n=== session %d of %d: %s, client %s", i+1, len(out.Clients), c.Session, c.Client)
		if c.UserAgent != "" {
			fmt.Fprintf(w, ", %s", c.UserAgent)
		}
		fmt.Fprintf(w, ", %s\n\n", plural(len(c.Captured), "filter"))
		printReport(w, c.Report, c.Captured, show)
	}
	if j := out.Intersection; j != nil {
		fmt.Fprintf(w, "\n=== intersection of %s, taken as one wallet's: %s\n\n", plural(len(j.Sessions), "session"), strings.Join(j.Sessions, ", "))
		printReport(w, j.Report, nil, show)
	}
	if l := out.Links; l != nil {
		fmt.Fprintf(w, "\n=== session links: %s compared, prior %.3g (95%%: %.3g to %.3g) that two sessions share a wallet, estimated from every pair; linked above %.3g\n",
			plural(l.PairsCompared, "pair"), l.Prior, l.PriorLow, l.PriorHigh, l.Threshold)
		fmt.Fprintf(w, "wallet sizes (from the sessions' own matches): none in the universe %.0f%%, else median %.0f candidates\n", 100*l.WalletSizes.Empty, l.WalletSizes.Median)
		if l.PairsListedShared {
			fmt.Fprintln(w, "(only the pairs that share a match are listed; the others are not linked)")
		}
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "session\tsession\tshared matches\texpected by chance\texpected if one wallet\tP(one wallet)\t95% interval\tP(shared addresses)\tlinked\t")
		for _, p := range l.Pairs {
			linked := ""
			if p.Linked {
				linked = "yes"
			}
			if p.Third != "" {
				linked += " (with " + p.Third + ")"
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.3g\t%.3g\t%.4f\t%.4f-%.4f\t%.4f\t%s\t\n", p.A, p.B, p.Shared, p.ExpectedByChance, p.ExpectedIfSameWallet,
				p.Probability, p.ProbabilityLow, p.ProbabilityHigh, p.ProbabilityShared, linked)
		}
		tw.Flush()
		if len(l.Groups) == 0 {
			fmt.Fprintln(w, "\nno sessions linked: each is analyzed on its own above.")
		}
		for _, g := range l.Groups {
			fmt.Fprintf(w, "\n=== linked group of %d sessions: %s\n\n", len(g.Sessions), strings.Join(g.Sessions, ", "))
			printReport(w, g.Report, nil, show)
		}
	}
}

// printAnalyze prints a report with its universe line.
func printAnalyze(w io.Writer, r *attack.Report, captured []*capture.Filter, show int) {
	printUniverse(w, r)
	fmt.Fprintln(w)
	printReport(w, r, captured, show)
}

func printUniverse(w io.Writer, r *attack.Report) {
	fmt.Fprintf(w, "universe: %s", plural(r.UniverseSize, "candidate"))
	if r.Pairs > 0 {
		fmt.Fprintf(w, " (%s counted as their address, %s merged with their key's)", plural(r.Pairs, "public key"), plural(r.MergedAddressLines, "address line"))
	}
	fmt.Fprintln(w)
	if u := r.Universe; u != nil {
		fmt.Fprintf(w, "lines: %d read, %d skipped (not candidates), %s tested\n", u.LinesRead, u.LinesSkipped, plural(u.CandidatesTested, "candidate"))
		for _, b := range u.BadLines {
			fmt.Fprintf(w, "  skipped line %d: %s\n", b.Line, b.Reason)
		}
		if n := u.LinesSkipped - uint64(len(u.BadLines)); n > 0 {
			fmt.Fprintf(w, "  and %d more\n", n)
		}
	}
}

func printReport(w io.Writer, r *attack.Report, captured []*capture.Filter, show int) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "filter\tbytes\tk\ttweak\tflags\tbits set\test. elements\tfp rate at fill\tmatched alone\texpected false pos.\t")
	for _, fr := range r.Filters {
		est := fmt.Sprintf("%.0f", fr.EstimatedElements)
		if fr.Saturated {
			est = "saturated"
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%.2f%%\t%s\t%.3g\t%d\t%.3g\t\n", fr.Number, fr.SizeBytes, fr.HashFuncs, fr.Tweak, fr.Flags,
			100*fr.Density, est, fr.FalsePositiveRate, fr.Matched, fr.ExpectedFalsePositives)
	}
	tw.Flush()
	for i, c := range captured {
		fmt.Fprintf(w, "filter %d: from %s (session %s) at %s (capture record %d)", i+1, c.Client, c.Session, c.Time.Format("2006-01-02 15:04:05Z"), c.Record)
		if len(c.Added) > 0 {
			fmt.Fprintf(w, ", then %s seen in the clear", plural(len(c.Added), "filteradd element"))
		}
		fmt.Fprintln(w)
	}
	if len(r.Intersection) > 1 {
		fmt.Fprintln(w, "\nintersection attack (a candidate must match every filter so far):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "filters\tmatched\texpected false positives\testimated wallet's\t95% interval\t")
		for _, st := range r.Intersection {
			fmt.Fprintf(tw, "%d\t%d\t%.4g\t%.1f\t%.0f-%.0f\t\n", st.Filters, st.Matched, st.ExpectedFalsePositives, st.EstimatedWallet,
				st.EstimatedWalletLow, st.EstimatedWalletHigh)
		}
		tw.Flush()
	}
	if len(r.Matched) > 0 {
		n := min(show, len(r.Matched))
		// The most probable first: those are what the node learns.
		byProb := slices.Clone(r.Matched)
		slices.SortStableFunc(byProb, func(a, b attack.MatchedCandidate) int { return cmp.Compare(b.Probability, a.Probability) })
		fmt.Fprintf(w, "\nmatched candidates, most probably the wallet's first (%d of %d shown):\n", n, r.MatchedCount)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "line\tcandidate\tkind\tP(wallet)\t95% interval")
		for _, m := range byProb[:n] {
			kind := m.Kind.String()
			if m.PubKey != "" {
				kind += " with its key"
			}
			if m.PairTested {
				kind += " (pair)"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.4f\t%.4f-%.4f\n", m.Line, m.Candidate, kind, m.Probability, m.ProbabilityLow, m.ProbabilityHigh)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\n%s\n", r.Summary)
}

// noSessions is the error of a --capture file from which no session is
// kept: empty, holding records of the other kind only (the other command
// reads those, as other says: the commands of its records are otherCmds),
// or none from --client (whose clients are named).
func noSessions(file, client string, records []capture.Record, kind string, otherCmds []string, other string) error {
	if len(records) == 0 {
		return badInput("--capture %s: no record at all: want a capture file of privacy capture (or privacy simulate); "+
			"privacy capture leaves one empty when no client connected to it or those that did sent nothing to record "+
			"(its warning said so: point the client at its --listen address, on its network)", file)
	}
	var clients, cmds []string
	for _, r := range records {
		if !slices.Contains(clients, r.Client) {
			clients = append(clients, r.Client)
		}
		if !slices.Contains(cmds, r.Command) {
			cmds = append(cmds, r.Command)
		}
	}
	if client != "" {
		shown := clients[:min(len(clients), 5)]
		more := ""
		if len(clients) > len(shown) {
			more = fmt.Sprintf(" and %d more", len(clients)-len(shown))
		}
		return badInput("--client %s: no %s recorded from it in --capture %s, whose clients are %s%s", client, kind, file, strings.Join(shown, ", "), more)
	}
	if slices.ContainsFunc(cmds, func(c string) bool { return slices.Contains(otherCmds, c) }) {
		return badInput("--capture %s: no %s recorded: the file holds %s", file, kind, other)
	}
	return badInput("--capture %s: no %s recorded (its records: %s)", file, kind, strings.Join(cmds, ", "))
}

// universeRead reads the universe, and keeps what its end says: whether
// it ends inside a line (no newline after its last), as a file cut short
// does.
type universeRead struct {
	name string // the file, or - for standard input
	r    io.Reader
	last byte // the last byte read
}

func (u *universeRead) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	if n > 0 {
		u.last = p[n-1]
	}
	return n, err
}

// universeSkipped matches the warning of a report whose universe had
// lines that are no candidates, after "universe: " in a capture's report
// (which says it once, as privacy/beam's pipeline does).
var universeSkipped = regexp.MustCompile(`^(?:universe: )?(\d+ of (\d+) universe lines skipped, not candidates)(?: \(first: line (\d+): (.*)\))?$`)

// skipWarnings says the universe's skipped lines as the universe's (a
// report holds them once: a capture's report says them once for all its
// sessions), and says when the first line skipped is the last, which
// ends without a newline: the file may have been cut short.
func (u *universeRead) skipWarnings(warnings []string) []string {
	out := []string{} // a list in JSON, empty or not
	for _, w := range warnings {
		m := universeSkipped.FindStringSubmatch(w)
		if m == nil {
			out = append(out, w)
			continue
		}
		msg := "universe: " + m[1]
		if m[3] != "" {
			msg += fmt.Sprintf(" (first: line %s: %s", m[3], m[4])
			if m[3] == m[2] && u.last != '\n' {
				msg += "; --universe " + u.name + " ends inside that line, without a newline: was it cut short?"
			}
			msg += ")"
		}
		out = append(out, msg)
	}
	return out
}
