// Command cuckoolab runs spvfilter's filter-design lab (package gcs/lab)
// with the cuckoo filter: on the blocks of a file of BIP 158's test
// vectors, or on a block file (gcs/lab's ReadBlockFile) holding a node's
// blocks, as "spvfilter lab --save-blocks" writes it. It measures the
// cuckoo filter, and the GCS and the Bloom filter at the rate its filters
// reach, as "spvfilter lab" measures the other designs, and prints what a
// client pays per block with each.
//
//	go run ./cmd/cuckoolab --vectors ../../../testvectors/bip158/testnet-19.json
//	spvfilter lab --connect 127.0.0.1:18444 --network regtest --from 433 --save-blocks regtest.blocks
//	go run ./cmd/cuckoolab --blocks regtest.blocks
//
// The command talks to no node itself (the filter packages import none of
// spvfilter's peer packages): --connect, --network and --from, which once
// did, are refused with the two commands above.
package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/gcs/lab"
	"github.com/spvfilter/spvfilter/gcs/lab/cuckoo"
)

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
	blockFile := fs.String("blocks", "", "block file whose blocks to use, as \"spvfilter lab --save-blocks FILE\" writes a node's blocks")
	probes := fs.Int("probes", lab.DefaultProbes, "random elements per design whose matches measure the false-positive rate")
	timing := fs.Duration("timing", 200*time.Millisecond, "least time spent timing each build and each watch list")
	for _, name := range nodeFlags {
		fs.String(name, "", "refused: "+saveBlocks)
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	var refused error
	fs.Visit(func(f *flag.Flag) {
		if slices.Contains(nodeFlags, f.Name) && refused == nil {
			refused = fmt.Errorf("%w: --%s: cuckoolab connects to no node: %s", errUsage, f.Name, saveBlocks)
		}
	})
	if refused != nil {
		return refused
	}
	if (*vectors == "") == (*blockFile == "") || fs.NArg() > 0 || *probes < 0 {
		return fmt.Errorf("%w: give --vectors FILE or --blocks FILE (and --probes >= 0)", errUsage)
	}
	var blocks []lab.Block
	var err error
	source := *vectors
	if *vectors != "" {
		blocks, err = readVectors(*vectors)
	} else {
		blocks, source, err = readBlocks(*blockFile)
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

// nodeFlags are the flags with which cuckoolab once downloaded a node's
// blocks itself; each is refused with the way to do it now.
var nodeFlags = []string{"connect", "network", "from"}

// saveBlocks says how to run the lab on a node's blocks.
const saveBlocks = `write the node's blocks with "spvfilter lab --connect HOST:PORT --network NET --from HEIGHT --save-blocks FILE", then give --blocks FILE`

// readBlocks reads the blocks of a block file and names their source.
func readBlocks(file string) ([]lab.Block, string, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, "", fmt.Errorf("%w: --blocks: %w", errUsage, err)
	}
	defer f.Close()
	chain := lab.NewChain(0)
	info, err := lab.ReadBlockFile(bufio.NewReader(f), chain.Add)
	if err != nil {
		return nil, "", fmt.Errorf("%w: --blocks %s: %w", errUsage, file, err)
	}
	if unknown, _ := chain.Unknown(); unknown > 0 {
		fmt.Fprintf(os.Stderr, "cuckoolab: warning: %d inputs spend outputs created before the file's first block: their scripts are missing\n", unknown)
	}
	return chain.Blocks(), fmt.Sprintf("%s blocks %d..%d from %s", network(info), info.First, info.Last(), file), nil
}

// network names the network of a block file.
func network(info lab.BlockFileInfo) string {
	for _, p := range []*chaincfg.Params{&chaincfg.MainNetParams, &chaincfg.TestNet3Params, &chaincfg.SigNetParams,
		&chaincfg.SimNetParams, &chaincfg.RegressionNetParams} {
		if p.Net == info.Net {
			return p.Name
		}
	}
	return fmt.Sprintf("network %#08x", uint32(info.Net))
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
