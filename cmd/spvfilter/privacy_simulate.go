package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// intRangeValue is a flag holding N or MIN..MAX.
type intRangeValue struct{ r *simulate.IntRange }

func (v intRangeValue) String() string { return v.r.String() }
func (v intRangeValue) Type() string   { return "range" }
func (v intRangeValue) Set(s string) error {
	r, err := simulate.ParseIntRange(s)
	if err != nil {
		return &restated{"want N or MIN..MAX, whole numbers with MIN <= MAX (one count, or a range drawn from)", err}
	}
	*v.r = r
	return nil
}

// floatRangeValue is a flag holding X or MIN..MAX.
type floatRangeValue struct{ r *simulate.FloatRange }

func (v floatRangeValue) String() string { return v.r.String() }
func (v floatRangeValue) Type() string   { return "range" }
func (v floatRangeValue) Set(s string) error {
	lo, hi, _ := strings.Cut(s, "..")
	for _, end := range []string{lo, hi} {
		if err := model.FloatHolds(strings.TrimSpace(end)); err != nil {
			return err // named as the end of the range given
		}
	}
	r, err := simulate.ParseFloatRange(s)
	if err != nil {
		return &restated{"want X or MIN..MAX with 0 < MIN <= MAX < 1 (one rate, or a range drawn from)", err}
	}
	*v.r = r
	return nil
}

// regimeValue is the --regime flag.
type regimeValue struct{ r *simulate.Regime }

func (v regimeValue) String() string { return string(*v.r) }
func (v regimeValue) Type() string   { return "regime" }
func (v regimeValue) Set(s string) error {
	r, err := simulate.ParseRegime(s)
	var fe *model.FieldError
	if errors.As(err, &fe) {
		return &restated{fe.Msg, err} // the flag names the value
	}
	if err != nil {
		return err
	}
	*v.r = r
	return nil
}

type simulateFlags struct {
	o     simulate.Options
	out   string
	force bool
}

// simulateModel is the start of the help of privacy simulate: what it
// writes, and the chain, BIP 37 and BIP 157 sides it draws.
const simulateModel = `simulate writes, from a seed, the files an attack reads and the truth about
them, so that what "privacy analyze" and "privacy fetches" answer can be
scored ("privacy evaluate"). The same flags give the same files, byte for
byte.

The chain. --blocks blocks, each of a coinbase, --txs-per-block
transactions of its own (each spending one or two earlier outputs, showing
the key that spends them, and paying two new scripts, some paid again) and
the wallets' transactions. The universe and the appearance index are what
package universe extracts from these blocks, as "privacy universe" does
from a real chain: every address paid, every public key a spend shows (as
the pair of its address), and per script the blocks and transactions it
appears in. So candidates sit together in transactions and blocks as they
do on a real chain.

The BIP 37 side. --wallets wallets, each of --addresses addresses (drawn
log-uniformly: as many wallets of 5 to 50 as of 50 to 500), with real
secp256k1 keys and P2PKH or P2WPKH addresses, a false-positive rate drawn
log-uniformly from --fprate, and --sessions sessions (connections). Each
address is paid on the chain at a random height after the wallet's birth,
and half the coins are spent later. A session loads a filter sized by
--sizing (core: Bitcoin Core's integer hash count; bitcoinj: the
floating-point one of bitcoinj and python-bitcoinlib, often one hash
function more) for the addresses its wallet had used by then: the last
session of a wallet all of them, earlier ones at least half. Each address
inserts --elements-per-address elements (2: the key and its hash, as
bitcoinj; 1: the hash) and the filter is sized for --extra-elements more
(0 by default, so that the filter has the rate drawn; bitcoinj adds 100,
which leaves the filters of small wallets far emptier and their addresses
far more exposed). A rate too high for Core's sizing (from about 0.3,
less for few elements) gives a filter of no byte or no hash function,
which matches everything: a warning counts the wallet sessions that got
one. A share --filteradd-fraction of sessions send their newest
addresses by filteradd after the filterload. A share --pay-fraction
of wallets paid another wallet: their filters also hold 1 to 3 of the
payee's addresses, so the two wallets share matches without being one.
--noise sessions hold elements no candidate has; --degenerate sessions
send, in turn, a 0-byte filter and one with every bit set (both match
everything) and a 2-byte one (matches about half). Sessions come in a
random order, each from its own client address, so nothing but the
filters tells who sent them.

The BIP 157 side (--fetch-wallets 0 --fetch-noise 0 leaves it out).
--fetch-wallets wallets are born in the first quarter of the chain and
receive --payments payments from --payers payers; a payer spends the
change of its previous payment, so its change scripts sit in the same
transactions as the payments (and in several of the wallet's blocks): the
scripts the block-download attack cannot tell from the wallet's. The
wallet spends half of what it receives (paying someone, keeping change).
Each of its --fetch-sessions sessions asks for every filter header from
the genesis block (getcfheaders, as a fresh client does), rescans the
filters from the birthday (getcfilters) and fetches the wallet's blocks,
the blocks whose BIP 158 filter matches by chance and --decoys random
blocks; --fetch-noise sessions fetch random blocks only.

Regimes. The standard regime (the default) shares the attacks'
assumptions; each other --regime breaks one, and sets its own defaults of
the flags above (flags given still win):`

// simulateFiles is the end of the help of privacy simulate: the files it
// writes and when a candidate is right.
const simulateFiles = `Files written into --out (created if needed):

  universe.txt          candidates, for analyze --universe
  capture.jsonl         filterload/filteradd records, for analyze --capture
  chain.idx             appearance index, for fetches --index
  fetch-capture.jsonl   getcfheaders/getcfilters/getdata records, for fetches --capture
  labels.json           the truth: wallets and their addresses, payments,
                        and per session its wallets (or its kind), the
                        candidates its filters hold, its rate and filter;
                        per BIP 157 session its wallets, scanned range,
                        the scripts it can reveal and the heights it
                        fetched as the wallet's, as decoys and by chance

An --out that holds any of them, from an earlier simulation, is refused
unless --force, which replaces them and removes those this simulation
does not write (chain.idx and fetch-capture.jsonl without a BIP 157 side).
The files are put in place together once all are written whole: a
simulation that fails or is interrupted leaves none of its own, and
those of an earlier one as they were.

A candidate is right for a session when one of its wallets owns or
watches it.`

// simulateExample shows a simulation scored, a regime, and a small one.
const simulateExample = `  spvfilter privacy simulate --out sim
  spvfilter privacy analyze --capture sim/capture.jsonl --universe sim/universe.txt --link --json > report.json
  spvfilter privacy evaluate --labels sim/labels.json --report report.json
  spvfilter privacy simulate --regime payments --seed 7 --out payments
  spvfilter privacy simulate --seed 7 --wallets 10 --sessions 2..3 --fprate 0.0001 --sizing bitcoinj --fetch-wallets 0 --fetch-noise 0 --out small`

// simulateLong is the help of privacy simulate: its model, the regimes
// and the files it writes.
func simulateLong() string {
	return simulateModel + "\n\n" + regimeHelp() + "\n\n" + simulateFiles
}

func newPrivacySimulateCommand(a *app) *cobra.Command {
	f := simulateFlags{o: simulate.DefaultOptions()}
	c := &cobra.Command{
		Use:     "simulate --out DIR",
		Short:   "Write a labelled capture, universe and chain from a seed: ground truth for analyze and fetches",
		Long:    simulateLong(),
		Example: simulateExample,
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runSimulate(a, &f, cmd.Flags()) },
	}
	addSimulateFlags(c.Flags(), &f)
	_ = c.MarkFlagRequired("out")
	wantSimulateRanges(c.Flags())
	wantValues(c.Flags(), "want a whole number, fewer than half the --blocks", "decoys")
	return c
}

// wantSimulateRanges gives each whole-number flag of fl the range that
// simulate's own check of its option states, for the error of a value
// too large for the flag's type: the check is asked, with the flag set
// to -1 over the defaults.
func wantSimulateRanges(fl *pflag.FlagSet) {
	fl.VisitAll(func(flag *pflag.Flag) {
		if !isWholeType(flag.Value.Type()) {
			return
		}
		g := simulateFlags{o: simulate.DefaultOptions()}
		probe := pflag.NewFlagSet("probe", pflag.ContinueOnError)
		addSimulateFlags(probe, &g)
		if probe.Set(flag.Name, "-1") != nil {
			return
		}
		var fe *model.FieldError
		if err := g.o.Validate(); errors.As(err, &fe) && simulateFields[fe.Field] == flag.Name {
			if want := fieldRange(fe, flag); want != "" {
				wantValues(fl, "want "+want, flag.Name)
			}
		}
	})
}

// regimeHelp describes every regime for simulate's help.
func regimeHelp() string {
	var b strings.Builder
	for i, r := range simulate.Regimes() {
		if i > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "  %s: %s.\n    Breaks: %s.\n", r.Regime, r.Does, r.Breaks)
	}
	return strings.TrimRight(wrapIndented(b.String(), 76), "\n")
}

// wrapIndented wraps each line to width, continuing it at its own indent.
func wrapIndented(s string, width int) string {
	var out strings.Builder
	for _, line := range strings.Split(s, "\n") {
		indent := line[:len(line)-len(strings.TrimLeft(line, " "))]
		cur := indent
		for _, w := range strings.Fields(line) {
			if len(cur) > len(indent) && len(cur)+1+len(w) > width {
				out.WriteString(cur + "\n")
				cur = indent + "  "
			}
			if len(cur) > len(indent) && strings.TrimSpace(cur) != "" {
				cur += " "
			}
			cur += w
		}
		out.WriteString(cur + "\n")
	}
	return out.String()
}

func addSimulateFlags(fl *pflag.FlagSet, f *simulateFlags) {
	o := &f.o
	fl.Uint64Var(&o.Seed, "seed", o.Seed, "the `SEED`: the same flags and seed give the same files")
	fl.Var(regimeValue{&o.Regime}, "regime", "how the wallets behave: standard, payments, reuse, lookahead, change, clustered, heavy-tail, shrink, shared-client, mixed or covered")
	fl.IntVar(&o.Wallets, "wallets", o.Wallets, "`N` BIP 37 wallets")
	fl.Var(intRangeValue{&o.Sessions}, "sessions", "sessions per wallet, N or MIN..MAX (uniform)")
	fl.Var(intRangeValue{&o.Addresses}, "addresses", "addresses per wallet, N or MIN..MAX (log-uniform; Pareto in heavy-tail and mixed)")
	fl.Var(floatRangeValue{&o.FPRate}, "fprate", "false-positive rate per wallet, X or MIN..MAX (log-uniform)")
	fl.Var(sizingValue{&o.Sizing}, "sizing", "filter sizing: core (Bitcoin Core) or bitcoinj (bitcoinj, python-bitcoinlib: floating-point hash-function count)")
	fl.IntVar(&o.ElementsPerAddress, "elements-per-address", o.ElementsPerAddress, "`N` elements inserted per address: 2 (key and hash, bitcoinj) or 1 (hash)")
	fl.IntVar(&o.ExtraElements, "extra-elements", o.ExtraElements, "`N` elements added to the count a filter is sized for (default 0, the rate drawn; bitcoinj adds 100)")
	fl.Float64Var(&o.PayFraction, "pay-fraction", o.PayFraction, "`SHARE` of wallets that paid another (their filters hold some of the payee's addresses)")
	fl.Float64Var(&o.FilterAddFraction, "filteradd-fraction", o.FilterAddFraction, "`SHARE` of wallet sessions that send their newest addresses by filteradd")
	fl.IntVar(&o.Noise, "noise", o.Noise, "`N` sessions of no wallet of the universe")
	fl.IntVar(&o.Degenerate, "degenerate", o.Degenerate, "`N` sessions with an empty, a full or a 2-byte filter, in turn")
	fl.IntVar(&o.Chain.Blocks, "blocks", o.Chain.Blocks, "`N` blocks of the chain (at least 10)")
	fl.IntVar(&o.Chain.TxsPerBlock, "txs-per-block", o.Chain.TxsPerBlock, "`N` transactions per block besides the coinbase and the wallets'")
	fl.IntVar(&o.Fetch.Wallets, "fetch-wallets", o.Fetch.Wallets, "`N` BIP 157 wallets")
	fl.Var(intRangeValue{&o.Fetch.Sessions}, "fetch-sessions", "BIP 157 sessions per wallet, N or MIN..MAX")
	fl.Var(intRangeValue{&o.Fetch.Payments}, "payments", "payments each BIP 157 wallet receives, N or MIN..MAX")
	fl.Var(intRangeValue{&o.Fetch.Payers}, "payers", "payers of each BIP 157 wallet, N or MIN..MAX")
	fl.IntVar(&o.Fetch.Decoys, "decoys", o.Fetch.Decoys, "`N` random blocks each BIP 157 session fetches on purpose")
	fl.IntVar(&o.Fetch.Noise, "fetch-noise", o.Fetch.Noise, "`N` BIP 157 sessions of no wallet (random downloads)")
	fl.Float64Var(&o.Fetch.CoverTarget, "cover-target", o.Fetch.CoverTarget, "covered regime: the target `P` in (0, 1) its clients draw covers to (default 0.5 in that regime; attack the capture with privacy fetches --cover-target of the same value)")
	exampleValue(fl, "cover-target", "0.5")
	fl.StringVar(&f.out, "out", "", "directory `DIR` to write the files into (created if needed)")
	fl.BoolVar(&f.force, "force", false, "replace the files of an earlier simulation in --out, and remove those this one does not write")
}

// regimeOptions are the options of the flags: the regime's defaults, with
// every flag given on the command line set again over them.
func regimeOptions(f *simulateFlags, fl *pflag.FlagSet) (simulate.Options, error) {
	base, err := simulate.RegimeOptions(f.o.Regime)
	if err != nil {
		return simulate.Options{}, usageError{err}
	}
	g := simulateFlags{o: base}
	again := pflag.NewFlagSet("regime", pflag.ContinueOnError)
	addSimulateFlags(again, &g)
	var setErr error
	fl.Visit(func(fl *pflag.Flag) {
		if setErr == nil && again.Lookup(fl.Name) != nil {
			setErr = again.Set(fl.Name, fl.Value.String())
		}
	})
	if setErr != nil {
		return simulate.Options{}, usageError{setErr}
	}
	return g.o, nil
}

// simulateOutput is the JSON of privacy simulate.
type simulateOutput struct {
	Dir                    string                `json:"dir"`
	simulate.Files                               // the files written, each under its own key
	Seed                   uint64                `json:"seed"`
	UniverseSize           int                   `json:"universe_size"`
	WalletCount            int                   `json:"wallet_count"`
	AddressCount           int                   `json:"address_count"`
	PaymentCount           int                   `json:"payment_count"`
	SessionCount           int                   `json:"session_count"`
	WalletSessionCount     int                   `json:"wallet_session_count"`
	FilterAddSessionCount  int                   `json:"filteradd_session_count"`
	NoiseSessionCount      int                   `json:"noise_session_count"`
	DegenerateSessionCount int                   `json:"degenerate_session_count"`
	Fetch                  *simulateFetchSummary `json:"fetch,omitempty"`
	Commands               []string              `json:"commands"`
	Warnings               []string              `json:"warnings"`
}

type simulateFetchSummary struct {
	BlockCount         int `json:"block_count"`
	CandidateCount     int `json:"candidate_count"`
	WalletCount        int `json:"wallet_count"`
	ScriptCount        int `json:"script_count"`
	PayerChangeCount   int `json:"payer_change_count"`
	SessionCount       int `json:"session_count"`
	NoiseSessionCount  int `json:"noise_session_count"`
	FetchedBlockCount  int `json:"blocks_fetched"`
	DecoyBlockCount    int `json:"decoy_block_count"`
	FalsePositiveCount int `json:"false_positive_block_count"`
	// The covered regime: the covers drawn, those the chain could not
	// give, and the blocks fetched for covers alone.
	CoverCount        int `json:"cover_count,omitempty"`
	CoverMissingCount int `json:"cover_missing_count,omitempty"`
	CoverBlockCount   int `json:"cover_block_count,omitempty"`
}

// checkSessions refuses, naming their flags, options that leave a side
// of the simulation without a session (simulate.Generate refuses them
// too, without a flag to name).
func (f *simulateFlags) checkSessions() error {
	o := f.o
	if o.Wallets+o.Noise+o.Degenerate+o.Fetch.Wallets+o.Fetch.Noise == 0 {
		return badInput("--wallets, --noise, --degenerate, --fetch-wallets and --fetch-noise are all 0: nothing to simulate")
	}
	return nil
}

// checkPayments refuses one wallet with payments between wallets when
// --pay-fraction was not given: its default needs two wallets, and the
// flag the user gave, --wallets, is the one named (simulate.Generate
// refuses it too, naming --pay-fraction as if it had been given).
func (f *simulateFlags) checkPayments(fl *pflag.FlagSet) error {
	if f.o.Wallets != 1 || f.o.PayFraction == 0 || fl.Changed("pay-fraction") {
		return nil
	}
	whose := "the default"
	if fl.Changed("regime") {
		whose = fmt.Sprintf("the --regime %s default", f.o.Regime)
	}
	return badInput("--wallets 1: %s --pay-fraction %v needs two wallets or more: give --wallets 2 or more, or --pay-fraction 0", whose, f.o.PayFraction)
}

// simulationFiles are the files a simulation writes.
var simulationFiles = simulate.OutputFiles()

// checkOut refuses an --out directory that holds the files of an earlier
// simulation, unless --force: files of another seed beside the new labels
// would be scored against them.
func (f *simulateFlags) checkOut() error {
	if f.force {
		return nil
	}
	var found []string
	for _, sf := range simulationFiles {
		if _, err := os.Lstat(filepath.Join(f.out, sf.Name)); err == nil {
			found = append(found, sf.Name)
		}
	}
	if len(found) > 0 {
		return badInput("--out %s: holds %s of an earlier simulation: give --force to replace them (and remove those this one does not write), or another --out", f.out, strings.Join(found, ", "))
	}
	return nil
}

// startFiles starts the files of a simulation into dir, with a BIP 157
// side or without (its files then to be removed, those of an earlier
// simulation), one per simulationFiles, all to be committed at once: an
// interrupted or failed simulation leaves the files of the earlier one
// as they were, not some of each.
func startFiles(o *outputs, dir string, fetch bool) ([]*pendingFile, error) {
	written := make([]outputFile, len(simulationFiles))
	for i, sf := range simulationFiles {
		if !sf.Fetch || fetch {
			written[i] = outputFile{"--out", filepath.Join(dir, sf.Name)}
		}
	}
	files, err := o.createEach(written...)
	if err != nil {
		return nil, err
	}
	for i, sf := range simulationFiles {
		if files[i] == nil {
			files[i] = o.remove("--out", filepath.Join(dir, sf.Name))
		}
	}
	return files, nil
}

// writeFiles writes sc into files, started by startFiles, and commits
// them; it returns their paths.
func writeFiles(o *outputs, sc *simulate.Scenario, files []*pendingFile) (simulate.Files, error) {
	var paths simulate.Files
	for i, sf := range simulationFiles {
		p := files[i]
		if p.tmp == nil {
			continue
		}
		bw := bufio.NewWriterSize(p, 256<<10)
		err := sf.Write(sc, bw)
		if err == nil {
			err = bw.Flush()
		}
		if err != nil {
			return simulate.Files{}, failureWords(p.flag+" "+p.path, writeProblem(err, ""))
		}
		*sf.Path(&paths) = p.path
	}
	if err := o.commit(files...); err != nil {
		return simulate.Files{}, err
	}
	return paths, nil
}

// runSimulate writes the simulation of the flags (fl, for naming them in
// errors) into --out.
func runSimulate(a *app, f *simulateFlags, fl *pflag.FlagSet) error {
	o, err := regimeOptions(f, fl)
	if err != nil {
		return err
	}
	if fl.Changed("cover-target") && o.Regime != simulate.RegimeCovered {
		return badInput("--cover-target is for --regime covered, whose clients draw covers to it; the %s regime draws none", o.Regime)
	}
	f.o = o
	if err := f.checkSessions(); err != nil {
		return err
	}
	if err := f.checkPayments(fl); err != nil {
		return err
	}
	// The options first: --force is no answer to a wrong --payers.
	if err := f.o.Validate(); errors.Is(err, simulate.ErrBadOptions) {
		return simulateFields.badParams(err, fl)
	}
	if f.out == "" {
		return badInput(`--out "": give the directory to write the files into`)
	}
	if f.out == "-" {
		return badInput("--out -: a directory to write the files into, not standard output (for one named -, write ./-)")
	}
	if err := checkDir("--out", f.out); err != nil {
		return err
	}
	if err := f.checkOut(); err != nil {
		return err
	}
	if err := makeDir("--out", f.out); err != nil {
		return err
	}
	fetch := o.Fetch.Wallets+o.Fetch.Noise > 0
	pending, err := startFiles(&a.outputs, f.out, fetch)
	if err != nil {
		return err
	}
	_, done := a.bar("simulating", -1)
	sc, err := simulate.Generate(o)
	done()
	if errors.Is(err, simulate.ErrBadOptions) {
		return simulateFields.badParams(err, fl)
	}
	if err != nil {
		return err
	}
	if (sc.Labels.Fetch != nil) != fetch {
		return fmt.Errorf("simulate: a BIP 157 side is %v, expected %v", sc.Labels.Fetch != nil, fetch)
	}
	_, done = a.bar("writing "+f.out, -1)
	files, err := writeFiles(&a.outputs, sc, pending)
	done()
	if err != nil {
		return err
	}
	out := summarize(f, sc.Labels, files)
	if w := matchAllWarning(sc.Labels, fl.Lookup("fprate").Value.String()); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	a.warnBesideResult(out.Warnings)
	if a.json {
		return a.printJSON(out)
	}
	printSimulate(a.stdout, &out)
	return nil
}

// matchAllWarning says how many wallet sessions got a filter that
// matches everything (no byte or no hash function: a rate drawn from
// --fprate too high for the elements), which reveal nothing to the
// attack, unlike the --degenerate sessions meant to; "" when none did.
func matchAllWarning(l *simulate.Labels, fpRates string) string {
	var n, wallet int
	lowest := math.Inf(1)
	for _, s := range l.Sessions {
		if s.Kind != simulate.KindWallet {
			continue
		}
		wallet++
		if s.FilterBytes == 0 || s.HashFuncs == 0 {
			n++
			lowest = math.Min(lowest, s.FPRate)
		}
	}
	if n == 0 {
		return ""
	}
	have, they := "have", "they reveal"
	if n == 1 {
		have, they = "has", "it reveals"
	}
	return fmt.Sprintf("%d of the %d wallet sessions %s a filter that matches everything (no byte or no hash function, at rates from %.3g of --fprate %s): %s nothing to the attack; give a lower --fprate, below %.3g",
		n, wallet, have, lowest, fpRates, they, lowest)
}

// summarize counts what the labels describe.
func summarize(f *simulateFlags, l *simulate.Labels, files simulate.Files) simulateOutput {
	out := simulateOutput{Dir: f.out, Files: files, Seed: f.o.Seed, UniverseSize: l.UniverseSize, WalletCount: len(l.Wallets),
		PaymentCount: len(l.Payments), SessionCount: len(l.Sessions), Warnings: []string{}}
	for _, w := range l.Wallets {
		out.AddressCount += len(w.Addresses)
	}
	for _, s := range l.Sessions {
		switch s.Kind {
		case simulate.KindWallet:
			out.WalletSessionCount++
			if s.Added > 0 {
				out.FilterAddSessionCount++
			}
		case simulate.KindNoise:
			out.NoiseSessionCount++
		default:
			out.DegenerateSessionCount++
		}
	}
	out.Commands = []string{
		fmt.Sprintf("spvfilter privacy analyze --capture %s --universe %s --link --json > report.json", files.Capture, files.Universe),
		fmt.Sprintf("spvfilter privacy evaluate --labels %s --report report.json", files.Labels),
	}
	if x := l.Fetch; x != nil {
		fs := &simulateFetchSummary{BlockCount: x.BlockCount, CandidateCount: x.CandidateCount, WalletCount: len(x.Wallets), SessionCount: len(x.Sessions)}
		for _, w := range x.Wallets {
			fs.ScriptCount += len(w.Scripts)
			fs.PayerChangeCount += len(w.PayerChange)
			fs.CoverCount += len(w.Covers)
			fs.CoverMissingCount += w.CoversMissing
		}
		for _, s := range x.Sessions {
			if s.Kind == simulate.KindNoise {
				fs.NoiseSessionCount++
			}
			fs.FetchedBlockCount += len(s.WalletHeights) + len(s.DecoyHeights) + len(s.FalsePositiveHeights) + len(s.CoverHeights)
			fs.DecoyBlockCount += len(s.DecoyHeights)
			fs.CoverBlockCount += len(s.CoverHeights)
			fs.FalsePositiveCount += len(s.FalsePositiveHeights)
		}
		out.Fetch = fs
		cover := ""
		if l.Options.Regime == simulate.RegimeCovered {
			cover = fmt.Sprintf(" --cover-target %g", l.Options.Fetch.CoverTarget)
		}
		out.Commands = append(out.Commands,
			fmt.Sprintf("spvfilter privacy fetches --capture %s --index %s%s --json > fetches.json", files.FetchCapture, files.Index, cover),
			fmt.Sprintf("spvfilter privacy evaluate --labels %s --report fetches.json", files.Labels))
	}
	return out
}

func printSimulate(w io.Writer, out *simulateOutput) {
	fmt.Fprintf(w, "simulated with seed %d into %s:\n", out.Seed, out.Dir)
	fmt.Fprintf(w, "  %s: %s, %d of them the %s of %s\n", out.Files.Universe, plural(out.UniverseSize, "candidate"),
		out.AddressCount, nounOf(out.AddressCount, "address"), plural(out.WalletCount, "wallet"))
	fmt.Fprintf(w, "  %s: %s: %d of wallets (%d with filteradd), %d noise, %d degenerate; %s between wallets\n",
		out.Files.Capture, plural(out.SessionCount, "session"), out.WalletSessionCount, out.FilterAddSessionCount, out.NoiseSessionCount, out.DegenerateSessionCount, plural(out.PaymentCount, "payment"))
	if fs := out.Fetch; fs != nil {
		fmt.Fprintf(w, "  %s: %s, %s; %d of them of %s, %s of payers' change beside their payments\n",
			out.Files.Index, plural(fs.BlockCount, "block"), plural(fs.CandidateCount, "script"), fs.ScriptCount, plural(fs.WalletCount, "wallet"), plural(fs.PayerChangeCount, "script"))
		fmt.Fprintf(w, "  %s: %s (%d noise), %s fetched: %s, %d by a filter's chance match\n",
			out.Files.FetchCapture, plural(fs.SessionCount, "session"), fs.NoiseSessionCount, plural(fs.FetchedBlockCount, "block"), plural(fs.DecoyBlockCount, "decoy"), fs.FalsePositiveCount)
		if fs.CoverCount > 0 {
			fmt.Fprintf(w, "  covers: %s of others, drawn as chains like the wallet's (%s the chain could not give), %s fetched for them alone\n",
				plural(fs.CoverCount, "script"), plural(fs.CoverMissingCount, "chain"), plural(fs.CoverBlockCount, "block"))
		}
	}
	fmt.Fprintf(w, "  %s: the truth\n", out.Files.Labels)
	printNext(w, out.Commands)
}
