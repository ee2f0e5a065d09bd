package main

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/spvfilter/spvfilter/privacy"
	"github.com/spvfilter/spvfilter/privacy/plot"
)

func newDemoCommand(a *app) *cobra.Command {
	o := privacy.DefaultDemoOptions()
	plotFile := "spvfilter-demo.svg"
	c := &cobra.Command{
		Use:   "demo",
		Short: "Show on built-in defaults how much a BIP 37 wallet filter leaks",
		Long: `demo runs the privacy attack end to end, on defaults, in a few seconds:

 1. a wallet like a fresh bitcoinj one: 266 keys (a lookahead of 100 keys
    plus a third on the external and the internal chain), each inserted as
    key and key hash, the filter sized for 100 elements more at bitcoinj's
    default false-positive rate 0.00001 (PeerGroup), by bitcoinj's rule
    (1,893 bytes, 16 hash functions; --sizing core gives Bitcoin Core's
    15);
 2. its filters built with the bip37 package, one per client start (a
    restart picks a new tweak);
 3. a synthetic universe of random addresses with the wallet's used
    addresses hidden among them;
 4. the analysis a node can run ("privacy analyze"), set against the
    analytic model ("privacy model");
 5. a plot of the model along the wallet size, written to --plot, with
    this wallet marked on each curve.`,
		Example: `  spvfilter demo
  spvfilter demo --used 5 --filters 1 --fprate 0.0005 --plot demo.png
  spvfilter demo --sizing core
  spvfilter demo --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPlotFile("--plot", plotFile); err != nil {
				return err
			}
			start := time.Now()
			r, err := privacy.RunDemo(o)
			if err != nil {
				return privacyBadInput(err)
			}
			mark := plot.Mark{X: float64(o.Keys), Label: fmt.Sprintf("this wallet: %d keys", o.Keys)}
			if err := plot.Save(plotFile, r.Sweep, r.Curve, mark); err != nil {
				return privacyBadInput(fmt.Errorf("plot: %w", err))
			}
			if a.json {
				return a.printJSON(struct {
					*privacy.DemoResult
					Model    resultJSON `json:"model"`
					Plot     string     `json:"plot"`
					Warnings []string   `json:"warnings"`
				}{r, newResultJSON(r.Model), plotFile,
					orEmpty(append(append([]string(nil), r.Model.Warnings...), r.Report.Warnings...))})
			}
			printDemo(a.stdout, r, plotFile, time.Since(start))
			return nil
		},
	}
	fl := c.Flags()
	fl.IntVar(&o.Keys, "keys", o.Keys, "keys in the wallet's filter")
	fl.IntVar(&o.Used, "used", o.Used, "wallet addresses used on chain (hidden in the universe)")
	fl.Float64Var(&o.FPRate, "fprate", o.FPRate, "false-positive rate the filter is sized for")
	fl.Uint32Var(&o.Extra, "extra-elements", o.Extra, "elements added to the sizing count")
	fl.IntVar(&o.UniverseSize, "universe-size", o.UniverseSize, "candidate addresses the node tests")
	fl.IntVar(&o.Filters, "filters", o.Filters, "filters captured from the wallet (client restarts + 1)")
	fl.Uint64Var(&o.Seed, "seed", o.Seed, "random seed (keys, tweaks, universe)")
	addSizingFlag(c, &o.Sizing)
	fl.StringVar(&plotFile, "plot", plotFile, "plot file, .svg or .png")
	return c
}

func printDemo(w io.Writer, r *privacy.DemoResult, plotFile string, took time.Duration) {
	o, m, rep := r.Options, r.Model, r.Report
	fmt.Fprintf(w, "Wallet: %d keys (bitcoinj-like), %d of them used on chain.\n", o.Keys, o.Used)
	fmt.Fprintf(w, "Filter: %d elements sized for %d at fp rate %g by %s's rule -> %d bytes, %d hash functions; pf at actual fill %.3g.\n",
		m.Elements, m.SizingElements, o.FPRate, m.Params.Sizing.Implementation(), m.FilterBytes, m.HashFuncs, m.Pf)
	fmt.Fprintf(w, "The node received %d filter(s) with different tweaks and tested %d addresses against them.\n\n", o.Filters, rep.UniverseSize)
	printAnalyze(w, rep, nil, 10)
	fmt.Fprintf(w, "\nOf the wallet's %d used addresses the attack found %d, %d of them with probability >= 95%%.\n", o.Used, r.UsedFound, r.UsedConfident)
	fmt.Fprintf(w, "Model: S = %.3g false positives expected after %d filter(s) (analysis: %.3g); P_h(1) for the %d keys = %.4f.\n",
		m.ExpectedFalsePositives, o.Filters, rep.ExpectedFalsePositives, o.Keys, m.PH1)
	fmt.Fprintf(w, "Plot of P_h(1) and P_h(N) along the wallet size written to %s (%.1fs).\n", plotFile, took.Seconds())
}
