package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// universeFlags holds the flags of "privacy universe".
type universeFlags struct {
	peer, network, out string
	index              string
	indexMemory        int
	from, to           int32
	timeout            time.Duration
	force              bool
	toGiven            bool // --to was given; otherwise the tip
}

func newPrivacyUniverseCommand(a *app) *cobra.Command {
	var f universeFlags
	c := &cobra.Command{
		Use:   "universe --peer HOST:PORT --network NET [--from H] [--to H] --out FILE",
		Short: "Collect every address, public key and script push seen on a range of blocks",
		Long: `universe downloads blocks --from..--to (default: the whole chain) from a node,
checking each against the header chain, and writes the candidates an attacker
would test, one per line, each once, in the format "privacy analyze" reads:

  addresses   of every standard output (P2PKH, P2SH, P2WPKH, P2WSH, P2TR)
  public keys seen in P2PK and multisig outputs, input scripts and
              witnesses, marked "# pair ADDRESS": the pubkey/pubkey-hash pair,
              which stands for the key's P2PKH and P2WPKH addresses; those
              already written on a line of their own are named "listed
              ADDRESS" (analyze then counts them and the key once), those
              not yet written are not written later
  scripts     non-standard output scripts and redeem/witness scripts, tested
              by their data pushes

The statistics (as text, or with --json an object) go to standard output,
or with --out - to standard error, the lines then going to standard
output (with --json, standard error then holds the statistics alone, the
warnings inside). --out may also be a named pipe whose reader runs, or
/dev/null; another device is refused. A warning says that the result
rests on the one node given.
Neither file is ever left cut short: both are put in place together, only
once written whole; a download that fails or is interrupted (Ctrl-C, exit
status 130), or a file that cannot be put in place, leaves neither (and
the files --force was to replace as they were), so the same command can
simply be run again.

--index FILE also writes the appearance index that "privacy fetches" reads:
for every output script of the range, named as its universe line names it
(its address, or the hex of the public key or script), the heights of the
blocks it appears in, as an output and as the script an input spends (what
a block's BIP 158 filter holds; a taproot key-path or P2PK spend does not
show the script it spends and is not counted), and in each transaction
whether the script is paid there or spent (index version 4: an index of
an earlier version, made --from a later block, cannot tell a spend of a
coin paid before that block from its creation), with the range's block
hashes. The appearances are sorted in runs of --index-memory bytes spilled
beside FILE and merged, so memory stays bounded on any chain.`,
		Example: `  spvfilter privacy universe --peer 127.0.0.1:18444 --network regtest --out universe.txt
  spvfilter privacy universe --peer 127.0.0.1:8333 --network mainnet --from 800000 --to 800010 --out universe.txt
  spvfilter privacy universe --peer 127.0.0.1:18444 --network regtest --out universe.txt --index universe.idx`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runUniverse(cmd.Context(), a, &f, cmd.Flags()) },
	}
	fl := c.Flags()
	fl.StringVar(&f.peer, "peer", "", "node to download blocks from (`HOST:PORT`)")
	fl.StringVar(&f.network, "network", "mainnet", networkNames())
	fl.Int32Var(&f.from, "from", 0, "first block `HEIGHT` (default 0, the genesis block)")
	fl.Int32Var(&f.to, "to", 0, "last block `HEIGHT` (default: the tip)")
	wantValues(fl, wantHeight, "from", "to")
	exampleValue(fl, "to", "100")
	fl.StringVar(&f.out, "out", "", "universe `FILE` to write (- for standard output; --json statistics then go to standard error)")
	fl.StringVar(&f.index, "index", "", "also write the appearance index of the range to this `FILE` (for \"privacy fetches\"; default: none written)")
	fl.IntVar(&f.indexMemory, "index-memory", universe.DefaultIndexMemory, "with --index: `BYTES` of appearances held before a sorted run is spilled to disk")
	wantValues(fl, "want a number of bytes, a whole number without a unit, at least 65536 (67108864 is 64 MiB)", "index-memory")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "longest wait `DURATION` for any one answer of the node")
	fl.BoolVar(&f.force, "force", false, "replace --out and --index if they exist (without it, an existing file is refused)")
	_ = c.MarkFlagRequired("peer")
	_ = c.MarkFlagRequired("out")
	return c
}

// universeStatsJSON is what privacy universe --json prints: universe.Stats
// under the CLI's JSON keys (a count is <noun>_count, or <nouns>_<done>
// for what the command did) and the range and files.
type universeStatsJSON struct {
	BlockCount         int      `json:"block_count"`
	AddressCount       int      `json:"address_count"`
	PubKeyCount        int      `json:"pubkey_count"`
	ScriptCount        int      `json:"script_count"`
	LinesWritten       int      `json:"lines_written"`
	AddressLinesListed int      `json:"address_lines_listed"`
	SpendsIndexed      int      `json:"spends_indexed,omitempty"`
	SpendsUnattributed int      `json:"spends_unattributed,omitempty"`
	From               int32    `json:"from"`
	To                 int32    `json:"to"`
	UniverseFile       string   `json:"universe_file"`
	IndexFile          string   `json:"index_file,omitempty"`
	Warnings           []string `json:"warnings"`
}

// check refuses, before any connection, the flags that are bad input
// whatever the node holds.
func (f *universeFlags) check() error {
	if f.from < 0 {
		return badRange("--from", f.from, "")
	}
	if !f.toGiven {
		f.to = -1 // the tip, once known
	} else if f.to < 0 {
		return badRange("--to", f.to, "")
	}
	if f.toGiven && f.to < f.from {
		return toBelowFrom(f.to, f.from)
	}
	if f.timeout <= 0 {
		return notPositive("--timeout", f.timeout)
	}
	if f.indexMemory < 1<<16 {
		return badRange("--index-memory", f.indexMemory, "")
	}
	if f.index == "-" {
		// Standard output is the universe's, with --out -.
		return badInput("--index -: the index goes to a file, not to standard output (for a file named -, write ./-)")
	}
	if err := distinctOutputs(outputFile{"--out", f.out}, outputFile{"--index", f.index}); err != nil {
		return err
	}
	if err := refuseDeviceButNull("--out", f.out, "the universe written there could not be read back with privacy analyze --universe "+
		"(give a file, a named pipe whose reader is running, - for standard output, or /dev/null to keep none)"); err != nil {
		return err
	}
	if err := refuseDevice("--index", f.index, "the index written there could not be read back with privacy fetches --index (give a file)"); err != nil {
		return err
	}
	for _, o := range []struct{ flag, path string }{{"--out", f.out}, {"--index", f.index}} {
		if err := checkOutputFile(o.flag, o.path); err != nil {
			return err
		}
		if err := refuseOverwrite(o.flag, o.path, f.force); err != nil {
			return err
		}
	}
	return nil
}

// runUniverse collects the candidates of the flags' block range from the
// node and writes them (and the index); fl says whether --to was given.
func runUniverse(ctx context.Context, a *app, f *universeFlags, fl *pflag.FlagSet) error {
	f.toGiven = fl.Changed("to")
	params, err := privacyNetwork(f.network)
	if err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	ctx, stop := a.signalContext(ctx)
	defer stop()
	st, to, err := collectUniverse(ctx, a, f, params)
	if err != nil {
		// An interrupt ends it with "interrupted", not with the bare
		// context error.
		return interruptedBy(ctx, err, "privacy universe")
	}
	return printUniverseResult(a, f, st, to)
}

// collectUniverse downloads the blocks of the flags' range from the node
// and writes their candidates (and the index) to pending files, put at
// their paths together only once every block is in: a download that
// fails or is interrupted leaves neither file, and a file that cannot be
// put in place leaves neither.
func collectUniverse(ctx context.Context, a *app, f *universeFlags, params *chaincfg.Params) (st universe.Stats, to int32, err error) {
	// The files first: one that cannot be created in its directory is
	// said before the download, not after it.
	outPath := f.out
	if outPath == "-" {
		outPath = "" // standard output, written as it comes
	}
	files, err := a.outputs.createEach(outputFile{"--out", outPath}, outputFile{"--index", f.index})
	if err != nil {
		return st, 0, err
	}
	var w io.Writer = a.stdout
	if files[0] != nil {
		w = files[0]
	}
	indexFile := files[1]
	defer func() {
		for _, p := range files {
			a.outputs.abort(p)
		}
	}()
	nodes := nodeFlags{f.peer: "--peer"}
	// The node given, alone: the blocks come from it, not from peers
	// found through the DNS seeds.
	onHeaders, headersDone := a.headerBar()
	c, err := client.Connect(ctx, client.Config{Peers: []string{f.peer}, ConnectOnly: true, Params: params, Timeout: f.timeout, OnHeaders: onHeaders})
	if err != nil {
		headersDone()
		return st, 0, nodeFailureFrom(err, params, "", nodes)
	}
	defer c.Close()
	if _, err := dropEchoes(c, params, nodes); err != nil {
		headersDone()
		return st, 0, err // the one node given
	}
	_, err = c.SyncHeaders(ctx)
	headersDone()
	if err != nil {
		return st, 0, nodeFailureFrom(err, params, "", nodes)
	}
	chain := c.Chain()
	to = f.to
	if to < 0 {
		to = chain.Height()
	}
	if err := heightsOnChain(f.from, to, chain.Height(), "node's"); err != nil {
		return st, 0, err
	}
	uw := universe.NewWriter(w, params)
	var ix *universe.IndexWriter
	if indexFile != nil {
		ix = universe.NewIndexWriter(filepath.Dir(f.index), f.indexMemory)
		defer ix.Close()
		uw.SetIndex(ix)
	}
	uw.Comment(fmt.Sprintf("candidates of %s blocks %d..%d from %s, one per line", params.Name, f.from, to, f.peer))
	progress, done := a.bar("downloading blocks", int(to-f.from+1))
	err = c.FetchBlocks(ctx, f.from, to, func(h int32, b *wire.MsgBlock) error {
		if progress != nil {
			progress(int(h-f.from+1), int(to-f.from+1))
		}
		return uw.AddBlock(h, b)
	})
	done()
	if err != nil {
		return st, 0, nodeFailureFrom(err, params, "", nodes)
	}
	if err := uw.Flush(); err != nil {
		return st, 0, failureWords("--out "+f.out, err)
	}
	if ix != nil {
		hd := &universe.IndexHeader{Network: params.Name, First: f.from}
		for h := f.from; h <= to; h++ {
			hd.Hashes = append(hd.Hashes, chain.Hash(h))
		}
		if _, err := ix.WriteTo(indexFile, hd); err != nil {
			return st, 0, failureWords("--index "+f.index, err)
		}
	}
	// Both or neither: a universe without its index (or an index of
	// another universe) would be taken for a pair.
	if err := a.outputs.commit(files...); err != nil {
		return st, 0, err
	}
	return uw.Stats(), to, nil
}

// printUniverseResult prints what runUniverse collected, blocks f.from..to.
func printUniverseResult(a *app, f *universeFlags, st universe.Stats, to int32) error {
	// One node gave the chain and its blocks: nothing it sent was
	// compared with another node's.
	warnings := []string{fmt.Sprintf("the universe rests on one peer, --peer %s: its blocks match the headers it sent, but no other peer confirmed that chain (a node can serve a chain of its own)", f.peer)}
	// With --json the statistics carry the warnings, on standard output
	// or, with --out -, as the one JSON object standard error holds.
	a.warnBesideResult(warnings)
	if a.json {
		return printStats(a, f.out == "-", universeStatsJSON{
			BlockCount: st.Blocks, AddressCount: st.Addresses, PubKeyCount: st.PubKeys, ScriptCount: st.Scripts,
			LinesWritten: st.Lines, AddressLinesListed: st.Listed, SpendsIndexed: st.SpendsIndexed, SpendsUnattributed: st.SpendsUnattributed,
			From: f.from, To: to, UniverseFile: f.out, IndexFile: f.index, Warnings: warnings})
	}
	// The statistics on standard output, or on standard error when the
	// candidates go there (--out -).
	w, prefix := a.stdout, ""
	if f.out == "-" {
		w, prefix = a.stderr, "spvfilter: "
	}
	printUniverseStats(w, prefix, st, f.from, to, f.out, f.index)
	return nil
}

// printUniverseStats says what privacy universe collected from blocks
// from..to, and the files it wrote.
func printUniverseStats(w io.Writer, prefix string, st universe.Stats, from, to int32, out, index string) {
	fmt.Fprintf(w, "%s%s (%d..%d): %s, %s (pairs; %s taken over by a key's), %s: %s written to %s\n",
		prefix, plural(st.Blocks, "block"), from, to, plural(st.Addresses, "address"), plural(st.PubKeys, "public key"),
		plural(st.Listed, "address line"), plural(st.Scripts, "script"), plural(st.Lines, "line"), out)
	if index != "" {
		fmt.Fprintf(w, "%sappearance index written to %s (%s attributed to their script, %d not: taproot key-path or P2PK)\n",
			prefix, index, plural(st.SpendsIndexed, "spend"), st.SpendsUnattributed)
	}
}
