package main

import (
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/gcs"
)

func newGCSCommand(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "gcs",
		Short: "Build, match and inspect BIP 158 compact block filters",
		Long: `gcs works with BIP 158 basic block filters (Golomb-coded sets, P=19,
M=784931) as carried in BIP 157 cfilter messages: a CompactSize N followed
by the Golomb-Rice bit stream.

  build    the basic filter of a block, its hash and header
  match    test elements (scripts) against a block's filter
  header   the filter header following a previous header
  inspect  a filter's size and false-positive rate

Block hashes, filter hashes and headers are read and printed in display
(RPC) byte order. Filters given on the command line are decoded strictly:
a malformed filter is bad input (exit status 2).`,
		Example: `  spvfilter gcs build --block @block.hex --prevout-script @prevouts.txt --prev-header @prev.hex
  spvfilter gcs match --filter @filter.hex --block-hash HASH 0014...
  spvfilter gcs inspect --filter @filter.hex --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(newGCSBuildCommand(a), newGCSMatchCommand(a), newGCSHeaderCommand(a), newGCSInspectCommand(a))
	return c
}

// readGCSFilter decodes the --filter argument as a serialized basic filter.
func (a *app) readGCSFilter(arg string) (*gcs.Filter, error) {
	raw, err := a.readHexArg("--filter", arg)
	if err != nil {
		return nil, err
	}
	f, err := gcs.DecodeBasic(raw)
	if kind := wireKind(raw); err != nil && kind != "" {
		return nil, usageError{&restated{fmt.Sprintf("--filter: %s are %s, not a BIP 158 basic filter: give the block's basic filter (spvfilter gcs build prints it from the block)", plural(len(raw), "byte"), kind), err}}
	}
	if m := gcsShortStream.FindStringSubmatch(fmt.Sprint(err)); m != nil && errors.Is(err, gcs.ErrNTooLarge) {
		// A count that fits but finds too few bits after it: a filter
		// cut short (or a wrong count), not a count too large.
		return nil, usageError{&restated{fmt.Sprintf("--filter: the data end too early: the filter counts %s (N=%s), at least %s bits of data, and %s follow the count (a truncated filter, or a wrong count)", countOf(m[1], "item"), m[1], m[2], countOf(m[3], "bit")), err}}
	}
	if m := gcsHugeN.FindStringSubmatch(fmt.Sprint(err)); m != nil && errors.Is(err, gcs.ErrNTooLarge) {
		return nil, usageError{&restated{fmt.Sprintf("--filter: the filter counts %s (N=%s), more than a filter holds (fewer than 2^32)", countOf(m[1], "item"), m[1]), err}}
	}
	if err != nil {
		return nil, badInputWords("--filter", err)
	}
	return f, nil
}

// countOf is plural of a count matched in an error's text.
func countOf(digits, noun string) string {
	n, _ := strconv.ParseUint(digits, 10, 64)
	return plural(n, noun)
}

// gcsHugeN matches gcs's error for a count of 2^32 or more.
var gcsHugeN = regexp.MustCompile(`N too large: (\d+)$`)

// gcsShortStream matches gcs's error for a count its stream is too short
// for.
var gcsShortStream = regexp.MustCompile(`N=(\d+) needs at least (\d+) bits, the stream has (\d+)`)

// readGCSHash decodes a 32-byte hash given in display byte order.
func (a *app) readGCSHash(what, arg string) (chainhash.Hash, error) {
	raw, err := a.readHexArg(what, arg)
	// A few zeros given for the zero hash (the genesis block's previous
	// filter header) are told how many it takes; no block hash is zero.
	zeros := ""
	if what == "--prev-header" && arg != "" && len(arg) < 2*chainhash.HashSize && strings.Trim(arg, "0") == "" {
		zeros = fmt.Sprintf("; the zero hash (the genesis block's previous header) is %d zeros", 2*chainhash.HashSize)
	}
	if errors.Is(err, errOddHex) {
		return chainhash.Hash{}, usageError{&restated{fmt.Sprintf("%s: a hash has %d hex digits (%d bytes, as RPC shows it)%s", err, 2*chainhash.HashSize, chainhash.HashSize, zeros), err}}
	}
	if err != nil {
		return chainhash.Hash{}, err
	}
	if len(raw) != chainhash.HashSize {
		return chainhash.Hash{}, badInput("%s: %s, a hash has %d (%d hex digits, as RPC shows it)%s", what, plural(len(raw), "byte"), chainhash.HashSize, 2*chainhash.HashSize, zeros)
	}
	slices.Reverse(raw)
	var h chainhash.Hash
	copy(h[:], raw)
	return h, nil
}

type gcsBuildJSON struct {
	BlockHash  string `json:"block_hash"`
	N          uint32 `json:"item_count"`
	Filter     string `json:"filter"`
	FilterHash string `json:"filter_hash"`
	// Header is null without --prev-header.
	Header   *string  `json:"header"`
	Warnings []string `json:"warnings"`
}

// spentInputs counts the inputs of a block's transactions after the
// coinbase: the outputs whose scripts its basic filter holds too.
func spentInputs(block *wire.MsgBlock) int {
	n := 0
	for _, tx := range block.Transactions[min(1, len(block.Transactions)):] {
		n += len(tx.TxIn)
	}
	return n
}

// readPrevoutScripts reads the --prevout-script values, one script per
// item; "" (or a line "" in a file) is an empty script.
func (a *app) readPrevoutScripts(args []string) ([][]byte, error) {
	items, err := a.readItems("--prevout-script", args)
	if err != nil {
		return nil, err
	}
	scripts := make([][]byte, len(items))
	for i, it := range items {
		if it.text == "" || it.text == `""` {
			continue // an empty script: not in the filter
		}
		if scripts[i], err = decodeHex(it.where, it.text); err != nil {
			return nil, err
		}
	}
	return scripts, nil
}

// gcsBuildFlags holds the flags of "gcs build".
type gcsBuildFlags struct {
	block, prevHeader string
	prevScripts       []string
	noPrevouts        bool
}

func newGCSBuildCommand(a *app) *cobra.Command {
	var f gcsBuildFlags
	c := &cobra.Command{
		Use:   "build --block HEX (--prevout-script HEX ... | --no-prevouts) [--prev-header HEX]",
		Short: "Build a block's BIP 158 basic filter",
		Long: `build prints the BIP 158 basic filter of a block as hex (CompactSize N, then
the bit stream). The filter holds every output script of the block except
empty ones and those starting with OP_RETURN, and every script of the
outputs the block spends, given with --prevout-script: one per input after
the coinbase, in any order, an empty one as "". The count must match the
block's (bad input, exit status 2, otherwise); @FILE holds one script per
line. Each distinct script counts once.

--no-prevouts builds the filter of the block's own output scripts alone, on
purpose: it is the BIP 158 filter only for a block that spends nothing, and
carries a warning otherwise.

With --prev-header, --json also prints the filter header that follows it;
without --json the header is named in a warning, standard output keeping
the filter's one line.`,
		Example: `  spvfilter gcs build --block @block.hex --prevout-script @prevout-scripts.txt
  spvfilter gcs build --block @testnet-1263442.hex \
      --prevout-script 002027a5000c7917f785d8fc6e5a55adfca8717ecb973ebb7743849ff956d896a7ed \
      --prev-header 31d66d516a9eda7de865df29f6ef6cb8e4bf9309e5dac899968a9a62a5df61e3 --json
  spvfilter gcs build --block @block.hex --no-prevouts`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runGCSBuild(a, &f, cmd.Flags()) },
	}
	c.Flags().StringVar(&f.block, "block", "", "serialized block as `HEX`, @FILE or -")
	c.Flags().StringArrayVar(&f.prevScripts, "prevout-script", nil, "`SCRIPT` of an output the block spends, hex or @FILE of one per line (repeatable; default: none, then --no-prevouts is needed unless the block spends nothing)")
	c.Flags().BoolVar(&f.noPrevouts, "no-prevouts", false, "build the filter of the block's output scripts alone")
	c.Flags().StringVar(&f.prevHeader, "prev-header", "", "previous filter header `HASH`, display byte order, 64 zeros for the genesis block: also print the header that follows it (default: none, no header)")
	_ = c.MarkFlagRequired("block")
	c.MarkFlagsMutuallyExclusive("prevout-script", "no-prevouts")
	return c
}

// runGCSBuild builds the --block's basic filter and prints it; fl says
// whether --prev-header was given.
func runGCSBuild(a *app, f *gcsBuildFlags, fl *pflag.FlagSet) error {
	block, err := a.readBlock(f.block)
	if err != nil {
		return err
	}
	prev, err := a.readPrevoutScripts(f.prevScripts)
	if err != nil {
		return err
	}
	inputs := spentInputs(block)
	var warnings []string
	switch {
	case f.noPrevouts && inputs > 0:
		warnings = append(warnings, fmt.Sprintf("--no-prevouts: the filter holds the block's output scripts only, without the scripts its %s spend: it is not the block's BIP 158 basic filter", plural(inputs, "input")))
	case !f.noPrevouts && len(prev) != inputs:
		return badInput("--block %s has %s after the coinbase but %s given: give one script per input (\"\" for an empty one), or --no-prevouts for the filter of its outputs alone",
			block.BlockHash(), plural(inputs, "input"), countVerb(len(prev), "--prevout-script value", "was", "were"))
	}
	filter, err := gcs.BuildBasic(block, prev)
	if err != nil {
		return fmt.Errorf("building the filter: %w", err)
	}
	out := gcsBuildJSON{
		BlockHash:  block.BlockHash().String(),
		N:          filter.N(),
		Filter:     hex.EncodeToString(filter.NBytes()),
		FilterHash: filter.Hash().String(),
		Warnings:   orEmpty(warnings),
	}
	if fl.Changed("prev-header") {
		prevHeader, err := a.readGCSHash("--prev-header", f.prevHeader)
		if err != nil {
			return err
		}
		out.Header = orNull(filter.Header(&prevHeader).String())
		if !a.json {
			// The text output is the filter's one line: a header
			// asked for would otherwise be dropped without a word.
			warnings = append(warnings, fmt.Sprintf("--prev-header: the filter header is %s; without --json build prints the filter alone (--json prints both, as \"filter\" and \"header\")", *out.Header))
		}
	}
	a.warnBesideResult(warnings)
	if a.json {
		return a.printJSON(out)
	}
	_, err = fmt.Fprintln(a.stdout, out.Filter)
	return err
}

type gcsMatchJSON struct {
	BlockHash string             `json:"block_hash"`
	Results   []gcsElementResult `json:"results"`
	Any       bool               `json:"any"`
	Warnings  []string           `json:"warnings"`
}

type gcsElementResult struct {
	Element string `json:"element"`
	Match   bool   `json:"match"`
}

// gcsMatchFlags holds the flags of "gcs match".
type gcsMatchFlags struct {
	filter, blockHash string
}

func newGCSMatchCommand(a *app) *cobra.Command {
	var f gcsMatchFlags
	c := &cobra.Command{
		Use:   "match --filter HEX --block-hash HEX ELEMENT_HEX...",
		Short: "Test elements against a block's basic filter",
		Long: `match tests each element (usually an output script) against a basic filter
and prints one line "ELEMENT true|false" per element. The filter's key comes
from the block hash, given in display byte order. A filter never misses an
element it holds; it matches an element it does not hold with probability
1/784931. Elements are hex, @FILE (one element per line) or - (one per
line). With --json, an object with block_hash, results (a list of
{element, match}) and any (whether one matched).`,
		Example: `  spvfilter gcs match --filter 0174a170 \
      --block-hash 000000006c02c8ea6e4ff69651f7fcde348fb9d557a06e6957b65552002a7820 \
      21038a7f6ef1c8ca0c588aa53fa860128077c9e6c11e6830f4d7ee4e763a56b7718fac`,
		Args: elementArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runGCSMatch(a, &f, args) },
	}
	c.Flags().StringVar(&f.filter, "filter", "", "basic filter as `HEX`, @FILE or -")
	c.Flags().StringVar(&f.blockHash, "block-hash", "", "`HASH` of the filter's block, display byte order")
	_ = c.MarkFlagRequired("filter")
	_ = c.MarkFlagRequired("block-hash")
	return c
}

// runGCSMatch tests the element arguments against the --filter.
func runGCSMatch(a *app, f *gcsMatchFlags, args []string) error {
	filter, err := a.readGCSFilter(f.filter)
	if err != nil {
		return err
	}
	blockHash, err := a.readGCSHash("--block-hash", f.blockHash)
	if err != nil {
		return err
	}
	elems, err := a.readHexItems("element", args)
	if err != nil {
		return err
	}
	key := gcs.BasicKey(&blockHash)
	out := gcsMatchJSON{BlockHash: blockHash.String(), Warnings: []string{}}
	if looksReversed(blockHash) {
		out.Warnings = append(out.Warnings, fmt.Sprintf("--block-hash %s ends in zeros: a block hash is given in display byte order, its zeros first (as RPC shows it); reversed, it keys the filter wrongly and nothing matches", blockHash))
	}
	for _, e := range elems {
		m := filter.Match(key, e)
		out.Any = out.Any || m
		out.Results = append(out.Results, gcsElementResult{hex.EncodeToString(e), m})
	}
	a.warnBesideResult(out.Warnings)
	if a.json {
		return a.printJSON(out)
	}
	for _, r := range out.Results {
		if _, err := fmt.Fprintf(a.stdout, "%s %t\n", r.Element, r.Match); err != nil {
			return err
		}
	}
	return nil
}

type gcsHeaderJSON struct {
	FilterHash string   `json:"filter_hash"`
	PrevHeader string   `json:"prev_header"`
	Header     string   `json:"header"`
	Warnings   []string `json:"warnings"`
}

// gcsHeaderFlags holds the flags of "gcs header".
type gcsHeaderFlags struct {
	filter, prevHeader string
}

func newGCSHeaderCommand(a *app) *cobra.Command {
	var f gcsHeaderFlags
	c := &cobra.Command{
		Use:   "header --filter HEX --prev-header HEX",
		Short: "Compute the filter header that follows a previous header",
		Long: `header prints the BIP 157 filter header of a basic filter:
double-SHA256(filter hash || previous header), in display byte order. The
genesis block's previous header is 64 zeros.`,
		Example: `  spvfilter gcs header --filter 0174a170 \
      --prev-header d7bdac13a59d745b1add0d2ce852f1a0442e8945fc1bf3848d3cbffd88c24fe1`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runGCSHeader(a, &f) },
	}
	c.Flags().StringVar(&f.filter, "filter", "", "basic filter as `HEX`, @FILE or -")
	c.Flags().StringVar(&f.prevHeader, "prev-header", "", "previous filter header `HASH`, display byte order, 64 zeros for the genesis block")
	_ = c.MarkFlagRequired("filter")
	_ = c.MarkFlagRequired("prev-header")
	return c
}

// runGCSHeader prints the filter header that follows --prev-header.
func runGCSHeader(a *app, f *gcsHeaderFlags) error {
	filter, err := a.readGCSFilter(f.filter)
	if err != nil {
		return err
	}
	prev, err := a.readGCSHash("--prev-header", f.prevHeader)
	if err != nil {
		return err
	}
	out := gcsHeaderJSON{
		FilterHash: filter.Hash().String(),
		PrevHeader: prev.String(),
		Header:     filter.Header(&prev).String(),
		Warnings:   []string{},
	}
	if a.json {
		return a.printJSON(out)
	}
	_, err = fmt.Fprintln(a.stdout, out.Header)
	return err
}

// gcsInspectJSON is gcs.Stats under the CLI's JSON keys: the serialized
// size is serialized_bytes (bytes alone would not say of what).
type gcsInspectJSON struct {
	N                 uint32        `json:"item_count"`
	P                 uint8         `json:"p"`
	M                 uint64        `json:"m"`
	SerializedBytes   int           `json:"serialized_bytes"`
	StreamBytes       int           `json:"stream_bytes"`
	BitsPerElement    nullableFloat `json:"bits_per_element"`
	MinBitsPerElement float64       `json:"min_bits_per_element"`
	FalsePositiveRate nullableFloat `json:"false_positive_rate"`
	// NullReason says why the figures that are null are: an empty
	// filter has no items to spend bits on and matches no query item.
	NullReason string   `json:"null_reason,omitempty"`
	FilterHash string   `json:"filter_hash"`
	Warnings   []string `json:"warnings"`
}

// emptyFilterWords says why an empty filter (N=0) has no bits per item
// and no false-positive rate: it matches nothing, so 1/M does not apply.
const emptyFilterWords = "the filter is empty (N=0): it matches no query item, so no false-positive rate applies, and it has no item to spend bits on"

func newGCSInspectJSON(f *gcs.Filter) gcsInspectJSON {
	s := f.Stats()
	out := gcsInspectJSON{
		N: s.N, P: s.P, M: s.M, SerializedBytes: s.Bytes, StreamBytes: s.StreamBytes,
		BitsPerElement: nullableFloat(s.BitsPerElement), MinBitsPerElement: s.MinBitsPerElement,
		FalsePositiveRate: nullableFloat(s.FalsePositiveRate),
		FilterHash:        f.Hash().String(), Warnings: []string{},
	}
	if s.N == 0 {
		// No items: undefined, null, and said why.
		out.BitsPerElement, out.FalsePositiveRate = nullableFloat(math.NaN()), nullableFloat(math.NaN())
		out.NullReason = emptyFilterWords
	}
	return out
}

// gcsInspectFlags holds the flags of "gcs inspect".
type gcsInspectFlags struct {
	filter string
}

func newGCSInspectCommand(a *app) *cobra.Command {
	var f gcsInspectFlags
	c := &cobra.Command{
		Use:   "inspect --filter HEX",
		Short: "Show a basic filter's size and false-positive rate",
		Long: `inspect decodes a basic filter strictly and prints its item count N, its
size, the bits it spends per item (against the log2(M) minimum) and the
false-positive rate 1/M per query item: the chance that one script it does
not hold matches anyway. An empty filter (N=0) matches nothing: it has no
false-positive rate, and none is printed (with --json, false_positive_rate
and bits_per_element are null and null_reason says why).`,
		Example: `  spvfilter gcs inspect --filter 0afbc2920af1b027f31f87b592276eb4c32094bb4d3697021b4c6380
  spvfilter gcs inspect --filter @filter.hex --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runGCSInspect(a, &f) },
	}
	c.Flags().StringVar(&f.filter, "filter", "", "basic filter as `HEX`, @FILE or -")
	_ = c.MarkFlagRequired("filter")
	return c
}

// runGCSInspect prints the --filter's size and false-positive rate.
func runGCSInspect(a *app, f *gcsInspectFlags) error {
	filter, err := a.readGCSFilter(f.filter)
	if err != nil {
		return err
	}
	s := filter.Stats()
	if a.json {
		return a.printJSON(newGCSInspectJSON(filter))
	}
	w := a.stdout
	fmt.Fprintf(w, "items (N):            %d\n", s.N)
	fmt.Fprintf(w, "parameters:           P=%d M=%d\n", s.P, s.M)
	fmt.Fprintf(w, "size:                 %s (%d of Golomb-Rice stream)\n", plural(s.Bytes, "byte"), s.StreamBytes)
	if s.N > 0 {
		fmt.Fprintf(w, "bits per item:        %.2f (minimum log2(M) = %.2f)\n", s.BitsPerElement, s.MinBitsPerElement)
	} else {
		fmt.Fprintf(w, "bits per item:        - (empty filter)\n")
	}
	if s.N > 0 {
		fmt.Fprintf(w, "false-positive rate:  1/%d = %.3g per query item\n", s.M, s.FalsePositiveRate)
	} else {
		fmt.Fprintf(w, "false-positive rate:  none (an empty filter matches no query item)\n")
	}
	_, err = fmt.Fprintf(w, "filter hash:          %s\n", filter.Hash())
	return err
}

// plural formats a count with its noun: "1 byte", "28 bytes", "1
// address", "2 addresses" (a noun ending in s, x, ch or sh takes -es).
func plural[T ~int | ~int32 | ~int64 | ~uint32 | ~uint64](n T, noun string) string {
	return fmt.Sprintf("%d %s", n, nounOf(n, noun))
}

// countVerb is a count with its noun and the verb that agrees with it:
// "1 input spends", "2 inputs spend".
func countVerb[T ~int | ~int32 | ~int64 | ~uint32 | ~uint64](n T, noun, one, many string) string {
	if n == 1 {
		return plural(n, noun) + " " + one
	}
	return plural(n, noun) + " " + many
}

// nounOf is the noun as n of them are named: "address" for 1, else
// "addresses".
func nounOf[T ~int | ~int32 | ~int64 | ~uint32 | ~uint64](n T, noun string) string {
	if n == 1 {
		return noun
	}
	for _, end := range []string{"s", "x", "ch", "sh"} {
		if strings.HasSuffix(noun, end) {
			return noun + "es"
		}
	}
	return noun + "s"
}

// looksReversed reports whether a block hash, read in display byte order,
// has its zeros at the wrong end: proof of work puts them first, and a
// hash that ends in four zero bytes and does not begin with one was most
// likely given in internal byte order.
func looksReversed(h chainhash.Hash) bool {
	return h[0] == 0 && h[1] == 0 && h[2] == 0 && h[3] == 0 && h[31] != 0
}
