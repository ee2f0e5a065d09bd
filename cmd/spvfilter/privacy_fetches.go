package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

type fetchesFlags struct {
	captures           []string
	index, client      string
	maxMatches, show   int
	intersect, collude bool
	coverTarget        float64
}

// fetchesLong is the help of privacy fetches: what the capture holds, the
// figures of a session's downloads, and how a candidate's chance is judged.
const fetchesLong = `fetches does what a node serving a BIP 157 client can do with the blocks it
downloads. A script that appears in k blocks of the scanned range, all of
which the client fetched, is the wallet's unless chance explains it.

The capture (written by "privacy capture") holds, per session, the blocks
requested (getdata) and the filter ranges (getcfilters, getcfheaders); the
index (written by "privacy universe --index") holds, for every script, the
heights of the blocks it appears in and the transactions there (from
version 4, whether each pays or spends it), and the chain's block hashes, which turn the requested hashes into heights (an
index of which no session scanned a block, of another chain or range,
is refused). For each session:

  B  the blocks of the scanned range: its getcfilters ranges and fetched
     blocks (a client syncs filter headers, getcfheaders, from the genesis
     block whatever it scans: they do not count); a block fetched outside
     the ranges was scanned with another node's filters, so the range is
     then every block from the first to the last
  F  the blocks fetched in it, f = F/B
  k  a candidate's appearances in the range

a candidate all of whose k blocks were fetched matches. Chance is what the
fetched set, shifted by 8 to 68 scanned blocks either way (reflected at
the ends of the range), matches on average: a shift keeps the chain's
clustering (outputs spent in the next blocks) and era but not the
alignment with the wallet's transactions. Blocks placed at random, C(B-k,
F-k)/C(B, F) per candidate (about f^k), are shown beside it. Matches that
downloads cannot tell apart form a group: those of the same two or more
blocks, and a match all of whose appearances lie in transactions of other
matches (a payer's change beside a payment to the wallet, the payee of the
wallet's spend), joined to each. A group holds the wallet's script with
one less the share of chance among the groups of its k; a member appearing
in more blocks than the others keeps most of that, one riding in the
others' transactions is the wallet's with half of it (downloads cannot
tell a payer's change from the wallet's own change), and members of as
many appearances as the top one are ambiguous with each other (named in
ambiguous_with: one of them, not each, is the wallet's, so each of n has a
share 1/n of the group's probability). Every script seen once in a fetched
block matches, so a match of one appearance is the wallet's with the share
the fetched blocks carry beyond what their neighbours, the nearest blocks
not fetched, carry. Probabilities come with 95% intervals (JSON keys
ending in _low and _high); the report also gives the estimated number of
the wallet's groups and of its matches of one appearance, and a verdict in
plain words. --client HOST, HOST:PORT or SESSION keeps those sessions
only; --intersect also joins them as one client's: its scanned range is
the union of theirs, and a block counts as fetched when every session that
scanned it fetched it. --collude instead joins them as colluding nodes see
one client: the union of what they scanned and of what they fetched, so
that a script whose blocks were fetched from different nodes matches there
(spreading downloads over peers does not protect against nodes that pool
their captures). --capture may be given several times, a capture per node:
the session ids then take a capN: prefix, N the file's place.
--cover-target P is for captures of a client that fetches cover scripts to
keep every script's probability at most P (spvfilter scan --privacy-target
P): it caps each probability at P, the posterior of an attacker who knows
the target and cannot tell the covers from the wallet. Without
--cover-target, a session that names a script or a group at 0.5 or more is
warned that covers cannot be ruled out: the downloads do not tell them
from the wallet's, whatever the user agent, and covers to a target below a
probability overstate it. A script that appears, in at least half its
blocks, in transactions paying more than four matched scripts at once (a
batched payment, where a payer's change reused across batches has the same
evidence) has three quarters of its class's probability (batched in
--json); a group or script of two or more appearances all of whose blocks
are blocks of another group of as many appearances or more, in
transactions of its own, is explained by the downloads of that group
whatever its owner (another wallet's address reused in the wallet's
blocks) and has half its class's (nested). The sessions of BIP 37 clients
(a filter loaded, blocks asked for without a BIP 157 filter range) are
left out, with a warning: their filters say what they watch (privacy
analyze --capture). The text report says each kind of group reason whole
once, under a letter, its numbers as #1, #2, ..., and each group names it
by letter with its own numbers; --json gives each group's reason whole. A
warning several sessions give is said once, naming them (all, or the first
few), each number that differs between them as its range; --json's
warning_sessions lists beside each warning the ids of every session that
gives it, and each session's report folds them alike: its warning_indexes
give the place in "warnings" of each warning it gives, and its own
"warnings" hold, whole, only those no other session gives.`

// fetchesExample shows privacy fetches on one node's capture, one client,
// its sessions intersected, and colluding nodes.
const fetchesExample = `  spvfilter privacy fetches --capture capture.jsonl --index universe.idx
  spvfilter privacy fetches --capture capture.jsonl --index universe.idx --client 127.0.0.1 --json
  spvfilter privacy fetches --capture capture.jsonl --index universe.idx --client 127.0.0.1 --intersect
  spvfilter privacy fetches --capture node1.jsonl --capture node2.jsonl --index universe.idx --collude`

func newPrivacyFetchesCommand(a *app) *cobra.Command {
	var f fetchesFlags
	c := &cobra.Command{
		Use:     "fetches --capture FILE --index FILE",
		Short:   "Find the scripts a BIP 157 client's block downloads give away",
		Long:    fetchesLong,
		Example: fetchesExample,
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runFetches(a, &f) },
	}
	f.register(c.Flags())
	_ = c.MarkFlagRequired("capture")
	_ = c.MarkFlagRequired("index")
	return c
}

// register defines the flags of privacy fetches on fl, bound to f.
func (f *fetchesFlags) register(fl *pflag.FlagSet) {
	fl.StringArrayVar(&f.captures, "capture", nil, "capture `FILE` written by \"privacy capture\"; repeat it for the captures of several nodes")
	fl.StringVar(&f.index, "index", "", "appearance index `FILE` written by \"privacy universe --index\"")
	fl.StringVar(&f.client, "client", "", "only the sessions of this `CLIENT`, a HOST, HOST:PORT or SESSION id (default: every session)")
	fl.IntVar(&f.maxMatches, "max-matches", attack.DefaultMaxFetchMatches, "at most `N` matches listed per session, least explained by chance first (counts cover all)")
	fl.IntVar(&f.show, "show", 20, "`N` matches printed per session in the text report")
	wantValues(fl, "want a whole number, at least 1", "max-matches")
	wantValues(fl, "want a whole number, at least 0", "show")
	fl.BoolVar(&f.intersect, "intersect", false, "also join the kept sessions as one client's (the intersection of their downloads)")
	fl.BoolVar(&f.collude, "collude", false, "also join the kept sessions as colluding nodes see one client (the union of their downloads)")
	fl.Float64Var(&f.coverTarget, "cover-target", 0, "cap every probability at `P` (0, the default, for none; else in (0, 1)): the attack on a client that fetches covers to keep each script at most P (spvfilter --privacy-target P); it under-claims on a client without covers")
	exampleValue(fl, "cover-target", "0.5")
}

// fetchesOutput is the JSON of privacy fetches.
type fetchesOutput struct {
	Index   fetchesIndex       `json:"index"`
	Clients []*fetchClientJSON `json:"clients"`
	// Intersection is null without --intersect, Collusion without
	// --collude.
	Intersection *intersectionJSON `json:"intersection"`
	Collusion    *intersectionJSON `json:"collusion"`
	// Warnings says each warning of the reports once, for every session
	// that gives it; WarningSessions, beside it, lists the ids of those
	// sessions (the joined report's id last when it gives it too; for the
	// BIP 37 sessions left out, their ids).
	Warnings        []string   `json:"warnings"`
	WarningSessions [][]string `json:"warning_sessions"`
}

// fetchClientJSON is a session's report as --json gives it, its warnings
// folded as the output's are: WarningIndexes gives the place in the
// output's Warnings of each warning the session gives, and Warnings,
// whole, only those no other report gives (a warning several give is
// said once, in the output's Warnings, each number that differs as its
// range: it is not repeated in every session's report).
type fetchClientJSON struct {
	*attack.FetchReport
	Warnings       []string `json:"warnings"`
	WarningIndexes []int    `json:"warning_indexes"`
}

// intersectionJSON is the report of the sessions joined by --intersect:
// as a session's, but of no one client (null).
type intersectionJSON struct {
	*fetchClientJSON
	Client *string `json:"client"`
}

type fetchesIndex struct {
	Network string `json:"network"`
	From    int32  `json:"from"`
	To      int32  `json:"to"`
	Version int    `json:"format_version"`
}

func runFetches(a *app, f *fetchesFlags) error {
	if err := checkFetchesFlags(f); err != nil {
		return err
	}
	sessions, bip37, err := readFetchSessions(f.captures, f.client)
	if err != nil {
		return err
	}
	xf, err := openInputFile("--index", f.index)
	if err != nil {
		return err
	}
	defer xf.Close()
	// Read once: a refused file's kind is told from what was read.
	head := newHeadReader(xf)
	ir, err := universe.NewIndexReader(head)
	if err != nil {
		return indexError(f.index, head, err)
	}
	if (f.intersect || f.collude) && !a.json {
		// With --json, the report names the sessions it joins.
		sayJoined(a.stderr, f, sessions)
	}
	reps, err := attack.AnalyzeFetches(sessions, ir, attack.FetchOptions{MaxMatches: f.maxMatches, Intersect: f.intersect, Collude: f.collude, CoverTarget: f.coverTarget})
	if errors.Is(err, universe.ErrBadIndex) {
		return indexError(f.index, head, err)
	}
	if err != nil {
		return err
	}
	if err := indexOfOtherBlocks(f, ir.Header(), reps); err != nil {
		return err
	}
	out := newFetchesOutput(f, ir.Header(), reps, bip37)
	a.warnBesideResult(out.Warnings)
	if a.json {
		return a.printJSON(out)
	}
	printFetches(a.stdout, &out, f.show)
	printNext(a.stdout, fetchesNext(f))
	return nil
}

// fetchesNext is what to run after a text report of privacy fetches: the
// same run with --json, which holds every figure and each session's
// warnings, and, when the capture lies beside the labels of privacy
// simulate, the scoring of that report against them.
func fetchesNext(f *fetchesFlags) []string {
	args := []string{"spvfilter", "privacy", "fetches"}
	for _, c := range f.captures {
		args = append(args, "--capture", shellWord(c))
	}
	args = append(args, "--index", shellWord(f.index))
	if f.client != "" {
		args = append(args, "--client", shellWord(f.client))
	}
	switch {
	case f.intersect:
		args = append(args, "--intersect")
	case f.collude:
		args = append(args, "--collude")
	}
	if f.coverTarget != 0 {
		args = append(args, "--cover-target", strconv.FormatFloat(f.coverTarget, 'g', -1, 64))
	}
	if f.maxMatches != attack.DefaultMaxFetchMatches {
		args = append(args, "--max-matches", strconv.Itoa(f.maxMatches))
	}
	next := []string{strings.Join(args, " ") + " --json > fetches.json    # every figure, and each session's warnings"}
	if len(f.captures) == 1 {
		next = append(next, evaluateNext(f.captures[0], "fetches.json")...)
	}
	return next
}

// indexOfOtherBlocks is bad input when no session scanned a block of the
// index and some asked for blocks it does not hold: the index is of
// another chain or range than the captures, and every report would say
// nothing; nil otherwise.
func indexOfOtherBlocks(f *fetchesFlags, hd *universe.IndexHeader, reps []*attack.FetchReport) error {
	unknown := 0
	for _, r := range reps {
		if r.ScannedBlocks > 0 {
			return nil
		}
		unknown += r.FetchedUnknown
	}
	if unknown == 0 {
		return nil
	}
	if f.intersect || f.collude {
		unknown -= reps[len(reps)-1].FetchedUnknown // the joined report counts them again
	}
	return badInput("--index %s: none of the %s the sessions of --capture %s asked for is in its chain (%s blocks %d..%d), and no filter range lies there: "+
		"the index of another chain or range than the capture; give the index of the blocks the clients scanned (privacy universe --index over their range)",
		f.index, plural(unknown, "block"), strings.Join(f.captures, ", --capture "), hd.Network, hd.First, hd.Last())
}

// checkFetchesFlags refuses, before any file is read, the flags of
// fetches out of their range or that cannot go together.
func checkFetchesFlags(f *fetchesFlags) error {
	switch {
	case f.maxMatches < 1:
		return badRange("--max-matches", f.maxMatches, "")
	case f.show < 0:
		return badRange("--show", f.show, "")
	}
	if f.coverTarget != 0 && !(f.coverTarget > 0 && f.coverTarget < 1) {
		return badRange("--cover-target", f.coverTarget, "0 (the default) for none, or a probability in (0, 1), the target the client covers to")
	}
	if f.collude && f.intersect {
		return badInput("--collude and --intersect: the colluding nodes' view joins what several nodes saw of one client at once (a union), an intersection joins one client's sessions over time: ask for one")
	}
	for i, file := range f.captures {
		for j, earlier := range f.captures[:i] {
			if file != "-" && sameOutput(file, earlier) {
				// Its sessions would count twice, as two nodes' views.
				return badInput("--capture %s: the same file as --capture %d (%s): give each node's capture once", file, j+1, earlier)
			}
		}
	}
	return nil
}

// readFetchSessions reads the fetch sessions of client ("" for all) in
// the captures, and the ids of the BIP 37 clients' sessions left out;
// with several captures, each id is prefixed by its capture's number
// (cap1:, cap2:, ...).
func readFetchSessions(captures []string, client string) ([]*capture.FetchSession, []string, error) {
	var sessions []*capture.FetchSession
	var bip37 []string
	for n, file := range captures {
		kept, left, err := fetchSessionsOf(file, client)
		if err != nil {
			return nil, nil, err
		}
		if len(captures) > 1 {
			prefix := fmt.Sprintf("cap%d:", n+1)
			for _, s := range kept {
				s.ID = prefix + s.ID
			}
			for i := range left {
				left[i] = prefix + left[i]
			}
		}
		sessions, bip37 = append(sessions, kept...), append(bip37, left...)
	}
	return sessions, bip37, nil
}

// sayJoined tells w which sessions --intersect or --collude joins.
func sayJoined(w io.Writer, f *fetchesFlags, sessions []*capture.FetchSession) {
	ids := make([]string, len(sessions))
	for i, s := range sessions {
		ids[i] = s.ID
	}
	how := "--intersect joins %s as one client's: %s\n"
	if f.collude {
		how = "--collude joins %s as colluding nodes see one client: %s\n"
	}
	fmt.Fprintf(w, "spvfilter: "+how, plural(len(sessions), "session"), strings.Join(ids, ", "))
}

// newFetchesOutput is the output of fetches: the reports reps of the
// sessions (the joined one last with --intersect or --collude) on the
// index of header hd, and the warnings, the BIP 37 sessions left out
// named.
func newFetchesOutput(f *fetchesFlags, hd *universe.IndexHeader, reps []*attack.FetchReport, bip37 []string) fetchesOutput {
	out := fetchesOutput{Index: fetchesIndex{Network: hd.Network, From: hd.First, To: hd.Last(), Version: hd.Version}}
	joined := ""
	switch {
	case f.intersect:
		joined = "the intersection"
	case f.collude:
		joined = "the collusion"
	}
	var refs [][]int
	out.Warnings, out.WarningSessions, refs = foldSessionWarnings(reps, joined)
	clients := make([]*fetchClientJSON, len(reps))
	for i, r := range reps {
		c := &fetchClientJSON{FetchReport: r, Warnings: []string{}, WarningIndexes: refs[i]}
		for k, w := range r.Warnings {
			if len(out.WarningSessions[refs[i][k]]) == 1 {
				c.Warnings = append(c.Warnings, w)
			}
		}
		clients[i] = c
	}
	out.Clients = clients
	switch {
	case f.intersect:
		out.Clients, out.Intersection = clients[:len(clients)-1], &intersectionJSON{fetchClientJSON: clients[len(clients)-1]}
	case f.collude:
		out.Clients, out.Collusion = clients[:len(clients)-1], &intersectionJSON{fetchClientJSON: clients[len(clients)-1]}
	}
	if len(bip37) > 0 {
		out.WarningSessions = append(out.WarningSessions, bip37)
		out.Warnings = append(out.Warnings, fmt.Sprintf("%s left out, BIP 37 clients (a filter loaded, blocks asked for without a BIP 157 filter range), whose filters privacy analyze --capture reads: %s",
			plural(len(bip37), "session"), strings.Join(bip37[:min(len(bip37), 5)], ", ")+moreOf(len(bip37), 5)))
	}
	return out
}

// fetchSessionsOf reads a capture's fetch sessions of client (all for
// ""), and returns those kept and the ids of BIP 37 clients' left out
// (see withoutBIP37); none kept is bad input that says what the file
// holds.
func fetchSessionsOf(file, client string) (kept []*capture.FetchSession, left []string, err error) {
	records, err := readCapture(file)
	if err != nil {
		return nil, nil, err
	}
	all, err := capture.FetchSessions(records)
	if err != nil {
		return nil, nil, badInputWords("--capture "+file, err)
	}
	var sessions []*capture.FetchSession
	for _, s := range all {
		host, _, err := net.SplitHostPort(s.Client)
		if client == "" || err == nil && host == client || s.Client == client || s.ID == client {
			sessions = append(sessions, s)
		}
	}
	if len(sessions) == 0 {
		return nil, nil, noSessions(file, client, records, "block request or filter range", filterCommands, "BIP 37 filters: give it to privacy analyze --capture")
	}
	kept, left = withoutBIP37(sessions, records)
	if len(kept) == 0 {
		which := fmt.Sprintf("its %d sessions with downloads are BIP 37 clients: they loaded", len(left))
		if len(left) == 1 {
			which = "its 1 session with downloads is a BIP 37 client: it loaded"
		}
		return nil, nil, badInput("--capture %s: %s a filter (filterload) and asked for blocks without a BIP 157 filter range; a BIP 37 client's filter, not its downloads, says what it watches: give the capture to privacy analyze --capture",
			file, which)
	}
	return kept, left, nil
}

// withoutBIP37 leaves out of sessions those of BIP 37 clients: a session
// that loaded a filter (filterload) and asked for blocks without a BIP 157
// filter range. Such a client asks for every block, filtered: its
// downloads are not what the block-download attack reads. It returns the
// sessions kept and the ids of those left out.
func withoutBIP37(sessions []*capture.FetchSession, records []capture.Record) ([]*capture.FetchSession, []string) {
	loaded := map[string]bool{}
	for _, r := range records {
		if r.Command == wire.CmdFilterLoad {
			key := r.Session
			if key == "" {
				key = r.Client
			}
			loaded[key] = true
		}
	}
	var kept []*capture.FetchSession
	var left []string
	for _, s := range sessions {
		if loaded[s.ID] && len(s.Ranges) == 0 {
			left = append(left, s.ID)
			continue
		}
		kept = append(kept, s)
	}
	return kept, left
}

// moreOf says how many of n items beyond the first shown are not shown.
func moreOf(n, shown int) string {
	if n <= shown {
		return ""
	}
	return fmt.Sprintf(" and %d more", n-shown)
}

// fetchCommands and filterCommands are the commands of the records that
// privacy fetches and privacy analyze read.
var (
	fetchCommands  = []string{wire.CmdGetData, wire.CmdGetCFilters, wire.CmdGetCFHeaders}
	filterCommands = []string{wire.CmdFilterLoad, wire.CmdFilterAdd, wire.CmdFilterClear}
)

// indexError is an --index file that is not an appearance index, or a
// damaged one, read through head: bad input that says which commands
// write one.
func indexError(file string, head *headReader, err error) error {
	if errors.Is(err, universe.ErrBadIndex) {
		msg := words(err)
		if strings.HasPrefix(msg, "not an appearance index") {
			if k := head.kind(); k != kindUnknown && k != kindIndex {
				return otherKind("--index", file, k, err)
			}
			if len(head.head) == 0 {
				msg = "empty: want an appearance index"
			}
			msg += " (privacy universe --index and privacy simulate write one)"
		} else {
			msg = "a damaged appearance index: " + strings.TrimPrefix(msg, "index: ") +
				" (write it again: privacy universe --index or privacy simulate writes one)"
		}
		return usageError{&restated{fmt.Sprintf("--index %s: %s", file, msg), err}}
	}
	return failureWords("--index "+file, err)
}

func printFetches(w io.Writer, out *fetchesOutput, show int) {
	fmt.Fprintf(w, "index: %s blocks %d..%d (version %d)\n", out.Index.Network, out.Index.From, out.Index.To, out.Index.Version)
	reasons := &reasonLegend{letters: map[string]string{}}
	for i, r := range out.Clients {
		fmt.Fprintf(w, "\nsession %d of %d: %s (%s)", i+1, len(out.Clients), r.Session, r.Client)
		if r.UserAgent != "" {
			fmt.Fprintf(w, " %s", r.UserAgent)
		}
		fmt.Fprintln(w)
		printFetchReport(w, r.FetchReport, show, reasons)
	}
	if r := out.Intersection; r != nil {
		fmt.Fprintf(w, "\nintersection of %s, taken as one client's: %s\n", plural(len(out.Clients), "session"), r.Session)
		printFetchReport(w, r.FetchReport, show, reasons)
	}
	if r := out.Collusion; r != nil {
		fmt.Fprintf(w, "\ncolluding nodes: %s joined as one client's, the union of what they saw: %s\n", plural(len(out.Clients), "session"), r.Session)
		printFetchReport(w, r.FetchReport, show, reasons)
	}
}

// reasonLegend says each kind of group reason once in a text report: a
// reason is said whole, its numbers as #1, #2, ..., the first time a
// group gives it, under a letter, and every group names its reason by
// that letter with its own numbers.
type reasonLegend struct {
	letters map[string]string // by the reason's template (numberSlots)
}

// name is how the group line of reason gives it, and the line that says
// the reason whole before that group's, "" once said.
func (l *reasonLegend) name(reason string) (name, legend string) {
	template, nums := numberSlots(reason)
	letter, said := l.letters[template]
	if !said {
		letter = string(rune('A' + len(l.letters)%26))
		if len(l.letters) >= 26 {
			letter += strconv.Itoa(len(l.letters) / 26)
		}
		l.letters[template] = letter
		parts := strings.Split(template, "\x00")
		var b strings.Builder
		for i, p := range parts {
			b.WriteString(p)
			if i < len(parts)-1 {
				fmt.Fprintf(&b, "#%d", i+1)
			}
		}
		legend = fmt.Sprintf("reason %s (said once; groups name it by letter, with their own #1, #2, ...): %s", letter, b.String())
	}
	name = "reason " + letter
	if len(nums) > 0 {
		slots := make([]string, len(nums))
		for i, n := range nums {
			slots[i] = fmt.Sprintf("#%d = %s", i+1, n)
		}
		name += " (" + strings.Join(slots, ", ") + ")"
	}
	return name, legend
}

// printFetchReport prints one session's (or the intersection's) report,
// the reasons of its groups by their letters in reasons.
func printFetchReport(w io.Writer, r *attack.FetchReport, show int, reasons *reasonLegend) {
	scanned := "nothing scanned"
	if r.ScannedFrom != nil && r.ScannedTo != nil {
		scanned = fmt.Sprintf("scanned blocks %d..%d", *r.ScannedFrom, *r.ScannedTo)
	}
	fmt.Fprintf(w, "  %s (B = %d), fetched F = %d (f = %.4g)", scanned, r.ScannedBlocks, r.FetchedBlocks, r.FetchedFraction)
	if len(r.FetchedHeights) <= 40 {
		fmt.Fprintf(w, ": heights %v", r.FetchedHeights)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  %d candidates in the range; %d have every appearance fetched; %.4g expected by chance, %d ride in another match's transactions\n",
		r.UniverseSize, r.MatchedCount, r.ExpectedFalsePositives, r.CoLocated)
	if len(r.ByAppearances) > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  k\tcandidates\tby chance (random)\tby chance (shifts)\tmatched\tgroups\tco-located\t")
		for _, c := range r.ByAppearances {
			fmt.Fprintf(tw, "  %d\t%d\t%.4g\t%.4g\t%d\t%d\t%d\t\n", c.Appearances, c.Candidates, c.ExpectedByChance, c.ExpectedByShifts, c.Matched, c.Groups, c.CoLocated)
		}
		tw.Flush()
	}
	if len(r.Matched) > 0 && show > 0 {
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  candidate\tk\tchance C(B-k,F-k)/C(B,F)\tf^k\tgroup\twallet's\t95% interval")
		for j, m := range r.Matched {
			if j == show {
				fmt.Fprintf(tw, "  ... %d more\t\t\t\t\t\t\n", len(r.Matched)-show)
				break
			}
			group := ""
			if m.Group > 0 {
				group = fmt.Sprint(m.Group)
			}
			if len(m.AmbiguousWith) > 0 {
				group += " (ambiguous)"
			}
			fmt.Fprintf(tw, "  %s\t%d\t%.3g\t%.3g\t%s\t%.4f\t%.4f-%.4f\n", m.Candidate, m.Appearances, m.ChanceProbability, m.ChanceProbabilityApprox,
				group, m.Probability, m.ProbabilityLow, m.ProbabilityHigh)
		}
		tw.Flush()
	}
	for i, g := range r.Groups {
		if i == show {
			fmt.Fprintf(w, "  ... %d more groups\n", len(r.Groups)-show)
			break
		}
		members := g.Members
		if len(members) > 5 {
			members = append(members[:5:5], fmt.Sprintf("and %d more", len(g.Members)-5))
		}
		reason, legend := reasons.name(g.Reason)
		if legend != "" {
			fmt.Fprintf(w, "  %s\n", legend)
		}
		fmt.Fprintf(w, "  group %d (k = %d): %s: probability %.4f (95%%: %.4f-%.4f) that one is the wallet's: %s\n", i+1, g.Appearances,
			strings.Join(members, ", "), g.Probability, g.ProbabilityLow, g.ProbabilityHigh, reason)
	}
	fmt.Fprintf(w, "  verdict: %s\n", r.Verdict)
}

// warningFold is one warning of the sessions' reports said once: its
// text with each standalone number replaced by a zero byte, the numbers
// each session's says there, and who says it.
type warningFold struct {
	template string
	ones     int        // the slots of the template's warning that say 1
	numbers  [][]string // per slot, the numbers said there
	sessions []string   // the ids of the sessions that say it
	joined   string     // the joined report's id when it says it too
}

// numberWords are words a warning says in the singular of a count of 1
// and in the plural of more, each with the word both fold to.
var numberWords = map[string]string{
	"it": "they", "them": "they", "its": "their", "has": "have", "is": "are", "that": "those", "holds": "hold", "shows": "show",
}

// foldKey is the template of a warning with the words a count inflects
// folded to one form: the warning said of 1 ("1 match appears") and of
// more ("3 matches appear") is one warning. Such a word is told by
// numberWords, or by the -s or -es of one of its two forms.
func foldKey(template string) string {
	words := strings.Split(template, " ")
	for i, w := range words {
		// A word's punctuation stays as it is: "sits," is "sit,".
		core := strings.TrimRight(w, ",;:.)")
		w, mark := core, w[len(core):]
		if p, ok := numberWords[w]; ok {
			w = p
		}
		w = strings.TrimSuffix(w, "s")
		if strings.HasSuffix(w, "che") || strings.HasSuffix(w, "she") || strings.HasSuffix(w, "xe") {
			w = strings.TrimSuffix(w, "e")
		}
		words[i] = w + mark
	}
	return strings.Join(words, " ")
}

// numberSlots splits a warning into its template, each standalone number
// (one that stands as a word: after a space or a parenthesis, before a
// space, a punctuation mark or the end) replaced by a zero byte, and
// those numbers. Numbers inside a word (a session id such as simf7-3, an
// address, a range 0..999) are part of the template.
func numberSlots(w string) (string, []string) {
	var b strings.Builder
	var nums []string
	digit := func(i int) bool { return i < len(w) && w[i] >= '0' && w[i] <= '9' }
	for i := 0; i < len(w); {
		if !digit(i) || i > 0 && w[i-1] != ' ' && w[i-1] != '(' {
			b.WriteByte(w[i])
			i++
			continue
		}
		j := i
		for digit(j) {
			j++
		}
		if j+1 < len(w) && w[j] == '.' && digit(j+1) {
			for j++; digit(j); j++ {
			}
		}
		end := j == len(w) || strings.IndexByte(" ,;:)", w[j]) >= 0 || w[j] == '.' && (j+1 == len(w) || w[j+1] == ' ')
		if end {
			nums = append(nums, w[i:j])
			b.WriteByte(0)
		} else {
			b.WriteString(w[i:j])
		}
		i = j
	}
	return b.String(), nums
}

// text is the warning said once: each number that differs between the
// sessions that give it as the range of what they say ("1 to 7").
func (f *warningFold) text() string {
	parts := strings.Split(f.template, "\x00")
	var b strings.Builder
	for i, p := range parts {
		b.WriteString(p)
		if i == len(parts)-1 {
			break
		}
		nums := f.numbers[i]
		lo, hi := nums[0], nums[0]
		for _, n := range nums[1:] {
			x, _ := strconv.ParseFloat(n, 64)
			if l, _ := strconv.ParseFloat(lo, 64); x < l {
				lo = n
			}
			if h, _ := strconv.ParseFloat(hi, 64); x > h {
				hi = n
			}
		}
		b.WriteString(lo)
		if hi != lo {
			b.WriteString(" to " + hi)
		}
	}
	return b.String()
}

// namedAtMost is how many sessions a warning names in its text; --json's
// warning_sessions names every one.
const namedAtMost = 4

// who names the sessions that give a warning, of total sessions: both or
// all of them, or up to namedAtMost by id.
func (f *warningFold) who(total int, joined string) string {
	var who string
	switch n := len(f.sessions); {
	case n == 1:
		who = "session " + f.sessions[0]
	case n == 2 && total == 2:
		who = "both sessions"
	case n > 2 && n == total:
		who = fmt.Sprintf("all %d sessions", n)
	case n > 1:
		shown := f.sessions[:min(n, namedAtMost)]
		who = fmt.Sprintf("%d of %d sessions (%s", n, total, strings.Join(shown, ", "))
		if n > len(shown) {
			who += fmt.Sprintf(" and %d more", n-len(shown))
		}
		who += ")"
	}
	if f.joined != "" {
		who = strings.TrimPrefix(who+" and "+joined, " and ")
	}
	return who
}

// foldSessionWarnings gives the warnings of the reports once each: a
// warning several sessions share, but for its numbers (and the singular
// words of a count of 1, see foldKey), is said once for all of them, each number that differs as its range, and beside it the
// ids of the sessions that give it; refs gives, for each report, the
// place in warnings of each of its warnings, in their order. With
// joined, the last report joins the others (the intersection, or the
// collusion), named so.
func foldSessionWarnings(reps []*attack.FetchReport, joined string) (warnings []string, sessions [][]string, refs [][]int) {
	var folds []*warningFold
	byTemplate := map[string]*warningFold{}
	index := map[*warningFold]int{}
	refs = make([][]int, len(reps))
	total := len(reps)
	if joined != "" {
		total--
	}
	for i, r := range reps {
		for _, w := range r.Warnings {
			template, nums := numberSlots(w)
			ones := 0
			for _, n := range nums {
				if n == "1" {
					ones++
				}
			}
			key := foldKey(template)
			f := byTemplate[key]
			if f == nil {
				f = &warningFold{template: template, ones: ones, numbers: make([][]string, len(nums))}
				byTemplate[key] = f
				index[f] = len(folds)
				folds = append(folds, f)
			} else if ones < f.ones {
				// Said of more than one: the words of a range of counts.
				f.template, f.ones = template, ones
			}
			refs[i] = append(refs[i], index[f])
			for k, n := range nums {
				f.numbers[k] = append(f.numbers[k], n)
			}
			if joined != "" && i == len(reps)-1 {
				f.joined = r.Session
			} else if !slices.Contains(f.sessions, r.Session) {
				f.sessions = append(f.sessions, r.Session)
			}
		}
	}
	warnings, sessions = []string{}, [][]string{}
	for _, f := range folds {
		warnings = append(warnings, f.who(total, joined)+": "+f.text())
		ids := slices.Clone(f.sessions)
		if f.joined != "" {
			ids = append(ids, f.joined)
		}
		sessions = append(sessions, ids)
	}
	for i := range refs {
		if refs[i] == nil {
			refs[i] = []int{}
		}
	}
	return warnings, sessions, refs
}
