package privacybeam

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/core/runtime/graphx"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/log"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/direct"
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
	beam.Init()
	os.Exit(m.Run())
}

// runPipeline runs the pipeline with the direct runner and returns the
// report it wrote.
func runPipeline(t testing.TB, cfg Config) []byte {
	t.Helper()
	p, s := beam.NewPipelineWithRoot()
	if _, err := Build(context.Background(), s, cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := direct.Execute(context.Background(), p); err != nil {
		t.Fatalf("pipeline: %v", err)
	}
	out, err := os.ReadFile(cfg.Output)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// jsonDiff names the paths where two JSON documents differ (at most ten).
func jsonDiff(a, b []byte) []string {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return []string{"first: " + err.Error()}
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return []string{"second: " + err.Error()}
	}
	var diffs []string
	var walk func(path string, x, y any)
	walk = func(path string, x, y any) {
		if len(diffs) >= 10 {
			return
		}
		switch xv := x.(type) {
		case map[string]any:
			yv, ok := y.(map[string]any)
			if !ok {
				break
			}
			keys := map[string]bool{}
			for k := range xv {
				keys[k] = true
			}
			for k := range yv {
				keys[k] = true
			}
			var sorted []string
			for k := range keys {
				sorted = append(sorted, k)
			}
			sort.Strings(sorted)
			for _, k := range sorted {
				walk(path+"."+k, xv[k], yv[k])
			}
			return
		case []any:
			yv, ok := y.([]any)
			if !ok || len(xv) != len(yv) {
				break
			}
			for i := range xv {
				walk(fmt.Sprintf("%s[%d]", path, i), xv[i], yv[i])
			}
			return
		}
		if !reflect.DeepEqual(x, y) {
			diffs = append(diffs, fmt.Sprintf("%s: %v != %v", path, short(x), short(y)))
		}
	}
	walk("", x, y)
	return diffs
}

func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// TestPipelineEqualsSingleMachine runs the pipeline with the direct runner
// on synthetic captures and universes split over several files and checks
// that its report is byte for byte the one of AnalyzeGroups over the
// concatenated files.
func TestPipelineEqualsSingleMachine(t *testing.T) {
	base := synthSpec{wallets: 10, sessionsPerWallet: 2, addresses: 20, fpRate: 0.005, randomLines: 3000, files: 3, seed: 1}
	tests := []struct {
		name  string
		spec  func(synthSpec) synthSpec
		cfg   Config
		opts  attack.AnalyzeOptions
		extra string // a last universe file
	}{
		{name: "3 files, 3 groups", spec: func(s synthSpec) synthSpec { return s }, cfg: Config{SessionsPerShard: 7}},
		{name: "pair test, 1 group", spec: func(s synthSpec) synthSpec { s.seed = 2; return s },
			cfg: Config{PairTest: true}, opts: attack.AnalyzeOptions{PairTest: true}},
		{name: "one session per shard, 5 files", spec: func(s synthSpec) synthSpec { s.files, s.seed = 5, 3; return s },
			cfg: Config{SessionsPerShard: 1}},
		{name: "truncated match lists", spec: func(s synthSpec) synthSpec { s.seed = 4; return s },
			cfg: Config{SessionsPerShard: 8, MaxMatches: 5, Workers: 1}, opts: attack.AnalyzeOptions{MaxMatches: 5, Workers: 1}},
		{name: "marked pairs", spec: func(s synthSpec) synthSpec { s.marked, s.seed = true, 5; return s },
			cfg: Config{SessionsPerShard: 10, PairTest: true}, opts: attack.AnalyzeOptions{PairTest: true}},
		{name: "marked pairs, keys and addresses in different files", spec: func(s synthSpec) synthSpec { s.marked, s.crossFiles, s.seed = true, true, 7; return s },
			cfg: Config{SessionsPerShard: 10}},
		{name: "marked pairs in different files, pair test", spec: func(s synthSpec) synthSpec { s.marked, s.crossFiles, s.seed = true, true, 14; return s },
			cfg: Config{SessionsPerShard: 10, PairTest: true}, opts: attack.AnalyzeOptions{PairTest: true}},
		{name: "a file without candidates", spec: func(s synthSpec) synthSpec { s.seed = 11; return s },
			cfg: Config{SessionsPerShard: 9}, extra: "# nothing but comments\n\n# and a bad line:\nxyz\n"},
		{name: "one file", spec: func(s synthSpec) synthSpec { s.files, s.marked, s.seed = 1, true, 6; return s },
			cfg: Config{SessionsPerShard: 6}},
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
			want, reps := singleMachine(t, s, tc.opts)
			cfg := tc.cfg
			cfg.Capture, cfg.Universe, cfg.Output = s.capture, s.glob, filepath.Join(dir, "report.json")
			got := runPipeline(t, cfg)
			if !bytes.Equal(got, want) {
				t.Errorf("pipeline report differs from the single pass (%d and %d bytes):\n%s", len(got), len(want), strings.Join(jsonDiff(got, want), "\n"))
			}
			// The case must show something: the wallets' addresses
			// found, false positives expected.
			var found, matched uint64
			for _, r := range reps {
				found += uint64(r.Confident)
				matched += r.MatchedCount
			}
			if found == 0 || matched == 0 || reps[0].ExpectedFalsePositives == 0 {
				t.Errorf("a degenerate case: %d confident, %d matched, %v expected false positives", found, matched, reps[0].ExpectedFalsePositives)
			}
			if tc.opts.MaxMatches > 0 && !reps[0].MatchedTruncated {
				t.Errorf("match list of session 1 not truncated at %d", tc.opts.MaxMatches)
			}
		})
	}
}

// TestPipelineEqualsCLI compares the pipeline's report with the output of
// "spvfilter privacy analyze --capture --universe --json" itself.
func TestPipelineEqualsCLI(t *testing.T) {
	dir := t.TempDir()
	s := writeSynth(t, dir, synthSpec{wallets: 4, sessionsPerWallet: 2, addresses: 20, fpRate: 0.005, randomLines: 2000, files: 3, seed: 8})
	universe := filepath.Join(dir, "universe.txt")
	if err := os.WriteFile(universe, s.universe, 0o644); err != nil {
		t.Fatal(err)
	}
	goTool := filepath.Join(runtime.GOROOT(), "bin", "go")
	bin := filepath.Join(dir, "spvfilter")
	build := exec.Command(goTool, "build", "-o", bin, "./cmd/spvfilter")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building spvfilter: %v\n%s", err, out)
	}
	var stdout, stderr bytes.Buffer
	cli := exec.Command(bin, "privacy", "analyze", "--capture", s.capture, "--universe", universe, "--json", "--pair-test")
	cli.Stdout, cli.Stderr = &stdout, &stderr
	if err := cli.Run(); err != nil {
		t.Fatalf("spvfilter privacy analyze: %v\n%s", err, stderr.Bytes())
	}
	got := runPipeline(t, Config{Capture: s.capture, Universe: s.glob, Output: filepath.Join(dir, "report.json"), SessionsPerShard: 3, PairTest: true})
	if !bytes.Equal(got, stdout.Bytes()) {
		t.Errorf("pipeline report differs from the command's:\n%s", strings.Join(jsonDiff(got, stdout.Bytes()), "\n"))
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
	// A session that loaded more filters than one analysis intersects.
	var many bytes.Buffer
	f := model.NewWallet(1, 3).Filter(0.01, 0, 1)
	for i := 0; i <= attack.MaxFilters; i++ {
		rec, err := capture.NewFilterLoadRecord(time.Unix(0, 0), "127.0.0.1:1", "s", f.MsgFilterLoad())
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(rec)
		many.Write(append(b, '\n'))
	}
	manyCapture := filepath.Join(dir, "many.jsonl")
	if err := os.WriteFile(manyCapture, many.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
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
	p, sc := beam.NewPipelineWithRoot()
	if _, err := Build(context.Background(), sc, Config{Capture: s.capture, Universe: empty, Output: filepath.Join(dir, "out.json")}); err != nil {
		t.Fatal(err)
	}
	_, err := direct.Execute(context.Background(), p)
	if err == nil || !strings.Contains(err.Error(), "the universe holds no candidate") || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("got %v, want the empty universe named with its first skipped line", err)
	}
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
		want, reps := singleMachine(t, s, attack.AnalyzeOptions{PairTest: pairTest})
		got := runPipeline(t, Config{Capture: s.capture, Universe: s.glob, Output: filepath.Join(dir, "report.json"), PairTest: pairTest})
		if !bytes.Equal(got, want) {
			t.Errorf("pair test %v: pipeline report differs from the single pass:\n%s", pairTest, strings.Join(jsonDiff(got, want), "\n"))
		}
		// Without the pair test both keys match by their hash; with it
		// neither does, and their addresses are taken out.
		if wantMatched := map[bool]uint64{false: 2, true: 0}[pairTest]; reps[0].MatchedCount != wantMatched {
			t.Errorf("pair test %v: one pass matched %d, want %d", pairTest, reps[0].MatchedCount, wantMatched)
		}
	}
}

// TestDoFnsSurviveEncoding encodes every step of the pipeline as Beam does
// for a portable runner (Flink, Spark, Dataflow), which the direct runner
// never does, and checks that the DoFns come back with their
// configuration and their Setup.
func TestDoFnsSurviveEncoding(t *testing.T) {
	dir := t.TempDir()
	s := writeSynth(t, dir, synthSpec{wallets: 1, sessionsPerWallet: 1, addresses: 5, fpRate: 0.01, randomLines: 10, files: 2, seed: 15})
	cfg := Config{Capture: s.capture, Universe: s.glob, Output: filepath.Join(dir, "out.json"), PairTest: true, MaxMatches: 7, SessionsPerShard: 3, Workers: 2}
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
		if err := got.Setup(context.Background()); err != nil || len(got.sessions) != 1 {
			t.Errorf("%T: Setup: %v, %d sessions", fn.Recv, err, len(got.sessions))
		}
	}
	for _, name := range []string{"analyze", "merge", "write"} {
		if !found[name] {
			t.Errorf("no %s step decoded with its configuration", name)
		}
	}
}
