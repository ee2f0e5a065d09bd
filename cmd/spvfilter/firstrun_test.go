package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFirstRunMistakes: mistakes a first run of every command makes (a
// flag named as another command names it, a capture cut short, a count
// given to a flag that takes a file, a capture field of the wrong kind)
// are bad input that names the flag and says what is taken, and cobra's
// commands (completion, help) show examples. Before, the flag was said to
// be no flag with no hint, the cut line was said to end too early with
// nothing wanted, the count was "no such file or directory", a field was
// named twice and a fraction was refused where "a number" was wanted, and
// completion and help had no example.
func TestFirstRunMistakes(t *testing.T) {
	dir := t.TempDir()
	const record = `{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","session":"s1","command":"filterload","filterload":"174940d10c277befcb99c42247d4726c4a1fce8e9302111a070000001b6a5a9a02"}`
	files := map[string]string{
		"cut.jsonl":     record + "\n" + record[:60],
		"universe.txt":  "# candidates of regtest blocks 0..1\n" + coreElem1 + " # height 1\n",
		"type.jsonl":    `{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","command":"getcfilters","filter_type":1.5,"start_height":14,"stop_hash":"6b3ad459f172f5b71abedc48ba41ce8074df1f7bf83c0326c0cc1e36eb709413"}` + "\n",
		"command.jsonl": `{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","command":7}` + "\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	cut, universe := filepath.Join(dir, "cut.jsonl"), filepath.Join(dir, "universe.txt")
	// Files beyond what an argument reads: raw bytes (a blk*.dat file of
	// Bitcoin Core, say), and hex.
	bigBinary, bigHex := filepath.Join(dir, "big.dat"), filepath.Join(dir, "big.hex")
	if err := os.WriteFile(bigBinary, make([]byte, maxHexInput+1), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bigHex, bytes.Repeat([]byte("00"), maxHexInput/2+1), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		args   []string
		status int
		want   []string // in the error (or, exit 0, the output)
		not    []string // not in it
	}{
		{"fetches --universe", []string{"privacy", "fetches", "--capture", cut, "--universe", universe},
			exitBadInput, []string{"--universe: no such flag (did you mean --index?)"}, nil},
		{"fetches --chain", []string{"privacy", "fetches", "--capture", cut, "--chain", "chain.idx"},
			exitBadInput, []string{"--chain: no such flag (did you mean --index?)"}, nil},
		{"analyze --index", []string{"privacy", "analyze", "--capture", cut, "--index", "chain.idx"},
			exitBadInput, []string{"--index: no such flag (did you mean --universe?)"}, nil},
		{"merkleblock verify --proof", []string{"merkleblock", "verify", "--proof", "00"},
			exitBadInput, []string{"--proof: no such flag (did you mean --merkleblock?)"}, nil},
		{"demo --out", []string{"demo", "--out", "x.svg"},
			exitBadInput, []string{"--out: no such flag (did you mean --plot?)"}, nil},
		{"analyze cut capture", []string{"privacy", "analyze", "--capture", cut, "--universe", universe},
			exitBadInput, []string{"--capture " + cut + ", line 2: the record is cut short", "want the JSON lines privacy capture writes, one whole record per line"}, nil},
		{"fetches cut capture", []string{"privacy", "fetches", "--capture", cut, "--index", filepath.Join(dir, "none.idx")},
			exitBadInput, []string{"line 2: the record is cut short"}, nil},
		{"lab --blocks count", []string{"lab", "--blocks", "10"},
			exitBadInput, []string{"--blocks 10: no such file or directory: --blocks takes a block file that lab --save-blocks wrote, not a count (with nodes, --from and --to choose the blocks)"}, nil},
		{"scan --birthday", []string{"scan", "--network", "regtest", "--connect", "127.0.0.1:1", "--watch", "00", "--birthday", "2024-01-01"},
			exitBadInput, []string{"--birthday: no such flag (did you mean --from HEIGHT?)"}, nil},
		{"block hash of zeros", []string{"gcs", "match", "--filter", "00", "--block-hash", "00", "00"},
			exitBadInput, []string{"--block-hash: 1 byte, a hash has 32 (64 hex digits, as RPC shows it)"}, []string{"zero hash", "genesis"}},
		{"previous header of zeros", []string{"gcs", "header", "--filter", "00", "--prev-header", "00"},
			exitBadInput, []string{"--prev-header: 1 byte, a hash has 32", "the zero hash (the genesis block's previous header) is 64 zeros"}, nil},
		{"capture field of a fraction", []string{"privacy", "fetches", "--capture", filepath.Join(dir, "type.jsonl"), "--index", filepath.Join(dir, "none.idx")},
			exitBadInput, []string{`line 1, field "filter_type": it holds a JSON number 1.5 where a whole number from 0 to 255 is wanted`}, nil},
		{"capture field of another kind", []string{"privacy", "analyze", "--capture", filepath.Join(dir, "command.jsonl"), "--universe", universe},
			exitBadInput, []string{`line 1, field "command": it holds a JSON number where a string is wanted`}, nil},
		{"binary file too long", []string{"gcs", "build", "--block", "@" + bigBinary},
			exitBadInput, []string{"--block: @" + bigBinary + " holds binary data, not hex, and is longer than the 16777216 bytes (16 MiB) an argument reads: give one value as hex"}, nil},
		{"hex file too long", []string{"bloom", "match", "--filter", corePayload, "@" + bigHex},
			exitBadInput, []string{"element 1: @" + bigHex + " is longer than the 16777216 bytes (16 MiB) an argument reads: give one value as hex, or items one per line"}, nil},
		{"index over a universe", []string{"privacy", "universe", "--peer", "127.0.0.1:1", "--network", "regtest", "--out", filepath.Join(dir, "u.txt"), "--index", universe},
			exitBadInput, []string{"--index " + universe + ": the file exists, and holds a universe of candidates (privacy universe, privacy simulate) (give --force to replace it)"}, nil},
		{"sweep range backwards", []string{"privacy", "model", "--sweep", "addresses=5..1"},
			exitBadInput, []string{`addresses: "5..1": range end below its start: want START..END with END at least START`}, nil},
		{"sweep step of 0", []string{"privacy", "model", "--sweep", "addresses=1..5:0"},
			exitBadInput, []string{`addresses: "1..5:0": step must be above 0: want START..END:STEP with STEP above 0`}, nil},
		{"completion help", []string{"completion", "--help"}, exitOK, []string{"Examples:\n  source <(spvfilter completion bash)"}, nil},
		{"help help", []string{"help", "--help"}, exitOK, []string{"Examples:\n  spvfilter help scan"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, status := runCLI(t, "", tt.args...)
			got := stderr
			if tt.status == exitOK {
				got = stdout
			}
			for _, w := range tt.want {
				if status != tt.status || !strings.Contains(got, w) {
					t.Errorf("status %d, stdout %q, stderr %q: want status %d and %q", status, stdout, stderr, tt.status, w)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(got, w) {
					t.Errorf("stderr %q: want no %q", stderr, w)
				}
			}
		})
	}
}
