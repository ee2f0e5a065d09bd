package main

import (
	"encoding/json"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestScanStoredSegmentComparedBelowCheckpoint: scan --datadir D with a
// liar alone (hiding alice's payment at 102 behind an empty filter), then
// scan --datadir D with the liar and an honest node at height 990, below
// the first checkpoint (1000), that holds block 102. The stored segment
// up to the checkpoint only the liar states is not taken as it is while
// the honest node's chain ends inside it: the payment is found, or the
// liar banned.
func TestScanStoredSegmentComparedBelowCheckpoint(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	alice := peertest.NewKey("alice")
	pay := node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	node.Confirm(t, pay)  // 102
	node.Generate(t, 908) // 1010
	ahead := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	ahead.Generate(t, 1) // 1011
	liar := peertest.NewLiar(t, ahead.P2PAddr, ahead.Params.Net, peertest.ForgeFilter(t, ahead, 102, peertest.EmptyFilter)).Addr
	behind := peertest.CopyChainTo(t, node, 990, peertest.WithArgs("--nobanning"))
	addr := alice.Address(node.Params).EncodeAddress()
	dir := t.TempDir()
	scan := func(peers ...string) (scanOutput, string) {
		t.Helper()
		args := []string{"scan", "--json", "--network", "regtest", "--timeout", "10s", "--datadir", dir, "--watch", addr}
		for _, p := range peers {
			args = append(args, "--peer", p)
		}
		stdout, stderr, status := runCLI(t, "", args...)
		var out scanOutput
		if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil {
			t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
		}
		return out, stdout
	}
	if out, _ := scan(liar); len(out.Matches) != 0 {
		t.Fatalf("the liar alone: matches %+v: it did not lie", out.Matches)
	}
	out, stdout := scan(liar, behind.P2PAddr)
	banned := false
	for _, p := range out.Peers {
		banned = banned || p.Address == liar && p.Banned
	}
	if len(out.Matches) == 0 && !banned {
		t.Errorf("alice's payment at 102, held by the honest node, missing and the liar not banned; output:\n%s", stdout)
	}
}
