package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

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

// TestSendSilentReject: a node that asks for the transaction and then
// drops it without a reject message (btcd keeps a transaction spending
// outputs it does not know as an orphan, and drops one spending an
// output spent already) is named with what that means, not in the peer
// package's words ("tx: transaction rejected: ... requested but not in
// the node's mempool"), and as soon as the node has answered a request
// sent after the transaction: btcd reads nothing more from a peer while
// it processes a transaction, so its answer proves the transaction was
// processed. Waiting for --timeout would change nothing.
func TestSendSilentReject(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	spend := node.SpendCoinbase(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").PkScript()))
	node.Confirm(t, spend)
	double := spend.Copy()
	double.TxOut[0].Value--
	var buf bytes.Buffer
	if err := double.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	tests := []struct{ name, tx string }{
		{"spends outputs the node does not know", coreTx},
		{"spends an output spent already", hex.EncodeToString(buf.Bytes())},
	}
	const timeout = 15 * time.Second
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, stderr, status := runCLI(t, "", "send", "--connect", node.P2PAddr, "--network", "regtest", "--timeout", timeout.String(), tt.tx)
			took := time.Since(start)
			t.Logf("reported after %v (--timeout %v)", took.Round(time.Millisecond), timeout)
			want := "--connect " + node.P2PAddr + " asked for it, then rejected it without a reject message: it was not in its mempool once the node had processed it"
			if status != exitFailure || !strings.Contains(stderr, want) || !strings.Contains(stderr, "--timeout") ||
				strings.Contains(stderr, "tx: transaction rejected") || strings.Count(stderr, "\n") != 1 {
				t.Errorf("status %d, stderr %q\nwant 1 and %q", status, stderr, want)
			}
			if took > timeout/3 {
				t.Errorf("reported after %v: the node had answered for the transaction long before --timeout %v", took, timeout)
			}
		})
	}
}
