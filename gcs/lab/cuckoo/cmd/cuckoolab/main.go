// Command cuckoolab runs spvfilter's filter-design lab (package gcs/lab)
// with the cuckoo filter: on the blocks of a file of BIP 158's test
// vectors, or on a node's blocks. It measures the cuckoo filter, and the
// GCS and the Bloom filter at the rate its filters reach, as "spvfilter
// lab" measures the other designs, and prints what a client pays per
// block with each.
//
//	go run ./cmd/cuckoolab --vectors ../../../testvectors/bip158/testnet-19.json
//	go run ./cmd/cuckoolab --connect 127.0.0.1:18444 --network regtest --from 433
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/gcs/lab"
	"github.com/spvfilter/spvfilter/gcs/lab/cuckoo"
	"github.com/spvfilter/spvfilter/peer/client"
)

var networks = map[string]*chaincfg.Params{
	"mainnet": &chaincfg.MainNetParams, "testnet3": &chaincfg.TestNet3Params, "signet": &chaincfg.SigNetParams,
	"simnet": &chaincfg.SimNetParams, "regtest": &chaincfg.RegressionNetParams,
}

// errUsage marks bad input: exit status 2.
var errUsage = errors.New("usage")

func main() {
	err := run(os.Args[1:], os.Stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
	case errors.Is(err, errUsage):
		fmt.Fprintln(os.Stderr, "cuckoolab:", err)
		os.Exit(2)
	case err != nil:
		fmt.Fprintln(os.Stderr, "cuckoolab:", err)
		os.Exit(1)
	}
}

func run(args []string, w io.Writer) error {
	fs := flag.NewFlagSet("cuckoolab", flag.ContinueOnError)
	vectors := fs.String("vectors", "", "file of BIP 158 test vectors whose blocks to use")
	connect := fs.String("connect", "", "a node's HOST:PORT whose blocks to use")
	network := fs.String("network", "regtest", "the node's network: mainnet, testnet3, signet, simnet or regtest")
	from := fs.Int("from", 0, "with --connect: first block height")
	probes := fs.Int("probes", lab.DefaultProbes, "random elements per design whose matches measure the false-positive rate")
	timing := fs.Duration("timing", 200*time.Millisecond, "least time spent timing each build and each watch list")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*vectors == "") == (*connect == "") || fs.NArg() > 0 || *probes < 0 || *from < 0 {
		return fmt.Errorf("%w: give --vectors FILE or --connect HOST:PORT (and --from >= 0, --probes >= 0)", errUsage)
	}
	var blocks []lab.Block
	var err error
	source := *vectors
	if *vectors != "" {
		blocks, err = readVectors(*vectors)
	} else {
		params, ok := networks[*network]
		if !ok {
			return fmt.Errorf("%w: --network %q", errUsage, *network)
		}
		source = fmt.Sprintf("%s blocks from %d of %s", params.Name, *from, *connect)
		blocks, err = fetchBlocks(*connect, params, int32(*from))
	}
	if err != nil {
		return err
	}
	base, err := lab.Measure(blocks, cuckoo.Design(), lab.Options{})
	if err != nil {
		return err
	}
	// The GCS and the Bloom filter at the cuckoo filters' rate, as the
	// probes weigh it: the mean over the blocks.
	rate := base.ExpectedRate
	rep, err := lab.Run(blocks, lab.Config{
		Options: lab.Options{Probes: *probes, Watched: lab.DefaultWatched, Timing: *timing, Seed: 1},
		Designs: []lab.Design{cuckoo.Design(), lab.GCSAt(rate), lab.Bloom(rate), lab.BasicGCS()},
	})
	if err != nil {
		return err
	}
	return print(w, rep, source)
}

func readVectors(file string) ([]lab.Block, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("%w: --vectors: %w", errUsage, err)
	}
	defer f.Close()
	return lab.ReadVectors(f)
}

// fetchBlocks downloads the node's blocks from height from to the tip.
func fetchBlocks(addr string, params *chaincfg.Params, from int32) ([]lab.Block, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	c, err := client.Connect(ctx, client.Config{Peers: []string{addr}, ConnectOnly: true, Params: params, Services: wire.SFNodeNetwork})
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if _, err := c.SyncHeaders(ctx); err != nil {
		return nil, err
	}
	chain := lab.NewChain(0)
	if err := c.FetchBlocks(ctx, from, c.Chain().Height(), chain.Add); err != nil {
		return nil, err
	}
	if unknown, _ := chain.Unknown(); unknown > 0 {
		fmt.Fprintf(os.Stderr, "cuckoolab: warning: %d inputs spend outputs created before --from %d: their scripts are missing\n", unknown, from)
	}
	return chain.Blocks(), nil
}

func print(w io.Writer, rep *lab.Report, source string) error {
	fmt.Fprintf(w, "%s: %d blocks, %d elements\n\n", source, rep.Blocks, rep.Elements)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "design\tparameters\tfp rate of the filters\tbits/element\tbound\toverhead\tfalse positives\texpected [99.9% interval]\tbuild ns/element\tallocated B/element\tmatch 1 / 100 / 1000 ns/block")
	for _, r := range rep.Results {
		fmt.Fprintf(tw, "%s\t%s\t%.4g\t%.2f\t%.2f\t%+.1f%%\t%d\t%.1f [%d, %d]\t%.1f\t%.0f\t%.0f / %.0f / %.0f\n",
			r.Name, r.Params, r.ExpectedRate, r.BitsPerElement, r.BoundBitsPerElement, r.OverheadPercent,
			r.FalsePositives, r.ExpectedFalsePositives, r.Interval[0], r.Interval[1],
			r.BuildNsPerElement, r.BuildAllocBytesPerElement, r.Match[0].NsPerBlock, r.Match[1].NsPerBlock, r.Match[2].NsPerBlock)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nWhat a client pays per block, in bytes:")
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	head := "wallet"
	for _, d := range rep.Costs[0].Designs {
		head += "\t" + d.Name + " " + d.Params
	}
	fmt.Fprintln(tw, head+"\tgcs, cheapest P")
	for _, c := range rep.Costs {
		line := fmt.Sprint(c.Watched)
		for _, d := range c.Designs {
			line += fmt.Sprintf("\t%.1f", d.BytesPerBlock)
		}
		fmt.Fprintf(tw, "%s\t%.1f (P=%d)\n", line, c.BestBytes, c.BestP)
	}
	return tw.Flush()
}
