package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/spvfilter/spvfilter/gcs/lab"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/client"
)

// labFlags holds the flags of "lab".
type labFlags struct {
	peerFlags
	vectors  string
	blocks   string
	save     string
	network  string
	from, to int32
	timeout  time.Duration
	probes   int
	watched  []int
	wallets  []int
	pMin     uint8
	pMax     uint8
	timing   time.Duration
	seed     uint64
	plot     string
	toGiven  bool
}

// labLong is the help of lab: the filter designs it compares, what a client
// pays per block, and where the blocks come from.
const labLong = `lab builds, for every block of a chain, the set of scripts its BIP 158 basic
filter holds, and from it one filter per block in each design:

  gcs          BIP 158's Golomb-coded set at P = 19, M = 784931, and at the
               rates of the designs below (M = 1/rate, the best P for it)
  bloom        a BIP 37 Bloom filter sized by Bitcoin Core's rule (36,000
               bytes at most) at each of those rates
  binary fuse  8- and 16-bit fingerprints (github.com/FastFilter/xorfilter)
  xor 8        the xor filter, 8-bit fingerprints (the same library)

(the cuckoo filter is measured by the nested module gcs/lab/cuckoo; no Go
ribbon filter is served: both are named as missing). For each it prints:
the rate asked and the rate the filters built have (a Bloom filter's is
not the one asked: whole bytes and hash functions, Core's caps); bits per
element against the bound log2(1/rate) at the rate built, and the
overhead over it; the false-positive rate of --probes random elements
spread over the blocks against the rate built, with its 99.9% interval;
build time and bytes allocated per element; the time per block to match
watch lists of --watched scripts as a client would (a gcs.Matcher on the
serialized filter, prepared elements for Bloom). Under --json a design's
fp_rate is the rate asked, expected_false_positive_rate the rate built.

Then what a client pays per block, for each wallet size of --wallets:
the filter, plus the block whenever the filter matches by a false
positive, 1 - (1 - rate)^W of the time; the cheapest P of the sweep
--p-min..--p-max (M = 1.497137·2^P), what P = 19 costs beyond it, and each
family's cheapest variant (Bloom at 2^-2..2^-32, binary fuse at 8, 16 and
32 bits). --plot draws the costs and the cheapest P against the wallet
size (.svg or .png).

The blocks come from a file of BIP 158's test vectors (--vectors, the
format of bip-0158/testnet-19.json; each row's block, merkle root and
filter are checked), from nodes (--peer/--connect, blocks --from..--to,
each checked against the header chain), or from a block file that
--save-blocks wrote (--blocks). From nodes, the scripts the inputs spend
are those of outputs created from --from on: start at 0 for complete
sets (the count of inputs whose script stayed unknown is a warning).
Times are the fastest of passes lasting --timing in all.

--save-blocks FILE writes the blocks downloaded from nodes to FILE, so
that the lab (--blocks FILE) and the cuckoo filter's lab (gcs/lab/cuckoo,
cuckoolab --blocks FILE) run on them without a node. Its format (package
gcs/lab, ReadBlockFile): the line "spvfilter blocks 1", the network's
magic and the first block's height (4 bytes each, little-endian), then
each block as its length (4 bytes) and its serialization with witness
data; reading checks that each block follows the one before and its
transactions give its merkle root. FILE may be a named pipe (mkfifo)
whose reader is already running: the block file streams into it; a pipe
no process reads is refused at once, as is a device (/dev/null keeps
nothing to read back).

Exit status: 0 done, 2 bad input, 1 failure (a node, --from or --to above
the nodes' chain tip, a design that loses a member).`

// labExample shows lab on BIP 158's test vectors, on nodes, and on a block
// file saved from them.
const labExample = `  spvfilter lab --vectors testvectors/bip158/testnet-19.json --plot lab.svg
  spvfilter lab --connect 127.0.0.1:18444 --network regtest --probes 1000000 --json
  spvfilter lab --peer 127.0.0.1:8333 --network mainnet --from 800000 --to 800009 --wallets 100,1000
  spvfilter lab --connect 127.0.0.1:18444 --network regtest --save-blocks regtest.blocks
  spvfilter lab --blocks regtest.blocks --probes 0`

func newLabCommand(a *app) *cobra.Command {
	f := labFlags{probes: lab.DefaultProbes, watched: lab.DefaultWatched, wallets: lab.DefaultWallets,
		pMin: lab.DefaultPMin, pMax: lab.DefaultPMax, timing: lab.DefaultOptions().Timing, seed: 1}
	c := &cobra.Command{
		Use:     "lab (--vectors FILE | --blocks FILE | --peer HOST:PORT [--peer HOST:PORT ...] | --connect HOST:PORT [--connect HOST:PORT ...]) [--plot FILE]",
		Short:   "Compare BIP 158's filter with Bloom, binary fuse and xor filters on a chain's blocks",
		Long:    labLong,
		Example: labExample,
		Args:    noArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return runLab(a, &f, cmd.Flags()) },
	}
	f.register(c.Flags())
	return c
}

// register defines lab's flags on fl, bound to f, their defaults the
// values f holds.
func (f *labFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.vectors, "vectors", "", "`FILE` of BIP 158 test vectors whose blocks to use (@FILE too; default: none, the blocks come from --blocks or nodes)")
	fl.StringVar(&f.blocks, "blocks", "", "block `FILE` (written by --save-blocks) whose blocks to use (@FILE too; default: none, the blocks come from --vectors or nodes)")
	fl.StringVar(&f.save, "save-blocks", "", "with nodes: write the blocks downloaded to this block `FILE`, or a named pipe its reader holds open (an earlier block file there is replaced, another file refused; default: none written)")
	f.peerFlags.register(fl)
	fl.StringVar(&f.network, "network", "mainnet", networkNames())
	fl.Int32Var(&f.from, "from", 0, "with nodes: first block `HEIGHT` (default 0, the genesis block)")
	fl.Int32Var(&f.to, "to", 0, "with nodes: last block `HEIGHT` (default: the tip)")
	fl.DurationVar(&f.timeout, "timeout", peer.DefaultTimeout, "with nodes: longest wait `DURATION` for the whole answer to any one request")
	fl.IntVar(&f.probes, "probes", f.probes, "`N` random elements per design whose matches measure the false-positive rate (0 for none)")
	fl.IntSliceVar(&f.watched, "watched", f.watched, "watch list `SIZES` whose matching is timed (comma-separated)")
	fl.IntSliceVar(&f.wallets, "wallets", f.wallets, "wallet `SIZES` of the cost table, in scripts (comma-separated)")
	fl.Uint8Var(&f.pMin, "p-min", f.pMin, "smallest `P` of the sweep")
	fl.Uint8Var(&f.pMax, "p-max", f.pMax, "largest `P` of the sweep")
	wantValues(fl, wantHeight, "from", "to")
	exampleValue(fl, "to", "100")
	wantValues(fl, "want a whole number from 1 to 32", "p-min", "p-max")
	wantValues(fl, fmt.Sprintf("want a whole number from 0 to %d", maxLabProbes), "probes")
	wantValues(fl, fmt.Sprintf("want whole numbers from 1 to %d, separated by commas", maxLabWatched), "watched", "wallets")
	exampleValue(fl, "watched", "100,1000")
	exampleValue(fl, "wallets", "100,1000")
	fl.DurationVar(&f.timing, "timing", f.timing, "least time `DURATION` spent timing each build and each watch list (0: builds untimed, each watch list timed over one pass)")
	fl.Uint64Var(&f.seed, "seed", f.seed, "`SEED` of the probes and watch lists")
	fl.StringVar(&f.plot, "plot", "", "draw the cost per block and the cheapest P against the wallet size into this .svg or .png `FILE` (default: no plot)")
}

// maxLabProbes bounds --probes: a billion probes take minutes per design.
const maxLabProbes = 1_000_000_000

// maxLabWatched bounds a watch list or wallet size.
const maxLabWatched = 10_000_000

// check refuses, before any work, the flags that are bad input whatever
// the blocks hold.
func (f *labFlags) check(fl *pflag.FlagSet) error {
	f.toGiven = fl.Changed("to")
	nodes := len(f.peers) > 0 || len(f.connect) > 0
	if f.vectors == "" && f.blocks == "" && !nodes {
		return badInput("--vectors, --blocks, --peer or --connect: give the blocks, a file of BIP 158's test vectors, a block file or the nodes to download them from")
	}
	var given []string
	for _, src := range []struct {
		flag string
		set  bool
	}{{"--vectors", f.vectors != ""}, {"--blocks", f.blocks != ""}, {"--peer", len(f.peers) > 0}, {"--connect", len(f.connect) > 0}} {
		if src.set {
			given = append(given, src.flag)
		}
	}
	if len(given) > 1 {
		return badInput("%s and %s: give one source of blocks, not both", given[0], given[1])
	}
	if !nodes {
		for _, name := range []string{"from", "to", "timeout", "proxy", "network", "save-blocks"} {
			if fl.Changed(name) {
				return badInput("--%s: only with nodes (--peer or --connect), not with %s", name, given[0])
			}
		}
	}
	if err := checkOutputFile("--save-blocks", f.save); err != nil {
		return err
	}
	if err := checkReplaceBlocks(f.save); err != nil {
		return err
	}
	switch {
	case f.from < 0:
		return badRange("--from", f.from, "")
	case f.toGiven && f.to < 0:
		return badRange("--to", f.to, "")
	case f.toGiven && f.to < f.from:
		return toBelowFrom(f.to, f.from)
	case f.timeout <= 0:
		return notPositive("--timeout", f.timeout)
	case f.probes < 0 || f.probes > maxLabProbes:
		return badRange("--probes", f.probes, "")
	case f.timing < 0:
		return badRange("--timing", f.timing, "a duration, at least 0 (0: builds untimed)")
	case f.pMin < 1 || f.pMin > 32:
		return badRange("--p-min", f.pMin, "")
	case f.pMax < 1 || f.pMax > 32:
		return badRange("--p-max", f.pMax, "")
	case f.pMin > f.pMax:
		return badInput("--p-min %d and --p-max %d: want 1 <= --p-min <= --p-max <= 32", f.pMin, f.pMax)
	case len(f.wallets) == 0:
		return badInput("--wallets: give at least one wallet size")
	}
	for _, l := range []struct {
		flag string
		ns   []int
	}{{"--watched", f.watched}, {"--wallets", f.wallets}} {
		for _, n := range l.ns {
			if n < 1 || n > maxLabWatched {
				return badRange(l.flag, n, "")
			}
		}
	}
	if f.plot != "" {
		if err := checkOutputFile("--plot", f.plot); err != nil {
			return err
		}
		if _, err := lab.PlotFormat(f.plot); err != nil {
			return badInput("--plot %s: the file name must end in .svg or .png", f.plot)
		}
	}
	return distinctOutputs(outputFile{"--save-blocks", f.save}, outputFile{"--plot", f.plot})
}

// runLab reads the blocks, runs the lab and prints the report.
func runLab(a *app, f *labFlags, fl *pflag.FlagSet) error {
	if err := f.check(fl); err != nil {
		return err
	}
	var plotFile *pendingFile
	if f.plot != "" {
		var err error
		if plotFile, err = a.outputs.create("--plot", f.plot); err != nil {
			return err
		}
	}
	var blocks []lab.Block
	var source string
	var warnings []string
	if f.vectors != "" {
		file, err := openInputFile("--vectors", f.vectors)
		if err != nil {
			return err
		}
		defer file.Close()
		head := newHeadReader(file)
		if blocks, err = lab.ReadVectors(head); err != nil {
			return vectorsError(file.Name(), head, err)
		}
		source = "BIP 158 test vectors (" + strings.TrimPrefix(f.vectors, "@") + ")"
	} else if f.blocks != "" {
		var err error
		if blocks, source, warnings, err = readLabBlocks(f.blocks); err != nil {
			return err
		}
	} else {
		var err error
		if blocks, source, warnings, err = a.fetchLabBlocks(f); err != nil {
			return err
		}
	}
	cfg := lab.Config{
		Options: lab.Options{Probes: f.probes, Watched: f.watched, Timing: f.timing, Seed: f.seed},
		Wallets: f.wallets, PMin: f.pMin, PMax: f.pMax,
	}
	steps := len(lab.DefaultDesigns()) + 1
	progress, done := a.bar("measuring designs", steps)
	if progress != nil {
		cfg.Progress = func(step, steps int, _ string) { progress(step, steps) }
	}
	rep, err := lab.Run(blocks, cfg)
	done()
	if err != nil {
		return failureWords("lab", err)
	}
	for _, r := range rep.Results {
		if r.Probes > 0 && !r.WithinInterval() {
			warnings = append(warnings, fmt.Sprintf("%s %s: %d false positives, outside the 99.9%% interval [%d, %d] of the %.1f expected",
				r.Name, r.Params, r.FalsePositives, r.Interval[0], r.Interval[1], r.ExpectedFalsePositives))
		}
	}
	if plotFile != nil {
		format, err := lab.PlotFormat(f.plot)
		if err == nil {
			err = lab.WritePlot(plotFile, format, rep, source)
		}
		if err != nil {
			return failureWords("--plot "+f.plot, err)
		}
		if err := a.outputs.commit(plotFile); err != nil {
			return err
		}
	}
	a.warnBesideResult(warnings)
	if a.json {
		return a.printJSON(labOutput(rep, source, f, warnings))
	}
	return printLab(a.stdout, rep, source, f)
}

// fetchLabBlocks downloads the flags' blocks from the nodes and returns
// them, the source's name and the warnings the download leaves.
func (a *app) fetchLabBlocks(f *labFlags) ([]lab.Block, string, []string, error) {
	params, err := lookupNetwork(f.network)
	if err != nil {
		return nil, "", nil, err
	}
	cfg, err := f.peerFlags.config(params, wire.SFNodeNetwork)
	if err != nil {
		return nil, "", nil, err
	}
	cfg.Timeout = f.timeout
	// Started before connecting: a directory it cannot go in is said
	// before the download, not after.
	var saver *blockSaver
	if f.save != "" {
		if saver, err = newBlockSaver(&a.outputs, f.save, params.Net); err != nil {
			return nil, "", nil, err
		}
		defer saver.abort()
	}
	// An interrupt ends the download as it ends the rest of the
	// command (exitOnSignal): the files not yet written are removed.
	ctx := context.Background()
	onHeaders, headersDone := a.headerBar()
	cfg.OnHeaders = onHeaders
	c, err := client.Connect(ctx, cfg)
	if err != nil {
		headersDone()
		return nil, "", nil, nodeFailureFrom(err, params, "", f.nodes())
	}
	defer c.Close()
	echoes, err := dropEchoes(c, params, f.nodes())
	if err != nil {
		headersDone()
		return nil, "", nil, err
	}
	_, err = c.SyncHeaders(ctx)
	headersDone()
	if err != nil {
		return nil, "", nil, nodeFailureFrom(err, params, "", f.nodes())
	}
	tip := c.Chain().Height()
	to := f.to
	if !f.toGiven {
		to = tip
	}
	if err := heightsOnChain(f.from, to, tip, "nodes'"); err != nil {
		return nil, "", nil, err
	}
	chain := lab.NewChain(0)
	progress, done := a.bar("downloading blocks", int(to-f.from+1))
	err = c.FetchBlocks(ctx, f.from, to, func(h int32, b *wire.MsgBlock) error {
		if progress != nil {
			progress(int(h-f.from+1), int(to-f.from+1))
		}
		if saver != nil {
			if err := saver.add(h, b); err != nil {
				return err
			}
		}
		return chain.Add(h, b)
	})
	done()
	if err != nil {
		return nil, "", nil, nodeFailureFrom(err, params, "", f.nodes())
	}
	if saver != nil {
		if err := saver.commit(); err != nil {
			return nil, "", nil, err
		}
	}
	warnings := append(echoes, chainWarnings(chain, fmt.Sprintf("--from %d", f.from))...)
	addrs, unused := servingPeers(c.Peers(), params)
	warnings = append(warnings, f.nodes().namedAll(unused)...)
	if len(addrs) == 1 {
		warnings = append(warnings, "the blocks come from one peer, "+addrs[0]+" (each checked against the header chain it served)")
	}
	from := f.first()
	switch {
	case len(addrs) > 3:
		from = fmt.Sprintf("%s and %d more", strings.Join(addrs[:3], ", "), len(addrs)-3)
	case len(addrs) > 0:
		from = strings.Join(addrs, ", ")
	}
	source := fmt.Sprintf("%s blocks %d..%d from %s", params.Name, f.from, to, from)
	return chain.Blocks(), source, warnings, nil
}

// servingPeers lists, once each, the addresses of the peers in use (a
// peer dialled again is listed by the client once per connection), and
// says why each other peer was not used: one that could not be reached,
// that stalled or was banned served no block, and a source that named it
// would be wrong.
func servingPeers(peers []client.PeerStatus, params *chaincfg.Params) (addrs, unused []string) {
	for _, p := range peers {
		if !p.Banned && p.Reason == "" && !slices.Contains(addrs, p.Address) {
			addrs = append(addrs, p.Address)
		}
	}
	var named []string
	for _, p := range peers {
		if !slices.Contains(addrs, p.Address) && !slices.Contains(named, p.Address) {
			named = append(named, p.Address)
			unused = append(unused, fmt.Sprintf("peer %s was not used: %s", p.Address, statusWords(p, params)))
		}
	}
	return addrs, unused
}

// labJSON is the output of lab --json.
type labJSON struct {
	Source         string           `json:"source"`
	BlockCount     int              `json:"block_count"`
	ElementCount   int              `json:"element_count"`
	MeanBlockBytes float64          `json:"mean_block_bytes"`
	Designs        []labDesignJSON  `json:"designs"`
	Missing        []labMissingJSON `json:"missing"`
	PSweep         []labSweepJSON   `json:"p_sweep"`
	ClientCosts    []labCostJSON    `json:"client_costs"`
	P19From        *float64         `json:"p19_cheapest_from"`
	P19To          *float64         `json:"p19_cheapest_to"`
	Options        labOptionsJSON   `json:"options"`
	Plot           string           `json:"plot,omitempty"`
	SavedBlocks    string           `json:"saved_blocks,omitempty"`
	Warnings       []string         `json:"warnings"`
}

// labOptionsJSON are the measurement's settings.
type labOptionsJSON struct {
	ProbeCount    int     `json:"probe_count"`
	WatchedCounts []int   `json:"watched_counts"`
	TimingSeconds float64 `json:"timing_seconds"`
	PMin          int     `json:"p_min"`
	PMax          int     `json:"p_max"`
	WalletSizes   []int   `json:"wallets"`
	Seed          uint64  `json:"seed"`
}

// labDesignJSON is one measured design.
type labDesignJSON struct {
	Name         string  `json:"name"`
	Params       string  `json:"variant"`
	FPRate       float64 `json:"fp_rate"`
	ElementCount int     `json:"element_count"`
	labSizeJSON
	ProbeCount                int            `json:"probe_count"`
	FalsePositiveCount        int            `json:"false_positive_count"`
	ExpectedFalsePositives    float64        `json:"expected_false_positives"`
	FalsePositiveCountLow     int            `json:"false_positive_count_low"`
	FalsePositiveCountHigh    int            `json:"false_positive_count_high"`
	WithinInterval            *bool          `json:"within_interval"`
	MeasuredFalsePositiveRate *float64       `json:"measured_false_positive_rate"`
	ExpectedFalsePositiveRate *float64       `json:"expected_false_positive_rate"`
	BuildNsPerElement         *float64       `json:"build_ns_per_element"`
	BuildAllocBytesPerElement *float64       `json:"build_alloc_bytes_per_element"`
	MatchTimes                []labMatchJSON `json:"match_times"`
}

// labMatchJSON is the time to match one watch list size.
type labMatchJSON struct {
	WatchedCount int      `json:"watched_count"`
	NsPerBlock   *float64 `json:"ns_per_block"`
}

// labMissingJSON is a design not measured.
type labMissingJSON struct {
	Name   string `json:"name"`
	Reason string `json:"reason"`
}

// labSweepJSON is the GCS at one P of the sweep.
type labSweepJSON struct {
	P int    `json:"p"`
	M uint64 `json:"m"`
	labSizeJSON
}

// labSizeJSON is the size of a design's filters over the chain.
type labSizeJSON struct {
	SerializedBytes     int      `json:"serialized_bytes"`
	BitsPerElement      *float64 `json:"bits_per_element"`
	BoundBitsPerElement *float64 `json:"bound_bits_per_element"`
	OverheadPercent     *float64 `json:"overhead_percent"`
}

// labSize returns the size fields of r.
func labSize(r *lab.Result) labSizeJSON {
	return labSizeJSON{SerializedBytes: r.Bytes, BitsPerElement: finite(r.BitsPerElement),
		BoundBitsPerElement: finite(r.BoundBitsPerElement), OverheadPercent: finite(r.OverheadPercent)}
}

// labCostJSON is what a client of one wallet size pays per block.
type labCostJSON struct {
	WalletSize             int             `json:"wallet_size"`
	CheapestP              int             `json:"cheapest_p"`
	CheapestPBytesPerBlock float64         `json:"cheapest_p_bytes_per_block"`
	P19BytesPerBlock       float64         `json:"p19_bytes_per_block"`
	P19ExcessPercent       float64         `json:"p19_excess_percent"`
	Designs                []labChoiceJSON `json:"designs"`
	Cheapest               []labChoiceJSON `json:"cheapest"`
}

// labChoiceJSON is one design's cost per block.
type labChoiceJSON struct {
	Name          string  `json:"name"`
	Params        string  `json:"variant"`
	BytesPerBlock float64 `json:"bytes_per_block"`
}

// finite returns a pointer to x, or nil (JSON null) for NaN or an
// infinity.
func finite(x float64) *float64 {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return nil
	}
	return &x
}

func labOutput(rep *lab.Report, source string, f *labFlags, warnings []string) labJSON {
	out := labJSON{
		Source: source, BlockCount: rep.Blocks, ElementCount: rep.Elements,
		MeanBlockBytes: float64(rep.BlockBytes) / float64(rep.Blocks),
		Designs:        []labDesignJSON{}, Missing: []labMissingJSON{}, PSweep: []labSweepJSON{}, ClientCosts: []labCostJSON{},
		P19From: finite(rep.BasicOptimalFrom), P19To: finite(rep.BasicOptimalTo),
		Plot: f.plot, SavedBlocks: f.save, Warnings: orEmpty(warnings),
		Options: labOptionsJSON{ProbeCount: f.probes, WatchedCounts: f.watched, TimingSeconds: f.timing.Seconds(),
			PMin: int(f.pMin), PMax: int(f.pMax), WalletSizes: f.wallets, Seed: f.seed},
	}
	if out.Options.WatchedCounts == nil {
		out.Options.WatchedCounts = []int{}
	}
	for _, r := range rep.Results {
		d := labDesignJSON{
			Name: r.Name, Params: r.Params, FPRate: r.Rate, ElementCount: r.Elements, labSizeJSON: labSize(r),
			ProbeCount: r.Probes, FalsePositiveCount: r.FalsePositives, ExpectedFalsePositives: r.ExpectedFalsePositives,
			FalsePositiveCountLow: r.Interval[0], FalsePositiveCountHigh: r.Interval[1],
			MeasuredFalsePositiveRate: finite(r.MeasuredRate()), ExpectedFalsePositiveRate: finite(r.ExpectedRate),
			BuildNsPerElement: finite(r.BuildNsPerElement), BuildAllocBytesPerElement: finite(r.BuildAllocBytesPerElement),
			MatchTimes: []labMatchJSON{},
		}
		if r.Probes > 0 {
			within := r.WithinInterval()
			d.WithinInterval = &within
		}
		for _, m := range r.Match {
			d.MatchTimes = append(d.MatchTimes, labMatchJSON{m.Watched, finite(m.NsPerBlock)})
		}
		out.Designs = append(out.Designs, d)
	}
	for _, m := range rep.Missing {
		out.Missing = append(out.Missing, labMissingJSON{m.Name, m.Reason})
	}
	for _, sp := range rep.Sweep {
		out.PSweep = append(out.PSweep, labSweepJSON{P: int(sp.P), M: sp.M, labSizeJSON: labSize(sp.Result)})
	}
	for _, c := range rep.Costs {
		row := labCostJSON{WalletSize: c.Watched, CheapestP: int(c.BestP), CheapestPBytesPerBlock: c.BestBytes,
			P19BytesPerBlock: c.BasicBytes, P19ExcessPercent: c.BasicExcessPercent, Designs: []labChoiceJSON{}, Cheapest: []labChoiceJSON{}}
		for _, d := range c.Designs {
			row.Designs = append(row.Designs, labChoiceJSON{d.Name, d.Params, d.BytesPerBlock})
		}
		for _, d := range c.Best {
			row.Cheapest = append(row.Cheapest, labChoiceJSON{d.Name, d.Params, d.BytesPerBlock})
		}
		out.ClientCosts = append(out.ClientCosts, row)
	}
	return out
}

// printLab prints the report as tables.
func printLab(w io.Writer, rep *lab.Report, source string, f *labFlags) error {
	fmt.Fprintf(w, "%s: %s, %s, %.0f bytes per block on average\n",
		source, plural(rep.Blocks, "block"), plural(rep.Elements, "element"), float64(rep.BlockBytes)/float64(rep.Blocks))
	fmt.Fprintf(w, "%s per design, spread over the blocks; times are the fastest of passes lasting %v\n\n", plural(f.probes, "probe"), f.timing)
	fmt.Fprintln(w, "Size and false positives:")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "design\tparameters\tfp rate asked\tfp rate built\tbits/element\tbound at rate built\toverhead\tfalse positives\texpected [99.9% interval]")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Params, r.Rate, general(r.ExpectedRate, 4),
			fixed(r.BitsPerElement, 2), fixed(r.BoundBitsPerElement, 2), percent(r.OverheadPercent), falsePositives(r))
	}
	tw.Flush()
	fmt.Fprintln(w, "(rate built: the mean rate of the filters built, which the false positives expected follow; a Bloom filter's")
	fmt.Fprintln(w, "differs from the rate asked, rounded to whole bytes and hash functions within Core's caps. The bound,")
	fmt.Fprintln(w, "log2(1/rate) per element, is taken at each filter's rate built.)")
	fmt.Fprintln(w, "\nTime and memory:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "design\tparameters\tbuild ns/element\tallocated B/element"
	for _, n := range f.watched {
		head += fmt.Sprintf("\tmatch %d ns/block", n)
	}
	fmt.Fprintln(tw, head)
	for _, r := range rep.Results {
		line := fmt.Sprintf("%s\t%s\t%s\t%s", r.Name, r.Params, fixed(r.BuildNsPerElement, 1), fixed(r.BuildAllocBytesPerElement, 0))
		for _, m := range r.Match {
			line += "\t" + fixed(m.NsPerBlock, 0)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nnot measured here:")
	for _, m := range rep.Missing {
		fmt.Fprintf(w, "  %s: %s\n", m.Name, m.Reason)
	}
	fmt.Fprintf(w, "\nThe GCS at each P of the sweep (M = %g·2^P):\n", lab.BasicSweepFactor)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "P\tM\tbits/element\tbound\toverhead")
	for _, sp := range rep.Sweep {
		r := sp.Result
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\n", sp.P, sp.M, fixed(r.BitsPerElement, 2), fixed(r.BoundBitsPerElement, 2), percent(r.OverheadPercent))
	}
	tw.Flush()
	fmt.Fprintln(w, "\nWhat a client pays per block, in bytes: the filter, and the block when the filter matches by a false positive:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head = "wallet\tgcs P=19\tcheapest P\tgcs at it\tP=19 over it"
	for _, c := range rep.Costs[0].Best[1:] {
		head += "\t" + c.Name + ", cheapest"
	}
	fmt.Fprintln(tw, head)
	for _, c := range rep.Costs {
		line := fmt.Sprintf("%d\t%.1f\t%d\t%.1f\t%s", c.Watched, c.BasicBytes, c.BestP, c.BestBytes, percent(c.BasicExcessPercent))
		for _, b := range c.Best[1:] {
			line += fmt.Sprintf("\t%.1f (%s)", b.BytesPerBlock, b.Params)
		}
		fmt.Fprintln(tw, line)
	}
	tw.Flush()
	if math.IsNaN(rep.BasicOptimalFrom) {
		fmt.Fprintln(w, "\nP = 19 is the cheapest P for no wallet of 1 to 10,000,000 scripts on these blocks.")
	} else {
		fmt.Fprintf(w, "\nP = 19 is the cheapest P for wallets of %.0f to %.0f scripts on these blocks.\n", rep.BasicOptimalFrom, rep.BasicOptimalTo)
	}
	if f.plot != "" {
		fmt.Fprintf(w, "Plot written to %s.\n", f.plot)
	}
	if f.save != "" {
		fmt.Fprintf(w, "Blocks written to %s.\n", f.save)
	}
	return nil
}

// falsePositives prints a design's false positives, "-" without probes.
func falsePositives(r *lab.Result) string {
	if r.Probes == 0 {
		return "-\t-"
	}
	s := fmt.Sprintf("%d\t%.1f [%d, %d]", r.FalsePositives, r.ExpectedFalsePositives, r.Interval[0], r.Interval[1])
	if !r.WithinInterval() {
		s += " OUTSIDE"
	}
	return s
}

// general prints x with prec significant digits, "-" if undefined.
func general(x float64, prec int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return strconv.FormatFloat(x, 'g', prec, 64)
}

// fixed prints x with prec decimals, "-" if undefined.
func fixed(x float64, prec int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return strconv.FormatFloat(x, 'f', prec, 64)
}

// percent prints a signed percentage, "-" if undefined.
func percent(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "-"
	}
	return fmt.Sprintf("%+.1f%%", x)
}

// checkReplaceBlocks refuses a --save-blocks file that exists and is no
// block file: only an earlier block file (or an empty file) is replaced,
// not a file of another kind given there by mistake.
func checkReplaceBlocks(path string) error {
	st, err := os.Stat(path)
	if path == "" || err != nil {
		return nil
	}
	if err := refuseDevice("--save-blocks", path, "the blocks written there could not be read back with lab --blocks (give a file, or a named pipe whose reader is running)"); err != nil {
		return err
	}
	if st.Size() == 0 {
		return nil
	}
	switch kind := fileKindOf(path); kind {
	case kindBlocks:
		return nil
	case kindUnknown:
		return badInput("--save-blocks %s: the file exists and is no block file of lab --save-blocks: it is not replaced (give another file, or remove it)", path)
	default:
		return badInput("--save-blocks %s: the file exists and is %s, no block file of lab --save-blocks: it is not replaced (give another file, or remove it)", path, kindWords[kind].what)
	}
}
