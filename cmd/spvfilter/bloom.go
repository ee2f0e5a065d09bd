package main

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"strings"

	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"

	"github.com/spvfilter/spvfilter/bip37"
)

func init() { registerCommand(newBloomCommand) }

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
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(newBloomNewCommand(a), newBloomAddCommand(a), newBloomMatchCommand(a),
		newBloomInspectCommand(a), newBloomTxCommand(a))
	return c
}

// filterJSON is a filter as the bloom commands print it with --json.
type filterJSON struct {
	Payload string      `json:"payload"`
	Stats   bip37.Stats `json:"stats"`
}

func newFilterJSON(f *bip37.Filter) (filterJSON, error) {
	payload, err := f.MarshalBinary()
	if err != nil {
		return filterJSON{}, fmt.Errorf("encoding the filter: %w", err)
	}
	return filterJSON{Payload: hex.EncodeToString(payload), Stats: f.Stats()}, nil
}

// printFilter prints a filter's payload hex on one line, or with --json
// the payload and statistics.
func (a *app) printFilter(f *bip37.Filter) error {
	out, err := newFilterJSON(f)
	if err != nil {
		return err
	}
	if a.json {
		return a.printJSON(out)
	}
	_, err = fmt.Fprintln(a.stdout, out.Payload)
	return err
}

// readFilter decodes the --filter argument as a filterload payload.
func (a *app) readFilter(arg string) (*bip37.Filter, error) {
	raw, err := a.readHexArg("--filter", arg)
	if err != nil {
		return nil, err
	}
	f, err := bip37.DecodeFilterLoad(raw)
	if err != nil {
		return nil, badInput("--filter: %w", err)
	}
	return f, nil
}

// elementArgs requires at least one ELEMENT_HEX argument.
func elementArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return badInput("bloom %s: give at least one ELEMENT_HEX argument", cmd.Name())
	}
	return nil
}

func newBloomNewCommand(a *app) *cobra.Command {
	var elements uint32
	var fpRate float64
	var tweak uint32
	var flagsName string
	c := &cobra.Command{
		Use:   "new --elements N --fprate P [--tweak T] [--flags none|all|p2pubkey-only] [ELEMENT_HEX ...]",
		Short: "Create a filter sized as Bitcoin Core sizes it, optionally with elements",
		Long: `new creates an empty filter for N elements at false-positive rate P, sized
exactly as Bitcoin Core's CBloomFilter (at most 36,000 bytes and 50 hash
functions), inserts the given elements, and prints the filterload payload as
one line of hex. With --json it prints an object with the payload and the
filter's statistics.

--tweak is added to every hash function's seed (choose it at random for
privacy); --flags selects what a node adds to the filter when an output
matches: none, all (the outpoint of every matching output) or
p2pubkey-only (only for pay-to-pubkey and bare multisig outputs). Element
arguments are hex, @FILE or -.`,
		Example: `  spvfilter bloom new --elements 3 --fprate 0.01 --flags all 99108ad8ed9bb6274d3980bab5a85c048f0950c8
  spvfilter bloom new --elements 1000 --fprate 0.0001 --tweak 2147483649 --json
  spvfilter bloom new --elements 2 --fprate 0.001 @pubkey.hex @hash160.hex`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if elements == 0 {
				return badInput("--elements must be at least 1")
			}
			if !(fpRate > 0 && fpRate < 1) {
				return badInput("--fprate must be between 0 and 1 (exclusive), got %v", fpRate)
			}
			flags, err := bip37.ParseFlags(flagsName)
			if err != nil {
				return badInput("--flags: %q is not none, all or p2pubkey-only", flagsName)
			}
			elems, err := a.readHexArgs("element", args)
			if err != nil {
				return err
			}
			f := bip37.NewFilter(elements, fpRate, tweak, flags)
			for _, e := range elems {
				f.Add(e)
			}
			if f.Size() == 0 {
				fmt.Fprintf(a.stderr, "spvfilter: warning: --elements %d at --fprate %v gives a 0-byte filter, which nodes treat as matching everything\n", elements, fpRate)
			}
			return a.printFilter(f)
		},
	}
	c.Flags().Uint32Var(&elements, "elements", 0, "number of elements the filter is sized for (required)")
	c.Flags().Float64Var(&fpRate, "fprate", 0, "false-positive rate, between 0 and 1 (required)")
	c.Flags().Uint32Var(&tweak, "tweak", 0, "tweak added to the hash seeds")
	c.Flags().StringVar(&flagsName, "flags", "none", "update flags: none, all or p2pubkey-only")
	_ = c.MarkFlagRequired("elements")
	_ = c.MarkFlagRequired("fprate")
	_ = c.RegisterFlagCompletionFunc("flags", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return []string{"none", "all", "p2pubkey-only"}, cobra.ShellCompDirectiveNoFileComp
	})
	return c
}

func newBloomAddCommand(a *app) *cobra.Command {
	var filterArg string
	c := &cobra.Command{
		Use:   "add --filter HEX ELEMENT_HEX...",
		Short: "Insert elements into a filter and print the new filter",
		Long: `add inserts each element into the filter (a filterload payload) and prints the
updated payload as one line of hex; with --json, the payload and the
statistics. Elements longer than 520 bytes are accepted here but a node
rejects them in a filteradd message.`,
		Example: `  spvfilter bloom add --filter 03614e9b050000000000000001 b5a2c786d9ef4658287ced5914b37a1b4aa32eee
  spvfilter bloom add --filter @filter.hex @pubkeys.hex --json`,
		Args: elementArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, elems, err := a.readFilterAndElements(filterArg, args)
			if err != nil {
				return err
			}
			for _, e := range elems {
				f.Add(e)
			}
			return a.printFilter(f)
		},
	}
	c.Flags().StringVar(&filterArg, "filter", "", "filterload payload as hex, @FILE or - (required)")
	_ = c.MarkFlagRequired("filter")
	return c
}

func newBloomMatchCommand(a *app) *cobra.Command {
	var filterArg string
	c := &cobra.Command{
		Use:   "match --filter HEX ELEMENT_HEX...",
		Short: "Test elements against a filter",
		Long: `match prints one line "ELEMENT true|false" per element, ELEMENT in lowercase
hex: true means the element may be in the filter (or is a false positive),
false that it certainly is not. A 0-byte filter matches everything, as in
Bitcoin Core. With --json, an object with a list of {element, match}.`,
		Example: `  spvfilter bloom match --filter 03614e9b050000000000000001 99108ad8ed9bb6274d3980bab5a85c048f0950c8 19108ad8ed9bb6274d3980bab5a85c048f0950c8
  spvfilter bloom match --filter @filter.hex @element.hex --json`,
		Args: elementArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			f, elems, err := a.readFilterAndElements(filterArg, args)
			if err != nil {
				return err
			}
			type result struct {
				Element string `json:"element"`
				Match   bool   `json:"match"`
			}
			results := make([]result, len(elems))
			for i, e := range elems {
				results[i] = result{hex.EncodeToString(e), f.Contains(e)}
			}
			if a.json {
				return a.printJSON(struct {
					Matches []result `json:"matches"`
				}{results})
			}
			var b strings.Builder
			for _, r := range results {
				fmt.Fprintf(&b, "%s %t\n", r.Element, r.Match)
			}
			_, err = fmt.Fprint(a.stdout, b.String())
			return err
		},
	}
	c.Flags().StringVar(&filterArg, "filter", "", "filterload payload as hex, @FILE or - (required)")
	_ = c.MarkFlagRequired("filter")
	return c
}

func newBloomInspectCommand(a *app) *cobra.Command {
	var filterArg string
	c := &cobra.Command{
		Use:   "inspect --filter HEX",
		Short: "Show a filter's parameters and health statistics",
		Long: `inspect decodes a filterload payload and prints its parameters and health:
size, hash functions, tweak, flags, bits set and density, the number of
elements estimated from the density, n = -(m/k)*ln(1 - X/m), the
false-positive rate at the current fill, (X/m)^k, bits per element, and the
overhead against the information-theoretic bound log2(1/fp) (an optimally
sized Bloom filter is at 1/ln 2 = 1.44). A warning says when the density is
far from one half, the sign of a mis-sized filter. With --json the same as
an object; values that are undefined or infinite are null.`,
		Example: `  spvfilter bloom inspect --filter 03614e9b050000000000000001
  spvfilter bloom inspect --filter @captured-filterload.hex --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := a.readFilter(filterArg)
			if err != nil {
				return err
			}
			s := f.Stats()
			if a.json {
				return a.printJSON(s)
			}
			var b strings.Builder
			row := func(name, format string, v ...any) {
				fmt.Fprintf(&b, "%-22s "+format+"\n", append([]any{name + ":"}, v...)...)
			}
			row("size", "%d bytes (%d bits)", s.SizeBytes, s.SizeBits)
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
			if s.Warning != "" {
				row("warning", "%s", s.Warning)
			}
			_, err = fmt.Fprint(a.stdout, b.String())
			return err
		},
	}
	c.Flags().StringVar(&filterArg, "filter", "", "filterload payload as hex, @FILE or - (required)")
	_ = c.MarkFlagRequired("filter")
	return c
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

func newBloomTxCommand(a *app) *cobra.Command {
	var filterArg, txArg string
	c := &cobra.Command{
		Use:   "tx --filter HEX --tx HEX",
		Short: "Check whether a transaction is relevant to a filter",
		Long: `tx applies Bitcoin Core's IsRelevantAndUpdate to a serialized transaction
(witness serialization allowed; witness data is never matched): a match on
the txid, a data push of an output script, a spent outpoint or a data push
of an input script. It prints "relevant: true|false", the txid, and
"filter: HEX", the filterload payload after the update a node makes (with
flags all or p2pubkey-only, the outpoints of matching outputs are added).
With --json, an object with the same fields and whether the filter changed.`,
		Example: `  spvfilter bloom tx --filter "$(spvfilter bloom new --elements 10 --fprate 0.000001 --flags all 04943fdd508053c75000106d3bc6e2754dbcff19)" --tx @tx.hex
  bitcoin-cli getrawtransaction TXID | spvfilter bloom tx --filter @filter.hex --tx - --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := a.readFilter(filterArg)
			if err != nil {
				return err
			}
			raw, err := a.readHexArg("--tx", txArg)
			if err != nil {
				return err
			}
			r := bytes.NewReader(raw)
			var tx wire.MsgTx
			if err := tx.Deserialize(r); err != nil {
				return badInput("--tx: not a serialized transaction: %v", err)
			}
			if r.Len() != 0 {
				return badInput("--tx: %d bytes after the end of the transaction", r.Len())
			}
			before := f.Bits()
			relevant := f.MatchTxAndUpdate(&tx)
			out, err := newFilterJSON(f)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(struct {
					Txid     string `json:"txid"`
					Relevant bool   `json:"relevant"`
					Updated  bool   `json:"updated"`
					Filter   string `json:"filter"`
				}{tx.TxHash().String(), relevant, !bytes.Equal(before, f.Bits()), out.Payload})
			}
			_, err = fmt.Fprintf(a.stdout, "relevant: %t\ntxid: %s\nfilter: %s\n", relevant, tx.TxHash(), out.Payload)
			return err
		},
	}
	c.Flags().StringVar(&filterArg, "filter", "", "filterload payload as hex, @FILE or - (required)")
	c.Flags().StringVar(&txArg, "tx", "", "serialized transaction as hex, @FILE or - (required)")
	_ = c.MarkFlagRequired("filter")
	_ = c.MarkFlagRequired("tx")
	return c
}

// readFilterAndElements reads the --filter payload and the element
// arguments of add and match.
func (a *app) readFilterAndElements(filterArg string, args []string) (*bip37.Filter, [][]byte, error) {
	f, err := a.readFilter(filterArg)
	if err != nil {
		return nil, nil, err
	}
	elems, err := a.readHexArgs("element", args)
	if err != nil {
		return nil, nil, err
	}
	return f, elems, nil
}
