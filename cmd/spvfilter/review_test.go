package main

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"net"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestReviewNodes runs, against real btcd nodes on loopback, what a
// newcomer's review met: a data directory whose chain a restarted regtest
// node does not extend, heights above the tip, a peer that never
// connected beside one that works, a listener that is no node, and a
// transaction sent twice to one peer. Each is said in the tool's words,
// with the exit status the contract gives it.
func TestReviewNodes(t *testing.T) {
	a := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	a.Generate(t, 101)
	// A node of another chain, with less work: a regtest node restarted
	// (btcd deletes its regtest chain at every start) and mining anew.
	b := peertest.StartBtcd(t, peertest.WithMiningKey(peertest.NewKey("restarted")))
	b.Generate(t, 10)
	notANode := startHTTPListener(t)
	const refused = "127.0.0.1:1"
	tx := a.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").PkScript()))
	var buf bytes.Buffer
	if err := tx.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	txHex := hex.EncodeToString(buf.Bytes())
	goWords := []string{"dial tcp", "ReadMessage", "peer disconnected", "protocol violation", "()"}

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
				!strings.Contains(stderr, "--connect "+b.P2PAddr+" leaves it after height 0 for a chain of its own to height 10") ||
				!strings.Contains(stderr, "a regtest node restarted deletes its chain") {
				t.Errorf("%v: status %d, stdout %q, stderr %q: want 1 saying the node's chain does not extend the saved one", extra, status, stdout, stderr)
			}
			// What to remove is the network's state, not the directory
			// that keeps every network's.
			if want := "or remove " + filepath.Join(dir, "regtest") + " (regtest's state alone"; !strings.Contains(stderr, want) || strings.Contains(stderr, "remove "+dir+" ") {
				t.Errorf("%v: stderr %q: want %q, and not the whole --datadir to remove", extra, stderr, want)
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
	// The documents of the commands that need a node, as they print
	// them, in the one vocabulary (TestJSONKeysOneType checks them from
	// their types, with every string filled).
	voc := &vocabulary{t: t, types: map[string]map[string]string{}, real: true}
	vocab := func(args []string, stdout string) {
		t.Helper()
		var doc any
		if err := json.Unmarshal([]byte(stdout), &doc); err != nil {
			t.Fatalf("%v: %v: %q", args, err, stdout)
		}
		voc.flags = commandFlags(t, args)
		voc.add(args[0], doc, true)
	}
	defer func() {
		for key, byType := range voc.types {
			if len(byType) > 1 {
				t.Errorf("key %q has several JSON types: %v", key, byType)
			}
		}
	}()
	t.Run("a peer never reached beside one that works", func(t *testing.T) {
		want := "connection refused: nothing listens there (is a regtest node listening on " + refused + "?)"
		stdout, stderr, status := runCLI(t, "", "scan", "--connect", refused, "--connect", a.P2PAddr, "--network", "regtest", "--watch", "51", "--to", "2", "--json")
		var out struct {
			Peers []struct {
				Address string  `json:"address"`
				Reason  *string `json:"reason"`
			} `json:"peers"`
			Warnings []string `json:"warnings"`
		}
		if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil || len(out.Peers) != 2 {
			t.Fatalf("scan: status %d, stdout %q, stderr %q", status, stdout, stderr)
		}
		vocab([]string{"scan"}, stdout)
		if r := out.Peers[0].Reason; r == nil || *r != "unreachable: "+want {
			t.Errorf("reason %v, want %q", r, "unreachable: "+want)
		}
		if !slices.ContainsFunc(out.Warnings, func(w string) bool {
			return strings.Contains(w, "--connect "+refused+" was not used: unreachable: "+want)
		}) || stderr != "" {
			t.Errorf("warnings %q, stderr %q: want the warning in the tool's words in the JSON alone", out.Warnings, stderr)
		}
		stdout, stderr, status = runCLI(t, "", "peers", "--connect", refused, "--connect", a.P2PAddr, "--network", "regtest", "--json")
		if status != exitOK {
			t.Fatalf("peers: status %d, stderr %q", status, stderr)
		}
		vocab([]string{"peers"}, stdout)
		for _, args := range [][]string{
			{"scan", "--connect", refused, "--connect", a.P2PAddr, "--network", "regtest", "--watch", "51", "--to", "2"},
			{"peers", "--connect", refused, "--connect", a.P2PAddr, "--network", "regtest"},
		} {
			stdout, stderr, status := runCLI(t, "", args...)
			if status != exitOK || !strings.Contains(stdout, "peer "+refused+": ") || !strings.Contains(stdout, want) {
				t.Errorf("%s: status %d, stdout %q, stderr %q", args[0], status, stdout, stderr)
			}
			for _, w := range goWords {
				if strings.Contains(stdout+stderr, w) {
					t.Errorf("%s: %q in stdout %q, stderr %q", args[0], w, stdout, stderr)
				}
			}
		}
	})
	t.Run("scan warns of a script no output can usefully pay and of a rate beyond 50 hash functions", func(t *testing.T) {
		_, stderr, status := runCLI(t, "", "scan", "--connect", a.P2PAddr, "--network", "regtest", "--to", "2", "--watch", strings.Repeat("51", 11000))
		if status != exitOK || !strings.Contains(stderr, "warning: --watch 1: a script of 11000 bytes, more than the 10000 a script can have to be spent") {
			t.Errorf("long script: status %d, stderr %q", status, stderr)
		}
		_, stderr, status = runCLI(t, "", "scan", "--connect", a.P2PAddr, "--network", "regtest", "--to", "2", "--mode", "bip37", "--fprate", "1e-300",
			"--watch", peertest.NewKey("alice").Address(a.Params).EncodeAddress())
		if status != exitOK || !strings.Contains(stderr, "warning: --fprate 1e-300: the rate needs about 997 hash functions and a filter has at most 50") {
			t.Errorf("--fprate 1e-300: status %d, stderr %q", status, stderr)
		}
	})
	t.Run("a universe from one peer rests on it", func(t *testing.T) {
		stdout, stderr, status := runCLI(t, "", "privacy", "universe", "--peer", a.P2PAddr, "--network", "regtest", "--to", "3", "--out", "-")
		if status != exitOK || !strings.Contains(stdout, "# candidates of regtest blocks 0..3") ||
			!strings.Contains(stderr, "warning: the universe rests on one peer, --peer "+a.P2PAddr) || !strings.Contains(stderr, "spvfilter: 4 blocks (0..3)") {
			t.Errorf("status %d, stdout %q, stderr %q: want the candidates, the one-peer warning and the statistics on standard error", status, stdout, stderr)
		}
	})
	t.Run("a listener that is no node", func(t *testing.T) {
		for _, tt := range []struct {
			args []string
			name string // how the node is named: by its flag
		}{
			{[]string{"scan", "--connect", notANode, "--network", "regtest", "--watch", "51"}, "--connect " + notANode},
			{[]string{"send", "--connect", notANode, "--network", "regtest", txHex}, "--connect " + notANode},
			{[]string{"peers", "--peer", notANode, "--network", "regtest"}, "--peer " + notANode},
			{[]string{"privacy", "universe", "--peer", notANode, "--network", "regtest", "--out", "-"}, "--peer " + notANode},
		} {
			args := tt.args
			_, stderr, status := runCLI(t, "", args...)
			if status != exitFailure || !strings.Contains(stderr, tt.name+": it answers with what is no regtest message: no regtest node listens there") {
				t.Errorf("%s: status %d, stderr %q", args[0], status, stderr)
			}
			for _, w := range goWords {
				if strings.Contains(stderr, w) {
					t.Errorf("%s: %q in stderr %q", args[0], w, stderr)
				}
			}
		}
	})
	t.Run("a transaction sent twice to one peer rests on it", func(t *testing.T) {
		for i := range 2 {
			stdout, stderr, status := runCLI(t, "", "send", "--connect", a.P2PAddr, "--network", "regtest", "--timeout", "5s", "--json", txHex)
			var out struct {
				Propagated bool     `json:"propagated"`
				Warnings   []string `json:"warnings"`
			}
			if status != exitOK || json.Unmarshal([]byte(stdout), &out) != nil {
				t.Fatalf("send %d: status %d, stdout %q, stderr %q", i+1, status, stdout, stderr)
			}
			vocab([]string{"send"}, stdout)
			if out.Propagated || !strings.Contains(strings.Join(out.Warnings, "\n"), a.P2PAddr) {
				t.Errorf("send %d: propagated %t, warnings %q: want false and a warning that it rests on %s", i+1, out.Propagated, out.Warnings, a.P2PAddr)
			}
		}
	})
}

// TestReviewResendRejected: a transaction the node rejected, sent again,
// is not asked for again (btcd remembers what it rejected): the error says
// that, not that the peer stalled.
func TestReviewResendRejected(t *testing.T) {
	a := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	a.Generate(t, 101)
	bad := a.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").PkScript()))
	bad.TxOut[0].Value = 100_000_000_000 // more than the coinbase holds
	var buf bytes.Buffer
	if err := bad.Serialize(&buf); err != nil {
		t.Fatal(err)
	}
	args := []string{"send", "--connect", a.P2PAddr, "--network", "regtest", "--timeout", "3s", hex.EncodeToString(buf.Bytes())}
	_, stderr, status := runCLI(t, "", args...)
	if status != exitFailure || !strings.Contains(stderr, "--connect "+a.P2PAddr+" rejected it as invalid: total value of all transaction inputs") {
		t.Fatalf("first send: status %d, stderr %q", status, stderr)
	}
	_, stderr, status = runCLI(t, "", args...)
	if status != exitFailure || !strings.Contains(stderr, "--connect "+a.P2PAddr+" did not ask for it and does not hold it: a node does not ask again for a transaction it has rejected") ||
		strings.Contains(stderr, "stalled") || strings.Contains(stderr, "neither requested") {
		t.Fatalf("second send: status %d, stderr %q", status, stderr)
	}
}

// startHTTPListener listens on loopback and answers every connection as an
// HTTP server would, whatever it is sent: a service that is no node.
func startHTTPListener(t *testing.T) string {
	t.Helper()
	return listenLoopback(t, func(c net.Conn) {
		defer c.Close()
		c.Read(make([]byte, 1024))
		c.Write([]byte(strings.Repeat("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n", 3)))
		c.Read(make([]byte, 1024))
	})
}

// listenLoopback starts a listener on 127.0.0.1 that serves each
// connection in a goroutine of its own; it stops when the test ends and
// returns its address.
func listenLoopback(t *testing.T, serve func(net.Conn)) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go serve(c)
		}
	}()
	return l.Addr().String()
}
