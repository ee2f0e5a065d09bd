package main

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// adviceFlags are the model command's flags that ask for a rate instead of
// taking one.
type adviceFlags struct {
	targetPH1   float64
	targetPHAll float64
	blockTxs    uint32
	txElements  uint32
}

func addAdviceFlags(fl *pflag.FlagSet, f *adviceFlags) {
	fl.Float64Var(&f.targetPHAll, "target-p-h-all", 0, "find the largest filter keeping E[P_h(N)] below `X` (0 < X < 1), and a rate that builds it (default 0: no search)")
	fl.Float64Var(&f.targetPH1, "target-p-h-1", 0, "find the largest filter keeping E[P_h(1)] below `X` (0 < X < 1), and a rate that builds it (default 0: no search)")
	fl.Uint32Var(&f.blockTxs, "block-txs", model.DefaultBlockTxs, "with a target: `N` transactions per block, for the bandwidth cost")
	fl.Uint32Var(&f.txElements, "tx-elements", model.DefaultTxElements, "with a target: `N` elements tested per transaction (9: 2-in 2-out P2PKH)")
	wantValues(fl, "want a whole number from 1 to 4294967295", "block-txs", "tx-elements")
	exampleValue(fl, "target-p-h-all", "0.01")
	exampleValue(fl, "target-p-h-1", "0.01")
}

// requested reports whether a target was given, whatever its value.
func (f *adviceFlags) requested(fl *pflag.FlagSet) bool {
	return fl.Changed("target-p-h-all") || fl.Changed("target-p-h-1")
}

// checkUnused refuses the block flags without a target: they would be
// ignored.
func (f *adviceFlags) checkUnused(fl *pflag.FlagSet) error {
	for _, name := range []string{"block-txs", "tx-elements"} {
		if fl.Changed(name) {
			return badInput("--%s is used only with --target-p-h-all or --target-p-h-1", name)
		}
	}
	return nil
}

// adviceRowJSON is a row of the advice with the command that builds its
// filter.
type adviceRowJSON struct {
	model.AdviceRow
	BloomNew string `json:"bloom_new"`
}

// adviceParamsJSON is model.AdviceParams as the command echoes it: the
// block's figures of --block-txs and --tx-elements are counts, named as
// counts are everywhere (block_tx_count, tx_element_count, as scan
// --privacy-target names them too).
type adviceParamsJSON struct {
	Model       model.Params `json:"model_params"`
	TargetPH1   float64      `json:"target_p_h_1"`
	TargetPHAll float64      `json:"target_p_h_all"`
	BlockTxs    uint32       `json:"block_tx_count"`
	TxElements  uint32       `json:"tx_element_count"`
}

func runAdvice(a *app, f *modelFlags, fl *pflag.FlagSet) error {
	if err := checkModelFlags(&f.p); err != nil {
		return err
	}
	for _, name := range []string{"fprate", "sweep", "plot", "plot-j", "monte-carlo", "monte-carlo-sample"} {
		if fl.Changed(name) {
			return badInput("--%s cannot be combined with a target: the target chooses the rate", name)
		}
	}
	ad := f.advice
	for _, t := range []struct {
		name string
		x    float64
	}{{"target-p-h-all", ad.targetPHAll}, {"target-p-h-1", ad.targetPH1}} {
		if fl.Changed(t.name) && !(t.x > 0 && t.x < 1) {
			return badRange("--"+t.name, t.x, "a probability in (0, 1), a bound on the model's confidence")
		}
	}
	if ad.blockTxs == 0 {
		return badRange("--block-txs", 0, "")
	}
	if ad.txElements == 0 {
		return badRange("--tx-elements", 0, "")
	}
	r, err := model.Advise(model.AdviceParams{
		Model: f.p, TargetPH1: ad.targetPH1, TargetPHAll: ad.targetPHAll,
		BlockTxs: ad.blockTxs, TxElements: ad.txElements,
	})
	if err != nil {
		return modelFields.badParams(err, fl)
	}
	a.warnBesideResult(r.Warnings)
	if a.json {
		rows := make([]adviceRowJSON, len(r.Rows))
		for i, row := range r.Rows {
			rows[i] = adviceRowJSON{AdviceRow: row, BloomNew: bloomNewCommand(r, row)}
		}
		return a.printJSON(struct {
			*model.Advice
			Params adviceParamsJSON `json:"params"`
			Rows   []adviceRowJSON  `json:"rows"`
		}{r, adviceParamsJSON(r.Params), rows})
	}
	printAdvice(a.stdout, r)
	return nil
}

// bloomNewCommand is the command that builds the row's filter.
func bloomNewCommand(r *model.Advice, row model.AdviceRow) string {
	return fmt.Sprintf("spvfilter bloom new --elements %d --fprate %s --sizing %s", r.SizingElements, rateArg(row), r.Params.Model.Sizing)
}

// rateArg is the row's rate as printed: its robust decimal, or the exact
// float64 when the interval was too narrow for one.
func rateArg(row model.AdviceRow) string {
	if row.FPRateText != "" {
		return row.FPRateText
	}
	return strconv.FormatFloat(row.FPRate, 'g', -1, 64)
}

func targetText(p model.AdviceParams) string {
	var t []string
	if p.TargetPHAll != 0 {
		t = append(t, fmt.Sprintf("E[P_h(N)] < %g", p.TargetPHAll))
	}
	if p.TargetPH1 != 0 {
		t = append(t, fmt.Sprintf("E[P_h(1)] < %g", p.TargetPH1))
	}
	return strings.Join(t, " and ")
}

func printAdvice(w io.Writer, r *model.Advice) {
	p := r.Params
	m := p.Model
	inserted := uint64(m.Addresses) * uint64(m.ElementsPerAddress)
	test := "hash only"
	if m.PairTest {
		test = "pair test: key and hash must both match"
	}
	who := m.Sizing.Implementation()
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "wallet\t%s x %s = %d inserted; sized for %d (extra %d)\n",
		plural(m.Addresses, "address"), plural(m.ElementsPerAddress, "element"), inserted, r.SizingElements, m.ExtraElements)
	fmt.Fprintf(tw, "sizing\tas %s sizes filters (--sizing %s)\n", who, m.Sizing)
	fmt.Fprintf(tw, "attacker\ttests %s (wallet included), %s\n", plural(m.UniverseSize, "address"), test)
	fmt.Fprintf(tw, "target\t%s, the confidence averaged over the binomial number of false positives, at the filter's expected fill, over real fills and for 95%% of real filters\n", targetText(p))
	fmt.Fprintf(tw, "block\t%s, %s tested each\n", plural(p.BlockTxs, "transaction"), plural(p.TxElements, "element"))
	fmt.Fprintf(tw, "search\tall %d distinct filters (bytes, hash functions) %s builds for this element count at some rate\n", r.SizingsSearched, who)
	tw.Flush()
	if len(r.Rows) == 0 {
		fmt.Fprintln(w, "\nNo working filter exists for this element count.")
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "filters\tfp rate\tbytes\tk\tpf\tE[P_h(1)]\tE[P_h(N)]\tover fills: E[P_h(1)]\tE[P_h(N)]\t95% of filters: E[P_h(1)]\tE[P_h(N)]\tfp txs/block\t")
	for _, row := range r.Rows {
		label := fmt.Sprint(row.Filters)
		if !row.Reachable {
			label += " (unreachable)"
		}
		s := row.Sizing
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t%.4g\t\n", label, rateArg(row), s.FilterBytes, s.HashFuncs,
			s.Pf, s.PH1Exact, s.PHAllExact, s.PH1OverFills, s.PHAllOverFills, s.PH1MostFills, s.PHAllMostFills, s.FalsePositiveTxsPerBlock)
	}
	tw.Flush()
	for _, row := range r.Rows {
		fmt.Fprintf(w, "\n%s\n  %s\n", adviceVerdict(r, row), bloomNewCommand(r, row))
	}
}

// rateRange is the interval of rates that build the row's filter, its ends
// rounded inward to the fewest digits (at least 4) that keep them inside,
// so that both printed ends build the filter.
func rateRange(row model.AdviceRow) string {
	lo, hi := row.FPRateMin, row.FPRateMax
	for digits := 4; digits <= 17; digits++ {
		a, b := roundInward(lo, digits, true), roundInward(hi, digits, false)
		if a <= b {
			return fmt.Sprintf("%s to %s", strconv.FormatFloat(a, 'g', -1, 64), strconv.FormatFloat(b, 'g', -1, 64))
		}
	}
	return fmt.Sprintf("%s to %s", strconv.FormatFloat(lo, 'g', -1, 64), strconv.FormatFloat(hi, 'g', -1, 64))
}

// roundInward rounds x to digits significant digits, up or down, so that
// the result is at least (up) or at most (down) x.
func roundInward(x float64, digits int, up bool) float64 {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'e', digits-1, 64), 64)
	unit := math.Pow(10, math.Floor(math.Log10(v))-float64(digits-1))
	for i := 0; i < 3 && (up && v < x || !up && v > x); i++ {
		if up {
			v += unit
		} else {
			v -= unit
		}
		v, _ = strconv.ParseFloat(strconv.FormatFloat(v, 'e', digits-1, 64), 64)
	}
	return v
}

func adviceVerdict(r *model.Advice, row model.AdviceRow) string {
	p := r.Params
	who := p.Model.Sizing.Implementation()
	filter := fmt.Sprintf("%s with %s", plural(row.FilterBytes, "byte"), plural(row.HashFuncs, "hash function"))
	if !row.Reachable {
		return fmt.Sprintf("With %s no filter %s builds reaches %s: even the most private one, %s (rate %s), "+
			"leaves E[P_h(1)] = %.3g and E[P_h(N)] = %.3g. It is built by:",
			plural(row.Filters, "filter"), who, targetText(p), filter, rateArg(row), row.PH1Exact, row.PHAllExact)
	}
	if row.CoreLargest {
		return fmt.Sprintf("With %s every rate meets %s: every rate up to %.3g builds the largest filter %s makes for this wallet, "+
			"%s, and the client downloads about %.3g false-positive transactions per block of %s. Ask for %s, for instance:",
			plural(row.Filters, "filter"), targetText(p), row.FPRateMax, who, filter, row.FalsePositiveTxsPerBlock, plural(p.BlockTxs, "transaction"), rateArg(row))
	}
	return fmt.Sprintf("With %s, %s needs the filter of %s, which %s builds from any rate from %s; ask for %s "+
		"(every rate that rounds to it builds the same filter). The client then downloads about %.3g false-positive transactions per block of %s. "+
		"The filter is built by:",
		plural(row.Filters, "filter"), targetText(p), filter, who, rateRange(row), rateArg(row), row.FalsePositiveTxsPerBlock, plural(p.BlockTxs, "transaction"))
}

// modelArgs refuses every argument of privacy model, and points an
// "advise" (or "advice") to the flags that advise: the model turns
// around by a flag, not a subcommand.
func modelArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 && (args[0] == "advise" || args[0] == "advice") {
		return badInput("unexpected argument %q: %s advises by a flag, not a subcommand: give --target-p-h-all X or --target-p-h-1 X (0 < X < 1) for the largest filter keeping the leak below X", args[0], cmd.CommandPath())
	}
	return noArgs(cmd, args)
}
