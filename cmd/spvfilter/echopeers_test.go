package main

import (
	"encoding/json"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// newEcho starts a TCP echo service on 127.0.0.1, which sends back every
// byte it reads, and returns its address.
func newEcho(t *testing.T) string {
	t.Helper()
	return listenLoopback(t, func(c net.Conn) {
		defer c.Close()
		io.Copy(c, c)
	})
}

// TestEchoServiceIsNoNode: a node given that is a TCP echo service (a
// wrong port) sends back this client's own version message. Every
// command that connects says so at once, naming the flag and the port
// to check, instead of a node lacking a service (scan), a stall after
// --timeout (peers, lab, privacy universe), a dropped connection
// (send) or a relay started in front of it (privacy capture).
func TestEchoServiceIsNoNode(t *testing.T) {
	echo := newEcho(t)
	watch := peertest.NewKey("echo").Address(&chaincfg.RegressionNetParams).EncodeAddress()
	connect := []string{"--network", "regtest", "--timeout", "3s", "--connect", echo}
	tests := []struct {
		name string
		args []string
		flag string
	}{
		{"scan bip157", append([]string{"scan", "--watch", watch}, connect...), "--connect"},
		{"scan bip37", append([]string{"scan", "--mode", "bip37", "--watch", watch}, connect...), "--connect"},
		{"scan --follow", append([]string{"scan", "--follow", "--watch", watch}, connect...), "--connect"},
		{"peers", append([]string{"peers"}, connect...), "--connect"},
		{"send", append([]string{"send", coreTx}, connect...), "--connect"},
		{"lab", append([]string{"lab"}, connect...), "--connect"},
		{"privacy universe", []string{"privacy", "universe", "--network", "regtest", "--timeout", "3s", "--peer", echo, "--out", t.TempDir() + "/u.txt"}, "--peer"},
		{"privacy capture", []string{"privacy", "capture", "--network", "regtest", "--listen", "127.0.0.1:0", "--upstream", echo, "--out", t.TempDir() + "/c.jsonl", "--duration", "1s"}, "--upstream"},
	}
	want := ": it sends back what it is sent (its version message is this client's own, user agent /spvfilter:"
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, status := runCLI(t, "", tt.args...)
			if status != exitFailure {
				t.Fatalf("status %d, want %d; stderr %q", status, exitFailure, stderr)
			}
			if !strings.Contains(stderr, tt.flag+" "+echo+want) || !strings.Contains(stderr, "regtest nodes listen on port 18444") {
				t.Errorf("stderr %q\nwant %q and the port to check", stderr, tt.flag+" "+echo+want)
			}
			for _, not := range []string{"does not offer", "stalled", "dropped", "too slow"} {
				if strings.Contains(stderr, not) {
					t.Errorf("stderr %q holds %q", stderr, not)
				}
			}
		})
	}
	t.Run("beside a port nothing listens on", func(t *testing.T) {
		const refused = "127.0.0.1:1" // nothing listens on port 1
		_, stderr, status := runCLI(t, "", append([]string{"scan", "--watch", watch, "--connect", refused}, connect...)...)
		if status != exitFailure || !strings.Contains(stderr, "--connect "+echo+want) ||
			!strings.Contains(stderr, "--connect "+refused+": ") || !strings.Contains(stderr, "connection refused: nothing listens there") {
			t.Errorf("status %d, stderr %q: want 1, the echo and the port nothing listens on named", status, stderr)
		}
	})
	t.Run("--json", func(t *testing.T) {
		_, stderr, status := runCLI(t, "", append([]string{"scan", "--json", "--watch", watch}, connect...)...)
		var e struct {
			Error    string `json:"error"`
			ExitCode int    `json:"exit_code"`
		}
		if err := json.Unmarshal([]byte(stderr), &e); err != nil || status != exitFailure || e.ExitCode != exitFailure {
			t.Fatalf("status %d, stderr %q (%v)", status, stderr, err)
		}
		if !strings.Contains(e.Error, "--connect "+echo+want) {
			t.Errorf("error %q lacks %q", e.Error, want)
		}
	})
}

// TestEchoBesideNode: an echo service given beside a node is left out
// and named in the warnings, and the command runs on the node; lab names
// the peer its blocks came from, not the first node given when that one
// served nothing (an echo, or a port nothing listens on), and warns
// that they come from one peer; from several, it names three and counts
// the others.
func TestEchoBesideNode(t *testing.T) {
	node := peertest.StartBtcd(t)
	node.Generate(t, 3)
	echo := newEcho(t)
	watch := peertest.NewKey("echo").Address(node.Params).EncodeAddress()
	const refused = "127.0.0.1:1" // nothing listens on port 1
	notUsed := "--connect " + echo + " was not used: it sends back what it is sent"
	t.Run("scan", func(t *testing.T) {
		stdout, stderr, status := runCLI(t, "", "scan", "--json", "--network", "regtest", "--connect", echo, "--connect", node.P2PAddr, "--watch", watch)
		var out struct {
			To       int      `json:"to"`
			Warnings []string `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil || status != exitOK {
			t.Fatalf("status %d, stderr %q (%v)", status, stderr, err)
		}
		if out.To != 3 || !hasWarning(out.Warnings, notUsed) {
			t.Errorf("to %d, warnings %q: want 3, and %q", out.To, out.Warnings, notUsed)
		}
	})
	t.Run("peers", func(t *testing.T) {
		stdout, stderr, status := runCLI(t, "", "peers", "--json", "--network", "regtest", "--connect", echo, "--connect", node.P2PAddr)
		var out struct {
			Peers []struct {
				Address string `json:"address"`
			} `json:"peers"`
			Warnings []string `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil || status != exitOK {
			t.Fatalf("status %d, stderr %q (%v)", status, stderr, err)
		}
		if len(out.Peers) != 1 || out.Peers[0].Address != node.P2PAddr || !hasWarning(out.Warnings, notUsed) {
			t.Errorf("peers %v, warnings %q: want %s alone, and %q", out.Peers, out.Warnings, node.P2PAddr, notUsed)
		}
	})
	for _, first := range []struct{ name, addr, why string }{
		{"lab after an echo", echo, notUsed},
		{"lab after a port nothing listens on", refused, "--connect " + refused + " was not used: unreachable: connection refused"},
	} {
		t.Run(first.name, func(t *testing.T) {
			stdout, stderr, status := runCLI(t, "", "lab", "--json", "--network", "regtest", "--probes", "10", "--timing", "0",
				"--connect", first.addr, "--connect", node.P2PAddr)
			var out struct {
				Source   string   `json:"source"`
				Warnings []string `json:"warnings"`
			}
			if err := json.Unmarshal([]byte(stdout), &out); err != nil || status != exitOK {
				t.Fatalf("status %d, stderr %q (%v)", status, stderr, err)
			}
			if want := "regtest blocks 0..3 from " + node.P2PAddr; out.Source != want {
				t.Errorf("source %q, want %q", out.Source, want)
			}
			if !hasWarning(out.Warnings, first.why) || !hasWarning(out.Warnings, "the blocks come from one peer, "+node.P2PAddr) {
				t.Errorf("warnings %q: want %q and the one peer named", out.Warnings, first.why)
			}
		})
	}
	t.Run("lab from several peers", func(t *testing.T) {
		args := []string{"lab", "--json", "--network", "regtest", "--probes", "10", "--timing", "0"}
		for range 4 {
			args = append(args, "--connect", peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr)
		}
		stdout, stderr, status := runCLI(t, "", args...)
		var out struct {
			Source   string   `json:"source"`
			Warnings []string `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil || status != exitOK {
			t.Fatalf("status %d, stderr %q (%v)", status, stderr, err)
		}
		if !strings.HasPrefix(out.Source, "regtest blocks 0..3 from 127.0.0.1:") || !strings.HasSuffix(out.Source, " and 1 more") || strings.Count(out.Source, ", ") != 2 {
			t.Errorf("source %q: want three peers named and 1 more", out.Source)
		}
		if hasWarning(out.Warnings, "one peer") || hasWarning(out.Warnings, "not used") {
			t.Errorf("warnings %q", out.Warnings)
		}
	})
}

// TestOwnUserAgentIsANode: a node that calls itself by this client's
// user agent, with a version message of its own (its nonce), is a node
// like any other, used and not named an echo service: only a version
// message with this connection's own nonce is an echo (peer.ErrEcho).
func TestOwnUserAgentIsANode(t *testing.T) {
	node := peertest.StartBtcd(t)
	node.Generate(t, 3)
	mimic := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if v, ok := m.(*wire.MsgVersion); ok {
			v.UserAgent = peer.UserAgent
		}
		return []wire.Message{m}, false
	})
	watch := peertest.NewKey("mimic").Address(node.Params).EncodeAddress()
	for _, args := range [][]string{
		{"peers", "--json", "--network", "regtest", "--timeout", "5s", "--connect", mimic.Addr},
		{"scan", "--json", "--network", "regtest", "--timeout", "5s", "--connect", mimic.Addr, "--watch", watch},
	} {
		t.Run(args[0], func(t *testing.T) {
			stdout, stderr, status := runCLI(t, "", args...)
			if status != exitOK || strings.Contains(stdout+stderr, "sends back what it is sent") || !strings.Contains(stdout, peer.UserAgent) {
				t.Errorf("status %d, stdout %q, stderr %q: want 0 and the node used, its user agent shown", status, stdout, stderr)
			}
		})
	}
}
