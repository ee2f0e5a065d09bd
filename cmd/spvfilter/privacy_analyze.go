package main

import (
	"cmp"
	"fmt"
	"io"
	"net"
	"os"
	"slices"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy"
)

func init() {
	privacySubcommands = append(privacySubcommands, newPrivacyAnalyzeCommand)
}

type analyzeFlags struct {
	filters    []string
	capture    string
	client     string
	universe   string
	pairTest   bool
	workers    int
	maxMatches int
	show       int
}

func newPrivacyAnalyzeCommand(a *app) *cobra.Command {
	var f analyzeFlags
	c := &cobra.Command{
		Use:   "analyze (--filter HEX [--filter HEX ...] | --capture FILE) --universe FILE",
		Short: "Test a universe of candidate addresses against captured BIP 37 filters",
		Long: `analyze does what a node that received the filters can do: it tests every
candidate of the universe file against them and reports what it learns.

Filters are filterload payloads in hex (--filter, repeatable; @FILE and -
accepted), or every filterload recorded by "spvfilter privacy capture"
(--capture FILE; filteradd elements are applied to their client's filter;
--client HOST keeps the filters of one client only: filters of different
wallets must not be intersected).

The universe file (- for standard input) holds one candidate per line:
a base58 or bech32 address of any standard type and network (P2PKH, P2SH,
P2WPKH, P2WSH, P2TR: tested by the hash or program a wallet inserts), the
hex of a 33/65-byte public key (tested with its HASH160), of a 20/32-byte
hash, or of a script (tested by its data pushes). Text after # and blank
lines are ignored, except on a public key's line: "# pair ADDRESS" there
(as "privacy universe" writes it) makes the line stand for that address of
the key's HASH160, counted once as the address, tested by the key and its
hash; "listed ADDRESS" fields name lines of the same hash elsewhere in the
file that it takes over, so that an address and its key count once. The
file is read as a stream, in constant memory: nothing is looked up, so an
address and its key written on two lines without these markers still
count as two candidates.

For each filter: its parameters, the element count estimated from its bit
density, its false-positive rate at that fill, the candidates it matches and
the false positives expected among them (|universe| x rate). With several
filters a candidate must match them all (the intersection attack), and the
report shows how each added filter shrinks the false positives; filters of
the same size and tweak (one filter sent twice, or grown by filteradd) test
the same bits and count as one. --pair-test requires both the key and its
hash to match for public-key candidates, and so for an address whose key
is known (its key's line marked "# pair"), in place of the hash alone. Each
match gets the probability that it belongs to the wallet.`,
		Example: `  spvfilter privacy analyze --filter @filter1.hex --filter @filter2.hex --universe addresses.txt
  spvfilter privacy analyze --capture capture.jsonl --universe universe.txt --pair-test --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runAnalyze(a, &f) },
	}
	fl := c.Flags()
	fl.StringArrayVar(&f.filters, "filter", nil, "filterload payload in hex (repeatable)")
	fl.StringVar(&f.capture, "capture", "", "capture file written by \"privacy capture\"")
	fl.StringVar(&f.client, "client", "", "with --capture: only the filters of clients at this host (IP)")
	fl.StringVar(&f.universe, "universe", "", "candidate file, one per line (- for standard input)")
	fl.BoolVar(&f.pairTest, "pair-test", false, "public keys, and addresses whose key is known, match only if key and hash both match")
	fl.IntVar(&f.workers, "workers", 0, "parsing goroutines (default: number of CPUs, at most 4)")
	fl.IntVar(&f.maxMatches, "max-matches", privacy.DefaultMaxMatches, "most matches listed (counts cover all)")
	fl.IntVar(&f.show, "show", 20, "matches printed in the text report")
	c.MarkFlagsMutuallyExclusive("filter", "capture")
	_ = c.MarkFlagRequired("universe")
	return c
}

// analyzeOutput is the JSON of the analyze command.
type analyzeOutput struct {
	*privacy.Report
	Captured []*privacy.CapturedFilter `json:"captured,omitempty"`
}

func runAnalyze(a *app, f *analyzeFlags) error {
	var filters []*bip37.Filter
	var captured []*privacy.CapturedFilter
	if f.capture == "" && len(f.filters) == 0 {
		return badInput("give the filters to analyze with --filter or --capture")
	}
	switch {
	case f.workers < 0 || f.workers > privacy.MaxAnalyzeWorkers:
		return badInput("--workers %d: want 0 (automatic) to %d", f.workers, privacy.MaxAnalyzeWorkers)
	case f.maxMatches < 1:
		return badInput("--max-matches %d: must be at least 1", f.maxMatches)
	case f.show < 0:
		return badInput("--show %d: must be at least 0", f.show)
	}
	if f.capture != "" {
		file, err := os.Open(f.capture)
		if err != nil {
			return badInput("capture: %w", err)
		}
		records, err := privacy.ReadCapture(file)
		file.Close()
		if err != nil {
			return badInput("%s: %w", f.capture, err)
		}
		all, err := privacy.CapturedFilters(records)
		if err != nil {
			return badInput("%s: %w", f.capture, err)
		}
		for _, c := range all {
			if host, _, err := net.SplitHostPort(c.Client); f.client == "" || err == nil && host == f.client || c.Client == f.client {
				captured = append(captured, c)
			}
		}
		if len(captured) == 0 {
			if f.client != "" {
				return badInput("%s: no filterload recorded from %s", f.capture, f.client)
			}
			return badInput("%s: no filterload recorded", f.capture)
		}
		for _, c := range captured {
			filters = append(filters, c.Filter)
		}
	} else {
		payloads, err := a.readHexArgs("filter", f.filters)
		if err != nil {
			return err
		}
		for i, p := range payloads {
			flt, err := bip37.DecodeFilterLoad(p)
			if err != nil {
				return badInput("filter %d: %w", i+1, err)
			}
			filters = append(filters, flt)
		}
	}
	if len(filters) > privacy.MaxAnalyzeFilters {
		return badInput("%d filters given, at most %d", len(filters), privacy.MaxAnalyzeFilters)
	}
	var r io.Reader = a.stdin
	name := "standard input"
	if f.universe == "-" {
		if err := a.claimStdin("--universe"); err != nil {
			return err
		}
	} else {
		file, err := os.Open(f.universe)
		if err != nil {
			return badInput("universe: %w", err)
		}
		defer file.Close()
		r, name = file, f.universe
	}
	rep, err := privacy.Analyze(filters, r, privacy.AnalyzeOptions{PairTest: f.pairTest, Workers: f.workers, MaxMatches: f.maxMatches})
	if err != nil {
		return privacyBadInput(fmt.Errorf("%s: %w", name, err))
	}
	if a.json {
		return a.printJSON(analyzeOutput{Report: rep, Captured: captured})
	}
	printAnalyze(a.stdout, rep, captured, f.show)
	return nil
}

func printAnalyze(w io.Writer, r *privacy.Report, captured []*privacy.CapturedFilter, show int) {
	fmt.Fprintf(w, "universe: %d candidates", r.UniverseSize)
	if r.Pairs > 0 {
		fmt.Fprintf(w, " (%d public keys counted as their address, %d address lines merged with their key's)", r.Pairs, r.MergedAddressLines)
	}
	fmt.Fprint(w, "\n\n")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "filter\tbytes\tk\ttweak\tflags\tbits set\test. elements\tfp rate at fill\tmatched alone\texpected false pos.\t")
	for _, fr := range r.Filters {
		est := fmt.Sprintf("%.0f", fr.EstimatedElements)
		if fr.Saturated {
			est = "saturated"
		}
		fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%.2f%%\t%s\t%.3g\t%d\t%.3g\t\n", fr.Index, fr.SizeBytes, fr.HashFuncs, fr.Tweak, fr.Flags,
			100*fr.Density, est, fr.FalsePositiveRate, fr.Matched, fr.ExpectedFalsePositives)
	}
	tw.Flush()
	for i, c := range captured {
		fmt.Fprintf(w, "filter %d: from %s at %s (capture record %d)", i+1, c.Client, c.Time.Format("2006-01-02 15:04:05Z"), c.Record)
		if len(c.Added) > 0 {
			fmt.Fprintf(w, ", then %d filteradd element(s) seen in the clear", len(c.Added))
		}
		fmt.Fprintln(w)
	}
	if len(r.Intersection) > 1 {
		fmt.Fprintln(w, "\nintersection attack (a candidate must match every filter so far):")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "filters\tmatched\texpected false positives\testimated wallet's\t")
		for _, st := range r.Intersection {
			fmt.Fprintf(tw, "%d\t%d\t%.4g\t%.1f\t\n", st.Filters, st.Matched, st.ExpectedFalsePositives, st.EstimatedWallet)
		}
		tw.Flush()
	}
	if len(r.Matched) > 0 {
		n := min(show, len(r.Matched))
		// The most probable first: those are what the node learns.
		byProb := slices.Clone(r.Matched)
		slices.SortStableFunc(byProb, func(a, b privacy.MatchedCandidate) int { return cmp.Compare(b.Probability, a.Probability) })
		fmt.Fprintf(w, "\nmatched candidates, most probably the wallet's first (%d of %d shown):\n", n, r.MatchedCount)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "line\tcandidate\tkind\tP(wallet)")
		for _, m := range byProb[:n] {
			kind := m.Kind.String()
			if m.PubKey != "" {
				kind += " with its key"
			}
			if m.PairTested {
				kind += " (pair)"
			}
			fmt.Fprintf(tw, "%d\t%s\t%s\t%.4f\n", m.Line, m.Candidate, kind, m.Probability)
		}
		tw.Flush()
	}
	fmt.Fprintf(w, "\n%s\n", r.Summary)
}
