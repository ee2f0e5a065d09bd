package privacybeam

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// parityCase is a run of "spvfilter privacy analyze --capture --json" and
// the pipeline's configuration that asks for the same.
type parityCase struct {
	name string
	args []string
	cfg  Config
}

// parityCases are the command's options the pipeline offers, client
// naming the sessions --client keeps.
func parityCases(client string) []parityCase {
	return []parityCase{
		{"every session", nil, Config{SessionsPerShard: 4}},
		{"linked", []string{"--link"}, Config{Link: true, SessionsPerShard: 3}},
		{"linked at 0.9, pair test", []string{"--link", "--link-threshold", "0.9", "--pair-test"},
			Config{Link: true, LinkThreshold: 0.9, PairTest: true, SessionsPerShard: 1}},
		{"a client's sessions, intersected and linked", []string{"--client", client, "--intersect", "--link"},
			Config{Client: client, Intersect: true, Link: true, SessionsPerShard: 1}},
		{"all intersected", []string{"--intersect"}, Config{Intersect: true, SessionsPerShard: 5}},
		{"linked, lists cut short", []string{"--link", "--max-matches", "5"}, Config{Link: true, MaxMatches: 5, SessionsPerShard: 7}},
	}
}

// parityCapture is a capture and universe the pipeline is compared on,
// and the client whose sessions --client keeps.
type parityCapture struct {
	name   string
	write  func(t testing.TB, dir string) *synth
	client string
}

// parityCaptures are labelled captures of package simulate (payments
// between wallets, filteradd, noise and degenerate sessions, Core's and
// bitcoinj's sizing), and a synthetic capture whose wallets' sessions
// share a host and whose universe marks key-address pairs.
var parityCaptures = []parityCapture{
	{"simulated", func(t testing.TB, dir string) *synth { return writeSimulated(t, dir, 41, 4000, 4, nil) }, "127.0.0.2"},
	{"simulated, bitcoinj sizing and filteradd", func(t testing.TB, dir string) *synth {
		return writeSimulated(t, dir, 42, 3000, 2, func(o *simulate.Options) {
			o.Sizing, o.ExtraElements, o.FilterAddFraction = model.SizingBitcoinj, 100, 0.5
		})
	}, "sim42-3"},
	{"simulated, 16 wallets of up to 120 addresses", func(t testing.TB, dir string) *synth {
		return writeSimulated(t, dir, 44, 6000, 5, func(o *simulate.Options) {
			o.Wallets, o.Addresses.Max, o.Noise, o.Degenerate = 16, 120, 3, 3
		})
	}, "127.0.0.3"},
	{"synthetic, marked pairs", func(t testing.TB, dir string) *synth {
		return writeSynth(t, dir, synthSpec{wallets: 6, sessionsPerWallet: 2, addresses: 20, fpRate: 0.005, randomLines: 2000, files: 3, seed: 8, marked: true})
	}, "127.0.0.2"},
}

// TestPipelineEqualsCLI compares the pipeline's report, on prism and on
// the direct runner, with the output of "spvfilter privacy analyze
// --capture --universe --json" itself, with --link, --intersect, --client
// and the other options the pipeline offers, on the parity captures: field
// by field (every value of the JSON: each session's report, the
// intersection, every pair compared and every linked group's report),
// then byte for byte.
func TestPipelineEqualsCLI(t *testing.T) {
	bin := buildCLI(t)
	total, compared := map[string]int{}, map[string]int{}
	for _, c := range parityCaptures {
		dir := t.TempDir()
		s := c.write(t, dir)
		universe := filepath.Join(dir, "universe.txt")
		if err := os.WriteFile(universe, s.universe, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tc := range parityCases(c.client) {
			t.Run(c.name+": "+tc.name, func(t *testing.T) {
				want := runCLI(t, bin, append([]string{"--capture", s.capture, "--universe", universe}, tc.args...))
				cfg := tc.cfg
				cfg.Capture, cfg.Universe = s.capture, s.glob
				checkNotDegenerate(t, cfg, want)
				countParts(t, want, compared)
				onRunners(t, func(t *testing.T, r runner) {
					cfg.Output = filepath.Join(t.TempDir(), "report.json")
					got := runOn(t, r, cfg)
					cmp, err := compareJSON(got, want)
					if err != nil {
						t.Fatal(err)
					}
					if len(cmp.diffs) > 0 {
						t.Fatalf("%d of %d fields differ from the command's:\n%s", len(cmp.diffs), cmp.count(), strings.Join(cmp.diffs, "\n"))
					}
					if !bytes.Equal(got, want) {
						t.Errorf("every field equal, but not the bytes (%d and %d)", len(got), len(want))
					}
					for k, n := range cmp.fields {
						total[r.name+" "+k] += n
					}
				})
			})
		}
	}
	t.Logf("compared on each runner: %s", formatCounts(compared))
	t.Logf("values found equal: %s", formatCounts(total))
}

// countParts adds up what a report holds: session reports, intersections,
// pairs of sessions compared, linked groups and their sessions.
func countParts(t *testing.T, report []byte, counts map[string]int) {
	t.Helper()
	var out attack.CaptureReport
	if err := json.Unmarshal(report, &out); err != nil {
		t.Fatal(err)
	}
	counts["cases"]++
	counts["session reports"] += len(out.Clients)
	if out.Intersection != nil {
		counts["intersections"]++
	}
	if l := out.Links; l != nil {
		counts["pairs"] += len(l.Pairs)
		counts["linked groups"] += len(l.Groups)
		for _, g := range l.Groups {
			counts["sessions in linked groups"] += len(g.Sessions)
		}
		for _, p := range l.Pairs {
			if p.Linked {
				counts["linked pairs"]++
			}
		}
	}
}

// formatCounts lists counts by key, in key order.
func formatCounts(counts map[string]int) string {
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%s %d", k, counts[k])
	}
	return b.String()
}

// TestCompareJSON: the comparison of TestPipelineEqualsCLI finds a link's
// probability one unit in the last place apart, a pair missing, and a
// field one side lacks, and counts the fields it compared by part.
func TestCompareJSON(t *testing.T) {
	base := `{"clients":[{"session":"s1","matched_count":3}],"links":{"pairs":[{"a":"s1","b":"s2","probability":0.5}],"groups":[]}}`
	tests := []struct {
		name, other string
		diffs       []string
	}{
		{"equal", base, nil},
		{"probability", strings.Replace(base, `"probability":0.5`, `"probability":0.5000000000000001`, 1),
			[]string{".links.pairs[0].probability: 0.5 != 0.5000000000000001"}},
		{"pair missing", strings.Replace(base, `[{"a":"s1","b":"s2","probability":0.5}]`, `[]`, 1),
			[]string{".links.pairs: 1 elements != 0 elements"}},
		{"field missing", strings.Replace(base, `,"matched_count":3`, ``, 1),
			[]string{".clients[0].matched_count: 3 != <nil>"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cmp, err := compareJSON([]byte(base), []byte(tc.other))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(cmp.diffs, tc.diffs) {
				t.Errorf("diffs %q, want %q", cmp.diffs, tc.diffs)
			}
			if want := map[string]int{"clients": 2, "links.pairs": 3}; tc.diffs == nil && !reflect.DeepEqual(cmp.fields, want) {
				t.Errorf("fields compared %v, want %v", cmp.fields, want)
			}
		})
	}
}

// jsonComparison is the comparison of two JSON documents value by value.
type jsonComparison struct {
	// fields counts the values found equal, by part of the report: its
	// top-level key, or for links "links.pairs", "links.groups" and so on.
	fields map[string]int
	// diffs names the first values that differ, by path.
	diffs []string
}

// maxDiffs is the number of differences a comparison names.
const maxDiffs = 10

// compareJSON compares the JSON documents a and b value by value.
func compareJSON(a, b []byte) (*jsonComparison, error) {
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return nil, fmt.Errorf("first: %w", err)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		return nil, fmt.Errorf("second: %w", err)
	}
	c := &jsonComparison{fields: map[string]int{}}
	c.walk("", x, y)
	return c, nil
}

// count is the number of values compared.
func (c *jsonComparison) count() int {
	n := len(c.diffs)
	for _, k := range c.fields {
		n += k
	}
	return n
}

// walk compares x and y, found at path.
func (c *jsonComparison) walk(path string, x, y any) {
	switch xv := x.(type) {
	case map[string]any:
		if yv, ok := y.(map[string]any); ok {
			c.walkObject(path, xv, yv)
			return
		}
	case []any:
		yv, ok := y.([]any)
		if ok && len(xv) == len(yv) {
			for i := range xv {
				c.walk(fmt.Sprintf("%s[%d]", path, i), xv[i], yv[i])
			}
			return
		}
		if ok {
			c.diff(fmt.Sprintf("%s: %d elements != %d elements", path, len(xv), len(yv)))
			return
		}
	}
	if !reflect.DeepEqual(x, y) {
		c.diff(fmt.Sprintf("%s: %v != %v", path, short(x), short(y)))
		return
	}
	c.fields[part(path)]++
}

// walkObject compares the objects x and y, found at path, key by key.
func (c *jsonComparison) walkObject(path string, x, y map[string]any) {
	keys := map[string]bool{}
	for k := range x {
		keys[k] = true
	}
	for k := range y {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	for _, k := range sorted {
		c.walk(path+"."+k, x[k], y[k])
	}
}

func (c *jsonComparison) diff(s string) {
	if len(c.diffs) < maxDiffs {
		c.diffs = append(c.diffs, s)
	}
}

// part is the part of the report path is in: its first key, and its
// second under links.
func part(path string) string {
	keys := strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' })
	if len(keys) == 0 {
		return "(top)"
	}
	if keys[0] == "links" && len(keys) > 1 {
		return "links." + keys[1]
	}
	return keys[0]
}

// jsonDiff names the first values of a and b that differ.
func jsonDiff(a, b []byte) []string {
	c, err := compareJSON(a, b)
	if err != nil {
		return []string{err.Error()}
	}
	return c.diffs
}

func short(v any) string {
	s := fmt.Sprint(v)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

// buildCLI builds spvfilter from this source tree, with the go command
// on PATH (go test puts its own first).
func buildCLI(t testing.TB) string {
	t.Helper()
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("building spvfilter: %v", err)
	}
	bin := filepath.Join(t.TempDir(), "spvfilter")
	build := exec.Command(goTool, "build", "-o", bin, "./cmd/spvfilter")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building spvfilter: %v\n%s", err, out)
	}
	return bin
}

// runCLI runs "spvfilter privacy analyze --json" with args and returns
// its output.
func runCLI(t testing.TB, bin string, args []string) []byte {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cli := exec.Command(bin, append([]string{"privacy", "analyze", "--json"}, args...)...)
	cli.Stdout, cli.Stderr = &stdout, &stderr
	if err := cli.Run(); err != nil {
		t.Fatalf("spvfilter privacy analyze %s: %v\n%s", strings.Join(args, " "), err, stderr.Bytes())
	}
	return stdout.Bytes()
}
