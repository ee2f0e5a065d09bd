package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// smallSimulation are the flags of a simulation a CLI test runs in a
// second: every kind of session, payments, filteradd, and a short chain.
func smallSimulation(seed, dir string) []string {
	return []string{"privacy", "simulate", "--seed", seed, "--wallets", "6", "--addresses", "5..40", "--fprate", "1e-4..1e-2",
		"--pay-fraction", "0.5", "--filteradd-fraction", "0.5", "--noise", "2",
		"--blocks", "150", "--txs-per-block", "10", "--fetch-wallets", "2", "--out", dir}
}

// runOK runs a command line that must succeed and returns its output.
func runOK(t *testing.T, args ...string) string {
	t.Helper()
	stdout, stderr, status := runCLI(t, "", args...)
	if status != exitOK {
		t.Fatalf("%v: status %d: %s", args, status, stderr)
	}
	return stdout
}

func readLabels(t *testing.T, file string) *simulate.Labels {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	l, err := simulate.ReadLabels(f)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// matchedBySession returns the candidates each session of an analyze or
// fetches report lists.
func matchedBySession(t *testing.T, report string) map[string]map[string]bool {
	t.Helper()
	var rep struct {
		Clients []struct {
			Session string `json:"session"`
			Matched []struct {
				Candidate string `json:"candidate"`
			} `json:"matched"`
		} `json:"clients"`
	}
	decodeJSON(t, report, &rep)
	matched := map[string]map[string]bool{}
	for _, c := range rep.Clients {
		matched[c.Session] = map[string]bool{}
		for _, m := range c.Matched {
			matched[c.Session][m.Candidate] = true
		}
	}
	return matched
}

// TestPrivacySimulateAnalyzeEvaluate runs simulate, analyze --link
// --intersect and evaluate on a fixed seed, and checks evaluate's figures
// against counts made here from the labels and the report: every
// candidate a wallet session's filters hold is among its matches (the
// files agree with the labels), and the truth evaluate scores against is
// the labels'.
func TestPrivacySimulateAnalyzeEvaluate(t *testing.T) {
	dir := t.TempDir()
	var sum simulateOutput
	decodeJSON(t, runOK(t, append(smallSimulation("101", dir), "--json")...), &sum)
	l := readLabels(t, sum.Files.Labels)
	if sum.SessionCount != len(l.Sessions) || sum.WalletCount != 6 || sum.NoiseSessionCount != 2 || sum.DegenerateSessionCount != 3 {
		t.Fatalf("summary %+v", sum)
	}
	report := filepath.Join(dir, "report.json")
	out := runOK(t, "privacy", "analyze", "--capture", sum.Files.Capture, "--universe", sum.Files.Universe, "--link", "--intersect", "--json")
	if err := os.WriteFile(report, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	matched := matchedBySession(t, out)
	truth, perWallet := 0, map[string]int{}
	for _, s := range l.Sessions {
		if s.Kind != simulate.KindWallet {
			continue
		}
		perWallet[s.Wallet]++
		truth += len(s.Holds)
		for _, a := range s.Holds {
			if !matched[s.ID][a] {
				t.Fatalf("session %s of %s: %s, which its filter holds, is not matched", s.ID, s.Wallet, a)
			}
		}
	}
	var score simulate.Score
	decodeJSON(t, runOK(t, "privacy", "evaluate", "--labels", sum.Files.Labels, "--report", report, "--json"), &score)
	truePairs := 0
	for _, k := range perWallet {
		truePairs += k * (k - 1) / 2
	}
	n := len(l.Sessions)
	switch {
	case score.ReportKind != "analyze" || len(score.Sessions) != n:
		t.Fatalf("kind %q, %d sessions scored of %d", score.ReportKind, len(score.Sessions), n)
	case score.Candidates.TruthCount != truth:
		t.Errorf("truth %d, the labels hold %d", score.Candidates.TruthCount, truth)
	case score.Links == nil || score.Links.PairCount != n*(n-1)/2 || score.Links.TruthCount != truePairs:
		t.Errorf("links %+v, want %d pairs, %d of one wallet", score.Links, n*(n-1)/2, truePairs)
	case score.Intersection == nil || len(score.Intersection.Sessions) != n || score.Intersection.Pure:
		t.Errorf("intersection %+v", score.Intersection)
	case score.Groups == nil || len(score.Targets) < 4:
		t.Errorf("groups %+v, targets %+v", score.Groups, score.Targets)
	}
	text := runOK(t, "privacy", "evaluate", "--labels", sum.Files.Labels, "--report", report)
	for _, want := range []string{"report of analyze", "candidates (", "link pairs", "targets:", "absent or not scored:"} {
		if !strings.Contains(text, want) {
			t.Errorf("text report lacks %q:\n%s", want, text)
		}
	}
}

// TestPrivacyEvaluateRequireTargets: with --require-targets, evaluate
// prints its report and exits with status 1 when a target is not met,
// naming it; a report whose targets have nothing to measure exits 0.
func TestPrivacyEvaluateRequireTargets(t *testing.T) {
	dir := t.TempDir()
	var sum simulateOutput
	decodeJSON(t, runOK(t, append(smallSimulation("102", dir), "--json")...), &sum)
	l := readLabels(t, sum.Files.Labels)
	report := filepath.Join(dir, "report.json")
	// Every candidate of a wallet's session claimed at 0.999 as its
	// wallet's, and one of no wallet too: a wrong claim among too few to
	// establish 95% right.
	w := l.Wallets[0]
	var matched []string
	for _, a := range w.Addresses {
		matched = append(matched, fmt.Sprintf(`{"candidate": %q, "probability": 0.999}`, a))
	}
	matched = append(matched, `{"candidate": "1BoatSLRHtKNngkdXEeobR76b53LETtpyT", "probability": 0.999}`)
	var session string
	for _, s := range l.Sessions {
		if s.Wallet == w.ID {
			session = s.ID
		}
	}
	doc := fmt.Sprintf(`{"clients": [{"session": %q, "matched": [%s]}]}`, session, strings.Join(matched, ","))
	if err := os.WriteFile(report, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, status := runCLI(t, "", "privacy", "evaluate", "--labels", sum.Files.Labels, "--report", report, "--require-targets")
	if status != exitFailure || !strings.Contains(stdout, "NOT MET") ||
		!strings.Contains(stderr, "--require-targets") || !strings.Contains(stderr, "candidates given P >= 0.95: Wilson lower bound") {
		t.Errorf("status %d, stderr %q, stdout:\n%s", status, stderr, stdout)
	}
	// Without the flag, the same report exits 0.
	if _, stderr, status := runCLI(t, "", "privacy", "evaluate", "--labels", sum.Files.Labels, "--report", report); status != exitOK {
		t.Errorf("without --require-targets: status %d: %s", status, stderr)
	}
	// Nothing claimed: every target is n/a, none missed.
	doc = fmt.Sprintf(`{"clients": [{"session": %q, "matched": []}]}`, session)
	if err := os.WriteFile(report, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	if stdout, stderr, status := runCLI(t, "", "privacy", "evaluate", "--labels", sum.Files.Labels, "--report", report, "--require-targets"); status != exitOK {
		t.Errorf("nothing claimed: status %d: %s\n%s", status, stderr, stdout)
	}
}

// TestPrivacySimulateFetchesEvaluate: every wallet script is among its
// sessions' matches (each of its blocks was fetched), and evaluate scores
// against exactly the labels' scripts.
func TestPrivacySimulateFetchesEvaluate(t *testing.T) {
	dir := t.TempDir()
	runOK(t, smallSimulation("102", dir)...)
	l := readLabels(t, filepath.Join(dir, simulate.LabelsFile))
	out := runOK(t, "privacy", "fetches", "--capture", filepath.Join(dir, simulate.FetchCaptureFile), "--index", filepath.Join(dir, simulate.IndexFile), "--json")
	matched := matchedBySession(t, out)
	truth := 0
	for _, s := range l.Fetch.Sessions {
		for _, sc := range s.Scripts {
			truth++
			if !matched[s.ID][sc] {
				t.Fatalf("session %s of %s: its script %s is not matched", s.ID, s.Wallet, sc)
			}
		}
	}
	report := filepath.Join(dir, "fetches.json")
	if err := os.WriteFile(report, []byte(out), 0o600); err != nil {
		t.Fatal(err)
	}
	var score simulate.Score
	stdout, stderr, status := runCLI(t, out, "privacy", "evaluate", "--labels", filepath.Join(dir, simulate.LabelsFile), "--report", "-", "--json")
	if status != exitOK {
		t.Fatalf("status %d: %s", status, stderr)
	}
	decodeJSON(t, stdout, &score)
	if score.ReportKind != "fetches" || len(score.Sessions) != len(l.Fetch.Sessions) || score.Candidates.TruthCount != truth {
		t.Fatalf("kind %q, %d sessions, truth %d (want %d)", score.ReportKind, len(score.Sessions), score.Candidates.TruthCount, truth)
	}
	for _, a := range score.Absent {
		if strings.HasPrefix(a, "not scored: the report: ") {
			t.Errorf("evaluate does not know a field fetches writes: %s", a)
		}
	}
}

// TestPrivacySimulateRegime: --regime sets the regime's defaults, and the
// flags given still win over them.
func TestPrivacySimulateRegime(t *testing.T) {
	dir := t.TempDir()
	runOK(t, "privacy", "simulate", "--regime", "payments", "--seed", "5", "--wallets", "6", "--addresses", "5..40",
		"--blocks", "100", "--txs-per-block", "5", "--fetch-wallets", "1", "--out", dir)
	l := readLabels(t, filepath.Join(dir, simulate.LabelsFile))
	o := l.Options
	if o.Regime != simulate.RegimePayments || o.PayFraction != 0.6 || o.Addresses != (simulate.IntRange{Min: 5, Max: 40}) || o.Wallets != 6 {
		t.Errorf("options %+v: want the payments regime's pay fraction 0.6 and the flags' wallets and addresses", o)
	}
	for _, w := range l.Wallets {
		if n := len(w.Addresses); n < 5 || n > 40 {
			t.Errorf("wallet %s of %d addresses, outside --addresses 5..40", w.ID, n)
		}
	}
}

// TestPrivacySimulateSameSeedSameFiles: the command is deterministic.
func TestPrivacySimulateSameSeedSameFiles(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	runOK(t, smallSimulation("103", a)...)
	runOK(t, smallSimulation("103", b)...)
	for _, name := range []string{simulate.UniverseFile, simulate.CaptureFile, simulate.LabelsFile, simulate.IndexFile, simulate.FetchCaptureFile} {
		x, err1 := os.ReadFile(filepath.Join(a, name))
		y, err2 := os.ReadFile(filepath.Join(b, name))
		if err1 != nil || err2 != nil || !bytes.Equal(x, y) || len(x) == 0 {
			t.Errorf("%s differs between two runs of one seed (%v, %v)", name, err1, err2)
		}
	}
}

// TestPrivacySimulateBadInput: bad input to both commands exits with 2
// and one line on standard error, a JSON object with --json.
func TestPrivacySimulateBadInput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	notJSON := filepath.Join(dir, "bad.json")
	os.WriteFile(file, []byte("x"), 0o600)
	os.WriteFile(notJSON, []byte("{"), 0o600)
	labelsDir := filepath.Join(dir, "sim")
	runOK(t, "privacy", "simulate", "--wallets", "2", "--addresses", "3", "--blocks", "20", "--txs-per-block", "2", "--fetch-wallets", "0", "--fetch-noise", "0",
		"--noise", "0", "--degenerate", "0", "--out", labelsDir)
	labels := filepath.Join(labelsDir, simulate.LabelsFile)
	other := filepath.Join(dir, "other.json")
	os.WriteFile(other, []byte(`{"clients":[{"session":"elsewhere-1","matched":[]}]}`), 0o600)
	cases := [][]string{
		{"privacy", "simulate"},
		{"privacy", "simulate", "--out", file},
		{"privacy", "simulate", "--out", dir, "--sessions", "0..2"},
		{"privacy", "simulate", "--out", dir, "--sessions", "3..1"},
		{"privacy", "simulate", "--out", dir, "--fprate", "2"},
		{"privacy", "simulate", "--out", dir, "--fprate", "0.1..0.01"},
		{"privacy", "simulate", "--out", dir, "--sizing", "python"},
		{"privacy", "simulate", "--out", dir, "--wallets", "-1"},
		{"privacy", "simulate", "--out", dir, "--elements-per-address", "3"},
		{"privacy", "simulate", "--out", dir, "--pay-fraction", "1.5"},
		{"privacy", "simulate", "--out", dir, "--blocks", "5"},
		{"privacy", "simulate", "--out", dir, "--regime", "sometimes"},
		{"privacy", "simulate", "--out", dir, "--regime", "covered", "--cover-target", "1"},
		{"privacy", "simulate", "--out", dir, "extra"},
		{"privacy", "evaluate", "--report", other},
		{"privacy", "evaluate", "--labels", labels},
		{"privacy", "evaluate", "--labels", filepath.Join(dir, "missing"), "--report", other},
		{"privacy", "evaluate", "--labels", notJSON, "--report", other},
		{"privacy", "evaluate", "--labels", dir, "--report", other},
		{"privacy", "evaluate", "--labels", labels, "--report", notJSON},
		{"privacy", "evaluate", "--labels", labels, "--report", other},
		{"privacy", "evaluate", "--labels", labels, "--report", other, "--threshold", "0"},
		{"privacy", "evaluate", "--labels", labels, "--report", other, "--show", "-1"},
	}
	for _, args := range cases {
		t.Run(strings.Join(args[1:], " "), func(t *testing.T) {
			stdout, stderr, status := runCLI(t, "", args...)
			checkOneErrorLine(t, stdout, stderr, status)
			stdout, stderr, status = runCLI(t, "", append(args, "--json")...)
			checkOneErrorLine(t, stdout, stderr, status)
			var obj struct {
				Error    string `json:"error"`
				ExitCode int    `json:"exit_code"`
			}
			if err := json.Unmarshal([]byte(stderr), &obj); err != nil || obj.Error == "" || obj.ExitCode != exitBadInput {
				t.Fatalf("with --json, stderr %q", stderr)
			}
		})
	}
}

// TestPrivacySimulateJSONKeys: the keys of simulate's and evaluate's JSON
// have one type each, also where analyze and fetches use them.
func TestPrivacySimulateJSONKeys(t *testing.T) {
	dir := t.TempDir()
	runOK(t, smallSimulation("104", dir)...)
	at := func(name string) string { return filepath.Join(dir, name) }
	analyze := runOK(t, "privacy", "analyze", "--capture", at(simulate.CaptureFile), "--universe", at(simulate.UniverseFile), "--link", "--json")
	fetches := runOK(t, "privacy", "fetches", "--capture", at(simulate.FetchCaptureFile), "--index", at(simulate.IndexFile), "--json")
	os.WriteFile(at("a.json"), []byte(analyze), 0o600)
	os.WriteFile(at("f.json"), []byte(fetches), 0o600)
	labels, err := os.ReadFile(at(simulate.LabelsFile))
	if err != nil {
		t.Fatal(err)
	}
	docs := map[string]string{
		"analyze": analyze, "fetches": fetches, "labels": string(labels),
		"simulate":         runOK(t, append(smallSimulation("104", filepath.Join(dir, "again")), "--json")...),
		"evaluate analyze": runOK(t, "privacy", "evaluate", "--labels", at(simulate.LabelsFile), "--report", at("a.json"), "--json"),
		"evaluate fetches": runOK(t, "privacy", "evaluate", "--labels", at(simulate.LabelsFile), "--report", at("f.json"), "--json"),
		"model":            runOK(t, "privacy", "model", "--json"),
	}
	types := map[string]map[string]string{}
	for where, text := range docs {
		var doc any
		if err := json.Unmarshal([]byte(text), &doc); err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		walkJSON(doc, func(key, typ string) {
			if types[key] == nil {
				types[key] = map[string]string{}
			}
			types[key][typ] = where
		})
	}
	// The labels list a wallet's "addresses", which the model's parameters
	// echo as the count its flag takes (the labels are a file, not a
	// result of the CLI's vocabulary).
	existing := map[string]bool{"addresses": true}
	for key, byType := range types {
		if len(byType) > 1 && !existing[key] {
			t.Errorf("key %q has several JSON types: %v", key, byType)
		}
	}
}

// TestPrivacySimulateHelp: the help teaches by example.
func TestPrivacySimulateHelp(t *testing.T) {
	for _, cmd := range []string{"simulate", "evaluate"} {
		out := runOK(t, "privacy", cmd, "--help")
		if !strings.Contains(out, "spvfilter privacy evaluate --labels") || !strings.Contains(out, "Examples:") {
			t.Errorf("%s --help:\n%s", cmd, out)
		}
	}
}

// TestPrivacySimulateForce: --force replaces an earlier simulation in
// --out and removes the files this one does not write, so that no file of
// another seed is left beside the new labels.
func TestPrivacySimulateForce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "sim")
	runOK(t, smallSimulation("7", dir)...)
	noChain := []string{"privacy", "simulate", "--seed", "8", "--wallets", "3", "--blocks", "20", "--fetch-wallets", "0", "--fetch-noise", "0", "--out", dir}
	_, stderr, status := runCLI(t, "", noChain...)
	if status != exitBadInput || !strings.Contains(stderr, "--force") {
		t.Fatalf("without --force: status %d, %q", status, stderr)
	}
	runOK(t, append(noChain, "--force")...)
	for _, name := range []string{"chain.idx", "fetch-capture.jsonl"} {
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s of the earlier simulation left in --out: %v", name, err)
		}
	}
	if l := readLabels(t, filepath.Join(dir, "labels.json")); l.Options.Seed != 8 {
		t.Fatalf("labels of seed %d", l.Options.Seed)
	}
}

// TestSimulateJointLimitsNameTheirFlags: a limit of privacy simulate that
// two flags set together names both, with their values, and the value
// that fits. Before: "--decoys 15: not in 0..1000 and below half the
// blocks" (neither --blocks nor its value), and "--blocks 200000: blocks
// of 50 transactions: more than 2000000 in all" (not --txs-per-block).
func TestSimulateJointLimitsNameTheirFlags(t *testing.T) {
	out := filepath.Join(t.TempDir(), "sim")
	sim := func(args ...string) []string { return append([]string{"privacy", "simulate", "--out", out}, args...) }
	old := []string{"below half the blocks", "in all"}
	runRows(t, []contractRow{
		{name: "decoys above half the default blocks", args: sim("--decoys", "600", "--fetch-wallets", "1"), status: exitBadInput,
			stderr: []string{"spvfilter: --decoys 600: want a whole number from 0 to 499 (a session's decoys are fewer than half the --blocks 1000), such as --decoys 3\n"}, notInErr: old},
		{name: "decoys above half the blocks given", args: sim("--blocks", "20", "--decoys", "15", "--fetch-wallets", "1"), status: exitBadInput,
			stderr: []string{"spvfilter: --decoys 15: want a whole number from 0 to 9 (a session's decoys are fewer than half the --blocks 20), such as --decoys 3\n"}, notInErr: old},
		{name: "decoys above their own limit", args: sim("--blocks", "10000", "--decoys", "1500", "--fetch-wallets", "1"), status: exitBadInput,
			stderr: []string{"spvfilter: --decoys 1500: want a whole number from 0 to 1000, such as --decoys 3\n"}, notInErr: append(old, "--blocks")},
		{name: "blocks of the default transactions", args: sim("--blocks", "200000"), status: exitBadInput,
			stderr: []string{"spvfilter: --blocks 200000: with --txs-per-block 50, more than the 2000000 transactions a simulated chain holds: give at most 40000 blocks"}, notInErr: old},
		{name: "one wallet with the default pay fraction", args: sim("--wallets", "1"), status: exitBadInput,
			stderr: []string{"spvfilter: --wallets 1: the default --pay-fraction 0.2 needs two wallets or more: give --wallets 2 or more, or --pay-fraction 0\n"}},
		{name: "one wallet with a regime's pay fraction", args: sim("--wallets", "1", "--regime", "payments"), status: exitBadInput,
			stderr: []string{"spvfilter: --wallets 1: the --regime payments default --pay-fraction"}, notInErr: []string{"spvfilter: --pay-fraction"}},
		{name: "one wallet with a pay fraction given", args: sim("--wallets", "1", "--pay-fraction", "0.5"), status: exitBadInput,
			stderr: []string{"spvfilter: --pay-fraction 0.5: a wallet can only pay another: it needs two wallets"}},
		{name: "blocks of the transactions given", args: sim("--blocks", "5000", "--txs-per-block", "1000"), status: exitBadInput,
			stderr: []string{"spvfilter: --blocks 5000: with --txs-per-block 1000, more than the 2000000 transactions a simulated chain holds: give at most 2000 blocks"}, notInErr: old},
	})
}
