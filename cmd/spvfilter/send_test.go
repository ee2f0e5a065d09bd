package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"slices"
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
	// The txid, and the node's announcement if it came during the send.
	if f := strings.Fields(stdout); status != exitOK || len(f) == 0 || f[0] != tx.TxHash().String() || len(f) > 1 && f[1] != "announced" {
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

// TestSendCoreLike: a node that serves transactions as Bitcoin Core does
// (by getdata only once announced to that connection, no reject
// messages). Alone, send reports it took the transaction, naming its
// announcement and the time, in text and --json, with a warning that
// this rests on its word; one that announces the transaction falsely
// makes send fail, naming the false announcement.
func TestSendCoreLike(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 115)
	other := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("bob").PkScript()))
	const timeout = 10 * time.Second
	t.Run("text", func(t *testing.T) {
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").PkScript()))
		core := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net)
		start := time.Now()
		stdout, stderr, status := runCLI(t, "", "send", "--connect", core.Addr, "--network", "regtest", "--timeout", timeout.String(), txHexOf(t, tx))
		took := time.Since(start)
		t.Logf("after %v: %q, %q", took.Round(time.Millisecond), stdout, stderr)
		// Alone, its announcement is its own word, on stdout too: not
		// propagation.
		if status != exitOK || !strings.HasPrefix(stdout, tx.TxHash().String()+"  announced by "+core.Addr+" after ") ||
			!strings.HasSuffix(stdout, " (given it: on its own word)\n") || strings.Contains(stdout, "propagated") ||
			!strings.Contains(stderr, "on its own word") || took > timeout/2 || !node.InMempool(t, tx.TxHash()) {
			t.Fatalf("status %d, stdout %q, stderr %q after %v", status, stdout, stderr, took)
		}
	})
	t.Run("json", func(t *testing.T) {
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").PkScript()))
		core := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net)
		stdout, stderr, status := runCLI(t, "", "send", "--json", "--connect", core.Addr, "--network", "regtest", "--timeout", timeout.String(), txHexOf(t, tx))
		t.Logf("%s%s", stdout, stderr)
		var out struct {
			Propagated bool `json:"propagated"`
			Peers      []struct {
				Address   string   `json:"address"`
				Given     bool     `json:"given"`
				Accepted  bool     `json:"accepted"`
				Seen      bool     `json:"seen"`
				Announced *float64 `json:"announced_after_seconds"`
			} `json:"peers"`
			Warnings []string `json:"warnings"`
		}
		if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil || out.Propagated || len(out.Peers) != 1 {
			t.Fatalf("status %d, stdout %q, stderr %q; in the node's mempool: %t", status, stdout, stderr, node.InMempool(t, tx.TxHash()))
		}
		p := out.Peers[0]
		if p.Address != core.Addr || !p.Given || !p.Accepted || p.Seen || p.Announced == nil || *p.Announced <= 0 || *p.Announced > timeout.Seconds()/2 {
			t.Fatalf("peer %+v: want given, accepted by its announcement", p)
		}
	})
	t.Run("lone echo", func(t *testing.T) {
		// A peer that takes the transaction, keeps it from the node and
		// announces it: its words are the honest node's, and so are
		// ours: on its own word, not propagated.
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").PkScript()))
		echo := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net, peertest.CoreLikeEchoes())
		stdout, stderr, status := runCLI(t, "", "send", "--json", "--connect", echo.Addr, "--network", "regtest", "--timeout", "3s", txHexOf(t, tx))
		t.Logf("%s%s", stdout, stderr)
		var out struct {
			Propagated bool     `json:"propagated"`
			Warnings   []string `json:"warnings"`
		}
		if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil || out.Propagated ||
			!slices.ContainsFunc(out.Warnings, func(w string) bool { return strings.Contains(w, "on its own word") }) {
			t.Fatalf("status %d, stdout %q, stderr %q: want accepted on the echo's word, not propagated", status, stdout, stderr)
		}
		stdout, _, status = runCLI(t, "", "send", "--connect", echo.Addr, "--network", "regtest", "--timeout", "3s", txHexOf(t, tx))
		if status != exitOK || !strings.Contains(stdout, "on its own word") || strings.Contains(stdout, "propagated") {
			t.Fatalf("status %d, stdout %q: want its own word named", status, stdout)
		}
		if node.InMempool(t, tx.TxHash()) {
			t.Fatal("the echo passed the transaction on")
		}
	})
	t.Run("false announcement beside an honest node", func(t *testing.T) {
		// Given the transaction after the honest node, the liar relays
		// the node's announcement; given it first, it lies: sent again,
		// with new transactions, until it is.
		liar := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net, peertest.CoreLikeAnnouncesFalsely(other))
		want := liar.Addr + " announced it and then served another transaction, " + other.TxHash().String() + ", when asked for it: the announcement is not believed; banned for it\n"
		for try := 1; try <= 8; try++ {
			tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").PkScript()))
			stdout, stderr, status := runCLI(t, "", "send", "--connect", node.P2PAddr, "--connect", liar.Addr, "--network", "regtest", "--timeout", "3s", txHexOf(t, tx))
			t.Logf("try %d: %q, %q", try, stdout, stderr)
			if status != exitOK || !strings.HasPrefix(stdout, tx.TxHash().String()) || !node.InMempool(t, tx.TxHash()) {
				t.Fatalf("status %d, stdout %q, stderr %q: want taken by the honest node", status, stdout, stderr)
			}
			if !strings.Contains(stderr, "not believed") {
				continue // the liar relayed the node's announcement
			}
			if strings.Count(stderr, want) != 1 || strings.Contains(stdout, liar.Addr) {
				t.Fatalf("stdout %q, stderr %q: want the lie named once, in a warning:\n%s", stdout, stderr, want)
			}
			return
		}
		t.Fatal("the liar was never given the transaction first in 8 sends")
	})
	t.Run("false announcement", func(t *testing.T) {
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").PkScript()))
		liar := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net, peertest.CoreLikeAnnouncesFalsely(other))
		_, stderr, status := runCLI(t, "", "send", "--connect", liar.Addr, "--network", "regtest", "--timeout", "3s", txHexOf(t, tx))
		want := "announced it and then served another transaction, " + other.TxHash().String() + ", when asked for it: the announcement is not believed"
		if status != exitFailure || !strings.Contains(stderr, want) || !strings.Contains(stderr, liar.Addr) || strings.Count(stderr, "\n") != 1 {
			t.Fatalf("status %d, stderr %q\nwant 1 and %q", status, stderr, want)
		}
	})
}

// txHexOf returns tx serialized, as hex.
func txHexOf(t *testing.T, tx *wire.MsgTx) string {
	t.Helper()
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(buf.Bytes())
}

// TestSendRestsOnOnePeer: propagation proven by one peer alone, here a
// second address of the node the transaction was given to, rests on that
// peer's word: a warning says so, in --json's "warnings" too (before,
// --json said so only in "propagation_rests_on"), which names the peer
// (before, nothing said so).
func TestSendRestsOnOnePeer(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 102)
	second := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").PkScript()))
	stdout, stderr, status := runCLI(t, "", "send", "--json", "--peer", node.P2PAddr, "--peer", second.Addr, "--network", "regtest", "--timeout", "5s", txHexOf(t, tx))
	type seenPeer struct {
		Address string `json:"address"`
		Seen    bool   `json:"seen"`
	}
	var out struct {
		Propagated bool       `json:"propagated"`
		RestsOn    *string    `json:"propagation_rests_on"`
		Peers      []seenPeer `json:"peers"`
		Warnings   []string   `json:"warnings"`
	}
	if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil || !out.Propagated || out.RestsOn == nil ||
		!slices.ContainsFunc(out.Peers, func(p seenPeer) bool { return p.Seen && p.Address == *out.RestsOn }) ||
		!hasWarning(out.Warnings, "propagation rests on one peer's word") {
		t.Fatalf("status %d, stdout %q, stderr %q: want propagation said to rest on the peer that saw it", status, stdout, stderr)
	}
	tx = node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").PkScript()))
	_, stderr, status = runCLI(t, "", "send", "--peer", node.P2PAddr, "--peer", second.Addr, "--network", "regtest", "--timeout", "5s", txHexOf(t, tx))
	if status != exitOK || !strings.Contains(stderr, "propagation rests on one peer's word") {
		t.Fatalf("status %d, stderr %q: want a warning that propagation rests on one peer", status, stderr)
	}
}
