package main

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/privacy/model"
)

// compareFlags holds the flags of "privacy compare".
type compareFlags struct {
	p model.CompareParams
}

func newPrivacyCompareCommand(a *app) *cobra.Command {
	f := compareFlags{p: model.DefaultCompareParams()}
	c := &cobra.Command{
		Use:   "compare",
		Short: "Compare what a BIP 37 node and a BIP 157 node learn about the same wallet",
		Long: `compare puts side by side, for one wallet, what the node learns:

  BIP 37   the wallet's filter: every address of the universe that matches
           it (the model of "privacy model", with the same flags)
  BIP 157  only which blocks the client downloads. A block's basic filter
           (BIP 158: N items hashed into [0, N*M), M = 784931, so 1/M false
           positives per item queried) matches a watch list of W items by
           chance with probability q = 1-(1-1/(Nb*M))^(W*Nb), about W/M,
           for Nb items per block. Of H blocks scanned, R hold wallet
           transactions; the node sees R + F blocks, F = (H-R)*q, and every
           item of them, (R+F)*Nb, is a candidate address.

The block-download attack (the last rows): a script that appears in k
blocks (--appearances) is matched when all of them were fetched; the
wallet's always are, another script with probability C(B-k, F-k)/C(B, F)
for F of the B blocks fetched (about f^k), so (U-N) of those are expected.
--decoys D fetches D random blocks more per real one; --peers P spreads
the downloads over P peers at random, of which the node is one: it sees
F/P blocks, and a wallet script only when all k of its blocks came to it.
"privacy fetches" measures the same on a capture.`,
		Example: `  spvfilter privacy compare --addresses 100 --fprate 0.0005
  spvfilter privacy compare --addresses 20 --blocks 105120 --elements-per-block 8000 --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCompare(a, &f, cmd.Flags()) },
	}
	fl := c.Flags()
	addModelFlags(fl, &f.p.Model)
	addSizingFlag(c, &f.p.Model.Sizing)
	fl.Uint32Var(&f.p.WatchPerAddress, "watch-per-address", f.p.WatchPerAddress, "`N` BIP 158 items watched per address (its output script)")
	fl.Uint32Var(&f.p.ElementsPerBlock, "elements-per-block", f.p.ElementsPerBlock, "`N` distinct items in a block's basic filter")
	fl.Uint64Var(&f.p.Blocks, "blocks", f.p.Blocks, "blocks scanned `H` (52560: a year)")
	fl.Uint64Var(&f.p.WalletBlocks, "wallet-blocks", 0, "blocks `R` with a wallet transaction, at least --appearances (default: one per address, at least --appearances, at most --blocks)")
	fl.Uint32Var(&f.p.Appearances, "appearances", f.p.Appearances, "`N` blocks each script appears in (a receive and its spend: 2)")
	fl.Float64Var(&f.p.Decoys, "decoys", f.p.Decoys, "`X` random blocks the BIP 157 client fetches per real one (default 0: none)")
	fl.Uint32Var(&f.p.Peers, "peers", f.p.Peers, "`N` peers the BIP 157 client spreads its block downloads over at random")
	wantValues(fl, "want a whole number from 1 to 4294967295", "watch-per-address", "elements-per-block", "appearances", "peers")
	wantValues(fl, "want a whole number, at least 1", "blocks")
	return c
}

// runCompare prints the comparison of the flags' wallet; fl says whether
// --wallet-blocks was given.
func runCompare(a *app, f *compareFlags, fl *pflag.FlagSet) error {
	if !fl.Changed("wallet-blocks") {
		// One block per address, and at least the blocks each of the
		// wallet's scripts appears in, within the blocks scanned.
		f.p.WalletBlocks = min(f.p.Blocks, max(uint64(f.p.Model.Addresses), uint64(f.p.Appearances)))
	}
	if err := checkModelFlags(&f.p.Model); err != nil {
		return err
	}
	r, err := model.Compare(f.p)
	if err != nil {
		return compareFields.badParams(err, fl)
	}
	if a.json {
		return a.printJSON(newCompareJSON(r))
	}
	printCompare(a.stdout, r)
	return nil
}

func printCompare(w io.Writer, r *model.Comparison) {
	m, s, p := r.BIP37, r.BIP157, r.Params
	n := float64(p.Model.Addresses)
	fmt.Fprintf(w, "wallet: %s; BIP 37 filter %s, %s (fp rate %g, %s); BIP 157 watch list %s\n",
		plural(p.Model.Addresses, "address"), plural(m.FilterBytes, "byte"), plural(m.HashFuncs, "hash function"), p.Model.FPRate, plural(p.Model.Filters, "filter"), plural(s.WatchItems, "item"))
	fmt.Fprintf(w, "node tests %s (BIP 37); client scans %s of %s, %d with wallet transactions (BIP 157)\n\n",
		plural(p.Model.UniverseSize, "address"), plural(p.Blocks, "block"), plural(p.ElementsPerBlock, "item"), p.WalletBlocks)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "\tBIP 37 (filterload)\tBIP 157/158 (block downloads)")
	fmt.Fprintf(tw, "the node sees\tthe filter: %d + %.3g addresses match\t%d + %.3g blocks downloaded\n", p.Model.Addresses, m.ExpectedFalsePositives, p.WalletBlocks, s.ExpectedFalsePositiveBlocks)
	fmt.Fprintf(tw, "false-positive rate\t%.3g per address tested\t%.3g per block\n", m.PfCandidate, s.BlockFPRate)
	fmt.Fprintf(tw, "expected false positives\t%.4g addresses\t%.4g blocks\n", m.ExpectedFalsePositives, s.ExpectedFalsePositiveBlocks)
	fmt.Fprintf(tw, "a match is the wallet's\t%.4f (P_h(1), per address)\t%.4f (per block)\n", m.PH1, s.PBlockIsWallet)
	fmt.Fprintf(tw, "candidate addresses\t%.4g\t%.4g (every item of the blocks)\n", n+m.ExpectedFalsePositives, s.Candidates)
	fmt.Fprintf(tw, "a candidate is the wallet's\t%.4g\t%.4g\n", m.PH1, s.PCandidate)
	fmt.Fprintf(tw, "all N addresses identified\t%.4g (P_h(N))\t%.4g\n", m.PHAll, model.ProbAllReal(n, s.Candidates-n))
	x := r.Fetches
	fmt.Fprintf(tw, "block downloads: blocks fetched\t\t%.4g of %d (f = %.3g; %g decoys per real block, %s)\n", x.FetchedBlocks, p.Blocks, x.FetchedFraction, x.Decoys, plural(x.Peers, "peer"))
	fmt.Fprintf(tw, "  chance a script of k=%d %s has all fetched\t\t%.3g (f^k: %.3g)\n", x.Appearances, nounOf(x.Appearances, "block"), x.ChancePerCandidate, x.ChancePerCandidateApprox)
	fmt.Fprintf(tw, "  scripts matched\t%.4g + %.4g (as above)\t%.4g of the wallet's + %.4g by chance\n", n, m.ExpectedFalsePositives, x.WalletExposed, x.ExpectedFalsePositives)
	fmt.Fprintf(tw, "  a match is the wallet's\t%.4f\t%.4f\n", m.PH1, x.PH1)
	fmt.Fprintf(tw, "  all matched wallet scripts identified\t%.4g\t%.4g\n", m.PHAll, x.PHAll)
	tw.Flush()
}

// compareJSON is a model.Comparison with the warnings of its BIP 37 side,
// which the comparison rests on.
type compareJSON struct {
	*model.Comparison
	Warnings []string `json:"warnings"`
}

func newCompareJSON(r *model.Comparison) compareJSON {
	return compareJSON{Comparison: r, Warnings: orEmpty(append([]string(nil), r.BIP37.Warnings...))}
}
