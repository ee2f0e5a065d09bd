package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer"
	"golang.org/x/term"
)

func init() { registerCommand(newScanCommand) }

// networks maps the --network names to their parameters.
var networks = map[string]*chaincfg.Params{
	"mainnet":  &chaincfg.MainNetParams,
	"testnet3": &chaincfg.TestNet3Params,
	"signet":   &chaincfg.SigNetParams,
	"simnet":   &chaincfg.SimNetParams,
	"regtest":  &chaincfg.RegressionNetParams,
}

type scanFlags struct {
	peer, network, mode string
	watch               []string
	from, to            int32
	timeout             time.Duration
	fpRate              float64
	tweak               uint32
}

func newScanCommand(a *app) *cobra.Command {
	var fl scanFlags
	cmd := &cobra.Command{
		Use:   "scan --peer HOST:PORT --network NET --mode bip37|bip157 --watch ITEM...",
		Short: "Find the transactions of a watch list in a node's blocks, with BIP 37 or BIP 157",
		Long: `scan connects to a node as a light client, downloads and verifies its header
chain, and finds the transactions that pay to or spend from the watch items
in the blocks --from..--to (inclusive; the whole chain by default).

A watch item is an address of the network or an output script in hex (also
@FILE or - for standard input).

  --mode bip157  fetches the BIP 157 filter-header checkpoints, headers and
                 basic filters, checks every filter against its header,
                 matches locally and downloads only the matching blocks.
  --mode bip37   loads a BIP 37 Bloom filter of the watch items into the
                 node, fetches filtered blocks, verifies every merkle proof
                 and checks every transaction locally: Bloom false positives
                 are shown as such, never as matches.

Every answer of the node is verified; a node that lies, stalls or
disconnects ends the scan with an error naming it and what it did. A
progress bar is drawn on standard error when it is a terminal.`,
		Example: `  spvfilter scan --peer 127.0.0.1:18444 --network regtest --mode bip157 \
      --watch bcrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kygt080
  spvfilter scan --peer 127.0.0.1:18444 --network regtest --mode bip37 \
      --watch 76a914000000000000000000000000000000000000000088ac --from 100 --to 200 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.runScan(cmd, &fl)
		},
	}
	f := cmd.Flags()
	f.StringVar(&fl.peer, "peer", "", "the node's HOST:PORT")
	f.StringVar(&fl.network, "network", "mainnet", "regtest, simnet, signet, testnet3 or mainnet")
	f.StringVar(&fl.mode, "mode", "bip157", "bip37 or bip157")
	f.StringArrayVar(&fl.watch, "watch", nil, "an address or hex output script to watch (repeatable)")
	f.Int32Var(&fl.from, "from", 0, "first block height to scan")
	f.Int32Var(&fl.to, "to", 0, "last block height to scan (default the chain tip)")
	f.DurationVar(&fl.timeout, "timeout", peer.DefaultTimeout, "longest wait for any one answer of the node")
	f.Float64Var(&fl.fpRate, "fp-rate", 0.0001, "BIP 37 filter false-positive rate")
	f.Uint32Var(&fl.tweak, "tweak", 0, "BIP 37 filter tweak")
	cmd.MarkFlagRequired("peer")
	cmd.MarkFlagRequired("watch")
	return cmd
}

// watchItem is a watch list entry as given and as an output script.
type watchItem struct {
	given  string
	script []byte
}

func (a *app) parseWatch(items []string, params *chaincfg.Params) ([]watchItem, error) {
	var out []watchItem
	for i, item := range items {
		what := fmt.Sprintf("--watch %d", i+1)
		if addr, err := btcutil.DecodeAddress(item, params); err == nil {
			if !addr.IsForNet(params) {
				return nil, badInput("%s: address %s is not a %s address", what, item, params.Name)
			}
			script, err := txscript.PayToAddrScript(addr)
			if err != nil {
				return nil, badInput("%s: address %s: %w", what, item, err)
			}
			out = append(out, watchItem{given: item, script: script})
			continue
		}
		script, err := a.readHexArg(what+" (not an address of "+params.Name+", read as a hex output script)", item)
		if err != nil {
			return nil, err
		}
		given := item
		if item == "-" || strings.HasPrefix(item, "@") {
			given = hex.EncodeToString(script)
		}
		out = append(out, watchItem{given: given, script: script})
	}
	return out, nil
}

// scanMatchJSON is one matched transaction in --json output.
type scanMatchJSON struct {
	Txid          string   `json:"txid"`
	Height        int32    `json:"height"`
	BlockHash     string   `json:"block_hash"`
	Watch         []string `json:"watch"`
	FalsePositive bool     `json:"false_positive"`
}

type scanJSON struct {
	Peer                 string          `json:"peer"`
	Network              string          `json:"network"`
	Mode                 string          `json:"mode"`
	From                 int32           `json:"from"`
	To                   int32           `json:"to"`
	Matches              []scanMatchJSON `json:"matches"`
	BlocksScanned        int             `json:"blocks_scanned"`
	FiltersReceived      int             `json:"filters_received"`
	MerkleBlocksReceived int             `json:"merkleblocks_received"`
	BlocksFetched        int             `json:"blocks_fetched"`
	FalsePositiveBlocks  int             `json:"false_positive_blocks"`
	FalsePositiveTxs     int             `json:"false_positive_transactions"`
	BytesReceived        uint64          `json:"bytes_received"`
	Seconds              float64         `json:"seconds"`
}

func (a *app) runScan(cmd *cobra.Command, fl *scanFlags) error {
	params, ok := networks[fl.network]
	if !ok {
		return badInput("--network %q: want regtest, simnet, signet, testnet3 or mainnet", fl.network)
	}
	if _, port, err := net.SplitHostPort(fl.peer); err != nil || port == "" {
		return badInput("--peer %q: want HOST:PORT", fl.peer)
	}
	if fl.mode != "bip37" && fl.mode != "bip157" {
		return badInput("--mode %q: want bip37 or bip157", fl.mode)
	}
	if fl.from < 0 {
		return badInput("--from %d: negative height", fl.from)
	}
	if !cmd.Flags().Changed("to") {
		fl.to = -1 // the tip, once known
	} else if fl.to < 0 {
		return badInput("--to %d: negative height", fl.to)
	}
	if fl.to >= 0 && fl.to < fl.from {
		return badInput("--to %d is below --from %d", fl.to, fl.from)
	}
	if fl.timeout <= 0 {
		return badInput("--timeout %v: must be positive", fl.timeout)
	}
	if fl.mode == "bip37" && !(fl.fpRate > 0 && fl.fpRate < 1) {
		return badInput("--fp-rate %v: want a rate between 0 and 1", fl.fpRate)
	}
	items, err := a.parseWatch(fl.watch, params)
	if err != nil {
		return err
	}
	scripts := make([][]byte, len(items))
	for i, it := range items {
		scripts[i] = it.script
	}
	var filter *bip37.Filter
	if fl.mode == "bip37" {
		// Checked before connecting: a script without data pushes
		// cannot be put in a Bloom filter. Item by item, to name the
		// flag as the other watch errors do.
		for i, s := range scripts {
			if _, err := peer.NewWatchFilter([][]byte{s}, fl.fpRate, 0); err != nil {
				return badInput("--watch %d: script %x has no data push a BIP 37 filter can match (--mode bip157 can watch it)", i+1, s)
			}
		}
		if filter, err = peer.NewWatchFilter(scripts, fl.fpRate, fl.tweak); err != nil {
			return badInput("%v", strings.TrimPrefix(err.Error(), "peer: "))
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	// An interrupt ends the scan with "interrupted", not with the bare
	// context error.
	interrupted := func(err error) error {
		if ctx.Err() != nil && errors.Is(err, context.Canceled) {
			return errors.New("scan interrupted")
		}
		return err
	}
	start := time.Now()
	p, err := peer.Dial(ctx, peer.Config{Addr: fl.peer, Params: params, Timeout: fl.timeout})
	if err != nil {
		return interrupted(err)
	}
	defer p.Close()
	chain, err := p.SyncHeaders(ctx)
	if err != nil {
		return interrupted(err)
	}
	to := fl.to
	if to < 0 {
		to = chain.Height()
	}
	if to > chain.Height() {
		return badInput("--to %d is above the node's chain tip %d", to, chain.Height())
	}
	if fl.from > to {
		return badInput("--from %d is above the node's chain tip %d", fl.from, chain.Height())
	}

	progress, finish := a.progressBar(int(to-fl.from) + 1)
	var res *peer.ScanResult
	if fl.mode == "bip37" {
		res, err = p.ScanBIP37Watch(ctx, chain, filter, scripts, fl.from, to, progress)
	} else {
		res, err = p.ScanBIP157(ctx, chain, scripts, fl.from, to, progress)
	}
	finish()
	if err != nil {
		return interrupted(err)
	}
	out := scanJSON{
		Peer: fl.peer, Network: fl.network, Mode: fl.mode, From: fl.from, To: to,
		Matches:              []scanMatchJSON{},
		BlocksScanned:        res.BlocksScanned,
		FiltersReceived:      res.FiltersReceived,
		MerkleBlocksReceived: res.MerkleBlocksReceived,
		BlocksFetched:        res.BlocksFetched,
		FalsePositiveBlocks:  res.FalsePositiveBlocks,
		BytesReceived:        res.BytesReceived,
		Seconds:              time.Since(start).Seconds(),
	}
	for _, m := range res.Matches {
		j := scanMatchJSON{
			Txid: m.Txid.String(), Height: m.Height, BlockHash: m.BlockHash.String(),
			Watch: []string{}, FalsePositive: m.FalsePositive,
		}
		for _, i := range m.WatchItems {
			j.Watch = append(j.Watch, items[i].given)
		}
		if m.FalsePositive {
			out.FalsePositiveTxs++
		}
		out.Matches = append(out.Matches, j)
	}
	if a.json {
		return a.printJSON(out)
	}
	return a.printScan(&out)
}

func (a *app) printScan(out *scanJSON) error {
	w := a.stdout
	found := 0
	for _, m := range out.Matches {
		if m.FalsePositive {
			fmt.Fprintf(w, "%s  height %d  block %s  false positive (involves no watch item)\n", m.Txid, m.Height, m.BlockHash)
			continue
		}
		found++
		fmt.Fprintf(w, "%s  height %d  block %s  watch %s\n", m.Txid, m.Height, m.BlockHash, strings.Join(m.Watch, ","))
	}
	fmt.Fprintf(w, "scanned %d blocks (%d..%d) of %s with %s in %.1fs\n", out.BlocksScanned, out.From, out.To, out.Peer, out.Mode, out.Seconds)
	if out.Mode == "bip157" {
		fmt.Fprintf(w, "filters received: %d, blocks fetched: %d, false-positive blocks: %d\n",
			out.FiltersReceived, out.BlocksFetched, out.FalsePositiveBlocks)
	} else {
		fmt.Fprintf(w, "merkle blocks received: %d, false-positive blocks: %d, false-positive transactions: %d\n",
			out.MerkleBlocksReceived, out.FalsePositiveBlocks, out.FalsePositiveTxs)
	}
	_, err := fmt.Fprintf(w, "bytes received: %d, transactions found: %d\n", out.BytesReceived, found)
	return err
}

// progressBar returns a progress callback drawing on standard error when
// it is a terminal, and a function that removes the bar.
func (a *app) progressBar(total int) (func(done, total int), func()) {
	f, ok := a.stderr.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) || total < 2 {
		return nil, func() {}
	}
	bar := progressbar.NewOptions(total,
		progressbar.OptionSetWriter(f),
		progressbar.OptionSetDescription("scanning blocks"),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionClearOnFinish(),
		progressbar.OptionThrottle(100*time.Millisecond),
	)
	return func(done, _ int) { bar.Set(done) }, func() { bar.Finish() }
}
