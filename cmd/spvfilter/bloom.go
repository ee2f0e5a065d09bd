package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"

	"github.com/spvfilter/spvfilter/bip37"
)

func newBloomCommand(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "bloom",
		Short: "Create, query and inspect BIP 37 Bloom filters",
		Long: `bloom works with BIP 37 connection Bloom filters in their filterload message
form (CompactSize length, bit array, hash function count, tweak, flags),
with Bitcoin Core's exact sizing, hashing and matching rules.

  new      a filter sized for N elements at a false-positive rate
  add      insert elements into a filter
  match    test elements against a filter
  inspect  a filter's parameters and health statistics
  tx       whether a transaction is relevant to a filter, and the filter
           after Core's update rule`,
		Example: `  spvfilter bloom new --elements 3 --fprate 0.01 --flags all @elements.txt
  spvfilter bloom match --filter @filterload.hex 0014...
  spvfilter bloom inspect --filter @filterload.hex --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(newBloomNewCommand(a), newBloomAddCommand(a), newBloomMatchCommand(a),
		newBloomInspectCommand(a), newBloomTxCommand(a))
	return c
}

// sizingValue is the --sizing flag: the rule that sizes a filter, core
// (Bitcoin Core, the default) or bitcoinj (bitcoinj and
// python-bitcoinlib: a floating-point hash-function count).
type sizingValue struct{ rule *bip37.Sizing }

func (v sizingValue) String() string {
	if *v.rule == "" {
		return string(bip37.SizingCore)
	}
	return string(*v.rule)
}

func (v sizingValue) Set(s string) error {
	r, err := bip37.ParseSizing(s)
	if err != nil {
		return &restated{"want core or bitcoinj", err}
	}
	*v.rule = r
	return nil
}

func (v sizingValue) Type() string { return "core|bitcoinj" }

// addSizingFlag defines --sizing on c, with completion of its values.
func addSizingFlag(c *cobra.Command, rule *bip37.Sizing) {
	c.Flags().Var(sizingValue{rule}, "sizing", "sizing rule of the filter: core (Bitcoin Core) or bitcoinj (bitcoinj, python-bitcoinlib: floating-point hash-function count)")
	_ = c.RegisterFlagCompletionFunc("sizing", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{string(bip37.SizingCore), string(bip37.SizingBitcoinj)}, cobra.ShellCompDirectiveNoFileComp
	})
}

// filterJSON is a filter as the bloom commands print it with --json.
type filterJSON struct {
	FilterLoad string         `json:"filterload"`
	Stats      bloomStatsJSON `json:"bloom_filter"`
	Warnings   []string       `json:"warnings"`
}

// bloomStatsJSON is bip37.Stats under the CLI's JSON keys: the bit array's
// size is filter_bytes and filter_bits, as in "privacy model", and
// undefined or infinite values are null.
type bloomStatsJSON struct {
	FilterBits          uint32               `json:"filter_bits"`
	FilterBytes         uint32               `json:"filter_bytes"`
	HashFuncs           uint32               `json:"hash_function_count"`
	Tweak               uint32               `json:"tweak"`
	Flags               wire.BloomUpdateType `json:"flags"`
	FlagsName           string               `json:"flags_name"`
	BitsSet             uint32               `json:"bits_set"`
	Density             nullableFloat        `json:"density"`
	EstimatedElements   nullableFloat        `json:"estimated_elements"`
	FalsePositiveRate   nullableFloat        `json:"false_positive_rate"`
	BitsPerElement      nullableFloat        `json:"bits_per_element"`
	BoundBitsPerElement nullableFloat        `json:"bound_bits_per_element"`
	OverheadRatio       nullableFloat        `json:"overhead_ratio"`
}

func newBloomStatsJSON(s bip37.Stats) bloomStatsJSON {
	return bloomStatsJSON{
		FilterBits: s.SizeBits, FilterBytes: s.SizeBytes, HashFuncs: s.HashFuncs, Tweak: s.Tweak,
		Flags: s.Flags, FlagsName: s.FlagsName, BitsSet: s.BitsSet,
		Density: nullableFloat(s.Density), EstimatedElements: nullableFloat(s.EstimatedElements),
		FalsePositiveRate: nullableFloat(s.FalsePositiveRate), BitsPerElement: nullableFloat(s.BitsPerElement),
		BoundBitsPerElement: nullableFloat(s.BoundBitsPerElement), OverheadRatio: nullableFloat(s.OverheadRatio),
	}
}

// nullableFloat is a number that JSON shows as null when it is NaN or
// infinite.
type nullableFloat float64

func (v nullableFloat) MarshalJSON() ([]byte, error) {
	f := float64(v)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// printFilter prints a filter's payload hex on one line, or with --json
// the payload, its statistics and warnings; without --json the warnings
// go to standard error.
func (a *app) printFilter(f *bip37.Filter, warnings []string) error {
	payload, err := f.MarshalBinary()
	if err != nil {
		return fmt.Errorf("encoding the filter: %w", err)
	}
	a.warnBesideResult(warnings)
	if a.json {
		return a.printJSON(filterJSON{hex.EncodeToString(payload), newBloomStatsJSON(f.Stats()), orEmpty(warnings)})
	}
	_, err = fmt.Fprintln(a.stdout, hex.EncodeToString(payload))
	return err
}

// fillWarnings returns the warnings of a filter that elements were just
// added to or that is matched against: a filter that matches everything
// or is filled far beyond one half. (An empty or sparse filter is what
// new and add are expected to give, and matching it is fine.)
func fillWarnings(f *bip37.Filter) []string {
	s := f.Stats()
	if s.Warning != "" && (s.SizeBits == 0 || s.HashFuncs == 0 || s.Density > 0.5) {
		return []string{s.Warning}
	}
	return nil
}

// readFilter decodes the --filter argument as a filterload payload.
func (a *app) readFilter(arg string) (*bip37.Filter, error) {
	raw, err := a.readHexArg("--filter", arg)
	if err != nil {
		return nil, err
	}
	f, err := bip37.DecodeFilterLoad(raw)
	if err != nil {
		return nil, filterLoadError("--filter", raw, err)
	}
	return f, nil
}

// filterLoadError is the bad input of raw, given as what, which
// DecodeFilterLoad refused with err: bytes that do not add up to a
// payload are said as filterLoadMismatch says them.
func filterLoadError(what string, raw []byte, err error) error {
	if kind := wireKind(raw); kind != "" {
		return usageError{&restated{fmt.Sprintf("%s: %s are %s, not a filterload payload: give the filter (spvfilter bloom new prints one, privacy capture records those clients load)", what, plural(len(raw), "byte"), kind), err}}
	}
	if errors.Is(err, bip37.ErrTruncated) || errors.Is(err, bip37.ErrTrailingData) {
		return usageError{&restated{fmt.Sprintf("%s: %s no filterload payload: %s (%s)", what, countVerb(len(raw), "byte", "is", "are"), filterLoadMismatch(raw), filterLoadLayout), err}}
	}
	return badInputWords(what, err)
}

// filterLoadMismatch says how the bytes of raw, which DecodeFilterLoad
// found too few or too many, fail to add up to a filterload payload.
func filterLoadMismatch(raw []byte) string {
	r := bytes.NewReader(raw)
	size, err := wire.ReadVarInt(r, 0)
	if err != nil {
		if len(raw) == 1 {
			return "it ends inside the length"
		}
		return "they end inside the length"
	}
	return fmt.Sprintf("the length says %s of filter, so %s should follow it, and %s",
		plural(size, "byte"), plural(size+9, "byte"), countVerb(uint64(r.Len()), "byte", "does", "do"))
}

// filterLoadLayout says what a filterload payload holds, for a --filter
// whose bytes do not add up to one.
const filterLoadLayout = "a filterload payload is a CompactSize length, that many bytes of filter, then 9 bytes: hash-function count, tweak and flags; spvfilter bloom new prints one"

// bloomDesign checks the filter Core's sizing gives for elements at
// fpRate. For a filter that would match everything (no bytes, or no hash
// functions) degenerate says why and what the limits allow; a filter that
// the 36,000-byte limit keeps from its rate gets a warning.
//
// By bitcoinj's rule a filter has at least 1 byte and 1 hash function:
// where Core's would match everything, bitcoinj's gets a warning instead.
func bloomDesign(elements uint32, fpRate float64, rule bip37.Sizing) (degenerate string, warnings []string) {
	if rule == bip37.SizingBitcoinj {
		if core, _ := bloomDesign(elements, fpRate, bip37.SizingCore); core != "" {
			b, k := rule.Size(elements, fpRate)
			warnings = append(warnings, fmt.Sprintf("bitcoinj's floor of 1 byte and 1 hash function gives %s and %s where Core's rule "+
				"would not build a working filter: %s", plural(b, "byte"), plural(k, "hash function"), core))
		}
	}
	size, k := rule.Size(elements, fpRate)
	const maxBits = bip37.MaxFilterSize * 8
	// Elements that fill maxBits at fpRate.
	atRate := math.Floor(bip37.Capacity(maxBits, fpRate))
	prefix := fmt.Sprintf("--elements %d at --fprate %v", elements, fpRate)
	switch {
	case size == 0:
		first := math.Ceil(bip37.Capacity(8, fpRate))
		return fmt.Sprintf("%s gives a 0-byte filter, which matches everything (as nodes treat it): at that rate a filter needs about %.0f elements for its first byte; give more elements or a lower rate", prefix, first), nil
	case k == 0 && float64(elements) > atRate:
		// Core gives k = (bytes*8/elements, an integer division)*ln 2,
		// so one hash function needs 2 bits per element.
		return fmt.Sprintf("%s gives 0 hash functions, a filter that matches everything: at most %d bytes means at most about %.0f elements at that rate, and %d at any rate; give fewer elements or a higher rate",
			prefix, bip37.MaxFilterSize, atRate, maxBits/2), nil
	case k == 0:
		return fmt.Sprintf("%s gives 0 hash functions, a filter that matches everything: Core's sizing leaves fewer than 2 bits per element at that rate, and gives one hash function only for rates up to about %.2f (less for few elements); give a lower rate",
			prefix, math.Exp(-2*math.Ln2*math.Ln2)), nil
	}
	m, n := float64(size)*8, float64(elements)
	// The false-positive rate once elements are in.
	rate := bip37.FalsePositiveRate(uint64(size)*8, k, uint64(elements))
	switch {
	case float64(elements) > atRate && rate > fpRate:
		warnings = append(warnings, fmt.Sprintf("%s: at most %d bytes means at most about %.0f elements at that rate; this filter's false-positive rate will be about %.3g once %s in",
			prefix, bip37.MaxFilterSize, atRate, rate, countVerb(elements, "element", "is", "are")))
	case k == bip37.MaxHashFuncs && m/n*math.Ln2 >= bip37.MaxHashFuncs+1 && rate > fpRate:
		// The rate asks for more hash functions than the 50 a filter may
		// have: the bytes are there, the functions are not.
		warnings = append(warnings, fmt.Sprintf("%s: the rate needs about %.0f hash functions and a filter has at most %d; this filter's false-positive rate will be about %.3g once %s in, not %v",
			prefix, m/n*math.Ln2, bip37.MaxHashFuncs, rate, countVerb(elements, "element", "is", "are"), fpRate))
	}
	return "", warnings
}

// elementArgs requires at least one ELEMENT_HEX argument.
var elementArgs = needArgs("ELEMENT_HEX", "at least one element, as hex, @FILE (one per line) or - (standard input)")

// bloomNewFlags holds the flags of "bloom new".
type bloomNewFlags struct {
	elements        uint32
	fpRate          float64
	tweak           uint32
	flagsName       string
	allowDegenerate bool
	sizing          bip37.Sizing
}

func newBloomNewCommand(a *app) *cobra.Command {
	f := bloomNewFlags{sizing: bip37.SizingCore}
	c := &cobra.Command{
		Use:   "new --elements N --fprate P [--sizing core|bitcoinj] [--tweak T] [--flags none|all|p2pubkey-only] [ELEMENT_HEX ...]",
		Short: "Create a filter sized as Bitcoin Core sizes it, optionally with elements",
		Long: `new creates an empty filter for N elements at false-positive rate P, sized
exactly as Bitcoin Core's CBloomFilter (at most 36,000 bytes and 50 hash
functions), inserts the given elements, and prints the filterload payload as
one line of hex. --sizing bitcoinj sizes it as bitcoinj's BloomFilter (and
python-bitcoinlib's CBloomFilter) instead: the same bytes, but a hash-function
count divided in floating point, one more than Core's at many sizes (16
instead of 15 for 632 elements at 0.00001), and at least 1 byte and 1 hash
function. With --json it prints an object with the payload
(filterload), the filter's statistics (bloom_filter) and warnings.

A filter that would match everything is refused (exit status 2) unless
--allow-degenerate is given: 0 bytes (too few elements for the rate) or 0
hash functions (more elements than 36,000 bytes hold at the rate, or a
rate above about 0.38, where Core's sizing leaves fewer than 2 bits per
element). A filter the size limit keeps from the requested rate, one given
more elements than --elements, and one filled far beyond one half by its
elements, carry a warning.

--tweak is added to every hash function's seed (choose it at random for
privacy); --flags selects what a node adds to the filter when an output
matches: none, all (the outpoint of every matching output) or
p2pubkey-only (only for pay-to-pubkey and bare multisig outputs). Element
arguments are hex, @FILE (one element per line) or - (one per line).

An element is what a node tests: each data push of a transaction's
scripts (a key hash, a public key, a script hash), a txid, an outpoint.
A payment matches by the data its output script carries, not by the
whole script: give the 20-byte hash of 0014{hash} or 76a914{hash}88ac
(an element that is a whole standard output script is warned of, in
bloom add and match too).`,
		Example: `  spvfilter bloom new --elements 3 --fprate 0.01 --flags all 99108ad8ed9bb6274d3980bab5a85c048f0950c8
  spvfilter bloom new --elements 1000 --fprate 0.0001 --tweak 2147483649 --json
  spvfilter bloom new --elements 2 --fprate 0.001 @elements.txt`,
		RunE: func(cmd *cobra.Command, args []string) error { return runBloomNew(a, &f, args) },
	}
	c.Flags().Uint32Var(&f.elements, "elements", 0, "number `N` of elements the filter is sized for")
	wantValues(c.Flags(), "want a whole number from 1 to 4294967295", "elements")
	c.Flags().Float64Var(&f.fpRate, "fprate", 0, "false-positive `RATE`, between 0 and 1")
	c.Flags().Uint32Var(&f.tweak, "tweak", 0, "tweak `T` added to the hash seeds (default 0)")
	exampleValue(c.Flags(), "elements", "100")
	exampleValue(c.Flags(), "fprate", "0.001")
	c.Flags().StringVar(&f.flagsName, "flags", "none", "update flags `RULE`: none, all or p2pubkey-only")
	c.Flags().BoolVar(&f.allowDegenerate, "allow-degenerate", false, "build a filter that matches everything anyway, with a warning")
	addSizingFlag(c, &f.sizing)
	_ = c.MarkFlagRequired("elements")
	_ = c.MarkFlagRequired("fprate")
	return c
}

// runBloomNew sizes a filter by the flags, inserts the element arguments
// and prints it.
func runBloomNew(a *app, f *bloomNewFlags, args []string) error {
	if f.elements == 0 {
		return badRange("--elements", 0, "")
	}
	if !(f.fpRate > 0 && f.fpRate < 1) {
		return badRange("--fprate", f.fpRate, "a rate in (0, 1)")
	}
	flags, err := bip37.ParseFlags(f.flagsName)
	if err != nil {
		return usageError{&restated{fmt.Sprintf("--flags %q: want none, all or p2pubkey-only", f.flagsName), err}}
	}
	degenerate, warnings := bloomDesign(f.elements, f.fpRate, f.sizing)
	if degenerate != "" {
		if !f.allowDegenerate {
			return badInput("%s (or --allow-degenerate)", degenerate)
		}
		warnings = append(warnings, degenerate)
	}
	elems, err := a.readHexItems("element", args)
	if err != nil {
		return err
	}
	warnings = append(warnings, scriptElementWarnings(elems)...)
	filter := f.sizing.NewFilter(f.elements, f.fpRate, f.tweak, flags)
	for _, e := range elems {
		filter.Add(e)
	}
	if over := overfillWarning(filter, elems, f.elements, f.fpRate); over != "" && degenerate == "" {
		warnings = append(warnings, over)
	} else if len(elems) > 0 && degenerate == "" {
		warnings = append(warnings, fillWarnings(filter)...)
	}
	return a.printFilter(filter, warnings)
}

// overfillWarning says, when more distinct elements went into a new
// filter than the --elements it is sized for, what rate the filter has
// now against the one asked, and what --elements would keep it.
func overfillWarning(f *bip37.Filter, elems [][]byte, sizedFor uint32, asked float64) string {
	distinct := make(map[string]struct{}, len(elems))
	for _, e := range elems {
		distinct[string(e)] = struct{}{}
	}
	n := len(distinct)
	if uint64(n) <= uint64(sizedFor) {
		return ""
	}
	return fmt.Sprintf("%d elements inserted into a filter sized for --elements %d: its false-positive rate is about %.3g, not the %v of --fprate; give --elements %d or more",
		n, sizedFor, f.Stats().FalsePositiveRate, asked, n)
}

// bloomFilterFlags holds the --filter flag of "bloom add", "bloom match"
// and "bloom inspect".
type bloomFilterFlags struct {
	filter string
}

func newBloomAddCommand(a *app) *cobra.Command {
	var f bloomFilterFlags
	c := &cobra.Command{
		Use:   "add --filter HEX ELEMENT_HEX...",
		Short: "Insert elements into a filter and print the new filter",
		Long: `add inserts each element into the filter (a filterload payload) and prints the
updated payload as one line of hex; with --json, the payload (filterload),
the statistics and warnings. Elements are hex, @FILE (one element per line)
or - (one per line). A filter filled far beyond one half, or one that
matches everything, carries a warning. Elements longer than 520 bytes are
accepted here, with a warning: a node rejects them in a filteradd message.`,
		Example: `  spvfilter bloom add --filter 03614e9b050000000000000001 b5a2c786d9ef4658287ced5914b37a1b4aa32eee
  spvfilter bloom add --filter @filter.hex @pubkeys.txt --json`,
		Args: elementArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runBloomAdd(a, &f, args) },
	}
	c.Flags().StringVar(&f.filter, "filter", "", "filterload payload as `HEX`, @FILE or -")
	_ = c.MarkFlagRequired("filter")
	return c
}

// runBloomAdd inserts the element arguments into the --filter and prints it.
func runBloomAdd(a *app, f *bloomFilterFlags, args []string) error {
	filter, elems, err := a.readFilterAndElements(f.filter, args)
	if err != nil {
		return err
	}
	warnings := scriptElementWarnings(elems)
	for i, e := range elems {
		filter.Add(e)
		if err := bip37.ValidateFilterAdd(e); err != nil {
			warnings = append(warnings, fmt.Sprintf("element %d is %d bytes: added here, but a node refuses a filteradd element of more than %d bytes (and drops the client that sends one)",
				i+1, len(e), bip37.MaxFilterAddDataSize))
		}
	}
	return a.printFilter(filter, append(warnings, fillWarnings(filter)...))
}

func newBloomMatchCommand(a *app) *cobra.Command {
	var f bloomFilterFlags
	c := &cobra.Command{
		Use:   "match --filter HEX ELEMENT_HEX...",
		Short: "Test elements against a filter",
		Long: `match prints one line "ELEMENT true|false" per element, ELEMENT in lowercase
hex: true means the element may be in the filter (or is a false positive),
false that it certainly is not. A 0-byte filter matches everything, as in
Bitcoin Core; such a filter, and one with no hash functions or filled far
beyond one half, carries a warning. Elements are hex, @FILE (one element per
line) or - (one per line). With --json, an object with results, a list of
{element, match}, any (whether one matched) and warnings.`,
		Example: `  spvfilter bloom match --filter 03614e9b050000000000000001 99108ad8ed9bb6274d3980bab5a85c048f0950c8 19108ad8ed9bb6274d3980bab5a85c048f0950c8
  spvfilter bloom match --filter @filter.hex @elements.txt --json`,
		Args: elementArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runBloomMatch(a, &f, args) },
	}
	c.Flags().StringVar(&f.filter, "filter", "", "filterload payload as `HEX`, @FILE or -")
	_ = c.MarkFlagRequired("filter")
	return c
}

// runBloomMatch tests the element arguments against the --filter.
func runBloomMatch(a *app, f *bloomFilterFlags, args []string) error {
	filter, elems, err := a.readFilterAndElements(f.filter, args)
	if err != nil {
		return err
	}
	type result struct {
		Element string `json:"element"`
		Match   bool   `json:"match"`
	}
	results := make([]result, len(elems))
	anyMatch := false
	for i, e := range elems {
		results[i] = result{hex.EncodeToString(e), filter.Contains(e)}
		anyMatch = anyMatch || results[i].Match
	}
	warnings := append(scriptElementWarnings(elems), fillWarnings(filter)...)
	a.warnBesideResult(warnings)
	if a.json {
		return a.printJSON(struct {
			Results  []result `json:"results"`
			Any      bool     `json:"any"`
			Warnings []string `json:"warnings"`
		}{results, anyMatch, orEmpty(warnings)})
	}
	var b strings.Builder
	for _, r := range results {
		fmt.Fprintf(&b, "%s %t\n", r.Element, r.Match)
	}
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}

func newBloomInspectCommand(a *app) *cobra.Command {
	var f bloomFilterFlags
	c := &cobra.Command{
		Use:   "inspect --filter HEX",
		Short: "Show a filter's parameters and health statistics",
		Long: `inspect decodes a filterload payload and prints its parameters and health:
size, hash functions, tweak, flags, bits set and density, the number of
elements estimated from the density, n = -(m/k)*ln(1 - X/m), the
false-positive rate at the current fill, (X/m)^k, bits per element, and the
overhead against the information-theoretic bound log2(1/fp) (an optimally
sized Bloom filter is at 1/ln 2 = 1.44). A warning on standard error says
when the filter matches everything (0 bytes, no hash functions, every bit
set) or its density is far from one half, the sign of a mis-sized filter.
With --json the same as an object, the warnings in "warnings" (and not on
standard error); values that are undefined or infinite are null.`,
		Example: `  spvfilter bloom inspect --filter 03614e9b050000000000000001
  spvfilter bloom inspect --filter @captured-filterload.hex --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBloomInspect(a, &f) },
	}
	c.Flags().StringVar(&f.filter, "filter", "", "filterload payload as `HEX`, @FILE or -")
	_ = c.MarkFlagRequired("filter")
	return c
}

// runBloomInspect prints the --filter's parameters and statistics.
func runBloomInspect(a *app, f *bloomFilterFlags) error {
	filter, err := a.readFilter(f.filter)
	if err != nil {
		return err
	}
	s := filter.Stats()
	var warnings []string
	if s.Warning != "" {
		warnings = append(warnings, s.Warning)
	}
	a.warnBesideResult(warnings)
	if a.json {
		return a.printJSON(struct {
			bloomStatsJSON
			Warnings []string `json:"warnings"`
		}{newBloomStatsJSON(s), orEmpty(warnings)})
	}
	var b strings.Builder
	row := func(name, format string, v ...any) {
		fmt.Fprintf(&b, "%-22s "+format+"\n", append([]any{name + ":"}, v...)...)
	}
	row("size", "%s (%d bits)", plural(s.SizeBytes, "byte"), s.SizeBits)
	row("hash functions", "%d", s.HashFuncs)
	row("tweak", "%d (%#08x)", s.Tweak, s.Tweak)
	row("flags", "%s (%d)", s.FlagsName, s.Flags)
	row("bits set", "%d", s.BitsSet)
	row("density", "%s", formatStat(s.Density, "%.4f"))
	row("estimated elements", "%s", formatStat(s.EstimatedElements, "%.1f"))
	row("false-positive rate", "%s", formatStat(s.FalsePositiveRate, "%.3g"))
	row("bits per element", "%s", formatStat(s.BitsPerElement, "%.2f"))
	row("bound bits/element", "%s", formatStat(s.BoundBitsPerElement, "%.2f"))
	row("overhead ratio", "%s", formatStat(s.OverheadRatio, "%.2f"))
	_, err = fmt.Fprint(a.stdout, b.String())
	return err
}

// formatStat formats a statistic, spelling out undefined and infinite
// values.
func formatStat(v float64, format string) string {
	switch {
	case math.IsNaN(v):
		return "undefined"
	case math.IsInf(v, 1):
		return "infinite"
	}
	return fmt.Sprintf(format, v)
}

// bloomTxFlags holds the flags of "bloom tx".
type bloomTxFlags struct {
	filter, tx string
}

func newBloomTxCommand(a *app) *cobra.Command {
	var f bloomTxFlags
	c := &cobra.Command{
		Use:   "tx --filter HEX --tx HEX",
		Short: "Check whether a transaction is relevant to a filter",
		Long: `tx applies Bitcoin Core's IsRelevantAndUpdate to a serialized transaction
(witness serialization allowed; witness data is never matched): a match on
the txid, a data push of an output script, a spent outpoint or a data push
of an input script. It prints "relevant: true|false", the txid, and
"filter: HEX", the filterload payload after the update a node makes (with
flags all or p2pubkey-only, the outpoints of matching outputs are added).
With --json, an object with txid, relevant, filterload, updated (whether
the filter changed) and warnings (a filter that matches everything).`,
		Example: `  spvfilter bloom tx --filter "$(spvfilter bloom new --elements 10 --fprate 0.000001 --flags all 04943fdd508053c75000106d3bc6e2754dbcff19)" --tx @tx.hex
  bitcoin-cli getrawtransaction TXID | spvfilter bloom tx --filter @filter.hex --tx - --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runBloomTx(a, &f) },
	}
	c.Flags().StringVar(&f.filter, "filter", "", "filterload payload as `HEX`, @FILE or -")
	c.Flags().StringVar(&f.tx, "tx", "", "serialized transaction as `HEX`, @FILE or -")
	_ = c.MarkFlagRequired("filter")
	_ = c.MarkFlagRequired("tx")
	return c
}

// runBloomTx applies the --filter to the --tx and prints the result.
func runBloomTx(a *app, f *bloomTxFlags) error {
	filter, err := a.readFilter(f.filter)
	if err != nil {
		return err
	}
	raw, err := a.readHexArg("--tx", f.tx)
	if err != nil {
		return err
	}
	tx, err := decodeTx("--tx", raw)
	if err != nil {
		return err
	}
	before := filter.Bits()
	warnings := fillWarnings(filter)
	relevant := filter.MatchTxAndUpdate(tx)
	payload, err := filter.MarshalBinary()
	if err != nil {
		return fmt.Errorf("encoding the filter: %w", err)
	}
	a.warnBesideResult(warnings)
	if a.json {
		return a.printJSON(struct {
			Txid       string   `json:"txid"`
			Relevant   bool     `json:"relevant"`
			Updated    bool     `json:"updated"`
			FilterLoad string   `json:"filterload"`
			Warnings   []string `json:"warnings"`
		}{tx.TxHash().String(), relevant, !bytes.Equal(before, filter.Bits()), hex.EncodeToString(payload), orEmpty(warnings)})
	}
	_, err = fmt.Fprintf(a.stdout, "relevant: %t\ntxid: %s\nfilter: %x\n", relevant, tx.TxHash(), payload)
	return err
}

// readFilterAndElements reads the --filter payload and the element
// arguments of add and match.
func (a *app) readFilterAndElements(filterArg string, args []string) (*bip37.Filter, [][]byte, error) {
	f, err := a.readFilter(filterArg)
	if err != nil {
		return nil, nil, err
	}
	elems, err := a.readHexItems("element", args)
	if err != nil {
		return nil, nil, err
	}
	return f, elems, nil
}

// scriptKinds names the standard output scripts a wallet developer may
// give as a filter element in place of the data they carry.
var scriptKinds = map[txscript.ScriptClass]string{
	txscript.PubKeyHashTy:          "P2PKH",
	txscript.ScriptHashTy:          "P2SH",
	txscript.WitnessV0PubKeyHashTy: "P2WPKH",
	txscript.WitnessV0ScriptHashTy: "P2WSH",
	txscript.WitnessV1TaprootTy:    "P2TR",
}

// scriptElementWarnings warns of each element that is a whole standard
// output script: a node tests the data pushes of an output script (BIP
// 37), not the whole script, so such an element matches no payment to
// it. The warning names the data to insert in its place.
func scriptElementWarnings(elems [][]byte) []string {
	var warnings []string
	for i, e := range elems {
		kind, ok := scriptKinds[txscript.GetScriptClass(e)]
		if !ok {
			continue
		}
		pushes, err := txscript.PushedData(e)
		if err != nil || len(pushes) == 0 {
			continue
		}
		warnings = append(warnings, fmt.Sprintf("element %d, %x, is a whole %s output script: a node tests the data pushes of an output script, not the whole script, so it matches no payment to it; insert the data it carries, %x",
			i+1, e, kind, pushes[len(pushes)-1]))
	}
	return warnings
}
