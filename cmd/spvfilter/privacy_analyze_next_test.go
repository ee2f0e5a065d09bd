package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrivacyAnalyzeSaysWhatNext: the text report of privacy analyze ends
// with what to run next, as privacy fetches's does: the same run with
// --json (its flags kept, a path with a space quoted), which runs as
// written; with several sessions not linked, the run with --link; beside
// the labels of a simulation, privacy evaluate on that report; filters
// given in hex too long to repeat are not printed again. Before, analyze
// ended on its last report.
func TestPrivacyAnalyzeSaysWhatNext(t *testing.T) {
	sim := filepath.Join(t.TempDir(), "my sim")
	if _, stderr, status := runCLI(t, "", "privacy", "simulate", "--out", sim, "--wallets", "2", "--blocks", "10", "--fetch-wallets", "1",
		"--noise", "0", "--degenerate", "0", "--txs-per-block", "2", "--addresses", "5"); status != exitOK {
		t.Fatalf("simulate: %s", stderr)
	}
	bare := t.TempDir() // the same capture, no labels beside it
	for _, name := range []string{"capture.jsonl", "universe.txt"} {
		data, err := os.ReadFile(filepath.Join(sim, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(bare, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	capture, universe := filepath.Join(bare, "capture.jsonl"), filepath.Join(bare, "universe.txt")
	long, stderr, status := runCLI(t, "", "bloom", "new", "--elements", "1000", "--fprate", "0.0001")
	if status != exitOK {
		t.Fatalf("bloom new: %s", stderr)
	}
	long = strings.TrimSpace(long)
	q := func(s string) string { return "'" + s + "'" }
	cases := []struct {
		name string
		args []string
		want []string // the lines after next:, each a prefix
	}{
		{"capture", []string{"--capture", capture, "--universe", universe},
			[]string{"spvfilter privacy analyze --capture " + capture + " --universe " + universe + " --json > report.json",
				"spvfilter privacy analyze --capture " + capture + " --universe " + universe + " --link    #"}},
		{"flags kept, linked", []string{"--capture", capture, "--universe", universe, "--link", "--link-threshold", "0.9", "--pair-test", "--max-matches", "7", "--show", "2"},
			[]string{"spvfilter privacy analyze --capture " + capture + " --universe " + universe + " --pair-test --link --link-threshold 0.9 --max-matches 7 --json > report.json"}},
		{"beside labels, quoted", []string{"--capture", filepath.Join(sim, "capture.jsonl"), "--universe", filepath.Join(sim, "universe.txt"), "--link"},
			[]string{"spvfilter privacy analyze --capture " + q(filepath.Join(sim, "capture.jsonl")) + " --universe " + q(filepath.Join(sim, "universe.txt")) + " --link --json > report.json",
				"spvfilter privacy evaluate --labels " + q(filepath.Join(sim, "labels.json")) + " --report report.json"}},
		{"filters", []string{"--filter", corePayload, "--universe", universe},
			[]string{"spvfilter privacy analyze --filter " + corePayload + " --universe " + universe + " --json > report.json"}},
		{"filters too long to repeat", []string{"--filter", long, "--universe", universe},
			[]string{"the same command with --json"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, status := runCLI(t, "", append([]string{"privacy", "analyze"}, c.args...)...)
			_, next, found := strings.Cut(stdout, "\nnext:\n")
			if status != exitOK || !found {
				t.Fatalf("status %d, no next: %s\n%s", status, stdout, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(next, "\n"), "\n")
			if len(lines) != len(c.want) {
				t.Fatalf("next %q, want %d lines %q", lines, len(c.want), c.want)
			}
			for i, w := range c.want {
				if !strings.HasPrefix(lines[i], "  "+w) {
					t.Errorf("next line %d %q, want %q", i+1, lines[i], w)
				}
			}
			// The --json run suggested runs as written.
			run, _, ok := strings.Cut(strings.TrimPrefix(lines[0], "  spvfilter "), " > ")
			if !ok || strings.Contains(run, "'") {
				return // not a command, or a quoted word: the shell's to split
			}
			if out, stderr, status := runCLI(t, "", strings.Fields(run)...); status != exitOK || !strings.HasPrefix(out, "{") {
				t.Errorf("%s: status %d, stdout %.40q: %s", run, status, out, stderr)
			}
		})
	}
}
