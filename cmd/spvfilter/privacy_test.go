package main

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"

	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/capture"
	"github.com/spvfilter/spvfilter/privacy/model"
)

func decodeJSON(t *testing.T, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("bad JSON %v:\n%s", err, s)
	}
}

func TestPrivacyModelCommand(t *testing.T) {
	stdout, stderr, status := runCLI(t, "", "privacy", "model", "--addresses", "20", "--fprate", "0.0005",
		"--universe-size", "10000000", "--filters", "2", "--pair-test", "--json")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var m map[string]any
	decodeJSON(t, stdout, &m)
	for _, k := range []string{"filter_bits", "hash_function_count", "element_count", "false_positive_rate", "expected_false_positives", "p_h_1", "p_h_all"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	// The figures are those of the library for the same parameters.
	want, err := model.Evaluate(model.Params{Addresses: 20, FPRate: 0.0005, UniverseSize: 10_000_000,
		ElementsPerAddress: 2, ExtraElements: 100, Filters: 2, PairTest: true})
	if err != nil {
		t.Fatal(err)
	}
	if m["filter_bits"].(float64) != float64(want.FilterBits) || m["expected_false_positives"].(float64) != want.ExpectedFalsePositives {
		t.Errorf("JSON %v differs from Evaluate %+v", m, want)
	}
	// (U-N)·pf^(2B) by hand, pf the false-positive rate at the fill.
	s := float64(10_000_000-20) * math.Pow(m["false_positive_rate"].(float64), 4)
	if math.Abs(s-m["expected_false_positives"].(float64)) > 1e-9*s {
		t.Errorf("S %v, want %v", m["expected_false_positives"], s)
	}

	text, _, status := runCLI(t, "", "privacy", "model", "--addresses", "100")
	if status != exitOK || !strings.Contains(text, "P_h(1)") || !strings.Contains(text, "593 bytes") {
		t.Errorf("text output:\n%s", text)
	}
}

func TestPrivacyModelSweepPlotAndMonteCarlo(t *testing.T) {
	dir := t.TempDir()
	plot := filepath.Join(dir, "leak.svg")
	stdout, stderr, status := runCLI(t, "", "privacy", "model", "--sweep", "addresses=1..30:10", "--plot", plot, "--json")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	// One object that names the swept variable and its values.
	var sweep struct {
		Sweep struct {
			Var    string    `json:"var"`
			Values []float64 `json:"values"`
		} `json:"sweep"`
		Results []struct {
			Params struct {
				Addresses int `json:"addresses"`
			} `json:"params"`
		} `json:"results"`
		Warnings []string `json:"warnings"`
	}
	decodeJSON(t, stdout, &sweep)
	if sweep.Sweep.Var != "addresses" || !slices.Equal(sweep.Sweep.Values, []float64{1, 11, 21}) || len(sweep.Results) != 3 ||
		sweep.Results[2].Params.Addresses != 21 || sweep.Warnings == nil {
		t.Fatalf("sweep JSON: %+v", sweep)
	}
	if b, err := os.ReadFile(plot); err != nil || !strings.Contains(string(b), "<svg") {
		t.Fatalf("plot: %v", err)
	}
	// Without --sweep the plot runs along the wallet size, however large
	// the wallet or small the universe.
	for _, args := range [][]string{
		{"--addresses", "20000", "--universe-size", "1000000"},
		{"--addresses", "20", "--universe-size", "30"},
	} {
		args = append([]string{"privacy", "model", "--plot", filepath.Join(dir, "single.png")}, args...)
		if _, stderr, status := runCLI(t, "", args...); status != exitOK {
			t.Errorf("%v: status %d: %s", args, status, stderr)
		}
	}
	text, _, status := runCLI(t, "", "privacy", "model", "--sweep", "fprate=0.0001,0.001")
	if status != exitOK || !strings.Contains(text, "0.0001") || strings.Count(text, "\n") != 3 {
		t.Errorf("sweep table:\n%s", text)
	}
	stdout, stderr, status = runCLI(t, "", "privacy", "model", "--addresses", "40", "--fprate", "0.01",
		"--universe-size", "1000000", "--monte-carlo", "10", "--monte-carlo-sample", "50000", "--json")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var mc struct {
		MonteCarlo model.MonteCarloResult `json:"monte_carlo"`
	}
	decodeJSON(t, stdout, &mc)
	if mc.MonteCarlo.Trials != 10 || !mc.MonteCarlo.Agrees {
		t.Errorf("Monte Carlo %+v", mc.MonteCarlo)
	}
}

func TestPrivacyBadInput(t *testing.T) {
	dir := t.TempDir()
	universe := filepath.Join(dir, "u.txt")
	os.WriteFile(universe, []byte("# ok\n751e76e8199196d454941c45d1b3a323f1433bd6\nnot-hex-nor-address\n"), 0o644)
	filterHex := filterPayloadHex(t, model.NewWallet(1, 3).Filter(0.001, 0, 5))
	captureFile := filepath.Join(dir, "capture.jsonl")
	loadRec, err := capture.NewFilterLoadRecord(time.Now(), "127.0.0.1:5000", "s-1", model.NewWallet(1, 3).Filter(0.001, 0, 5).MsgFilterLoad())
	if err != nil {
		t.Fatal(err)
	}
	rec, _ := json.Marshal(loadRec)
	os.WriteFile(captureFile, append(rec, '\n'), 0o644)
	empty := filepath.Join(dir, "empty.txt")
	os.WriteFile(empty, []byte("# nothing\r\n\r\n"), 0o644)
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"privacy", "model", "--fprate", "0"}, "--fprate 0: want a rate in (0, 1), such as --fprate 0.0005"},
		{[]string{"privacy", "model", "--addresses", "0"}, "addresses"},
		{[]string{"privacy", "model", "--sweep", "colour=1..3"}, "unknown variable"},
		{[]string{"privacy", "model", "--sweep", "addresses=5..1"}, "range end"},
		{[]string{"privacy", "model", "--plot", "x.gif"}, ".svg or .png"},
		{[]string{"privacy", "analyze", "--universe", universe}, "filter"},
		{[]string{"privacy", "analyze", "--filter", "zz", "--universe", universe}, "invalid hex"},
		{[]string{"privacy", "analyze", "--filter", "0000", "--universe", universe}, "filter 1"},
		{[]string{"privacy", "analyze", "--filter", filterHex, "--universe", universe, "--strict"}, "line 3"},
		{[]string{"privacy", "analyze", "--filter", filterHex, "--universe", empty}, "no candidate"},
		{[]string{"privacy", "analyze", "--filter", filterHex, "--universe", dir}, "directory"},
		{[]string{"privacy", "analyze", "--filter", filterHex, "--universe", universe, "--link"}, "--capture"},
		{[]string{"privacy", "analyze", "--capture", captureFile, "--universe", universe, "--link", "--link-threshold", "0.3"}, "--link-threshold"},
		{[]string{"privacy", "analyze", "--filter", filterHex, "--universe", filepath.Join(dir, "missing")}, "no such file"},
		{[]string{"privacy", "analyze", "--capture", universe, "--universe", universe}, universe + ", line 1"},
		{[]string{"privacy", "analyze", "--capture", captureFile, "--client", "10.0.0.1", "--universe", universe}, "--client 10.0.0.1: no filterload recorded from it"},
		{[]string{"privacy", "analyze", "--capture", captureFile, "--universe", universe, "--strict"}, "line 3"},
		{[]string{"privacy", "analyze", "--capture", captureFile, "--universe", empty}, "no candidate"},
		{[]string{"privacy", "analyze", "--filter", filterHex, "--universe", universe, "--show", "-1"}, "--show"},
		{[]string{"privacy", "analyze", "--filter", filterHex, "--universe", universe, "--workers", "100000"}, "--workers"},
		{[]string{"privacy", "analyze", "--filter", filterHex, "--universe", universe, "--max-matches", "-1"}, "--max-matches"},
		{[]string{"privacy", "compare", "--blocks", "0"}, "blocks"},
		{[]string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--network", "nonet", "--out", "-"}, "--network"},
		{[]string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--network", "regtest", "--out", "-", "--max-clients", "-1"}, "--max-clients"},
		{[]string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--network", "regtest", "--out", "-", "--duration", "-1s"}, "--duration"},
		{[]string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--network", "regtest", "--out", "-", "--handshake-timeout", "0s"}, "--handshake-timeout"},
		{[]string{"privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", "127.0.0.1:1", "--network", "regtest", "--out", "-", "--idle-timeout", "-1s"}, "--idle-timeout"},
		{[]string{"privacy", "universe", "--peer", "127.0.0.1:1", "--network", "regtest", "--out", "-", "--from", "-1"}, "--from"},
		{[]string{"demo", "--plot", "x.pdf"}, ".svg or .png"},
		{[]string{"demo", "--used", "500"}, "used"},
	}
	for _, tt := range tests {
		_, stderr, status := runCLI(t, "", tt.args...)
		if status != exitBadInput || !strings.Contains(stderr, tt.want) || strings.Count(stderr, "\n") > 1 {
			t.Errorf("%v: status %d stderr %q, want 2 and %q", tt.args, status, stderr, tt.want)
		}
	}
}

func filterPayloadHex(t *testing.T, f interface{ MarshalBinary() ([]byte, error) }) string {
	b, err := f.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// TestPrivacyAnalyzeCommand analyzes two filters of a known wallet over a
// universe holding its used addresses among random ones.
func TestPrivacyAnalyzeCommand(t *testing.T) {
	dir := t.TempDir()
	w := model.NewWallet(21, 10)
	addrs := w.Addresses(&chaincfg.MainNetParams)
	var u strings.Builder
	for i := 0; i < 20000; i++ {
		fmt.Fprintf(&u, "%040x\n", i*7919+1)
		if i%2000 == 0 {
			fmt.Fprintf(&u, "%s  # wallet\n", addrs[i/2000])
		}
	}
	universe := filepath.Join(dir, "universe.txt")
	os.WriteFile(universe, []byte(u.String()), 0o644)
	f1 := filepath.Join(dir, "f1.hex")
	os.WriteFile(f1, []byte(filterPayloadHex(t, w.Filter(0.001, 0, 1))+"\n"), 0o644)
	f2 := filterPayloadHex(t, w.Filter(0.001, 0, 2))

	stdout, stderr, status := runCLI(t, "", "privacy", "analyze", "--filter", "@"+f1, "--filter", f2, "--universe", universe, "--json")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var r struct {
		UniverseSize           uint64  `json:"universe_size"`
		ExpectedFalsePositives float64 `json:"expected_false_positives"`
		Matched                []struct {
			Candidate   string  `json:"candidate"`
			Probability float64 `json:"probability"`
		} `json:"matched"`
		Intersection []attack.IntersectionStep `json:"intersection_steps"`
	}
	decodeJSON(t, stdout, &r)
	if r.UniverseSize != 20010 || len(r.Intersection) != 2 {
		t.Fatalf("universe %d, %d steps", r.UniverseSize, len(r.Intersection))
	}
	found := map[string]bool{}
	for _, m := range r.Matched {
		found[m.Candidate] = true
		if m.Probability < 0 || m.Probability > 1 {
			t.Errorf("probability %v", m.Probability)
		}
	}
	for _, a := range addrs {
		if !found[a] {
			t.Errorf("wallet address %s not matched", a)
		}
	}
	if !(r.ExpectedFalsePositives < r.Intersection[0].ExpectedFalsePositives) {
		t.Errorf("the second filter did not shrink the false positives")
	}

	// No match at all: "matched" is an empty array, not null.
	empty, stderr, status := runCLI(t, "# one candidate, not the wallet's\n0x"+strings.Repeat("00", 20)+"\r\n", "privacy", "analyze", "--filter", f2, "--universe", "-", "--json")
	if status != exitOK || !strings.Contains(empty, `"matched": []`) {
		t.Errorf("status %d %s: no-match JSON lacks \"matched\": []:\n%s", status, stderr, empty)
	}

	// The same from standard input, in words.
	text, stderr, status := runCLI(t, u.String(), "privacy", "analyze", "--filter", "@"+f1, "--universe", "-")
	if status != exitOK || !strings.Contains(text, "belong to the wallet") || !strings.Contains(text, addrs[0]) {
		t.Errorf("status %d %s:\n%s", status, stderr, text)
	}
}

func TestPrivacyCompareCommand(t *testing.T) {
	stdout, stderr, status := runCLI(t, "", "privacy", "compare", "--addresses", "50", "--json")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var c model.Comparison
	decodeJSON(t, stdout, &c)
	if c.Params.WalletBlocks != 50 || c.BIP157.BlockFPRate <= 0 || c.BIP37.FilterBits == 0 {
		t.Errorf("%+v", c)
	}
	text, _, _ := runCLI(t, "", "privacy", "compare")
	if !strings.Contains(text, "BIP 157/158") || !strings.Contains(text, "expected false positives") {
		t.Errorf("table:\n%s", text)
	}
}

func TestDemoCommand(t *testing.T) {
	dir := t.TempDir()
	plot := filepath.Join(dir, "demo.png")
	stdout, stderr, status := runCLI(t, "", "demo", "--universe-size", "200000", "--plot", plot, "--json")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	var d struct {
		UsedFound int           `json:"used_found"`
		Analysis  attack.Report `json:"analysis"`
		Plot      string        `json:"plot"`
	}
	decodeJSON(t, stdout, &d)
	if d.UsedFound != 20 || d.Analysis.UniverseSize != 200000 || d.Plot != plot {
		t.Errorf("demo: found %d of 20, universe %d, plot %q", d.UsedFound, d.Analysis.UniverseSize, d.Plot)
	}
	if b, err := os.ReadFile(plot); err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
		t.Errorf("plot: %v", err)
	}
	// The default plot goes to the current directory.
	wd, _ := os.Getwd()
	defer os.Chdir(wd)
	os.Chdir(dir)
	text, stderr, status := runCLI(t, "", "demo", "--universe-size", "100000")
	if status != exitOK || !strings.Contains(text, "spvfilter-demo.svg") {
		t.Fatalf("status %d %s:\n%s", status, stderr, text)
	}
	if _, err := os.Stat(filepath.Join(dir, "spvfilter-demo.svg")); err != nil {
		t.Error(err)
	}
}
