package privacybeam

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/privacy/attack"
)

// TestMeasureThroughput measures the pipeline on prism and on the direct
// runner against one pass of one accumulator over the same input, in
// candidate-filter tests per second (the median of three runs), and checks
// that all give the same report. Opt-in, since it takes about three minutes:
// SPVFILTER_LONG=1 (SPVFILTER_CANDIDATES sets the universe size, 10^6 by
// default).
func TestMeasureThroughput(t *testing.T) {
	if os.Getenv("SPVFILTER_LONG") == "" {
		t.Skip("set SPVFILTER_LONG=1 to measure the pipeline's throughput")
	}
	candidates := 1_000_000
	if v := os.Getenv("SPVFILTER_CANDIDATES"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1000 {
			t.Fatalf("SPVFILTER_CANDIDATES=%q: want a number of at least 1000", v)
		}
		candidates = n
	}
	dir := t.TempDir()
	start := time.Now()
	s := writeSynth(t, dir, synthSpec{wallets: 50, sessionsPerWallet: 2, addresses: 20, fpRate: 0.0005,
		randomLines: candidates, files: 4, seed: 9})
	t.Logf("%d sessions (%d filters), %d universe lines in %d files, written in %v", 100, s.filters, s.lines, len(s.files), time.Since(start).Round(time.Millisecond))

	// The median of three runs of each, on a machine that others share.
	median := func(run func()) time.Duration {
		var ds []time.Duration
		for range 3 {
			start := time.Now()
			run()
			ds = append(ds, time.Since(start))
		}
		slices.Sort(ds)
		return ds[1]
	}
	var want []byte
	var reps []*attack.Report
	cfg := Config{Capture: s.capture, Universe: s.glob, Output: filepath.Join(dir, "report.json")}
	single := median(func() { want, reps = singleMachine(t, s, cfg) })
	tests := func(d time.Duration) string {
		return fmt.Sprintf("%.3g", float64(reps[0].Universe.CandidatesTested)*float64(s.filters)/d.Seconds())
	}
	t.Logf("| single machine, one accumulator | 1 pass | %v | %s tests/s |", single.Round(time.Millisecond), tests(single))
	for _, r := range runners() {
		if r.skip != "" {
			t.Log(r.skip)
			continue
		}
		for _, per := range []int{100, 25} {
			var got []byte
			d := median(func() {
				cfg.SessionsPerShard = per
				got = runOn(t, r, cfg)
			})
			groups := (100 + per - 1) / per
			t.Logf("| %s, %d sessions per shard | %d shards | %v | %s tests/s |", r.name, per, groups*len(s.files), d.Round(time.Millisecond), tests(d))
			if !bytes.Equal(got, want) {
				t.Errorf("%s, %d sessions per shard: the pipeline's report differs from the single pass", r.name, per)
			}
		}
	}
}
