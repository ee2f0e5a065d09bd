package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestScanCoversTinyChain: a bip157 scan with --privacy-target on a
// chain of six blocks whose every coinbase pays the watched address
// explores the whole range and finds no cover: it says the chain holds
// too few candidates and points to --allow-short-covers or a wider
// range, never to scanning again or to raising --max-cover-blocks once
// the range is explored; with --allow-short-covers it exits 0, says the
// target missed in the warnings, and its cover line adds up.
func TestScanCoversTinyChain(t *testing.T) {
	alice := peertest.NewKey("alice")
	node := peertest.StartBtcd(t, peertest.WithMiningKey(alice))
	node.Generate(t, 6)
	addr := alice.Address(node.Params).EncodeAddress()
	scan := func(extra ...string) (string, string, int) {
		args := append([]string{"scan", "--network", "regtest", "--peer", node.P2PAddr, "--mode", "bip157",
			"--privacy-target", "0.5", "--datadir", t.TempDir(), "--watch", addr}, extra...)
		return runCLI(t, "", args...)
	}
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"default bound", nil},
		{"no bound", []string{"--max-cover-blocks", "-1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, status := scan(tc.extra...)
			if status != exitFailure {
				t.Fatalf("status %d: %s", status, stderr)
			}
			for _, w := range []string{"--privacy-target 0.5 not met", "too few", "--allow-short-covers"} {
				if !strings.Contains(stderr, w) {
					t.Errorf("stderr does not say %q: %s", w, stderr)
				}
			}
			for _, w := range []string{"Scan again", "raise --max-cover-blocks"} {
				if strings.Contains(stderr, w) {
					t.Errorf("stderr says %q with the whole range explored: %s", w, stderr)
				}
			}
		})
	}
	t.Run("allow short", func(t *testing.T) {
		stdout, stderr, status := scan("--allow-short-covers")
		if status != exitOK {
			t.Fatalf("status %d: %s", status, stderr)
		}
		for _, w := range []string{"MaxCoverBlocks", "1 cover chains", "0 covers (0 new); 1 cover blocks"} {
			if strings.Contains(stdout+stderr, w) {
				t.Errorf("output says %q: %s%s", w, stdout, stderr)
			}
		}
		if !strings.Contains(stderr, "--privacy-target 0.5 not met") {
			t.Errorf("stderr does not warn of the target missed: %s", stderr)
		}
		if !strings.Contains(stdout, "0 covers (0 new)") || !strings.Contains(stdout, "1 block beyond the wallet's 6") || !strings.Contains(stdout, "1 block explored") {
			t.Errorf("the cover line does not add up: %s", stdout)
		}
		stdout, stderr, status = scan("--allow-short-covers", "--json")
		if status != exitOK {
			t.Fatalf("status %d: %s", status, stderr)
		}
		var out struct {
			Cover struct {
				Met bool   `json:"met"`
				Why string `json:"why"`
			} `json:"cover"`
			Warnings []string `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil {
			t.Fatal(err)
		}
		if out.Cover.Met || strings.Contains(out.Cover.Why, "MaxCoverBlocks") {
			t.Errorf("cover %+v", out.Cover)
		}
		if !strings.Contains(strings.Join(out.Warnings, "\n"), "--privacy-target 0.5 not met") {
			t.Errorf("warnings %q do not say the target missed", out.Warnings)
		}
	})
}
