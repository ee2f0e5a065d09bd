package main

import (
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBinaryFileToHexFlag gives the raw bytes of a block (as a node or a
// block explorer's "raw" download saves it) to the flags that take one
// hex value. The bytes hold newline bytes, and the error said the file
// "has 7 lines ... (hex wrapped over lines: join them first)", advice
// that does not help; now it says the file is binary, not hex, and how
// to turn it into hex on one line.
func TestBinaryFileToHexFlag(t *testing.T) {
	raw := blockWithNewlines(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "block.bin")
	if err := os.WriteFile(file, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	filter := "038708c6050000000000000000"
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		want  string
	}{
		{"gcs build --block", "", []string{"gcs", "build", "--block", "@" + file},
			"--block: @" + file + " holds binary data, not hex: give the bytes as hex digits on one line (xxd -p " + file + " | tr -d '\\n' prints them so)"},
		{"merkleblock build --block", "", []string{"merkleblock", "build", "--block", "@" + file, "--txid", strings.Repeat("00", 32)},
			"--block: @" + file + " holds binary data, not hex"},
		{"bloom inspect --filter", "", []string{"bloom", "inspect", "--filter", "@" + file},
			"--filter: @" + file + " holds binary data, not hex"},
		{"bloom tx --tx from standard input", string(raw), []string{"bloom", "tx", "--filter", filter, "--tx", "-"},
			"--tx: standard input holds binary data, not hex: give the bytes as hex digits on one line (xxd -p FILE | tr -d '\\n' prints them so)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, status := runCLI(t, tc.stdin, tc.args...)
			if status != exitBadInput || !strings.Contains(stderr, tc.want) || strings.Contains(stderr, "lines") {
				t.Errorf("status %d, stderr %q; want %d and %q", status, stderr, exitBadInput, tc.want)
			}
		})
	}
}

// blockWithNewlines is the first block of BIP 158's test vectors whose
// bytes hold several newline bytes.
func blockWithNewlines(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile("../../testvectors/bip158/testnet-19.json")
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	if err := json.Unmarshal(b, &rows); err != nil {
		t.Fatal(err)
	}
	for _, row := range rows[1:] {
		if s, ok := row[2].(string); ok {
			if raw, err := hex.DecodeString(s); err == nil && strings.Count(string(raw), "\n") >= 2 {
				return raw
			}
		}
	}
	t.Fatal("no block of the vectors holds two newline bytes")
	return nil
}
