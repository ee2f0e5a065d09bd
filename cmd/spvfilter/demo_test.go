package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDemoSizing: the demonstration sizes its bitcoinj-like wallet's
// filters by bitcoinj's rule unless --sizing core is given (632 elements
// at 0.00001: 16 hash functions against Core's 15), and the filters the
// node receives are those.
func TestDemoSizing(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		args      []string
		sizing    string
		hashFuncs uint32
		text      string
	}{
		{nil, "bitcoinj", 16, "by bitcoinj's rule -> 1893 bytes, 16 hash functions"},
		{[]string{"--sizing", "core"}, "core", 15, "by Bitcoin Core's rule -> 1893 bytes, 15 hash functions"},
	} {
		args := append([]string{"demo", "--universe-size", "20000", "--plot", filepath.Join(dir, "d.svg")}, tc.args...)
		stdout, stderr, status := runCLI(t, "", append(args, "--json")...)
		if status != exitOK {
			t.Fatalf("%q: status %d: %s", args, status, stderr)
		}
		var d struct {
			Options struct {
				Sizing string `json:"sizing"`
			} `json:"options"`
			Model struct {
				FilterBytes uint32 `json:"filter_bytes"`
				HashFuncs   uint32 `json:"hash_function_count"`
				Params      struct {
					Sizing string `json:"sizing"`
				} `json:"params"`
			} `json:"model"`
			Analysis struct {
				Filters []struct {
					FilterBytes uint32 `json:"filter_bytes"`
					HashFuncs   uint32 `json:"hash_function_count"`
				} `json:"filter_reports"`
			} `json:"analysis"`
		}
		decodeJSON(t, stdout, &d)
		if d.Options.Sizing != tc.sizing || d.Model.Params.Sizing != tc.sizing || d.Model.FilterBytes != 1893 || d.Model.HashFuncs != tc.hashFuncs || len(d.Analysis.Filters) != 2 {
			t.Errorf("%q: %+v", args, d)
		}
		for _, f := range d.Analysis.Filters {
			if f.FilterBytes != 1893 || f.HashFuncs != tc.hashFuncs {
				t.Errorf("%q: the node received a filter of %d bytes k=%d", args, f.FilterBytes, f.HashFuncs)
			}
		}
		text, _, _ := runCLI(t, "", args...)
		if !strings.Contains(text, tc.text) {
			t.Errorf("%q: text lacks %q:\n%s", args, tc.text, text)
		}
	}
	if _, stderr, status := runCLI(t, "", "demo", "--sizing", "electrum"); status != exitBadInput || !strings.Contains(stderr, `--sizing "electrum": want core or bitcoinj`) {
		t.Errorf("bad sizing: status %d, %s", status, stderr)
	}
}
