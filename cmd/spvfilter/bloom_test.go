package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Core's bloom_create_insert_serialize: three elements in a filter for 3
// elements at 1%, flags all.
const (
	coreElem1   = "99108ad8ed9bb6274d3980bab5a85c048f0950c8"
	coreElem2   = "b5a2c786d9ef4658287ced5914b37a1b4aa32eee"
	coreElem3   = "b9300670b4c5366e95b2699e8b18bc75e5f729c5"
	coreMiss    = "19108ad8ed9bb6274d3980bab5a85c048f0950c8"
	corePayload = "03614e9b050000000000000001"
	// coreTx is the transaction of Core's bloom_match test,
	// b4749f017444b051c44dfd2720e88f314ff94f3dd6d56d40ef65854fcd7fff6b.
	coreTx = "01000000010b26e9b7735eb6aabdf358bab62f9816a21ba9ebdb719d5299e88607d722c190000000008b4830450220070aca44506c5cef3a16ed519d7c3c39f8aab192c4e1c90d065f37b8a4af6141022100a8e160b856c2d43d27d8fba71e5aef6405b8643ac4cb7cb3c462aced7f14711a0141046d11fee51b0e60666d5049a9101a72741df480b96ee26488a4d3466b95c9a40ac5eeef87e10a5cd336c19a84565f80fa6c547957b7700ff4dfbdefe76036c339ffffffff021bff3d11000000001976a91404943fdd508053c75000106d3bc6e2754dbcff1988ac2f15de00000000001976a914a266436d2965547608b9e15d9032a7b9d64fa43188ac00000000"
)

func TestBloomNewCoreVector(t *testing.T) {
	stdout, stderr, status := runCLI(t, "", "bloom", "new", "--elements", "3", "--fprate", "0.01", "--flags", "all", coreElem1, coreElem2, coreElem3)
	if status != exitOK || stdout != corePayload+"\n" {
		t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	// With a tweak (Core bloom_create_insert_serialize_with_tweak), and
	// one element read from standard input and one from a file.
	file := filepath.Join(t.TempDir(), "elem.hex")
	if err := os.WriteFile(file, []byte(coreElem3+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, status = runCLI(t, coreElem2, "bloom", "new", "--elements", "3", "--fprate", "0.01", "--tweak", "2147483649", "--flags", "all", coreElem1, "-", "@"+file)
	if status != exitOK || stdout != "03ce4299050000000100008001\n" {
		t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
}

func TestBloomNewJSON(t *testing.T) {
	stdout, _, status := runCLI(t, "", "bloom", "new", "--elements", "2100", "--fprate", "0.1", "--json")
	if status != exitOK {
		t.Fatalf("status %d", status)
	}
	var out struct {
		Payload string `json:"filterload"`
		Stats   struct {
			SizeBytes uint32 `json:"filter_bytes"`
			HashFuncs uint32 `json:"hash_function_count"`
			FlagsName string `json:"flags_name"`
		} `json:"bloom_filter"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	// Core's sizing (btcutil would pick 3 hash functions).
	if out.Stats.SizeBytes != 1258 || out.Stats.HashFuncs != 2 || out.Stats.FlagsName != "none" {
		t.Fatalf("stats %+v", out.Stats)
	}
	if !strings.HasPrefix(out.Payload, "fdea04") || len(out.Payload) != 2*(3+1258+9) {
		t.Fatalf("payload %.20s... of %d hex digits", out.Payload, len(out.Payload))
	}
}

// TestBloomNewSizing: --sizing bitcoinj builds bitcoinj's filter (a
// floating-point hash-function count, and at least 1 byte and 1 hash
// function), the same as Core's for the BIP 37 vector; a bad rule is bad
// input.
func TestBloomNewSizing(t *testing.T) {
	tests := []struct {
		elements, fprate, sizing string
		bytes, hashFuncs         uint32
		status                   int
		stderr                   string
	}{
		{"632", "0.00001", "core", 1893, 15, exitOK, ""},
		{"632", "0.00001", "bitcoinj", 1893, 16, exitOK, ""},
		{"2100", "0.1", "core", 1258, 2, exitOK, ""},
		{"2100", "0.1", "bitcoinj", 1258, 3, exitOK, ""},
		{"1", "0.5", "bitcoinj", 1, 5, exitOK, "bitcoinj's floor of 1 byte"},
		{"1", "0.5", "core", 0, 0, exitBadInput, "0-byte filter"},
		{"632", "0.00001", "electrum", 0, 0, exitBadInput, "want core or bitcoinj"},
	}
	for _, tc := range tests {
		stdout, stderr, status := runCLI(t, "", "bloom", "new", "--elements", tc.elements, "--fprate", tc.fprate, "--sizing", tc.sizing, "--json")
		// An error is on standard error; with --json a warning is in
		// the result alone.
		if status != tc.status || !strings.Contains(stderr+stdout, tc.stderr) || (status == exitOK && stderr != "") {
			t.Errorf("%+v: status %d, stderr %q", tc, status, stderr)
			continue
		}
		if status != exitOK {
			continue
		}
		var out struct {
			Stats struct {
				FilterBytes uint32 `json:"filter_bytes"`
				HashFuncs   uint32 `json:"hash_function_count"`
			} `json:"bloom_filter"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil || out.Stats.FilterBytes != tc.bytes || out.Stats.HashFuncs != tc.hashFuncs {
			t.Errorf("%+v: %+v (%v)", tc, out.Stats, err)
		}
	}
	stdout, _, status := runCLI(t, "", "bloom", "new", "--elements", "3", "--fprate", "0.01", "--flags", "all", "--sizing", "bitcoinj", coreElem1, coreElem2, coreElem3)
	if status != exitOK || stdout != corePayload+"\n" {
		t.Errorf("BIP 37 vector by bitcoinj's rule: status %d, %q", status, stdout)
	}
}

func TestBloomAddMatchInspect(t *testing.T) {
	empty, _, status := runCLI(t, "", "bloom", "new", "--elements", "3", "--fprate", "0.01", "--flags", "all")
	if status != exitOK {
		t.Fatal(status)
	}
	stdout, _, status := runCLI(t, "", "bloom", "add", "--filter", strings.TrimSpace(empty), coreElem1, coreElem2, coreElem3)
	if status != exitOK || stdout != corePayload+"\n" {
		t.Fatalf("add: status %d, %q", status, stdout)
	}
	stdout, _, status = runCLI(t, corePayload, "bloom", "match", "--filter", "-", strings.ToUpper(coreElem1), coreMiss)
	want := coreElem1 + " true\n" + coreMiss + " false\n"
	if status != exitOK || stdout != want {
		t.Fatalf("match: status %d, %q, want %q", status, stdout, want)
	}
	stdout, _, status = runCLI(t, "", "bloom", "match", "--filter", corePayload, coreMiss, "--json")
	if status != exitOK || !strings.Contains(stdout, `"match": false`) {
		t.Fatalf("match --json: status %d, %s", status, stdout)
	}
	stdout, _, status = runCLI(t, "", "bloom", "inspect", "--filter", corePayload)
	for _, s := range []string{"3 bytes (24 bits)", "hash functions:        5", "flags:                 all (1)", "bits set:              12", "overhead ratio:        1.44"} {
		if !strings.Contains(stdout, s) {
			t.Errorf("inspect output lacks %q:\n%s", s, stdout)
		}
	}
	if status != exitOK {
		t.Fatal(status)
	}
	// A full filter: the estimate is infinite, null in JSON.
	stdout, _, status = runCLI(t, "", "bloom", "inspect", "--filter", "02ffff030000000000000000", "--json")
	if status != exitOK || !strings.Contains(stdout, `"estimated_elements": null`) || !strings.Contains(stdout, "every bit is set") {
		t.Fatalf("inspect --json of a full filter: status %d, %s", status, stdout)
	}
	stdout, _, _ = runCLI(t, "", "bloom", "inspect", "--filter", "02ffff030000000000000000")
	if !strings.Contains(stdout, "estimated elements:    infinite") {
		t.Errorf("inspect of a full filter:\n%s", stdout)
	}
}

// TestBloomTx runs Core's bloom_match case "match output address, then the
// spending transaction" through the CLI.
func TestBloomTx(t *testing.T) {
	filter, _, status := runCLI(t, "", "bloom", "new", "--elements", "10", "--fprate", "0.000001", "--flags", "all", "04943fdd508053c75000106d3bc6e2754dbcff19")
	if status != exitOK {
		t.Fatal(status)
	}
	filter = strings.TrimSpace(filter)
	stdout, _, status := runCLI(t, "", "bloom", "tx", "--filter", filter, "--tx", coreTx, "--json")
	var out struct {
		Txid              string
		Relevant, Updated bool
		Filter            string `json:"filterload"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil || status != exitOK {
		t.Fatalf("status %d, %v: %s", status, err, stdout)
	}
	if !out.Relevant || !out.Updated || out.Txid != "b4749f017444b051c44dfd2720e88f314ff94f3dd6d56d40ef65854fcd7fff6b" || out.Filter == filter {
		t.Fatalf("got %+v", out)
	}
	// The updated filter now holds the outpoint b4749f...:0, which the
	// spending transaction e2769b... spends; the original does not.
	for _, c := range []struct {
		filter string
		want   string
	}{{out.Filter, "relevant: true\n"}, {filter, "relevant: false\n"}} {
		stdout, _, status = runCLI(t, "", "bloom", "match", "--filter", c.filter, "6bff7fcd4f8565ef406dd5d63d4ff94f318fe82027fd4dc451b04474019f74b400000000")
		if status != exitOK {
			t.Fatal(status)
		}
		if got := strings.HasSuffix(stdout, "true\n"); got != (c.want == "relevant: true\n") {
			t.Errorf("outpoint in filter %s: %q", c.filter, stdout)
		}
	}
	stdout, _, status = runCLI(t, "", "bloom", "tx", "--filter", filter, "--tx", coreTx)
	if status != exitOK || !strings.HasPrefix(stdout, "relevant: true\ntxid: b4749f01") || !strings.Contains(stdout, "filter: "+out.Filter+"\n") {
		t.Fatalf("status %d: %q", status, stdout)
	}
}

func TestBloomBadInput(t *testing.T) {
	tests := []struct {
		name   string
		args   []string
		stderr string
	}{
		{"no elements", []string{"bloom", "new", "--elements", "0", "--fprate", "0.1"}, "--elements"},
		{"fprate 0", []string{"bloom", "new", "--elements", "3", "--fprate", "0"}, "--fprate"},
		{"fprate 1", []string{"bloom", "new", "--elements", "3", "--fprate", "1"}, "--fprate"},
		{"fprate NaN", []string{"bloom", "new", "--elements", "3", "--fprate", "NaN"}, "--fprate"},
		{"fprate missing", []string{"bloom", "new", "--elements", "3"}, "fprate"},
		{"bad flags", []string{"bloom", "new", "--elements", "3", "--fprate", "0.1", "--flags", "update"}, "--flags"},
		{"negative tweak", []string{"bloom", "new", "--elements", "3", "--fprate", "0.1", "--tweak", "-1"}, "tweak"},
		{"bad element hex", []string{"bloom", "new", "--elements", "3", "--fprate", "0.1", "zz"}, "element 1"},
		{"truncated filter", []string{"bloom", "match", "--filter", "03614e", "00"}, "--filter: 3 bytes are no filterload payload: the length says 3 bytes of filter, so 12 bytes should follow it, and 2 bytes do (a filterload payload is"},
		{"one byte", []string{"bloom", "match", "--filter", "00", "00"}, "--filter: 1 byte is no filterload payload: the length says 0 bytes of filter, so 9 bytes should follow it, and 0 bytes do"},
		{"cut in its length", []string{"bloom", "inspect", "--filter", "ffff"}, "--filter: 2 bytes are no filterload payload: they end inside the length"},
		{"oversized filter", []string{"bloom", "inspect", "--filter", "fda18c00"}, "larger than 36000"},
		{"trailing filter bytes", []string{"bloom", "inspect", "--filter", corePayload + "00"}, "so 12 bytes should follow it, and 13 bytes do"},
		{"add without elements", []string{"bloom", "add", "--filter", corePayload}, "ELEMENT_HEX"},
		{"match without elements", []string{"bloom", "match", "--filter", corePayload}, "ELEMENT_HEX"},
		{"stdin for filter and element", []string{"bloom", "match", "--filter", "-", "-"}, "standard input"},
		{"stdin for filter and tx", []string{"bloom", "tx", "--filter", "-", "--tx", "-"}, "standard input"},
		{"bad tx", []string{"bloom", "tx", "--filter", corePayload, "--tx", "0100"}, "--tx"},
		{"tx trailing bytes", []string{"bloom", "tx", "--filter", corePayload, "--tx", coreTx + "00"}, "after the end"},
		{"missing tx", []string{"bloom", "tx", "--filter", corePayload}, "tx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Standard input holds a valid filter, so that a case reading
			// it twice fails on the second read, not on the filter.
			stdout, stderr, status := runCLI(t, corePayload, tt.args...)
			if status != exitBadInput {
				t.Fatalf("status %d, want %d (stdout %q, stderr %q)", status, exitBadInput, stdout, stderr)
			}
			if !strings.Contains(stderr, tt.stderr) || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("stderr %q should be one line mentioning %q", stderr, tt.stderr)
			}
		})
	}
}

// TestBloomInspectUndefinedFlags: a node accepts any flags byte, so a
// captured filter with one BIP 37 does not define is inspected, not refused.
func TestBloomInspectUndefinedFlags(t *testing.T) {
	stdout, stderr, status := runCLI(t, "", "bloom", "inspect", "--filter", "03614e9b050000000000000007")
	if status != exitOK || !strings.Contains(stdout, "unknown(7), acts as none") {
		t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
}

func TestBloomHelpHasExamples(t *testing.T) {
	for _, sub := range []string{"new", "add", "match", "inspect", "tx"} {
		stdout, _, status := runCLI(t, "", "bloom", sub, "--help")
		if status != exitOK || !strings.Contains(stdout, "Examples:") || !strings.Contains(stdout, "spvfilter bloom "+sub) {
			t.Errorf("bloom %s --help: status %d\n%s", sub, status, stdout)
		}
	}
}

// TestBloomNewRefusesDegenerate (Why 2): a million elements at 1% leave
// 0 hash functions in 36,000 bytes, a filter that matches everything. It is
// refused with the reason and the limit, built only with
// --allow-degenerate and then flagged wherever it is used.
func TestBloomNewRefusesDegenerate(t *testing.T) {
	stdout, stderr, status := runCLI(t, "", "bloom", "new", "--elements", "1000000", "--fprate", "0.01")
	// 36,000 bytes hold 288000*ln(2)^2/ln(100) = 30046.6 elements at 1%.
	for _, want := range []string{"0 hash functions", "matches everything", "at most 36000 bytes", "about 30046 elements", "--allow-degenerate"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	if status != exitBadInput || stdout != "" {
		t.Fatalf("status %d, stdout %q", status, stdout)
	}

	stdout, stderr, status = runCLI(t, "", "bloom", "new", "--elements", "1000000", "--fprate", "0.01", "--allow-degenerate", "--json")
	var out struct {
		FilterLoad string `json:"filterload"`
		Stats      struct {
			FilterBytes uint32 `json:"filter_bytes"`
			HashFuncs   uint32 `json:"hash_function_count"`
		} `json:"bloom_filter"`
		Warnings []string
	}
	decodeJSON(t, stdout, &out)
	if status != exitOK || out.Stats.FilterBytes != 36000 || out.Stats.HashFuncs != 0 ||
		len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "matches everything") ||
		stderr != "" {
		t.Fatalf("--allow-degenerate: status %d, %+v, stderr %q", status, out.Stats, stderr)
	}

	// The degenerate filter matches anything, and says so.
	stdout, stderr, status = runCLI(t, "", "bloom", "match", "--filter", out.FilterLoad, "00", "11")
	if status != exitOK || stdout != "00 true\n11 true\n" || !strings.Contains(stderr, "matches everything") {
		t.Fatalf("match: status %d, %q, stderr %q", status, stdout, stderr)
	}
	stdout, _, _ = runCLI(t, "", "bloom", "inspect", "--filter", out.FilterLoad, "--json")
	var insp struct{ Warnings []string }
	decodeJSON(t, stdout, &insp)
	if len(insp.Warnings) != 1 || !strings.Contains(insp.Warnings[0], "no hash functions") {
		t.Fatalf("inspect warnings %q", insp.Warnings)
	}

	// A 0-byte filter, and a rate too high for one hash function.
	for _, args := range [][]string{{"--elements", "1", "--fprate", "0.5"}, {"--elements", "1000", "--fprate", "0.9"}} {
		_, stderr, status = runCLI(t, "", append([]string{"bloom", "new"}, args...)...)
		if status != exitBadInput || !strings.Contains(stderr, "matches everything") {
			t.Errorf("%v: status %d, %q", args, status, stderr)
		}
	}
}

// TestBloomWarnings: a filter the size limit keeps from its rate, one
// given more elements than it is sized for (said in place of its density
// far beyond one half), and inspect's health warnings, on standard
// error, or with --json in the result's array alone.
func TestBloomWarnings(t *testing.T) {
	stdout, stderr, status := runCLI(t, "", "bloom", "new", "--elements", "100000", "--fprate", "0.01", "--json")
	var out struct{ Warnings []string }
	decodeJSON(t, stdout, &out)
	if status != exitOK || len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "false-positive rate will be about 0.293") ||
		stderr != "" {
		t.Fatalf("capped filter: status %d, %q, stderr %q", status, out.Warnings, stderr)
	}

	// Thirty elements in a filter sized for ten.
	var elems []string
	for i := range 30 {
		elems = append(elems, fmt.Sprintf("%08x", i))
	}
	stdout, stderr, status = runCLI(t, "", append([]string{"bloom", "new", "--elements", "10", "--fprate", "0.01", "--json"}, elems...)...)
	decodeJSON(t, stdout, &out)
	if status != exitOK || len(out.Warnings) != 1 || !strings.Contains(out.Warnings[0], "30 elements inserted into a filter sized for --elements 10") || stderr != "" {
		t.Fatalf("overfilled: status %d, %q, stderr %q", status, out.Warnings, stderr)
	}

	// A healthy filter: no warnings, an empty array.
	stdout, stderr, _ = runCLI(t, "", "bloom", "inspect", "--filter", corePayload, "--json")
	if !strings.Contains(stdout, `"warnings": []`) || stderr != "" {
		t.Fatalf("healthy filter: %s, stderr %q", stdout, stderr)
	}
	// A sparse one: density far below one half.
	sparse, _, _ := runCLI(t, "", "bloom", "new", "--elements", "1000", "--fprate", "0.01", coreElem1)
	_, stderr, _ = runCLI(t, "", "bloom", "inspect", "--filter", strings.TrimSpace(sparse))
	if !strings.Contains(stderr, "warning: density") || !strings.Contains(stderr, "far below 1/2") {
		t.Fatalf("sparse filter: stderr %q", stderr)
	}
}

// TestBloomAddFileOneElementPerLine (Why 4): a file of one element per
// line adds each element, not the lines run together.
func TestBloomAddFileOneElementPerLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "more.hex")
	text := "# two of Core's elements\r\n" + coreElem2 + "\r\n\r\n" + strings.ToUpper(coreElem3) + "  # the third\r\n"
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	one, _, status := runCLI(t, "", "bloom", "new", "--elements", "3", "--fprate", "0.01", "--flags", "all", coreElem1)
	if status != exitOK {
		t.Fatal(status)
	}
	stdout, stderr, status := runCLI(t, "", "bloom", "add", "--filter", strings.TrimSpace(one), "@"+file)
	if status != exitOK || stdout != corePayload+"\n" {
		t.Fatalf("add @FILE: status %d, %q, stderr %q; want Core's %s", status, stdout, stderr, corePayload)
	}
	stdout, _, status = runCLI(t, text, "bloom", "match", "--filter", corePayload, "-", coreMiss)
	if want := coreElem2 + " true\n" + coreElem3 + " true\n" + coreMiss + " false\n"; status != exitOK || stdout != want {
		t.Fatalf("match of standard input: status %d, %q, want %q", status, stdout, want)
	}
	// An error names the file and the line.
	if err := os.WriteFile(file, []byte(coreElem2+"\n\nzz\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, status = runCLI(t, "", "bloom", "add", "--filter", corePayload, "@"+file)
	if status != exitBadInput || !strings.Contains(stderr, "element 1 (@"+file+" line 3): invalid hex") {
		t.Fatalf("bad line: status %d, %q", status, stderr)
	}
	// A single-value argument's file holds one line.
	if err := os.WriteFile(file, []byte(corePayload+"\n"+corePayload+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, status = runCLI(t, "", "bloom", "add", "--filter", "@"+file, coreElem1)
	if status != exitBadInput || !strings.Contains(stderr, "has 2 lines") || !strings.Contains(stderr, "--filter takes one value") {
		t.Fatalf("--filter file of two lines: status %d, %q", status, stderr)
	}
}

// TestFPRateOneSpelling: --fprate is shown, --fp-rate still parses.
func TestFPRateOneSpelling(t *testing.T) {
	a, _, _ := runCLI(t, "", "bloom", "new", "--elements", "3", "--fprate", "0.01", coreElem1)
	b, _, status := runCLI(t, "", "bloom", "new", "--elements", "3", "--fp-rate", "0.01", coreElem1)
	if status != exitOK || a != b {
		t.Fatalf("--fp-rate: status %d, %q, want %q", status, b, a)
	}
	for _, cmd := range [][]string{{"bloom", "new"}, {"scan"}, {"privacy", "model"}, {"demo"}} {
		help, _, _ := runCLI(t, "", append(cmd, "--help")...)
		if strings.Contains(help, "fp-rate") || !strings.Contains(help, "--fprate") {
			t.Errorf("%v help: --fprate not the one spelling", cmd)
		}
	}
}
