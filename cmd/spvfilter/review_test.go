package main

import (
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestReviewNodes runs, against real btcd nodes on loopback, what a
// newcomer's review met: a data directory whose chain a restarted regtest
// node does not extend, and heights above the tip. Each is said in the
// tool's words, with the exit status the contract gives it.
func TestReviewNodes(t *testing.T) {
	a := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	a.Generate(t, 101)
	// A node of another chain, with less work: a regtest node restarted
	// (btcd deletes its regtest chain at every start) and mining anew.
	b := peertest.StartBtcd(t, peertest.WithMiningKey(peertest.NewKey("restarted")))
	b.Generate(t, 10)

	t.Run("a saved chain the node does not extend", func(t *testing.T) {
		dir := t.TempDir()
		if _, stderr, status := runCLI(t, "", "scan", "--connect", a.P2PAddr, "--network", "regtest", "--watch", "51", "--datadir", dir, "--to", "2"); status != exitOK {
			t.Fatalf("first scan: status %d, %s", status, stderr)
		}
		for _, extra := range [][]string{nil, {"--from", "5"}, {"--to", "8"}} {
			args := append([]string{"scan", "--connect", b.P2PAddr, "--network", "regtest", "--watch", "51", "--datadir", dir}, extra...)
			stdout, stderr, status := runCLI(t, "", args...)
			if status != exitFailure || stdout != "" || strings.Count(stderr, "\n") != 1 ||
				!strings.Contains(stderr, "spvfilter: --datadir "+dir+": the nodes' chain does not extend the chain saved there (tip 101") ||
				!strings.Contains(stderr, "peer "+b.P2PAddr+" leaves it after height 0 for a chain of its own to height 10") ||
				!strings.Contains(stderr, "a regtest node restarted deletes its chain") {
				t.Errorf("%v: status %d, stdout %q, stderr %q: want 1 saying the node's chain does not extend the saved one", extra, status, stdout, stderr)
			}
		}
	})
	t.Run("heights above the tip are the nodes' answer, not bad input", func(t *testing.T) {
		for _, args := range [][]string{
			{"scan", "--connect", a.P2PAddr, "--network", "regtest", "--watch", "51", "--from", "5000"},
			{"privacy", "universe", "--peer", a.P2PAddr, "--network", "regtest", "--from", "5000", "--out", "-"},
		} {
			_, stderr, status := runCLI(t, "", args...)
			if status != exitFailure || !strings.Contains(stderr, "--from 5000 is above the node") {
				t.Errorf("%s: status %d, stderr %q: want 1", args[0], status, stderr)
			}
		}
	})
}
