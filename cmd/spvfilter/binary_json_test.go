package main

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// randomBytes are n bytes drawn from seed.
func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

// writeTestFiles writes each file of files, by its name, into dir.
func writeTestFiles(t *testing.T, dir string, files map[string][]byte) {
	t.Helper()
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// TestJSONFileOfBinaryData: a file of binary data given where a JSON
// file is wanted (privacy evaluate's --labels and --report, lab's
// --vectors) is refused as binary data, not JSON, as --capture refuses
// it, naming the flag and what to give. Before, it was "not JSON: 'm' at
// byte 1 cannot be there", the character whatever the file began with.
func TestJSONFileOfBinaryData(t *testing.T) {
	dir := t.TempDir()
	random := randomBytes(3, 5000)
	random[0] = 'm'
	// Binary data that opens as JSON might: read to its end first.
	brace := append([]byte("{\x00\x01"), random...)
	writeTestFiles(t, dir, map[string][]byte{"random.bin": random, "zeros.bin": make([]byte, 100000), "brace.bin": brace})
	sim := filepath.Join(dir, "sim")
	runOK(t, "privacy", "simulate", "--wallets", "2", "--addresses", "3", "--blocks", "20", "--txs-per-block", "2",
		"--fetch-wallets", "0", "--fetch-noise", "0", "--noise", "0", "--degenerate", "0", "--out", sim)
	labels := filepath.Join(sim, simulate.LabelsFile)
	for _, tc := range []struct {
		flag, file, want string
	}{
		{"--labels", "random.bin", ": binary data, not JSON; want the labels.json that privacy simulate writes"},
		{"--labels", "zeros.bin", ": binary data, not JSON; want the labels.json that privacy simulate writes"},
		{"--labels", "brace.bin", ": binary data, not JSON; want the labels.json that privacy simulate writes"},
		{"--report", "random.bin", ": binary data, not JSON; want "},
		{"--report", "brace.bin", ": binary data, not JSON; want "},
		{"--vectors", "random.bin", ": binary data, not JSON (want the JSON file of BIP 158's test vectors"},
		{"--vectors", "zeros.bin", ": binary data, not JSON (want the JSON file of BIP 158's test vectors"},
		{"--vectors", "brace.bin", ": binary data, not JSON (want the JSON file of BIP 158's test vectors"},
	} {
		t.Run(tc.flag+" "+tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			var args []string
			switch tc.flag {
			case "--labels":
				args = []string{"privacy", "evaluate", "--labels", path, "--report", filepath.Join(dir, "missing.json")}
			case "--report":
				args = []string{"privacy", "evaluate", "--labels", labels, "--report", path}
			default:
				args = []string{"lab", "--vectors", path}
			}
			_, stderr, status := runCLI(t, "", args...)
			if want := "spvfilter: " + tc.flag + " " + path + tc.want; status != exitBadInput || !strings.HasPrefix(stderr, want) {
				t.Errorf("status %d, stderr %q\nwant %d and %q", status, stderr, exitBadInput, want)
			}
		})
	}
}
