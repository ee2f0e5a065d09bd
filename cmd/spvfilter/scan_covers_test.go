package main

import (
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestScanCoversTinyChain: a bip157 scan with --privacy-target on a
// chain of six blocks whose every coinbase pays the watched address
// explores the whole range and finds no cover: it says the chain holds
// too few candidates and points to --allow-short-covers or a wider
// range, never to scanning again or to raising --max-cover-blocks once
// the range is explored.
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
}
