package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/plot"
)

func newPrivacyCommand(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "privacy",
		Short: "Measure what a wallet's BIP 37 filters and BIP 157 block downloads reveal to the nodes",
		Long: `privacy measures what a node learns from the Bloom filters a BIP 37 light
client sends it (Gervais et al., ACSAC 2014; Jonas Nick, 2015), and what a
BIP 157/158 node learns instead, from the blocks the client downloads.

  model     the analytic model for a wallet of N addresses (and Monte Carlo)
  analyze   test a universe of candidate addresses against real filters
  compare   BIP 37 against BIP 157 for the same wallet
  capture   a relay that records the filters and block requests of light clients
  universe  collect the candidates seen on a range of blocks
  fetches   what a BIP 157 client's block downloads give away
  simulate  a labelled capture, universe and chain: ground truth
  evaluate  score an analyze or fetches report against those labels`,
		Example: `  spvfilter privacy model --addresses 20 --fprate 0.0005 --filters 2
  spvfilter privacy analyze --capture capture.jsonl --universe universe.txt`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(
		newPrivacyModelCommand(a),
		newPrivacyAnalyzeCommand(a),
		newPrivacyCompareCommand(a),
		newPrivacyCaptureCommand(a),
		newPrivacyUniverseCommand(a),
		newPrivacyFetchesCommand(a),
		newPrivacySimulateCommand(a),
		newPrivacyEvaluateCommand(a),
	)
	return c
}

// modelFlags holds the flags of "privacy model".
type modelFlags struct {
	p          model.Params
	sweep      string
	plot       string
	plotJ      string
	monteCarlo int
	mcSample   uint64
	seed       uint64
	advice     adviceFlags
}

func newPrivacyModelCommand(a *app) *cobra.Command {
	var f modelFlags
	f.p = model.DefaultParams()
	c := &cobra.Command{
		Use:   "model",
		Short: "The analytic privacy model of a BIP 37 wallet filter",
		Long: `model computes, for a wallet of N addresses, what a node that tests a
universe of U addresses against the wallet's BIP 37 filter learns:

  m, k      the filter's bits and hash functions, exactly as Bitcoin Core
            sizes it for N*elements-per-address + extra-elements elements
            (bitcoinj inserts a key and its hash per address and sizes for
            100 extra elements), or as bitcoinj sizes it with --sizing
            bitcoinj (a floating-point hash-function count, as in
            python-bitcoinlib: one more hash function at many sizes)
  pf        false-positive rate per element at the actual fill,
            (1-(1-1/m)^(k*n))^k, with n = N*elements-per-address inserted
  S         expected false positives (U-N)*pf^B, or (U-N)*pf^(2B) with the
            pair test; U includes the wallet's own N addresses
  P_h(1)    N/(N+S): one matching address is the wallet's
  P_h(N)    1/C(N+S, N) (Gamma function for real S): N matching addresses
            picked at random are exactly the wallet's

--filters B intersects B filters of the same wallet with different tweaks.
--sweep VAR=VALUES prints a table instead, with VAR one of addresses,
fprate, filters, universe-size and VALUES a comma-separated list of values
and ranges START..END (step 1: one whose end is not a whole number
of steps away needs a step), START..END:STEP or START..END:xFACTOR
(geometric).
--plot FILE.svg|FILE.png draws P_h(1) and P_h(N) along the sweep (or along
addresses=1..2N without one). --monte-carlo TRIALS builds real filters and
checks that the model lies within the measured 99% confidence interval.

P_h(j), that j matching addresses picked at random are all the wallet's,
C(N, j)/C(N+S, j), is printed for every j from 1 to N (a selection in the
text when N > 25, every j in --json under p_h_j, on a grid of 1000 values
beyond 1000 addresses), at S and averaged over the number of false
positives, after all the filters. --plot-j FILE.svg|FILE.png draws it
against j: one curve per number of filters, or with --sweep one per swept
value (at most 20), e.g. --sweep addresses=5,10,15,20 --universe-size
32000000 for the curves of Gervais et al.

--target-p-h-all X and --target-p-h-1 X turn the model around: they print
the largest filter whose attacker's confidence E[P_h(N)] (or E[P_h(1)]),
averaged over the binomial number of false positives, stays below X, both
at the filter's expected fill and averaged over the fills of real filters,
with one filter and with --filters B. Every filter the sizing rule can
build for the element count is searched (the truncation of the
hash-function count makes the confidence a step function of the rate, with
large steps). The rate printed is a short decimal well inside the interval
of rates that build the filter, so that every number that rounds to it
builds the same filter; the filter (bytes, hash functions) and the
"spvfilter bloom new" command that builds it are printed too. The bandwidth
cost is given as the false-positive transactions per block of --block-txs
transactions with --tx-elements elements tested each (default 9: a
2-input, 2-output P2PKH transaction's txid, 2 output key hashes, and per
input its outpoint, signature and key).`,
		Example: `  spvfilter privacy model --addresses 20 --fprate 0.0005 --universe-size 10000000
  spvfilter privacy model --addresses 20 --filters 2 --pair-test --json
  spvfilter privacy model --sweep addresses=1..100 --plot leak.svg
  spvfilter privacy model --sweep fprate=0.00001..0.1:x10 --filters 2
  spvfilter privacy model --sweep addresses=5,10,15,20 --universe-size 32000000 --plot-j gervais.svg
  spvfilter privacy model --addresses 50 --fprate 0.01 --universe-size 1000000 --monte-carlo 50
  spvfilter privacy model --addresses 100 --universe-size 1000000000 --target-p-h-all 0.1 --filters 3`,
		Args: modelArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runModel(a, &f, cmd.Flags()) },
	}
	fl := c.Flags()
	addModelFlags(fl, &f.p)
	fl.StringVar(&f.sweep, "sweep", "", "vary one parameter: `VAR=VALUES`, VAR one of addresses, fprate, filters and universe-size, "+sweepValues+" (default: no sweep)")
	fl.StringVar(&f.plot, "plot", "", "draw the curves into `FILE`.svg or FILE.png (default: no plot)")
	fl.StringVar(&f.plotJ, "plot-j", "", "draw P_h(j) against j into `FILE`.svg or FILE.png (default: no plot)")
	fl.IntVar(&f.monteCarlo, "monte-carlo", 0, "check the model with `N` trials on real filters (0, the default, for none; else at least 2)")
	fl.Uint64Var(&f.mcSample, "monte-carlo-sample", 0, "`N` outside candidates tested per trial (default: all, at most 1000000)")
	fl.Uint64Var(&f.seed, "seed", 1, "random `SEED` of the Monte Carlo run")
	wantValues(fl, "want 0 (the default) for none, or at least 2 trials", "monte-carlo")
	exampleValue(fl, "monte-carlo", "100")
	exampleValue(fl, "monte-carlo-sample", "10000")
	addSizingFlag(c, &f.p.Sizing)
	addAdviceFlags(fl, &f.advice)
	return c
}

// addModelFlags defines the wallet and attacker flags of model and compare.
func addModelFlags(fl *pflag.FlagSet, p *model.Params) {
	fl.Uint32Var(&p.Addresses, "addresses", p.Addresses, "wallet addresses `N`")
	fl.Float64Var(&p.FPRate, "fprate", p.FPRate, "false-positive `RATE` the filter is sized for")
	fl.Uint64Var(&p.UniverseSize, "universe-size", p.UniverseSize, "addresses `U` the node tests, the wallet's included")
	wantValues(fl, "want a whole number, at least the --addresses", "universe-size")
	fl.Uint32Var(&p.ElementsPerAddress, "elements-per-address", p.ElementsPerAddress, "`N` filter elements inserted per address (bitcoinj: key and key hash)")
	fl.Uint32Var(&p.ExtraElements, "extra-elements", p.ExtraElements, "`N` elements added to the sizing count only (bitcoinj: 100)")
	fl.Uint32Var(&p.Filters, "filters", p.Filters, "filters `B` from the same wallet, with different tweaks")
	wantValues(fl, "want a whole number from 1 to 4294967295", "addresses", "elements-per-address")
	wantValues(fl, "want a whole number from 1 to 1000", "filters")
	fl.BoolVar(&p.PairTest, "pair-test", false, "require both the key and its hash to match (addresses whose key is on chain)")
}

// checkModelFlags refuses model inputs the library would read as a
// default: a zero filter count means one filter there.
func checkModelFlags(p *model.Params) error {
	if p.Filters == 0 {
		return badRange("--filters", 0, "")
	}
	return nil
}

// sweepValues says what the VALUES of --sweep VAR=VALUES are.
const sweepValues = "VALUES a comma-separated list of numbers and ranges START..END (step 1), START..END:STEP or START..END:xFACTOR"

// runModel prints the model of the flags' wallet (or its sweep, plots and
// Monte Carlo check), or runAdvice's answer when fl has a target given.
func runModel(a *app, f *modelFlags, fl *pflag.FlagSet) error {
	if fl.Changed("seed") && f.monteCarlo == 0 {
		return badInput("--seed is used only with --monte-carlo: it seeds the Monte Carlo run")
	}
	if f.advice.requested(fl) {
		return runAdvice(a, f, fl)
	}
	if err := checkModelRun(f, fl); err != nil {
		return err
	}
	// The plots' files before the work: written whole, or not at all.
	plots, err := a.outputs.createEach(outputFile{"--plot", f.plot}, outputFile{"--plot-j", f.plotJ})
	if err != nil {
		return err
	}
	r := &modelRun{a: a, f: f, fl: fl, plot: plots[0], plotJ: plots[1]}
	if f.sweep == "" {
		return r.one()
	}
	return r.sweep()
}

// checkModelRun refuses, before any work, the flags of a model (not an
// advice) run that cannot go together or that the library would misread.
func checkModelRun(f *modelFlags, fl *pflag.FlagSet) error {
	if err := f.advice.checkUnused(fl); err != nil {
		return err
	}
	if err := checkModelFlags(&f.p); err != nil {
		return err
	}
	if f.monteCarlo < 0 || f.monteCarlo == 1 {
		return badRange("--monte-carlo", f.monteCarlo, "")
	}
	if fl.Changed("monte-carlo-sample") && f.monteCarlo == 0 {
		return badInput("--monte-carlo-sample is used only with --monte-carlo: it sizes each trial")
	}
	for _, o := range []struct{ flag, file string }{{"--plot", f.plot}, {"--plot-j", f.plotJ}} {
		if err := checkPlotFile(o.flag, o.file); err != nil {
			return err
		}
	}
	if err := distinctOutputs(outputFile{"--plot", f.plot}, outputFile{"--plot-j", f.plotJ}); err != nil {
		return err
	}
	if f.monteCarlo != 0 && f.sweep != "" {
		return badInput("--monte-carlo and --sweep cannot be combined")
	}
	if f.sweep == "" && f.plotJ != "" && f.p.Filters > plot.MaxJCurves {
		// Refused before the Monte Carlo run, which may take minutes.
		return badInput("--plot-j %s: --filters %d, and --plot-j draws one curve of P_h(j) per number of filters, at most %d", f.plotJ, f.p.Filters, plot.MaxJCurves)
	}
	return nil
}

// modelRun is one run of "privacy model" whose flags have been checked:
// the plots' files (nil when not asked for) are started, and are put in
// place only when every plot is drawn.
type modelRun struct {
	a     *app
	f     *modelFlags
	fl    *pflag.FlagSet
	plot  *pendingFile
	plotJ *pendingFile
}

// modelOutput is what the model of one wallet prints under --json.
type modelOutput struct {
	*model.Result
	PHj        []model.PHj             `json:"p_h_j"`
	MonteCarlo *model.MonteCarloResult `json:"monte_carlo,omitempty"`
	Plot       string                  `json:"plot,omitempty"`
	PlotJ      string                  `json:"plot_j,omitempty"`
}

// one prints the model of the flags' wallet, with its Monte Carlo check
// and plots when asked for.
func (r *modelRun) one() error {
	res, err := model.Evaluate(r.f.p)
	if err != nil {
		return modelFields.badParams(err, r.fl)
	}
	out := modelOutput{Result: res, PHj: res.PHCurve(0)}
	if r.f.monteCarlo != 0 {
		_, done := r.a.bar("Monte Carlo trials", -1)
		mc, err := model.MonteCarlo(r.f.p, model.MonteCarloOptions{Trials: r.f.monteCarlo, Sample: r.f.mcSample, Seed: r.f.seed})
		done()
		if err != nil {
			return modelFields.badParams(err, r.fl)
		}
		out.MonteCarlo = mc
	}
	if err := r.drawOne(res); err != nil {
		return err
	}
	out.Plot, out.PlotJ = r.f.plot, r.f.plotJ
	r.a.warnBesideResult(res.Warnings)
	if r.a.json {
		return r.a.printJSON(out)
	}
	printModel(r.a.stdout, res)
	printPHj(r.a.stdout, res, out.PHj)
	if out.MonteCarlo != nil {
		printMonteCarlo(r.a.stdout, out.MonteCarlo)
	}
	printPlotFiles(r.a.stdout, r.f)
	return nil
}

// drawOne draws the plots of one wallet's model res and puts them in
// place: --plot along addresses, --plot-j against j.
func (r *modelRun) drawOne(res *model.Result) error {
	if r.plot != nil {
		// Up to twice the wallet, in at most about 200 points, and
		// never past the universe (the model counts the wallet in it).
		hi := min(max(2*uint64(r.f.p.Addresses), 10), r.f.p.UniverseSize)
		s, err := model.ParseSweep(fmt.Sprintf("addresses=1..%d:%d", hi, max(1, hi/200)))
		if err != nil {
			return badInputWords("--plot "+r.f.plot, err)
		}
		if err := savePlot(r.a, r.plot, s, r.f.p); err != nil {
			return err
		}
	}
	if r.plotJ != nil {
		if err := r.a.drawPlot(r.plotJ, func(name string) error { return plot.SaveJ(name, model.Sweep{}, []*model.Result{res}) }); err != nil {
			return err
		}
	}
	return r.a.outputs.commit(r.plot, r.plotJ)
}

// sweep prints the model along --sweep, and draws its plots.
func (r *modelRun) sweep() error {
	spec := r.f.sweep
	s, err := model.ParseSweep(spec)
	if err != nil {
		if long := tooLongSweep(spec); long != nil {
			return long
		}
		return badInputWords(fmt.Sprintf("--sweep %q", spec), err)
	}
	if err := narrowStepless(spec); err != nil {
		return err
	}
	if r.plotJ != nil && len(s.Values) > plot.MaxJCurves {
		// Refused before the sweep runs: a long one takes minutes.
		return badInput("--plot-j %s: --sweep %q gives %d values, and --plot-j draws one curve of P_h(j) per value, at most %d: sweep fewer values, or leave out --plot-j",
			r.f.plotJ, spec, len(s.Values), plot.MaxJCurves)
	}
	results, err := s.Run(r.f.p)
	if err != nil {
		return sweepError(spec, s, r.f.p, err, r.fl)
	}
	if err := r.drawSweep(s, results); err != nil {
		return err
	}
	warnings := sweepWarnings(s, results)
	r.a.warnBesideResult(warnings)
	if r.a.json {
		// One object, naming what was swept: the results follow the
		// values in order.
		return r.a.printJSON(struct {
			Sweep    model.Sweep     `json:"sweep"`
			Results  []*model.Result `json:"results"`
			Warnings []string        `json:"warnings"`
			Plot     string          `json:"plot,omitempty"`
			PlotJ    string          `json:"plot_j,omitempty"`
		}{s, results, warnings, r.f.plot, r.f.plotJ})
	}
	printSweep(r.a.stdout, s, results)
	printPlotFiles(r.a.stdout, r.f)
	return nil
}

// narrowStepless refuses a range of the sweep spec, which ParseSweep
// took, given without a step whose end the default step 1 does not
// reach: narrower than 1 it would sweep its start alone, and wider, not
// a whole number of steps, it would drop its end.
func narrowStepless(spec string) error {
	_, list, _ := strings.Cut(spec, "=")
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		lo, hi, isRange := strings.Cut(item, "..")
		if !isRange || strings.Contains(hi, ":") {
			continue
		}
		start, err1 := strconv.ParseFloat(strings.TrimSpace(lo), 64)
		end, err2 := strconv.ParseFloat(strings.TrimSpace(hi), 64)
		if err1 != nil || err2 != nil || end <= start {
			continue
		}
		switch span := end - start; {
		case span < 1:
			return badInput("--sweep %q: the range %s has no step, and the default step 1 gives %s alone: give one, as %s:%s or %s:x2",
				spec, item, strings.TrimSpace(lo), item, strconv.FormatFloat(start, 'g', -1, 64), item)
		case math.Abs(span-math.Round(span)) > 1e-9:
			last := start + math.Floor(span)
			return badInput("--sweep %q: the range %s has no step, and the default step 1 stops at %s, short of its end %s: give a step that reaches it, or an end a whole number of steps away (%s..%s)",
				spec, item, strconv.FormatFloat(last, 'g', -1, 64), strings.TrimSpace(hi), strings.TrimSpace(lo), strconv.FormatFloat(last, 'g', -1, 64))
		}
	}
	return nil
}

// drawSweep draws the plots of the sweep s's results and puts them in
// place.
func (r *modelRun) drawSweep(s model.Sweep, results []*model.Result) error {
	if r.plot != nil {
		if err := r.a.drawPlot(r.plot, func(name string) error { return plot.Save(name, s, results) }); err != nil {
			return err
		}
	}
	if r.plotJ != nil {
		if err := r.a.drawPlot(r.plotJ, func(name string) error { return plot.SaveJ(name, s, results) }); err != nil {
			return err
		}
	}
	return r.a.outputs.commit(r.plot, r.plotJ)
}

// sweepWarnings is the warnings of a sweep's results, each once, in
// order, prefixed by the swept value it came at.
func sweepWarnings(s model.Sweep, results []*model.Result) []string {
	seen := map[string]bool{}
	warnings := []string{}
	for i, r := range results {
		for _, w := range r.Warnings {
			if w = fmt.Sprintf("%s=%g: %s", s.Var, s.Values[i], w); !seen[w] {
				seen[w] = true
				warnings = append(warnings, w)
			}
		}
	}
	return warnings
}

// printPlotFiles names the plots written.
func printPlotFiles(w io.Writer, f *modelFlags) {
	if f.plot != "" {
		fmt.Fprintf(w, "plot written to %s\n", f.plot)
	}
	if f.plotJ != "" {
		fmt.Fprintf(w, "plot of P_h(j) written to %s\n", f.plotJ)
	}
}

// phjAllRows is the wallet size up to which the text prints every j.
const phjAllRows = 25

// printPHj prints P_h(j) after all the filters: every j for a small
// wallet, else the first few, round values and the quarters of N.
func printPHj(w io.Writer, r *model.Result, curve []model.PHj) {
	n := r.Params.Addresses
	keep := map[uint32]bool{n: true, n / 4: true, n / 2: true, 3 * n / 4: true}
	for _, j := range []uint32{1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000, 20000, 50000} {
		keep[j] = true
	}
	fmt.Fprintf(w, "\nP_h(j): j matching addresses picked at random are all the wallet's, after %s\n", plural(r.Params.Filters, "filter"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "j\tP_h(j)\tE[P_h(j)]\t")
	for _, pt := range curve {
		if n <= phjAllRows || keep[pt.J] {
			fmt.Fprintf(tw, "%d\t%.4g\t%.4g\t\n", pt.J, pt.PH, pt.PHExact)
		}
	}
	tw.Flush()
	if n > phjAllRows {
		fmt.Fprintln(w, "(a selection of j: every j in --json, under p_h_j)")
	}
}

// checkPlotFile refuses, before any work, a plot file of an unknown
// format or one that cannot be created.
func checkPlotFile(flag, file string) error {
	if file == "" {
		return nil
	}
	if err := checkOutputFile(flag, file); err != nil {
		return err
	}
	if _, err := plot.Format(file); err != nil {
		return usageError{&restated{fmt.Sprintf("%s %s: want a file name ending in .svg or .png", flag, file), err}}
	}
	return nil
}

// sweepError is the error of running the sweep spec (s) on the other
// flags (fl, making base): a swept value out of its domain is named under
// --sweep, a flag's under that flag, and the swept value beside which the
// flag's value fails with it.
func sweepError(spec string, s model.Sweep, base model.Params, err error, fl *pflag.FlagSet) error {
	var fe *model.FieldError
	switch {
	case errors.As(err, &fe) && modelFields[fe.Field] == s.Var:
		return usageError{&restated{fmt.Sprintf("--sweep %q: %s=%s: %s", spec, s.Var, fe.Value, fe.Msg), err}}
	case errors.Is(err, model.ErrBadSweep):
		return badInputWords(fmt.Sprintf("--sweep %q", spec), err)
	}
	bad := modelFields.badParams(err, fl)
	if v, ok := firstFailing(s, base); ok {
		// The other flag is at fault only beside the swept value.
		return usageError{&restated{fmt.Sprintf("%s (at %s=%g of --sweep %q)", bad.Error(), s.Var, v, spec), err}}
	}
	return bad
}

// firstFailing is the first value of the sweep s at which the model fails
// on base, and whether the sweep is to blame: whether the model holds at
// base's own values.
func firstFailing(s model.Sweep, base model.Params) (float64, bool) {
	if _, e := model.Evaluate(base); e != nil {
		return 0, false
	}
	for _, v := range s.Values {
		if _, e := (model.Sweep{Var: s.Var, Values: []float64{v}}).Run(base); e != nil {
			return v, true
		}
	}
	return 0, false
}

// plotError is a plot that cannot be drawn into file, given with flag: bad
// input naming the flag; a failure to write the file is the machine's.
func plotError(flag, file string, err error) error {
	if errors.Is(err, plot.ErrCannotDraw) {
		return badInputWords(flag+" "+file, err)
	}
	return failureWords(flag+" "+file, err)
}

// savePlot draws the sweep s of base into file.
func savePlot(a *app, file *pendingFile, s model.Sweep, base model.Params) error {
	results, err := s.Run(base)
	if err != nil {
		return badInputWords("--plot "+file.path, err)
	}
	return a.drawPlot(file, func(name string) error { return plot.Save(name, s, results) })
}

// drawPlot draws a plot into file, a pendingFile, by draw, which writes
// the file it is given by name.
func (a *app) drawPlot(file *pendingFile, draw func(name string) error) error {
	if err := a.outputs.writeNamed(file, draw); err != nil {
		return plotError(file.flag, file.path, err)
	}
	return nil
}

func printModel(w io.Writer, r *model.Result) {
	p := r.Params
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "wallet\t%s x %s = %d inserted; sized for %d (extra %d)\n",
		plural(p.Addresses, "address"), plural(p.ElementsPerAddress, "element"), r.Elements, r.SizingElements, p.ExtraElements)
	fmt.Fprintf(tw, "filter\t%s (%d bits), %s, requested fp rate %g, sized as %s sizes it\n",
		plural(r.FilterBytes, "byte"), r.FilterBits, plural(r.HashFuncs, "hash function"), p.FPRate, p.Sizing.Implementation())
	fmt.Fprintf(tw, "pf at actual fill\t%.4g per element (approximation (1-e^(-kn/m))^k: %.4g)\n", r.Pf, r.PfApprox)
	test := "hash only"
	if p.PairTest {
		test = "pair test: key and hash must both match"
	}
	fmt.Fprintf(tw, "attacker\ttests %s (wallet included), %s, %s\n", plural(p.UniverseSize, "address"), plural(p.Filters, "filter"), test)
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "filters\tpf per candidate\texpected false positives S\tP_h(1)\tP_h(N)\tE[P_h(1)]\tE[P_h(N)]\t")
	for _, st := range r.Steps {
		fmt.Fprintf(tw, "%d\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t\n", st.Filters, st.PfCandidate, st.ExpectedFalsePositives,
			st.PH1, st.PHAll, st.PH1Exact, st.PHAllExact)
	}
	tw.Flush()
	fmt.Fprintln(w, "P_h at S, as in the papers; E[P_h] averaged over the binomial number of false positives.")
	fmt.Fprintf(w, "\n%s\n", modelVerdict(r))
}

func modelVerdict(r *model.Result) string {
	n := r.Params.Addresses
	return fmt.Sprintf("A node testing %d addresses finds the wallet's %d among about %.3g false positives: "+
		"a matching address is the wallet's with probability %.3g%%, and all %d picked at random are the wallet's with probability %.3g "+
		"(%.3g with S plugged into the papers' formula).",
		r.Params.UniverseSize, n, r.ExpectedFalsePositives, 100*r.PH1Exact, n, r.PHAllExact, r.PHAll)
}

func printMonteCarlo(w io.Writer, mc *model.MonteCarloResult) {
	verdict := "AGREES with"
	if !mc.Agrees {
		verdict = "DISAGREES with"
	}
	fmt.Fprintf(w, "\nMonte Carlo: %d trials of real bip37 filters, %d outside candidates each, %d false positives seen\n",
		mc.Trials, mc.CandidatesPerTrial, mc.FalsePositivesSeen)
	fmt.Fprintf(w, "  measured S = %.4g, 99%% interval [%.4g, %.4g]; model S = %.4g: the measurement %s the model\n",
		mc.MeanFalsePositives, mc.CILow, mc.CIHigh, mc.ModelFalsePositives, verdict)
	fmt.Fprintf(w, "  measured pf per candidate %.4g, model %.4g; measured P_h(1) %.4f, model %.4f\n",
		mc.MeasuredPf, mc.ModelPf, mc.MeasuredPH1, mc.ModelPH1)
}

func printSweep(w io.Writer, s model.Sweep, results []*model.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s\tbytes\tk\tpf\tS (after %s)\tP_h(1)\tP_h(N)\t\n", s.Var, filtersLabel(s, results))
	for i, r := range results {
		fmt.Fprintf(tw, "%g\t%d\t%d\t%.4g\t%.4g\t%.4f\t%.4g\t\n", s.Values[i], r.FilterBytes, r.HashFuncs, r.Pf, r.ExpectedFalsePositives, r.PH1, r.PHAll)
	}
	tw.Flush()
}

func filtersLabel(s model.Sweep, results []*model.Result) string {
	if s.Var == "filters" {
		return "the row's filters"
	}
	if len(results) > 0 && results[0].Params.Filters > 1 {
		return fmt.Sprintf("%d filters", results[0].Params.Filters)
	}
	return "1 filter"
}
