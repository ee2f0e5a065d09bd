// Command spvfilter-beam runs "spvfilter privacy analyze --capture" as an
// Apache Beam pipeline: every universe file matched by --universe is
// analyzed against every group of --sessions-per-shard sessions of the
// capture, on the workers of the runner, and the shards are merged into the
// report the single-machine command prints with --json, with its
// --client, --intersect and --link parts when asked.
//
//	spvfilter-beam --capture capture.jsonl --universe 'universe-*.txt' --output report.json
//	spvfilter-beam --capture capture.jsonl --universe 'universe-*.txt' --output report.json --link
//	spvfilter-beam --runner flink --endpoint localhost:8099 --environment_type LOOPBACK \
//	    --capture capture.jsonl --universe 'universe-*.txt' --output report.json
//	spvfilter-beam --runner dataflow --project P --region R --staging_location gs://B/staging \
//	    --capture gs://B/capture.jsonl --universe 'gs://B/universe-*.txt' --output gs://B/report.json
//
// --runner is Beam's flag: direct (the default here), prism, flink, spark,
// dataflow or universal, with each runner's own flags. The direct runner is
// the default because it opens no port: prism's in-process job server
// listens on every network interface, without authentication. The exit status is 2
// for bad input found before the pipeline runs, 1 for a failed run.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/x/beamx"

	"github.com/spvfilter/spvfilter/privacy/attack"
	privacybeam "github.com/spvfilter/spvfilter/privacy/beam"
)

func main() {
	var cfg privacybeam.Config
	flag.StringVar(&cfg.Capture, "capture", "", "capture file written by \"spvfilter privacy capture\" (required)")
	flag.StringVar(&cfg.Universe, "universe", "", "glob of universe files, one candidate per line, analyzed as their concatenation in name order (required)")
	flag.StringVar(&cfg.Output, "output", "", "file to write the report to, the JSON of \"spvfilter privacy analyze --capture --json\" (required)")
	flag.StringVar(&cfg.Client, "client", "", "only the sessions of this client HOST, HOST:PORT or SESSION id")
	flag.BoolVar(&cfg.Intersect, "intersect", false, "also intersect the filters of all the sessions kept, as one wallet's")
	flag.BoolVar(&cfg.Link, "link", false, "link sessions that probably share a wallet, and intersect each group")
	flag.Float64Var(&cfg.LinkThreshold, "link-threshold", 0.5, "with --link: probability above which two sessions are linked, in [0.5, 1)")
	flag.BoolVar(&cfg.PairTest, "pair-test", false, "public keys, and addresses whose key is known, match only if key and hash both match")
	flag.IntVar(&cfg.MaxMatches, "max-matches", attack.DefaultMaxMatches, "most matches listed per session (counts cover all)")
	flag.IntVar(&cfg.SessionsPerShard, "sessions-per-shard", privacybeam.DefaultSessionsPerShard, "sessions tested together in one shard")
	flag.IntVar(&cfg.Workers, "workers", 0, "parsing goroutines per shard (default: number of CPUs, at most 4)")
	logLevel := flag.String("log-level", "warn", "Beam's log level: debug, info, warn or error")
	flag.Parse()
	log.SetupLogging(*logLevel, "text")
	if f := flag.Lookup("runner"); f != nil && f.Value.String() == "" {
		_ = f.Value.Set("direct")
	}
	// On a worker of a portable runner, Init runs the worker and exits.
	beam.Init()
	os.Exit(run(cfg))
}

func run(cfg privacybeam.Config) int {
	ctx := context.Background()
	restore, err := privacybeam.ScratchTempDir()
	if err != nil {
		fmt.Fprintf(os.Stderr, "spvfilter-beam: %v\n", err)
		return 1
	}
	defer func() {
		if err := restore(); err != nil {
			fmt.Fprintf(os.Stderr, "spvfilter-beam: %v\n", err)
		}
	}()
	p, s := beam.NewPipelineWithRoot()
	plan, err := privacybeam.Build(ctx, s, cfg)
	if err != nil {
		fmt.Fprintf(os.Stderr, "spvfilter-beam: %v\n", err)
		if errors.Is(err, privacybeam.ErrBadConfig) {
			return 2
		}
		return 1
	}
	fmt.Fprintf(os.Stderr, "spvfilter-beam: %s in %s × %s: %s\n",
		counted(plan.Sessions, "session"), counted(plan.Groups, "group"), counted(len(plan.Files), "universe file"), counted(plan.Shards(), "shard"))
	if err := beamx.Run(ctx, p); err != nil {
		// Beam wraps the failure in its plan; the cause is what matters.
		cause := err
		for u := errors.Unwrap(cause); u != nil; u = errors.Unwrap(cause) {
			cause = u
		}
		fmt.Fprintf(os.Stderr, "spvfilter-beam: the pipeline failed: %v\n", cause)
		return 1
	}
	return 0
}

// counted is n and noun, in the plural unless n is 1.
func counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
