package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmptyCaptureNamesItsCause: a capture file that holds no record, as
// privacy capture leaves when no client connected, is refused by the
// commands that read it naming that likely cause, not only as a file of
// another kind: before, "no record at all: want a capture file of privacy
// capture", said of the very file privacy capture had written.
func TestEmptyCaptureNamesItsCause(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "capture.jsonl")
	universe := filepath.Join(dir, "universe.txt")
	index := filepath.Join(dir, "universe.idx")
	for path, body := range map[string]string{empty: "", universe: "2ND8PB9RrfCaAcjfjP1Y6nAgFd9zWHYX4DN\n", index: "not read\n"} {
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{
		{"privacy", "analyze", "--capture", empty, "--universe", universe},
		{"privacy", "fetches", "--capture", empty, "--index", index},
	} {
		t.Run(args[1], func(t *testing.T) {
			_, stderr, status := runCLI(t, "", args...)
			if status != exitBadInput {
				t.Fatalf("status %d, want %d: %s", status, exitBadInput, stderr)
			}
			for _, want := range []string{"--capture " + empty + ": no record at all", "no client connected", "sent nothing to record"} {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr %q lacks %q", stderr, want)
				}
			}
		})
	}
}
