package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

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
	fl.Float64Var(&f.targetPHAll, "target-p-h-all", 0, "find the smallest rate keeping E[P_h(N)] below this (0 < X < 1)")
	fl.Float64Var(&f.targetPH1, "target-p-h-1", 0, "find the smallest rate keeping E[P_h(1)] below this (0 < X < 1)")
	fl.Uint32Var(&f.blockTxs, "block-txs", model.DefaultBlockTxs, "with a target: transactions per block, for the bandwidth cost")
	fl.Uint32Var(&f.txElements, "tx-elements", model.DefaultTxElements, "with a target: elements tested per transaction (9: 2-in 2-out P2PKH)")
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

func runAdvice(a *app, f *modelFlags, fl *pflag.FlagSet) error {
	if err := checkModelFlags(&f.p); err != nil {
		return err
	}
	for _, name := range []string{"fprate", "sweep", "plot", "monte-carlo", "monte-carlo-sample"} {
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
			return badInput("--%s %v: a confidence bound must lie strictly between 0 and 1", t.name, t.x)
		}
	}
	if ad.blockTxs == 0 || ad.txElements == 0 {
		return badInput("--block-txs %d --tx-elements %d: want at least 1 of each", ad.blockTxs, ad.txElements)
	}
	r, err := model.Advise(model.AdviceParams{
		Model: f.p, TargetPH1: ad.targetPH1, TargetPHAll: ad.targetPHAll,
		BlockTxs: ad.blockTxs, TxElements: ad.txElements,
	})
	if err != nil {
		return privacyBadInput(err)
	}
	printWarnings(a, r.Warnings)
	if a.json {
		return a.printJSON(r)
	}
	printAdvice(a.stdout, r)
	return nil
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
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "wallet\t%d addresses x %d elements = %d inserted; sized for %d (extra %d)\n",
		m.Addresses, m.ElementsPerAddress, inserted, inserted+uint64(m.ExtraElements), m.ExtraElements)
	fmt.Fprintf(tw, "attacker\ttests %d addresses (wallet included), %s\n", m.UniverseSize, test)
	fmt.Fprintf(tw, "target\t%s, the confidence averaged over the binomial number of false positives\n", targetText(p))
	fmt.Fprintf(tw, "block\t%d transactions, %d elements tested each\n", p.BlockTxs, p.TxElements)
	fmt.Fprintf(tw, "search\tall %d distinct filters (bytes, hash functions) Bitcoin Core builds for this element count at some rate\n", r.SizingsSearched)
	tw.Flush()
	if len(r.Rows) == 0 {
		fmt.Fprintln(w, "\nNo working filter exists for this element count.")
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "filters\tsmallest fp rate\tup to\tbytes\tk\tpf\tE[P_h(1)]\tE[P_h(N)]\tfp txs/block\t")
	line := func(label string, s model.Sizing) {
		fmt.Fprintf(tw, "%s\t%.4g\t%.4g\t%d\t%d\t%.4g\t%.4g\t%.4g\t%.4g\t\n", label, s.FPRate, s.FPRateMax, s.FilterBytes, s.HashFuncs,
			s.Pf, s.PH1Exact, s.PHAllExact, s.FalsePositiveTxsPerBlock)
	}
	for _, row := range r.Rows {
		label := fmt.Sprint(row.Filters)
		if !row.Reachable {
			label += " (unreachable)"
		}
		line(label, row.Sizing)
	}
	tw.Flush()
	for _, row := range r.Rows {
		fmt.Fprintf(w, "\n%s\n", adviceVerdict(p, row))
	}
}

func adviceVerdict(p model.AdviceParams, row model.AdviceRow) string {
	if !row.Reachable {
		return fmt.Sprintf("With %d filter(s) no filter Bitcoin Core builds reaches %s: even the most private one, "+
			"%d bytes and %d hash functions (rates up to %.3g), leaves E[P_h(1)] = %.3g and E[P_h(N)] = %.3g.",
			row.Filters, targetText(p), row.FilterBytes, row.HashFuncs, row.FPRateMax, row.PH1Exact, row.PHAllExact)
	}
	if row.CoreLargest {
		return fmt.Sprintf("With %d filter(s) every rate meets %s: every rate up to %.3g builds the largest filter Core makes for this wallet, "+
			"%d bytes with %d hash functions, and the client downloads about %.3g false-positive transactions per block of %d.",
			row.Filters, targetText(p), row.FPRateMax, row.FilterBytes, row.HashFuncs, row.FalsePositiveTxsPerBlock, p.BlockTxs)
	}
	return fmt.Sprintf("With %d filter(s), %s needs a rate of at least %.4g: Bitcoin Core then builds %d bytes with %d hash functions, "+
		"and the client downloads about %.3g false-positive transactions per block of %d.",
		row.Filters, targetText(p), row.FPRate, row.FilterBytes, row.HashFuncs, row.FalsePositiveTxsPerBlock, p.BlockTxs)
}
