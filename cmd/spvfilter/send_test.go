package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

func TestSendCommand(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").PkScript()))
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	txHex := hex.EncodeToString(buf.Bytes())
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)

	stdout, stderr, status := runCLI(t, "", "send", "--peer", node.P2PAddr, "--network", "regtest", "--timeout", "5s", txHex)
	if status != exitOK || strings.TrimSpace(stdout) != tx.TxHash().String() {
		t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	if !node.InMempool(t, tx.TxHash()) {
		t.Fatalf("the transaction is not in the node's mempool")
	}
	// Twice, from standard input, to two peers: harmless, both hold it.
	stdout, stderr, status = runCLI(t, txHex+"\n", "send", "--json", "--peer", node.P2PAddr, "--peer", honest.Addr, "--network", "regtest", "-")
	var out struct {
		Txid  string `json:"txid"`
		Peers []struct {
			Address  string `json:"address"`
			Accepted bool   `json:"accepted"`
		} `json:"peers"`
	}
	if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil || out.Txid != tx.TxHash().String() ||
		len(out.Peers) != 2 || !out.Peers[0].Accepted || !out.Peers[1].Accepted {
		t.Fatalf("second send: status %d, stdout %q, stderr %q", status, stdout, stderr)
	}
	block := node.Confirm(t, tx)
	t.Logf("confirmed in %v", block)

	// A spend of an already spent coinbase: every peer rejects it.
	bad := tx.Copy()
	bad.TxOut[0].Value--
	buf.Reset()
	bad.Serialize(&buf)
	_, stderr, status = runCLI(t, "", "send", "--peer", node.P2PAddr, "--network", "regtest", "--timeout", "2s", hex.EncodeToString(buf.Bytes()))
	if status != exitFailure || !strings.Contains(stderr, "rejected") || !strings.Contains(stderr, node.P2PAddr) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("rejected transaction: status %d, stderr %q", status, stderr)
	}
	for _, args := range [][]string{
		{"send", "--peer", node.P2PAddr, "--network", "regtest", "zz"},
		{"send", "--peer", node.P2PAddr, "--network", "regtest", "00"},
		{"send", "--peer", node.P2PAddr, "--network", "regtest", txHex + "00"},
		{"send", "--network", "regtest", txHex},
		{"send", "--peer", node.P2PAddr, "--network", "regtest"},
	} {
		if _, stderr, status := runCLI(t, "", args...); status != exitBadInput || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: status %d, stderr %q", args, status, stderr)
		}
	}
}
