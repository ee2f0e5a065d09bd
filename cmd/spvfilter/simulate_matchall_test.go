package main

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// TestSimulateWarnsOfFiltersMatchingAll: privacy simulate with a --fprate
// too high for Core's sizing says how many wallet sessions got a filter
// that matches everything, on standard error or, with --json, in the
// result's warnings alone; bitcoinj's sizing (at least 1 byte and 1 hash
// function) and a low rate give none. Before, --fprate 0.5 wrote every
// wallet session with such a filter and said nothing.
func TestSimulateWarnsOfFiltersMatchingAll(t *testing.T) {
	small := []string{"--wallets", "4", "--sessions", "1", "--addresses", "3..200", "--noise", "0", "--degenerate", "0",
		"--fetch-wallets", "0", "--fetch-noise", "0", "--blocks", "10", "--txs-per-block", "1"}
	const all = "4 of the 4 wallet sessions have a filter that matches everything (no byte or no hash function, at rates from 0.5 of --fprate 0.5): they reveal nothing to the attack; give a lower --fprate, below 0.5"
	for _, tc := range []struct {
		name string
		json bool
		args []string
		want string // the warning, "" for none
	}{
		{"every session", false, []string{"--fprate", "0.5"}, all},
		{"every session, json", true, []string{"--fprate", "0.5"}, all},
		{"one session of a range", false, []string{"--fprate", "0.2..0.4"},
			"1 of the 4 wallet sessions has a filter that matches everything (no byte or no hash function, at rates from 0.37 of --fprate 0.2..0.4): it reveals nothing to the attack; give a lower --fprate, below 0.37"},
		{"bitcoinj's floor", false, []string{"--fprate", "0.5", "--sizing", "bitcoinj"}, ""},
		{"a low rate", true, []string{"--fprate", "0.01"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"privacy", "simulate", "--out", filepath.Join(t.TempDir(), "sim")}, small...)
			args = append(args, tc.args...)
			if tc.json {
				args = append([]string{"--json"}, args...)
			}
			stdout, stderr, status := runCLI(t, "", args...)
			if status != exitOK {
				t.Fatalf("status %d, stderr %q", status, stderr)
			}
			if !tc.json {
				want := ""
				if tc.want != "" {
					want = "spvfilter: warning: " + tc.want + "\n"
				}
				if stderr != want {
					t.Errorf("stderr\n %q\nwant\n %q", stderr, want)
				}
				return
			}
			var out struct {
				Warnings []string `json:"warnings"`
			}
			if err := json.Unmarshal([]byte(stdout), &out); err != nil || stderr != "" {
				t.Fatalf("%v in %q, stderr %q", err, stdout, stderr)
			}
			if (tc.want == "" && len(out.Warnings) != 0) || (tc.want != "" && (len(out.Warnings) != 1 || out.Warnings[0] != tc.want)) {
				t.Errorf("warnings %q, want %q", out.Warnings, tc.want)
			}
		})
	}
}
