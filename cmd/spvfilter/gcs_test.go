package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"
)

// gcsVector is one row of the BIP 158 test vectors
// (testvectors/bip158/testnet-19.json).
type gcsVector struct {
	Height      int
	BlockHash   string
	Block       string
	PrevScripts []string
	PrevHeader  string
	Filter      string
	Header      string
}

func loadGCSVectors(t *testing.T) []gcsVector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "testvectors", "bip158", "testnet-19.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]any
	if err := json.Unmarshal(data, &rows); err != nil {
		t.Fatal(err)
	}
	var out []gcsVector
	for _, r := range rows[1:] {
		v := gcsVector{
			Height:     int(r[0].(float64)),
			BlockHash:  r[1].(string),
			Block:      r[2].(string),
			PrevHeader: r[4].(string),
			Filter:     r[5].(string),
			Header:     r[6].(string),
		}
		for _, s := range r[3].([]any) {
			v.PrevScripts = append(v.PrevScripts, s.(string))
		}
		out = append(out, v)
	}
	return out
}

// TestGCSVectorsEndToEnd runs every BIP 158 vector row through build (the
// block read from a file), header, match and inspect.
func TestGCSVectorsEndToEnd(t *testing.T) {
	rows := loadGCSVectors(t)
	if len(rows) != 10 {
		t.Fatalf("%d rows", len(rows))
	}
	dir := t.TempDir()
	for _, v := range rows {
		blockFile := filepath.Join(dir, "block.hex")
		if err := os.WriteFile(blockFile, []byte(v.Block+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		args := []string{"gcs", "build", "--block", "@" + blockFile}
		for _, s := range v.PrevScripts {
			args = append(args, "--prevout-script", s)
		}
		stdout, stderr, status := runCLI(t, "", args...)
		if status != exitOK || stdout != v.Filter+"\n" {
			t.Fatalf("height %d: build: status %d, stdout %q, stderr %q; want %s", v.Height, status, stdout, stderr, v.Filter)
		}

		args = append(args, "--prev-header", v.PrevHeader, "--json")
		stdout, stderr, status = runCLI(t, "", args...)
		if status != exitOK {
			t.Fatalf("height %d: build --json: status %d, %s", v.Height, status, stderr)
		}
		var got struct {
			BlockHash  string `json:"block_hash"`
			N          uint32 `json:"item_count"`
			Filter     string `json:"filter"`
			FilterHash string `json:"filter_hash"`
			Header     string `json:"header"`
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("height %d: %v in %q", v.Height, err, stdout)
		}
		if got.BlockHash != v.BlockHash || got.Filter != v.Filter || got.Header != v.Header || len(got.FilterHash) != 64 {
			t.Fatalf("height %d: build --json = %+v", v.Height, got)
		}

		stdout, _, status = runCLI(t, "", "gcs", "header", "--filter", v.Filter, "--prev-header", v.PrevHeader)
		if status != exitOK || stdout != v.Header+"\n" {
			t.Fatalf("height %d: header = %q, want %s", v.Height, stdout, v.Header)
		}

		stdout, _, status = runCLI(t, "", "gcs", "inspect", "--filter", v.Filter, "--json")
		var insp struct {
			N          uint32   `json:"item_count"`
			Bytes      int      `json:"serialized_bytes"`
			FP         *float64 `json:"false_positive_rate"`
			FilterHash string   `json:"filter_hash"`
		}
		if status != exitOK || json.Unmarshal([]byte(stdout), &insp) != nil {
			t.Fatalf("height %d: inspect: %d %q", v.Height, status, stdout)
		}
		// An empty filter matches nothing: no rate (null), else 1/M.
		fpRight := insp.FP == nil
		if got.N > 0 {
			fpRight = insp.FP != nil && *insp.FP == 1.0/784931
		}
		if insp.N != got.N || insp.Bytes != len(v.Filter)/2 || !fpRight || insp.FilterHash != got.FilterHash {
			t.Fatalf("height %d: inspect: %d %q", v.Height, status, stdout)
		}

		// Every non-empty previous output script matches; a script
		// not in the block does not.
		var elems []string
		for _, s := range v.PrevScripts {
			if s != "" {
				elems = append(elems, s)
			}
		}
		elems = append(elems, "51ab51ab51ab")
		stdout, stderr, status = runCLI(t, "", append([]string{"gcs", "match", "--filter", v.Filter, "--block-hash", v.BlockHash}, elems...)...)
		if status != exitOK {
			t.Fatalf("height %d: match: %s", v.Height, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
		if len(lines) != len(elems) {
			t.Fatalf("height %d: match printed %q", v.Height, stdout)
		}
		for i, e := range elems {
			want := e + " true"
			if i == len(elems)-1 {
				want = e + " false"
			}
			if lines[i] != want {
				t.Errorf("height %d: line %q, want %q", v.Height, lines[i], want)
			}
		}
	}
}

func TestGCSMatchCoinbaseScript(t *testing.T) {
	// Block 2 of the vectors: its coinbase pays this script.
	const script = "21038a7f6ef1c8ca0c588aa53fa860128077c9e6c11e6830f4d7ee4e763a56b7718fac"
	stdout, _, status := runCLI(t, "", "gcs", "match", "--json", "--filter", "0174a170",
		"--block-hash", "000000006c02c8ea6e4ff69651f7fcde348fb9d557a06e6957b65552002a7820", script)
	var got gcsMatchJSON
	if status != exitOK || json.Unmarshal([]byte(stdout), &got) != nil || !got.Any ||
		len(got.Results) != 1 || got.Results[0] != (gcsElementResult{script, true}) {
		t.Fatalf("status %d, %q", status, stdout)
	}
	// Under another block's key the script does not match.
	stdout, _, _ = runCLI(t, "", "gcs", "match", "--filter", "0174a170",
		"--block-hash", "000000008b896e272758da5297bcd98fdc6d97c9b765ecec401e286dc1fdbe10", script)
	if stdout != script+" false\n" {
		t.Fatalf("wrong key: %q", stdout)
	}
}

func TestGCSBadInput(t *testing.T) {
	genesis := loadGCSVectors(t)[0].Block
	hash := "000000006c02c8ea6e4ff69651f7fcde348fb9d557a06e6957b65552002a7820"
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"filter with extra byte", []string{"gcs", "inspect", "--filter", "0174a17000"}, "trailing data"},
		{"filter with bad padding", []string{"gcs", "inspect", "--filter", "0174a171"}, "padding"},
		{"filter N too large", []string{"gcs", "inspect", "--filter", "ff0000000001000000"}, "more than a filter holds"},
		{"filter truncated", []string{"gcs", "header", "--filter", "02ff", "--prev-header", hash}, "--filter"},
		{"filter not hex", []string{"gcs", "inspect", "--filter", "zz"}, "invalid hex"},
		{"missing filter", []string{"gcs", "inspect"}, "--filter is required"},
		{"short block hash", []string{"gcs", "match", "--filter", "00", "--block-hash", "00ff", "00"}, "32"},
		{"no elements", []string{"gcs", "match", "--filter", "00", "--block-hash", hash}, "ELEMENT_HEX: give at least one element"},
		{"bad element", []string{"gcs", "match", "--filter", "00", "--block-hash", hash, "0"}, "element 1"},
		{"short prev header", []string{"gcs", "header", "--filter", "00", "--prev-header", "00"}, "--prev-header"},
		{"missing block", []string{"gcs", "build"}, "--block is required"},
		{"bad block", []string{"gcs", "build", "--block", "0100"}, "--block: 2 bytes, not a whole block: the data end too early"},
		{"bad prevout script", []string{"gcs", "build", "--block", genesis, "--prevout-script", "x"}, "--prevout-script 1"},
		{"block with trailing bytes", []string{"gcs", "build", "--block", genesis + "00"}, "after the end"},
		{"short genesis prev header", []string{"gcs", "build", "--block", genesis, "--prev-header", "0000"}, "--prev-header"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, status := runCLI(t, "", tt.args...)
			if status != exitBadInput {
				t.Fatalf("status %d, want %d (stderr %q)", status, exitBadInput, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("stderr %q, want one line mentioning %q", stderr, tt.stderr)
			}
		})
	}
}

func TestGCSHelpHasExamples(t *testing.T) {
	for _, sub := range []string{"build", "match", "header", "inspect"} {
		stdout, _, status := runCLI(t, "", "gcs", sub, "--help")
		if status != exitOK || !strings.Contains(stdout, "Examples:") || !strings.Contains(stdout, "spvfilter gcs "+sub) {
			t.Errorf("gcs %s --help: status %d, %q", sub, status, stdout)
		}
	}
}

// gcsVectorAt returns the BIP 158 vector row of a height.
func gcsVectorAt(t *testing.T, height int) gcsVector {
	t.Helper()
	for _, v := range loadGCSVectors(t) {
		if v.Height == height {
			return v
		}
	}
	t.Fatalf("no vector at height %d", height)
	return gcsVector{}
}

// TestGCSBuildChecksPrevoutCount (Why 3): without the scripts of the outputs
// a block spends, build used to print a filter BIP 158 does not give. The
// count of --prevout-script values must match the block's inputs;
// --no-prevouts builds the outputs-only filter on purpose, with a warning.
func TestGCSBuildChecksPrevoutCount(t *testing.T) {
	v := gcsVectorAt(t, 49291)
	raw, err := hex.DecodeString(v.Block)
	if err != nil {
		t.Fatal(err)
	}
	var block wire.MsgBlock
	if err := block.Deserialize(bytes.NewReader(raw)); err != nil {
		t.Fatal(err)
	}
	inputs := 0
	for _, tx := range block.Transactions[1:] {
		inputs += len(tx.TxIn)
	}
	if inputs != len(v.PrevScripts) {
		t.Fatalf("vector: %d inputs, %d scripts", inputs, len(v.PrevScripts))
	}
	dir := t.TempDir()
	blockFile := filepath.Join(dir, "testnet-49291.hex")
	if err := os.WriteFile(blockFile, []byte(v.Block+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, status := runCLI(t, "", "gcs", "build", "--block", "@"+blockFile)
	want := fmt.Sprintf("has %d inputs after the coinbase but 0 --prevout-script values", inputs)
	if status != exitBadInput || stdout != "" || !strings.Contains(stderr, want) || !strings.Contains(stderr, "--no-prevouts") {
		t.Fatalf("without prevouts: status %d, stdout %q, stderr %q; want %q", status, stdout, stderr, want)
	}
	extra := []string{"gcs", "build", "--block", "@" + blockFile}
	for _, s := range append(v.PrevScripts, "51") {
		extra = append(extra, "--prevout-script", s)
	}
	_, stderr, status = runCLI(t, "", extra...)
	if status != exitBadInput || !strings.Contains(stderr, fmt.Sprintf("%d inputs after the coinbase but %d --prevout-script", inputs, inputs+1)) {
		t.Fatalf("one script too many: status %d, %q", status, stderr)
	}

	// The scripts from a file, one per line: BIP 158's filter.
	scripts := filepath.Join(dir, "prevouts.txt")
	if err := os.WriteFile(scripts, []byte("# spent scripts\n"+strings.Join(v.PrevScripts, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, status = runCLI(t, "", "gcs", "build", "--block", "@"+blockFile, "--prevout-script", "@"+scripts)
	if status != exitOK || stdout != v.Filter+"\n" || !strings.HasPrefix(v.Filter, "0afbc292") {
		t.Fatalf("with prevouts: status %d, %q, stderr %q; want %s", status, stdout, stderr, v.Filter)
	}

	stdout, stderr, status = runCLI(t, "", "gcs", "build", "--block", "@"+blockFile, "--no-prevouts", "--json")
	var out struct {
		Filter   string
		Warnings []string
	}
	decodeJSON(t, stdout, &out)
	if status != exitOK || out.Filter != "028c0838230580" || len(out.Warnings) != 1 ||
		!strings.Contains(out.Warnings[0], "not the block's BIP 158 basic filter") || stderr != "" {
		t.Fatalf("--no-prevouts: status %d, %+v, stderr %q", status, out, stderr)
	}
}

// TestGCSBuildPrevoutFileEmptyScripts: in a file, "" stands for an empty
// script, which counts as an input and is not in the filter.
func TestGCSBuildPrevoutFileEmptyScripts(t *testing.T) {
	v := gcsVectorAt(t, 180480)
	lines := make([]string, len(v.PrevScripts))
	empty := 0
	for i, s := range v.PrevScripts {
		lines[i] = s
		if s == "" {
			lines[i] = `""`
			empty++
		}
	}
	if empty == 0 {
		t.Fatal("vector has no empty script")
	}
	scripts := filepath.Join(t.TempDir(), "prevouts.txt")
	if err := os.WriteFile(scripts, []byte(strings.Join(lines, "\r\n")), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, status := runCLI(t, "", "gcs", "build", "--block", v.Block, "--prevout-script", "@"+scripts)
	if status != exitOK || stdout != v.Filter+"\n" {
		t.Fatalf("status %d, %q, stderr %q; want %s", status, stdout, stderr, v.Filter)
	}
}

// TestGCSBuildHelpFirstExample: the help's first example gives the spent
// scripts, not the mistake of leaving them out.
func TestGCSBuildHelpFirstExample(t *testing.T) {
	help, _, _ := runCLI(t, "", "gcs", "build", "--help")
	_, after, ok := strings.Cut(help, "Examples:\n")
	if !ok {
		t.Fatalf("no example in\n%s", help)
	}
	first, _, _ := strings.Cut(after, "\n")
	if !strings.Contains(first, "--prevout-script") && !strings.Contains(first, "--no-prevouts") {
		t.Fatalf("first example %q builds a filter without the spent scripts", first)
	}
}

// TestGCSBuildPrevHeaderText: a --prev-header given without --json is
// not dropped without a word: standard output keeps the filter's one
// line, and a warning names the header and --json; with --json the
// header is in the object and no warning is given.
func TestGCSBuildPrevHeaderText(t *testing.T) {
	v := loadGCSVectors(t)[3]
	build := []string{"gcs", "build", "--block", v.Block}
	for _, s := range v.PrevScripts {
		build = append(build, "--prevout-script", s)
	}
	withPrev := append(slices.Clone(build), "--prev-header", v.PrevHeader)
	named := "warning: --prev-header: the filter header is " + v.Header + "; without --json build prints the filter alone"
	tests := []struct {
		name         string
		args         []string
		stdout, warn string // warn "": no warning at all
	}{
		{"text with --prev-header", withPrev, v.Filter + "\n", named},
		{"text without --prev-header", build, v.Filter + "\n", ""},
		{"--json with --prev-header", append(slices.Clone(withPrev), "--json"), `"header": "` + v.Header + `"`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, status := runCLI(t, "", tt.args...)
			if status != exitOK || !strings.Contains(stdout, tt.stdout) || strings.HasSuffix(tt.stdout, "\n") && stdout != tt.stdout {
				t.Fatalf("status %d, stdout %q, stderr %q; want %q", status, stdout, stderr, tt.stdout)
			}
			if tt.warn == "" && stderr != "" || !strings.Contains(stderr, tt.warn) {
				t.Errorf("stderr %q, want %q", stderr, tt.warn)
			}
			if strings.Contains(stdout, `"warnings": [`+"\n") {
				t.Errorf("--json warns: %s", stdout)
			}
		})
	}
}
