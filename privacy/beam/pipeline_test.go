package privacybeam

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/model"
)

func TestMain(m *testing.M) {
	flag.Parse()
	log.SetupLogging("warn", "text") // not the runner's plan of every run
	// On a worker of a portable runner, Init runs the worker and exits.
	beam.Init()
	os.Exit(runTests(m))
}

// runTests runs the tests with a temporary directory of their own, removed
// afterwards with what prism's runs leave in it.
func runTests(m *testing.M) int {
	restore, err := ScratchTempDir()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer func() {
		if err := restore(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}()
	if code, done := isolate(); done {
		return code
	}
	// The runner of beamx.Run, which the example calls.
	if prismSkip != "" {
		_ = flag.Set("runner", "direct")
	} else {
		_ = flag.Set("runner", "prism")
	}
	return m.Run()
}

// runOn runs the pipeline of cfg on r and returns the report it wrote.
func runOn(t testing.TB, r runner, cfg Config) []byte {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	if _, err := Build(context.Background(), s, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := r.execute(context.Background(), p); err != nil {
		t.Fatalf("pipeline on %s: %v", r.name, err)
	}
	out, err := os.ReadFile(cfg.Output)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestPipelineEqualsSingleMachine runs the pipeline on prism and on the
// direct runner on synthetic captures and universes split over several files and checks
// that its report is byte for byte the one of a single accumulator of
// every session over the concatenated files, with the links, the
// intersections and the sessions kept as asked.
func TestPipelineEqualsSingleMachine(t *testing.T) {
	base := synthSpec{wallets: 10, sessionsPerWallet: 2, addresses: 20, fpRate: 0.005, randomLines: 3000, files: 3, seed: 1}
	same := func(s synthSpec) synthSpec { return s }
	tests := []struct {
		name  string
		spec  func(synthSpec) synthSpec
		cfg   Config
		extra string // a last universe file
	}{
		{name: "3 files, 3 groups", spec: same, cfg: Config{SessionsPerShard: 7}},
		{name: "pair test, 1 group", spec: func(s synthSpec) synthSpec { s.seed = 2; return s }, cfg: Config{PairTest: true}},
		{name: "one session per shard, 5 files", spec: func(s synthSpec) synthSpec { s.files, s.seed = 5, 3; return s },
			cfg: Config{SessionsPerShard: 1}},
		{name: "truncated match lists", spec: func(s synthSpec) synthSpec { s.seed = 4; return s },
			cfg: Config{SessionsPerShard: 8, MaxMatches: 5, Workers: 1}},
		{name: "marked pairs", spec: func(s synthSpec) synthSpec { s.marked, s.seed = true, 5; return s },
			cfg: Config{SessionsPerShard: 10, PairTest: true}},
		{name: "marked pairs, keys and addresses in different files", spec: func(s synthSpec) synthSpec { s.marked, s.crossFiles, s.seed = true, true, 7; return s },
			cfg: Config{SessionsPerShard: 10}},
		{name: "marked pairs in different files, pair test", spec: func(s synthSpec) synthSpec { s.marked, s.crossFiles, s.seed = true, true, 14; return s },
			cfg: Config{SessionsPerShard: 10, PairTest: true}},
		{name: "a file without candidates", spec: func(s synthSpec) synthSpec { s.seed = 11; return s },
			cfg: Config{SessionsPerShard: 9}, extra: "# nothing but comments\n\n# and a bad line:\nxyz\n"},
		{name: "one file", spec: func(s synthSpec) synthSpec { s.files, s.marked, s.seed = 1, true, 6; return s },
			cfg: Config{SessionsPerShard: 6}},
		{name: "linked, sessions in groups of 3", spec: func(s synthSpec) synthSpec { s.seed = 16; return s },
			cfg: Config{SessionsPerShard: 3, Link: true}},
		{name: "linked at 0.9 with the pair test, one session per shard", spec: func(s synthSpec) synthSpec { s.marked, s.seed = true, 17; return s },
			cfg: Config{SessionsPerShard: 1, Link: true, LinkThreshold: 0.9, PairTest: true}},
		{name: "a client's sessions intersected and linked", spec: func(s synthSpec) synthSpec { s.seed = 18; return s },
			cfg: Config{SessionsPerShard: 1, Client: "127.0.0.3", Intersect: true, Link: true}},
		{name: "all intersected and linked, lists cut short", spec: func(s synthSpec) synthSpec { s.wallets, s.seed = 4, 19; return s },
			cfg: Config{SessionsPerShard: 3, Intersect: true, Link: true, MaxMatches: 6}},
		{name: "one session by its id, intersected", spec: func(s synthSpec) synthSpec { s.fpRate, s.seed = 0.0005, 20; return s },
			cfg: Config{Client: "s0005", Intersect: true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := writeSynth(t, dir, tc.spec(base))
			if tc.extra != "" {
				if err := os.WriteFile(filepath.Join(dir, "universe-999.txt"), []byte(tc.extra), 0o644); err != nil {
					t.Fatal(err)
				}
				s.universe = append(s.universe, tc.extra...)
			}
			cfg := tc.cfg
			cfg.Capture, cfg.Universe, cfg.Output = s.capture, s.glob, filepath.Join(dir, "report.json")
			want, _ := singleMachine(t, s, cfg)
			checkNotDegenerate(t, cfg, want)
			onRunners(t, func(t *testing.T, r runner) {
				cfg.Output = filepath.Join(t.TempDir(), "report.json")
				if got := runOn(t, r, cfg); !bytes.Equal(got, want) {
					t.Errorf("pipeline report differs from the single pass (%d and %d bytes):\n%s", len(got), len(want), strings.Join(jsonDiff(got, want), "\n"))
				}
			})
		})
	}
}

// checkNotDegenerate fails a case that shows too little to compare: no
// candidate found with confidence in any report, nothing matched or no
// false positive expected, a match list not cut short when asked, no
// linked group (unless lists are cut short, which hides what sessions
// share), no intersection, or not only the client's sessions.
func checkNotDegenerate(t *testing.T, cfg Config, report []byte) {
	t.Helper()
	var out attack.CaptureReport
	if err := json.Unmarshal(report, &out); err != nil {
		t.Fatal(err)
	}
	found, matched := 0, uint64(0)
	for _, c := range out.Clients {
		found += c.Confident
		matched += c.MatchedCount
	}
	first := out.Clients[0]
	if out.Intersection != nil {
		found += out.Intersection.Confident
	}
	if out.Links != nil {
		for _, g := range out.Links.Groups {
			found += g.Confident
		}
	}
	switch {
	case found == 0 || matched == 0 || first.ExpectedFalsePositives == 0:
		t.Errorf("a degenerate case: %d confident, %d matched, %v expected false positives", found, matched, first.ExpectedFalsePositives)
	case cfg.MaxMatches > 0 && !slices.ContainsFunc(out.Clients, func(c attack.SessionReport) bool { return c.MatchedTruncated }):
		t.Errorf("no match list truncated at %d", cfg.MaxMatches)
	case cfg.Link && len(out.Clients) > 1 && (out.Links == nil || len(out.Links.Pairs) == 0 || cfg.MaxMatches == 0 && len(out.Links.Groups) == 0):
		t.Errorf("no linked group: %+v", out.Links)
	case cfg.Intersect && (out.Intersection == nil || len(out.Intersection.Sessions) != len(out.Clients)):
		t.Errorf("intersection %+v of %d sessions", out.Intersection, len(out.Clients))
	case !cfg.Link && out.Links != nil || !cfg.Intersect && out.Intersection != nil:
		t.Errorf("links or intersection not asked for")
	}
	for _, c := range out.Clients {
		if host, _, _ := net.SplitHostPort(c.Client); cfg.Client != "" && host != cfg.Client && c.Session != cfg.Client {
			t.Errorf("session %s of %s kept, not of %s", c.Session, c.Client, cfg.Client)
		}
	}
}

// TestBuildRefuses: input that cannot be analyzed is refused while the
// pipeline is built, with ErrBadConfig.
func TestBuildRefuses(t *testing.T) {
	dir := t.TempDir()
	s := writeSynth(t, dir, synthSpec{wallets: 1, sessionsPerWallet: 1, addresses: 5, fpRate: 0.01, randomLines: 100, files: 1, seed: 12})
	badCapture := filepath.Join(dir, "bad.jsonl")
	if err := os.WriteFile(badCapture, []byte(`{"command":"filterload","filterload":"zz"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A session that loaded more filters than one analysis intersects,
	// then a session of 1 filter; two sessions of half as many each. Each
	// filter has a tweak of its own: a filter loaded again whole is the
	// one before grown (capture.Sessions), not another to intersect.
	w := model.NewWallet(1, 3)
	loads := func(name string, sessions ...int) string {
		var b bytes.Buffer
		for i, n := range sessions {
			for j := range n {
				f := w.Filter(0.01, 0, uint32(j+1))
				rec, err := capture.NewFilterLoadRecord(time.Unix(0, 0), fmt.Sprintf("127.0.0.%d:1", i+1), fmt.Sprintf("s%d", i), f.MsgFilterLoad())
				if err != nil {
					t.Fatal(err)
				}
				line, _ := json.Marshal(rec)
				b.Write(append(line, '\n'))
			}
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	manyCapture := loads("many.jsonl", attack.MaxFilters+1, 1)
	halves := loads("halves.jsonl", attack.MaxFilters/2+1, attack.MaxFilters/2)
	out := filepath.Join(dir, "out.json")
	tests := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no capture", Config{Universe: s.glob, Output: out}, "a capture, a universe and an output"},
		{"missing capture", Config{Capture: filepath.Join(dir, "none"), Universe: s.glob, Output: out}, "capture"},
		{"bad capture", Config{Capture: badCapture, Universe: s.glob, Output: out}, "capture line 1"},
		{"too many filters", Config{Capture: manyCapture, Universe: s.glob, Output: out}, "at most 64"},
		{"no universe file", Config{Capture: s.capture, Universe: filepath.Join(dir, "nothing-*.txt"), Output: out}, "no file matches"},
		{"negative shard size", Config{Capture: s.capture, Universe: s.glob, Output: out, SessionsPerShard: -1}, "negative"},
		{"link threshold below one half", Config{Capture: s.capture, Universe: s.glob, Output: out, Link: true, LinkThreshold: 0.3}, "link threshold 0.3"},
		{"link threshold 1", Config{Capture: s.capture, Universe: s.glob, Output: out, LinkThreshold: 1}, "link threshold 1"},
		{"no such client", Config{Capture: s.capture, Universe: s.glob, Output: out, Client: "127.0.0.9"}, "no filterload recorded from 127.0.0.9"},
		{"too many filters to intersect", Config{Capture: halves, Universe: s.glob, Output: out, Intersect: true}, "loaded 65 filters, at most 64 can be intersected"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, sc := beam.NewPipelineWithRoot()
			_, err := Build(context.Background(), sc, tc.cfg)
			if !errors.Is(err, ErrBadConfig) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want ErrBadConfig naming %q", err, tc.want)
			}
		})
	}
	// What --client leaves out is not refused; two sessions of at most
	// 64 filters each are analyzed, one by one.
	for _, cfg := range []Config{{Capture: manyCapture, Client: "s1"}, {Capture: halves}} {
		cfg.Universe, cfg.Output = s.glob, out
		_, sc := beam.NewPipelineWithRoot()
		if _, err := Build(context.Background(), sc, cfg); err != nil {
			t.Errorf("%+v: %v", cfg, err)
		}
	}
}

// TestPipelineEmptyUniverse: universe files without a candidate fail the
// run as one pass over them fails.
func TestPipelineEmptyUniverse(t *testing.T) {
	dir := t.TempDir()
	s := writeSynth(t, dir, synthSpec{wallets: 1, sessionsPerWallet: 1, addresses: 5, fpRate: 0.01, randomLines: 10, files: 1, seed: 13})
	empty := filepath.Join(dir, "empty-*.txt")
	for i, text := range []string{"# only\n", "\nnot a candidate\n"} {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("empty-%d.txt", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	onRunners(t, func(t *testing.T, r runner) {
		p, sc := beam.NewPipelineWithRoot()
		out := filepath.Join(t.TempDir(), "out.json")
		if _, err := Build(context.Background(), sc, Config{Capture: s.capture, Universe: empty, Output: out}); err != nil {
			t.Fatal(err)
		}
		// The runner logs the failure it returns: kept for a failed test.
		var logged bytes.Buffer
		defer slog.SetDefault(slog.Default())
		slog.SetDefault(slog.New(slog.NewTextHandler(&logged, nil)))
		_, err := r.execute(context.Background(), p)
		if err == nil || !strings.Contains(err.Error(), "the universe holds no candidate") || !strings.Contains(err.Error(), "line 3") {
			t.Fatalf("got %v, want the empty universe named with its first skipped line; the runner logged:\n%s", err, logged.Bytes())
		}
		if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a report written by a failed run: %v", err)
		}
	})
}

// TestPipelineKeyAloneInItsFile: a marked key line alone in its file,
// its address in another, and a filter that holds the address's hash but
// not the key: one pass counts the address once and takes it back out
// where it reads the key, which the file of the key alone cannot do
// (privacy keeps its counts from going below zero).
func TestPipelineKeyAloneInItsFile(t *testing.T) {
	dir := t.TempDir()
	w := model.NewWallet(21, 3)
	addrs := w.Addresses(&chaincfg.MainNetParams)
	f := bip37.NewFilter(10, 0.001, 5, wire.BloomUpdateNone)
	for _, h := range w.Hashes {
		f.Add(h) // the hashes only: a key under the pair test does not match
	}
	rec, err := capture.NewFilterLoadRecord(time.Unix(0, 0), "127.0.0.1:1", "s1", f.MsgFilterLoad())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(rec)
	s := &synth{capture: filepath.Join(dir, "capture.jsonl"), glob: filepath.Join(dir, "universe-*.txt")}
	if err := os.WriteFile(s.capture, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	files := []string{
		addrs[0] + "\n" + addrs[1] + "\n" + strings.Repeat("00112233445566778899aabbccddeeff00112233\n", 50),
		fmt.Sprintf("%x # pair %s, listed %s\n", w.PubKeys[0], addrs[0], addrs[0]),
		fmt.Sprintf("%x # pair %s, listed %s", w.PubKeys[1], addrs[1], addrs[1]), // no final newline
	}
	for i, text := range files {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("universe-%d.txt", i)), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		s.universe = append(s.universe, text...)
		if !strings.HasSuffix(text, "\n") {
			s.universe = append(s.universe, '\n')
		}
	}
	for _, pairTest := range []bool{false, true} {
		t.Run(fmt.Sprintf("pair test %v", pairTest), func(t *testing.T) {
			cfg := Config{Capture: s.capture, Universe: s.glob, Output: filepath.Join(dir, "report.json"), PairTest: pairTest}
			want, reps := singleMachine(t, s, cfg)
			// Without the pair test both keys match by their hash; with
			// it neither does, and their addresses are taken out.
			if wantMatched := map[bool]uint64{false: 2, true: 0}[pairTest]; reps[0].MatchedCount != wantMatched {
				t.Errorf("one pass matched %d, want %d", reps[0].MatchedCount, wantMatched)
			}
			onRunners(t, func(t *testing.T, r runner) {
				cfg.Output = filepath.Join(t.TempDir(), "report.json")
				if got := runOn(t, r, cfg); !bytes.Equal(got, want) {
					t.Errorf("pipeline report differs from the single pass:\n%s", strings.Join(jsonDiff(got, want), "\n"))
				}
			})
		})
	}
}

// TestDoFnsSurviveEncoding encodes every step of the pipeline as Beam does
// for a portable runner (Flink, Spark, Dataflow), which the direct runner
// never does, and checks that the DoFns come back with their
// configuration and their Setup.
func TestDoFnsSurviveEncoding(t *testing.T) {
	dir := t.TempDir()
	s := writeSynth(t, dir, synthSpec{wallets: 1, sessionsPerWallet: 1, addresses: 5, fpRate: 0.01, randomLines: 10, files: 2, seed: 15})
	cfg := Config{Capture: s.capture, Universe: s.glob, Output: filepath.Join(dir, "out.json"), Client: "127.0.0.1", PairTest: true, MaxMatches: 7,
		Intersect: true, Link: true, LinkThreshold: 0.7, SessionsPerShard: 3, Workers: 2}
	p, sc := beam.NewPipelineWithRoot()
	if _, err := Build(context.Background(), sc, cfg); err != nil {
		t.Fatal(err)
	}
	edges, _, err := p.Build()
	if err != nil {
		t.Fatal(err)
	}
	found := map[string]bool{}
	for _, e := range edges {
		if e.DoFn == nil {
			continue
		}
		pb, err := graphx.EncodeMultiEdge(e)
		if err != nil {
			t.Fatalf("encoding %v: %v", e, err)
		}
		_, fn, _, _, _, err := graphx.DecodeMultiEdge(pb)
		if err != nil {
			t.Fatalf("decoding %v: %v", e, err)
		}
		var got *captureFn
		switch f := fn.Recv.(type) {
		case *analyzeFn:
			got, found["analyze"] = &f.captureFn, true
		case *mergeFn:
			got, found["merge"] = &f.captureFn, f.Files == 2
		case *writeFn:
			got, found["write"] = &f.captureFn, true
		default:
			continue
		}
		if got.Config != cfg {
			t.Errorf("%T decoded with %+v, want %+v", fn.Recv, got.Config, cfg)
		}
		if err := got.Setup(context.Background()); err != nil || len(got.job.sessions) != 1 || len(got.job.groups) != 2 {
			t.Errorf("%T: Setup: %v, %+v", fn.Recv, err, got.job)
		}
	}
	for _, name := range []string{"analyze", "merge", "write"} {
		if !found[name] {
			t.Errorf("no %s step decoded with its configuration", name)
		}
	}
}

// TestScratchTempDirTakesWhatRunsLeave: a pipeline run on prism leaves a
// file in the temporary directory (the loopback placeholder), and
// ScratchTempDir's restore takes it away with its directory, TMPDIR as
// before.
func TestScratchTempDirTakesWhatRunsLeave(t *testing.T) {
	if prismSkip != "" {
		t.Skip(prismSkip)
	}
	data := t.TempDir()
	s := writeSynth(t, data, synthSpec{wallets: 1, sessionsPerWallet: 1, addresses: 5, fpRate: 0.01, randomLines: 10, files: 1, seed: 16})
	cfg := Config{Capture: s.capture, Universe: s.glob, Output: filepath.Join(data, "report.json")}
	outer := filepath.Join(data, "tmp")
	if err := os.Mkdir(outer, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func() []os.DirEntry {
		runOn(t, runner{name: "prism", execute: prism.Execute}, cfg)
		entries, err := os.ReadDir(outer)
		if err != nil {
			t.Fatal(err)
		}
		return entries
	}
	t.Setenv("TMPDIR", outer)
	if left := run(); len(left) == 0 {
		t.Fatal("a run on prism left nothing in TMPDIR: the case this test guards is gone")
	} else {
		for _, e := range left {
			_ = os.RemoveAll(filepath.Join(outer, e.Name()))
		}
	}
	restore, err := ScratchTempDir()
	if err != nil {
		t.Fatal(err)
	}
	if os.TempDir() == outer {
		t.Fatal("ScratchTempDir left TMPDIR as it was")
	}
	run()
	if err := restore(); err != nil {
		t.Fatal(err)
	}
	if got := os.Getenv("TMPDIR"); got != outer {
		t.Fatalf("TMPDIR after restore = %q, want %q", got, outer)
	}
	if left, _ := os.ReadDir(outer); len(left) != 0 {
		t.Fatalf("left in TMPDIR after restore: %s", left[0].Name())
	}
}
