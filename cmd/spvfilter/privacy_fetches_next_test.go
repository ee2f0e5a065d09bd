package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPrivacyFetchesSaysWhatNext: the text report ends with what to run
// next: the same run with --json (its flags kept, a path with a space
// quoted), which runs as written, and, beside the labels of a
// simulation, privacy evaluate on that report.
func TestPrivacyFetchesSaysWhatNext(t *testing.T) {
	capturePath, index := writeFetchFixture(t)
	spaced := filepath.Join(t.TempDir(), "my sim")
	if err := os.MkdirAll(spaced, 0o755); err != nil {
		t.Fatal(err)
	}
	withLabels := filepath.Join(spaced, "fetch-capture.jsonl")
	data, err := os.ReadFile(capturePath)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(withLabels, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(spaced, "labels.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		args     []string
		want     string // the --json run suggested
		evaluate string // the evaluate line suggested, "" for none
	}{
		{"plain", []string{"--capture", capturePath, "--index", index},
			"spvfilter privacy fetches --capture " + capturePath + " --index " + index + " --json > fetches.json", ""},
		{"flags kept", []string{"--capture", capturePath, "--index", index, "--client", "s-1", "--intersect", "--cover-target", "0.5", "--show", "3"},
			"spvfilter privacy fetches --capture " + capturePath + " --index " + index + " --client s-1 --intersect --cover-target 0.5 --json > fetches.json", ""},
		{"beside labels, quoted", []string{"--capture", withLabels, "--index", index},
			"spvfilter privacy fetches --capture '" + withLabels + "' --index " + index + " --json > fetches.json",
			"spvfilter privacy evaluate --labels '" + filepath.Join(spaced, "labels.json") + "' --report fetches.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, status := runCLI(t, "", append([]string{"privacy", "fetches"}, c.args...)...)
			_, next, found := strings.Cut(stdout, "\nnext:\n")
			if status != exitOK || !found {
				t.Fatalf("status %d, no next: %s\n%s", status, stdout, stderr)
			}
			lines := strings.Split(strings.TrimSuffix(next, "\n"), "\n")
			if !strings.HasPrefix(lines[0], "  "+c.want) {
				t.Errorf("next %q, want %q", lines[0], c.want)
			}
			if got := len(lines) == 2 && strings.HasPrefix(lines[1], "  "+c.evaluate); (c.evaluate != "") != got || len(lines) > 2 {
				t.Errorf("next %q, want the evaluate line %q", lines, c.evaluate)
			}
			// The --json run suggested runs as written.
			run, _, _ := strings.Cut(strings.TrimPrefix(lines[0], "  spvfilter "), " > ")
			if strings.Contains(run, "'") {
				return // a quoted word: the shell's to split
			}
			if _, stderr, status := runCLI(t, "", strings.Fields(run)...); status != exitOK {
				t.Errorf("%s: status %d: %s", run, status, stderr)
			}
		})
	}
}
