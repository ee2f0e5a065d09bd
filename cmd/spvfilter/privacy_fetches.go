package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

func init() {
	privacySubcommands = append(privacySubcommands, newPrivacyFetchesCommand)
}

type fetchesFlags struct {
	capture, index, client string
	maxMatches, show       int
}

func newPrivacyFetchesCommand(a *app) *cobra.Command {
	var f fetchesFlags
	c := &cobra.Command{
		Use:   "fetches --capture FILE --index FILE",
		Short: "Find the scripts a BIP 157 client's block downloads give away",
		Long: `fetches does what a node serving a BIP 157 client can do with the blocks it
downloads. A script that appears in k blocks of the scanned range, all of
which the client fetched, is the wallet's unless chance explains it.

The capture (written by "privacy capture") holds, per session, the blocks
requested (getdata) and the filter ranges (getcfilters, getcfheaders); the
index (written by "privacy universe --index") holds, for every script, the
heights of the blocks it appears in, and the chain's block hashes, which
turn the requested hashes into heights. For each session:

  B  the blocks of the scanned range (its filter ranges and fetched blocks)
  F  the blocks fetched in it, f = F/B
  k  a candidate's appearances in the range

a candidate all of whose k blocks were fetched matches; chance explains it
with probability C(B-k, F-k)/C(B, F) (the fetched set drawn at random;
about f^k). The report ranks the matches by that probability, gives the
expected number of matches by chance (its sum over the candidates), the
probability that each match is the wallet's (one less the share of chance
among the matches with the same k) and a verdict in plain words. --client
HOST, HOST:PORT or SESSION keeps those sessions only.`,
		Example: `  spvfilter privacy fetches --capture capture.jsonl --index universe.idx
  spvfilter privacy fetches --capture capture.jsonl --index universe.idx --client 127.0.0.1 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runFetches(a, &f) },
	}
	fl := c.Flags()
	fl.StringVar(&f.capture, "capture", "", "capture file written by \"privacy capture\" (required)")
	fl.StringVar(&f.index, "index", "", "appearance index written by \"privacy universe --index\" (required)")
	fl.StringVar(&f.client, "client", "", "only the sessions of this client HOST, HOST:PORT or SESSION id")
	fl.IntVar(&f.maxMatches, "max-matches", attack.DefaultMaxFetchMatches, "most matches listed per session, least explained by chance first (counts cover all)")
	fl.IntVar(&f.show, "show", 20, "matches printed per session in the text report")
	_ = c.MarkFlagRequired("capture")
	_ = c.MarkFlagRequired("index")
	return c
}

// fetchesOutput is the JSON of privacy fetches.
type fetchesOutput struct {
	Index    fetchesIndex          `json:"index"`
	Clients  []*attack.FetchReport `json:"clients"`
	Warnings []string              `json:"warnings"`
}

type fetchesIndex struct {
	Network string `json:"network"`
	From    int32  `json:"from"`
	To      int32  `json:"to"`
}

func runFetches(a *app, f *fetchesFlags) error {
	switch {
	case f.maxMatches < 1:
		return badInput("--max-matches %d: must be at least 1", f.maxMatches)
	case f.show < 0:
		return badInput("--show %d: must be at least 0", f.show)
	}
	cf, err := openInputFile("--capture", f.capture)
	if err != nil {
		return err
	}
	records, err := capture.Read(cf)
	cf.Close()
	if err != nil {
		return badInput("%s: %w", f.capture, err)
	}
	all, err := capture.FetchSessions(records)
	if err != nil {
		return badInput("%s: %w", f.capture, err)
	}
	var sessions []*capture.FetchSession
	for _, s := range all {
		host, _, err := net.SplitHostPort(s.Client)
		if f.client == "" || err == nil && host == f.client || s.Client == f.client || s.ID == f.client {
			sessions = append(sessions, s)
		}
	}
	if len(sessions) == 0 {
		if f.client != "" {
			return badInput("%s: no block request or filter range recorded from %s", f.capture, f.client)
		}
		return badInput("%s: no block request or filter range recorded (a capture made before the relay recorded them?)", f.capture)
	}
	xf, err := openInputFile("--index", f.index)
	if err != nil {
		return err
	}
	defer xf.Close()
	ir, err := universe.NewIndexReader(xf)
	if err != nil {
		return badInput("%s: %w", f.index, err)
	}
	reps, err := attack.AnalyzeFetches(sessions, ir, attack.FetchOptions{MaxMatches: f.maxMatches})
	if errors.Is(err, universe.ErrBadIndex) {
		return badInput("%s: %w", f.index, err)
	}
	if err != nil {
		return fmt.Errorf("fetches: %w", err)
	}
	hd := ir.Header()
	out := fetchesOutput{Index: fetchesIndex{Network: hd.Network, From: hd.First, To: hd.Last()}, Clients: reps, Warnings: []string{}}
	for _, r := range reps {
		for _, w := range r.Warnings {
			out.Warnings = append(out.Warnings, fmt.Sprintf("session %s (%s): %s", r.Session, r.Client, w))
		}
	}
	a.warn(out.Warnings)
	if a.json {
		return a.printJSON(out)
	}
	printFetches(a.stdout, &out, f.show)
	return nil
}

func printFetches(w io.Writer, out *fetchesOutput, show int) {
	fmt.Fprintf(w, "index: %s blocks %d..%d\n", out.Index.Network, out.Index.From, out.Index.To)
	for i, r := range out.Clients {
		fmt.Fprintf(w, "\nsession %d of %d: %s (%s)", i+1, len(out.Clients), r.Session, r.Client)
		if r.UserAgent != "" {
			fmt.Fprintf(w, " %s", r.UserAgent)
		}
		fmt.Fprintf(w, "\n  scanned blocks %d..%d (B = %d), fetched F = %d (f = %.4g)", r.ScannedFrom, r.ScannedTo, r.ScannedBlocks, r.FetchedBlocks, r.FetchedFraction)
		if len(r.FetchedHeights) <= 40 {
			fmt.Fprintf(w, ": heights %v", r.FetchedHeights)
		}
		fmt.Fprintln(w)
		fmt.Fprintf(w, "  %d candidates in the range; %d have every appearance fetched; %.4g expected by chance\n",
			r.UniverseSize, r.MatchedCount, r.ExpectedFalsePositives)
		if len(r.Matched) > 0 && show > 0 {
			tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
			fmt.Fprintln(tw, "  candidate\tk\tchance C(B-k,F-k)/C(B,F)\tf^k\twallet's")
			for j, m := range r.Matched {
				if j == show {
					fmt.Fprintf(tw, "  ... %d more\t\t\t\t\n", len(r.Matched)-show)
					break
				}
				fmt.Fprintf(tw, "  %s\t%d\t%.3g\t%.3g\t%.4f\n", m.Candidate, m.Appearances, m.ChanceProbability, m.ChanceProbabilityApprox, m.Probability)
			}
			tw.Flush()
		}
		fmt.Fprintf(w, "  verdict: %s\n", r.Verdict)
	}
}
