package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/privacy"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/plot"
)

// demoFlags holds the flags of "demo": the demonstration's options and
// the plot file.
type demoFlags struct {
	opts privacy.DemoOptions
	plot string
}

func newDemoCommand(a *app) *cobra.Command {
	f := demoFlags{opts: privacy.DefaultDemoOptions(), plot: "spvfilter-demo.svg"}
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
		RunE: func(cmd *cobra.Command, _ []string) error { return runDemo(a, &f, cmd.Flags()) },
	}
	fl := c.Flags()
	fl.IntVar(&f.opts.Keys, "keys", f.opts.Keys, "`N` keys in the wallet's filter")
	fl.IntVar(&f.opts.Used, "used", f.opts.Used, "`N` wallet addresses used on chain (hidden in the universe)")
	fl.Float64Var(&f.opts.FPRate, "fprate", f.opts.FPRate, "false-positive `RATE` the filter is sized for")
	fl.Uint32Var(&f.opts.Extra, "extra-elements", f.opts.Extra, "`N` elements added to the sizing count")
	fl.IntVar(&f.opts.UniverseSize, "universe-size", f.opts.UniverseSize, "`N` candidate addresses the node tests")
	fl.IntVar(&f.opts.Filters, "filters", f.opts.Filters, "`N` filters captured from the wallet (client restarts + 1)")
	fl.Uint64Var(&f.opts.Seed, "seed", f.opts.Seed, "random `SEED` (keys, tweaks, universe)")
	wantValues(fl, fmt.Sprintf("want a whole number from 1 to %d", demoMaxKeys), "keys")
	wantValues(fl, fmt.Sprintf("want a whole number from 1 to %d", attack.MaxFilters), "filters")
	wantValues(fl, "want a whole number from 0 to the --keys", "used")
	wantValues(fl, fmt.Sprintf("want a whole number from the --used to %d", demoMaxUniverse), "universe-size")
	addSizingFlag(c, &f.opts.Sizing)
	fl.StringVar(&f.plot, "plot", f.plot, "plot `FILE`, .svg or .png")
	return c
}

// runDemo runs the demonstration on the flags' options, writes the plot
// and prints the result; fl names the flags in errors.
func runDemo(a *app, f *demoFlags, fl *pflag.FlagSet) error {
	if err := f.check(); err != nil {
		return err
	}
	if f.plot == "" {
		return badInput(`--plot "": want a file name ending in .svg or .png (demo always draws its plot)`)
	}
	if err := checkPlotFile("--plot", f.plot); err != nil {
		return err
	}
	plotFile, err := a.outputs.create("--plot", f.plot)
	if err != nil {
		return err
	}
	start := time.Now()
	r, err := privacy.RunDemo(f.opts)
	if errors.Is(err, model.ErrBadParams) {
		return demoFields.badParams(err, fl)
	}
	if err != nil {
		return err
	}
	mark := plot.Mark{X: float64(f.opts.Keys), Label: fmt.Sprintf("this wallet: %d keys", f.opts.Keys)}
	if err := a.drawPlot(plotFile, func(name string) error { return plot.Save(name, r.Sweep, r.Curve, mark) }); err != nil {
		return err
	}
	if err := a.outputs.commit(plotFile); err != nil {
		return err
	}
	if a.json {
		return a.printJSON(struct {
			*privacy.DemoResult
			Plot     string   `json:"plot"`
			Warnings []string `json:"warnings"`
		}{r, f.plot,
			orEmpty(append(append([]string(nil), r.Model.Warnings...), r.Report.Warnings...))})
	}
	printDemo(a.stdout, r, f.plot, time.Since(start))
	return nil
}

// Bounds of the demonstration's wallet and universe, as privacy.RunDemo
// holds them.
const (
	demoMaxKeys     = 100_000
	demoMaxUniverse = 100_000_000
)

// check refuses, naming the flag, the options privacy.RunDemo refuses.
func (f *demoFlags) check() error {
	o := f.opts
	switch {
	case o.Keys < 1 || o.Keys > demoMaxKeys:
		return badRange("--keys", o.Keys, "")
	case o.Used < 0 || o.Used > o.Keys:
		return badRangeBy("--used", o.Used, fmt.Sprintf("a whole number from 0 to %d, the --keys (the used addresses are some of the wallet's keys)", o.Keys), min(o.Keys, 20))
	case o.UniverseSize < o.Used || o.UniverseSize > demoMaxUniverse:
		return badRangeBy("--universe-size", o.UniverseSize, fmt.Sprintf("a whole number from %d, the --used, to %d (the universe holds the used addresses)", o.Used, demoMaxUniverse), max(o.Used, 1_000_000))
	case o.Filters < 1 || o.Filters > attack.MaxFilters:
		return badRange("--filters", o.Filters, "")
	}
	return nil
}

func printDemo(w io.Writer, r *privacy.DemoResult, plotFile string, took time.Duration) {
	o, m, rep := r.Options, r.Model, r.Report
	fmt.Fprintf(w, "Wallet: %d keys (bitcoinj-like), %d of them used on chain.\n", o.Keys, o.Used)
	fmt.Fprintf(w, "Filter: %s sized for %d at fp rate %g by %s's rule -> %s, %s; pf at actual fill %.3g.\n",
		plural(m.Elements, "element"), m.SizingElements, o.FPRate, m.Params.Sizing.Implementation(), plural(m.FilterBytes, "byte"), plural(m.HashFuncs, "hash function"), m.Pf)
	fmt.Fprintf(w, "The node received %s with different tweaks and tested %s against them.\n\n", plural(o.Filters, "filter"), plural(rep.UniverseSize, "address"))
	printAnalyze(w, rep, nil, 10)
	fmt.Fprintf(w, "\nOf the wallet's %d used addresses the attack found %d, %d of them with probability >= 95%%.\n", o.Used, r.UsedFound, r.UsedConfident)
	fmt.Fprintf(w, "Model: S = %.3g false positives expected after %s (analysis: %.3g); P_h(1) for the %d keys = %.4f.\n",
		m.ExpectedFalsePositives, plural(o.Filters, "filter"), rep.ExpectedFalsePositives, o.Keys, m.PH1)
	fmt.Fprintf(w, "Plot of P_h(1) and P_h(N) along the wallet size written to %s (%.1fs).\n", plotFile, took.Seconds())
}
