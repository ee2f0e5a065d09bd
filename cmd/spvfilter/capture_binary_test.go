package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCaptureOfBinaryData: a --capture file of binary data (random bytes,
// zeros, as /dev/zero or /dev/urandom give) is refused by privacy analyze
// and privacy fetches as binary data, not a capture, naming --capture and
// what to give. Before, it was "line 1: not JSON: 'X' at byte 1 cannot be
// there", X a random character, or for zeros "line 1: line longer than
// 76096 bytes". A capture whose first lines are records and whose end is
// zeros (a crash) still names the line at fault.
func TestCaptureOfBinaryData(t *testing.T) {
	dir := t.TempDir()
	random := randomBytes(1, 5000)
	record := `{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","command":"filterclear"}` + "\n"
	files := map[string][]byte{
		"random.bin": random,
		"zeros.bin":  make([]byte, 200000),
		"torn.jsonl": append([]byte(record+record), make([]byte, 300)...),
	}
	writeTestFiles(t, dir, files)
	universe := filepath.Join(dir, "universe.txt")
	if err := os.WriteFile(universe, []byte("bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(dir, "missing.idx") // the capture is read first
	binary := ": binary data, not a capture: want the JSON lines privacy capture writes, one record per line"
	for _, tc := range []struct {
		name, command, file, want string
	}{
		{"analyze, random bytes", "analyze", "random.bin", binary},
		{"analyze, zeros", "analyze", "zeros.bin", binary},
		{"fetches, random bytes", "fetches", "random.bin", binary},
		{"fetches, zeros", "fetches", "zeros.bin", binary},
		{"analyze, records then zeros", "analyze", "torn.jsonl", ", line 3: not JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			args := []string{"privacy", "analyze", "--capture", path, "--universe", universe}
			if tc.command == "fetches" {
				args = []string{"privacy", "fetches", "--capture", path, "--index", index}
			}
			_, stderr, status := runCLI(t, "", args...)
			if status != exitBadInput || !strings.HasPrefix(stderr, "spvfilter: --capture "+path+tc.want) {
				t.Errorf("status %d, stderr %q\nwant %d and --capture %s%s", status, stderr, exitBadInput, path, tc.want)
			}
			if bytes.ContainsAny([]byte(stderr), "\x00") {
				t.Errorf("stderr holds a NUL: %q", stderr)
			}
		})
	}
}
