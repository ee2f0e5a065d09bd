package main

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"

	"github.com/spvfilter/spvfilter/bip37"
)

func newMerkleBlockCommand(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "merkleblock",
		Short: "Build and verify BIP 37 merkle block proofs",
		Long: `merkleblock builds the merkleblock message a BIP 37 node sends for a block
(the block header and a partial merkle tree proving the matched
transactions), and verifies one received from a peer.

  build    the merkleblock payload for a block and a filter or a set of txids
  verify   check a merkleblock payload against its header's merkle root`,
		Example: `  spvfilter merkleblock build --block @block.hex --txid TXID
  spvfilter merkleblock build --block @block.hex --filter @filterload.hex --json
  spvfilter merkleblock verify --merkleblock @merkleblock.hex`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	c.AddCommand(newMerkleBlockBuildCommand(a), newMerkleBlockVerifyCommand(a))
	return c
}

// merkleMatchJSON is a proven transaction: its position in the block and
// its txid in display order.
type merkleMatchJSON struct {
	Index uint32 `json:"position"`
	Txid  string `json:"txid"`
}

func merkleMatchesJSON(ms []bip37.MerkleMatch) []merkleMatchJSON {
	out := make([]merkleMatchJSON, len(ms))
	for i, m := range ms {
		out[i] = merkleMatchJSON{Index: m.Index, Txid: m.Txid.String()}
	}
	return out
}

// merkleBlockBuildFlags holds the flags of "merkleblock build".
type merkleBlockBuildFlags struct {
	block, filter string
	txids         []string
}

func newMerkleBlockBuildCommand(a *app) *cobra.Command {
	var f merkleBlockBuildFlags
	c := &cobra.Command{
		Use:   "build --block HEX (--filter HEX | --txid HEX [HEX...])",
		Short: "Build the merkleblock payload for a block and a filter or txids",
		Long: `build prints, as one line of hex, the merkleblock message payload a BIP 37
node sends for the block: with --filter (a filterload payload) the
transactions the filter matches, checked and updated in block order as
Bitcoin Core does; with --txid the listed transactions (display byte order,
as RPC shows them; repeat the flag, list more txids as arguments or give
@FILE with one txid per line; unknown txids are ignored).

--block is a full serialized block (witness data allowed). With --json the
result is an object with the payload (merkleblock), the block hash, the
matched transactions with their positions (matched) and, with --filter, the
updated filter (filterload).`,
		Example: `  spvfilter merkleblock build --block @block.hex --txid 74d681e0e03bafa802c8aa084379aa98d9fcd632ddc2ed9782b586ec87451f20
  spvfilter merkleblock build --block @block.hex --filter "$(spvfilter bloom new --elements 10 --fprate 0.000001 --flags all 4134e75a6fcb6042034aab5e18570cf1f844f547)"
  bitcoin-cli getblock HASH 0 | spvfilter merkleblock build --block - --txid TXID --json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error { return runMerkleBlockBuild(a, &f, args) },
	}
	c.Flags().StringVar(&f.block, "block", "", "serialized block as `HEX`, @FILE or -")
	c.Flags().StringVar(&f.filter, "filter", "", "filterload payload as `HEX`, @FILE or -: prove the transactions it matches (default: none, give --txid)")
	c.Flags().StringArrayVar(&f.txids, "txid", nil, "`TXID` to prove, display byte order, or @FILE of one per line (repeatable; more may follow as arguments; default: none, give --filter)")
	_ = c.MarkFlagRequired("block")
	return c
}

// runMerkleBlockBuild builds the merkleblock payload for the --block and
// the --filter or the txids, and prints it.
func runMerkleBlockBuild(a *app, f *merkleBlockBuildFlags, args []string) error {
	if len(args) > 0 {
		// Positional arguments are more txids: --txid A B C.
		if len(f.txids) == 0 {
			return badInput("unexpected argument %q: only txids (after --txid) may be listed as arguments", args[0])
		}
		f.txids = append(f.txids, args...)
	}
	switch {
	case f.filter != "" && len(f.txids) > 0:
		return badInput("--filter and --txid: give one or the other, not both")
	case f.filter == "" && len(f.txids) == 0:
		return badInput("--filter or --txid: give the filter, or the txids, whose transactions the proof is to hold")
	}
	block, err := a.readBlock(f.block)
	if err != nil {
		return err
	}
	var mb *wire.MsgMerkleBlock
	var matches []bip37.MerkleMatch
	var filter *bip37.Filter
	var warnings []string
	if f.filter != "" {
		if filter, err = a.readFilter(f.filter); err != nil {
			return err
		}
		mb, matches = bip37.NewMerkleBlock(block, filter)
	} else {
		txids, err := a.readTxids(f.txids)
		if err != nil {
			return err
		}
		mb, matches = bip37.NewMerkleBlockFromTxids(block, txids)
		warnings = absentTxids(block, txids)
	}
	// A block whose transactions do not hash to its header's root
	// (or that is CVE-2012-2459 mutated) gives no valid proof.
	if _, err := bip37.VerifyMerkleBlock(mb); err != nil {
		return badInputWords("--block: transactions do not match the header", err)
	}
	payload, err := bip37.EncodeMerkleBlock(mb)
	if err != nil {
		return fmt.Errorf("encoding merkleblock: %w", err)
	}
	a.warnBesideResult(warnings)
	if !a.json {
		_, err := fmt.Fprintln(a.stdout, hex.EncodeToString(payload))
		return err
	}
	out := struct {
		MerkleBlock  string            `json:"merkleblock"`
		BlockHash    string            `json:"block_hash"`
		MerkleRoot   string            `json:"merkle_root"`
		Transactions uint32            `json:"transaction_count"`
		Hashes       int               `json:"hash_count"`
		FlagBytes    int               `json:"flag_bytes"`
		Matched      []merkleMatchJSON `json:"matched"`
		FilterLoad   string            `json:"filterload,omitempty"`
		Warnings     []string          `json:"warnings"`
	}{
		Warnings:     orEmpty(warnings),
		MerkleBlock:  hex.EncodeToString(payload),
		BlockHash:    block.BlockHash().String(),
		MerkleRoot:   block.Header.MerkleRoot.String(),
		Transactions: mb.Transactions,
		Hashes:       len(mb.Hashes),
		FlagBytes:    len(mb.Flags),
		Matched:      merkleMatchesJSON(matches),
	}
	if filter != nil {
		b, err := filter.MarshalBinary()
		if err != nil {
			return fmt.Errorf("encoding the updated filter: %w", err)
		}
		out.FilterLoad = hex.EncodeToString(b)
	}
	return a.printJSON(out)
}

// blockTooMany matches btcd's wire refusing a block's transaction count:
// "too many transactions to fit into a block [count C, max M]".
var blockTooMany = regexp.MustCompile(`^too many transactions to fit into a block \[count (\d+), max (\d+)\]$`)

// readBlock decodes the --block argument as one serialized block.
func (a *app) readBlock(arg string) (*wire.MsgBlock, error) {
	raw, err := a.readHexArg("--block", arg)
	if err != nil {
		return nil, err
	}
	r := bytes.NewReader(raw)
	var block wire.MsgBlock
	if err := block.Deserialize(r); err != nil {
		if kind := wireKind(raw); kind != "" {
			return nil, usageError{&restated{fmt.Sprintf("--block: %s are %s, not a whole block: give the block (getblock HASH 0 prints one)", plural(len(raw), "byte"), kind), err}}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, usageError{&restated{fmt.Sprintf("--block: %s, not a whole block: the data end too early, after byte %d (give a whole block's hex, as getblock HASH 0 prints it)",
				plural(len(raw), "byte"), len(raw)-r.Len()), err}}
		}
		why := words(err)
		var me *wire.MessageError
		if errors.As(err, &me) {
			if m := blockTooMany.FindStringSubmatch(me.Description); m != nil {
				why = fmt.Sprintf("it announces %s transactions, more than a block can hold (at most %s)", m[1], m[2])
			}
		}
		return nil, usageError{&restated{named("--block: not a serialized block", why) + " (give a whole block's hex, as getblock HASH 0 prints it)", err}}
	}
	if r.Len() != 0 {
		return nil, badInput("--block: %s after the end of the block", plural(r.Len(), "byte"))
	}
	if len(block.Transactions) == 0 {
		return nil, badInput("--block: block has no transactions")
	}
	return &block, nil
}

// readTxids decodes --txid arguments given in display (RPC) byte order
// into internal byte order.
func (a *app) readTxids(args []string) ([]chainhash.Hash, error) {
	items, err := a.readItems("--txid", args)
	if err != nil {
		return nil, err
	}
	txids := make([]chainhash.Hash, len(items))
	for i, it := range items {
		raw, err := decodeHex(it.where, it.text)
		if err != nil {
			return nil, err
		}
		if len(raw) != chainhash.HashSize {
			return nil, badInput("%s: %s, a txid has %d (%d hex digits, as RPC shows it)", it.where, plural(len(raw), "byte"), chainhash.HashSize, 2*chainhash.HashSize)
		}
		slices.Reverse(raw)
		copy(txids[i][:], raw)
	}
	return txids, nil
}

// merkleBlockVerifyFlags holds the flags of "merkleblock verify".
type merkleBlockVerifyFlags struct {
	merkleBlock string
}

func newMerkleBlockVerifyCommand(a *app) *cobra.Command {
	var f merkleBlockVerifyFlags
	c := &cobra.Command{
		Use:   "verify --merkleblock HEX",
		Short: "Verify a merkleblock payload and list the transactions it proves",
		Long: `verify decodes a merkleblock message payload, recomputes the merkle root from
its partial merkle tree and compares it with the root in its header. It
prints the block hash, the merkle root with OK, the transaction count and one
line "match INDEX TXID" per proven transaction (display byte order).

Every check of Bitcoin Core applies (duplicate-hash mutation, surplus or
missing hashes or flag bits, zero transactions or more than a block can
hold); non-zero padding bits in the last flag byte are rejected too. An
invalid proof exits with status 1 and names the defect; bytes that are not a
merkleblock payload exit with status 2. Verification shows the transactions
are committed to by the header; whether the header is in the best chain is
for the caller to check.`,
		Example: `  spvfilter merkleblock verify --merkleblock @proof.hex
  spvfilter merkleblock build --block @block.hex --txid TXID | spvfilter merkleblock verify --merkleblock -
  spvfilter merkleblock verify --merkleblock @proof.hex --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runMerkleBlockVerify(a, &f) },
	}
	c.Flags().StringVar(&f.merkleBlock, "merkleblock", "", "merkleblock payload as `HEX`, @FILE or -")
	_ = c.MarkFlagRequired("merkleblock")
	return c
}

// runMerkleBlockVerify verifies the --merkleblock payload and prints the
// transactions it proves.
func runMerkleBlockVerify(a *app, f *merkleBlockVerifyFlags) error {
	raw, err := a.readHexArg("--merkleblock", f.merkleBlock)
	if err != nil {
		return err
	}
	mb, err := bip37.DecodeMerkleBlock(raw)
	if err != nil {
		if kind := wireKind(raw); kind != "" {
			return usageError{&restated{fmt.Sprintf("--merkleblock: %s are %s, not a merkleblock payload: give a merkleblock message's payload (spvfilter merkleblock build prints one from the block)", plural(len(raw), "byte"), kind), err}}
		}
		if fixed := wire.MaxBlockHeaderPayload + 4; len(raw) < fixed {
			return badInput("--merkleblock: %s, not a whole merkleblock: its header and transaction count alone take %d bytes (give a merkleblock message's payload)",
				plural(len(raw), "byte"), fixed)
		}
		return badInputWords("--merkleblock", err)
	}
	blockHash := mb.Header.BlockHash()
	matches, err := bip37.VerifyMerkleBlock(mb)
	if err != nil {
		return failureWords(fmt.Sprintf("--merkleblock: block %v: invalid proof", blockHash), err)
	}
	if a.json {
		return a.printJSON(struct {
			BlockHash    string            `json:"block_hash"`
			MerkleRoot   string            `json:"merkle_root"`
			Valid        bool              `json:"valid"`
			Transactions uint32            `json:"transaction_count"`
			Matched      []merkleMatchJSON `json:"matched"`
			Warnings     []string          `json:"warnings"`
		}{blockHash.String(), mb.Header.MerkleRoot.String(), true, mb.Transactions, merkleMatchesJSON(matches), []string{}})
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "block %v\n", blockHash)
	fmt.Fprintf(&b, "merkle_root %v OK\n", mb.Header.MerkleRoot)
	fmt.Fprintf(&b, "transactions %d\n", mb.Transactions)
	fmt.Fprintf(&b, "matched %d\n", len(matches))
	for _, m := range matches {
		fmt.Fprintf(&b, "match %d %v\n", m.Index, m.Txid)
	}
	_, err = a.stdout.Write(b.Bytes())
	return err
}

// absentTxids warns of each txid that is not in the block, and hints at
// the byte order when the reverse of a txid is.
func absentTxids(block *wire.MsgBlock, txids []chainhash.Hash) []string {
	in := make(map[chainhash.Hash]bool, len(block.Transactions))
	for _, tx := range block.Transactions {
		in[tx.TxHash()] = true
	}
	var warnings []string
	for _, id := range txids {
		if in[id] {
			continue
		}
		reversed := id
		slices.Reverse(reversed[:])
		if in[reversed] {
			warnings = append(warnings, fmt.Sprintf("--txid %s is not in the block, but its byte-reversed form %s is: give txids in display byte order, as RPC shows them", id, reversed))
			continue
		}
		warnings = append(warnings, fmt.Sprintf("--txid %s is not in the block: nothing is proved for it", id))
	}
	return warnings
}
