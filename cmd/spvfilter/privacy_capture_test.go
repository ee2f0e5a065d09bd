package main

import (
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestPrivacyCaptureStdoutStats runs capture with --out - --json and a
// client that never sends its version: standard output must hold only
// capture lines (none here), the statistics go to standard error, and the
// client is dropped after --handshake-timeout.
func TestPrivacyCaptureStdoutStats(t *testing.T) {
	// An upstream that answers a version message with its own, and is
	// otherwise silent.
	up := startVersionAnswerer(t)
	relayAddr := freeLoopbackAddr(t)

	type result struct {
		stdout, stderr string
		status         int
	}
	done := make(chan result, 1)
	go func() {
		stdout, stderr, status := runCLI(t, "", "privacy", "capture", "--listen", relayAddr, "--upstream", up,
			"--network", "regtest", "--out", "-", "--json", "--duration", "1500ms", "--handshake-timeout", "200ms")
		done <- result{stdout, stderr, status}
	}()
	c := dialRelay(t, relayAddr)
	c.SetReadDeadline(time.Now().Add(time.Second))
	if _, err := c.Read(make([]byte, 1)); err == nil {
		t.Fatal("the relay sent data to a client for a silent upstream")
	} else if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("silent client not dropped after --handshake-timeout")
	}
	res := <-done
	if res.status != exitOK {
		t.Fatalf("status %d: %s", res.status, res.stderr)
	}
	if res.stdout != "" {
		t.Fatalf("standard output holds more than the capture lines: %q", res.stdout)
	}
	i := strings.Index(res.stderr, "{\n")
	if i < 0 {
		t.Fatalf("no statistics on standard error: %q", res.stderr)
	}
	var st captureStatsJSON
	if err := json.NewDecoder(strings.NewReader(res.stderr[i:])).Decode(&st); err != nil {
		t.Fatalf("statistics: %v in %q", err, res.stderr)
	}
	if st.ClientCount != 1 || st.HandshakeTimeoutCount != 1 {
		t.Fatalf("stats %+v, want 1 client dropped for its handshake", st)
	}
}

// dialRelay connects to the capture relay at addr, started beside the
// test, trying for a second while it is not yet listening; the
// connection is closed when the test ends.
func dialRelay(t *testing.T, addr string) net.Conn {
	t.Helper()
	var c net.Conn
	var err error
	for range 100 {
		if c, err = net.Dial("tcp", addr); err == nil {
			t.Cleanup(func() { c.Close() })
			return c
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("relay not listening: %v", err)
	return nil
}

// startVersionAnswerer listens on loopback and answers each connection's
// first message with a version message, then stays silent until closed.
func startVersionAnswerer(t *testing.T) string {
	t.Helper()
	up, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { up.Close() })
	go func() {
		for {
			c, err := up.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { c.Close() })
			go func() {
				if _, _, err := wire.ReadMessage(c, wire.ProtocolVersion, wire.TestNet); err != nil {
					return
				}
				v := wire.NewMsgVersion(wire.NewNetAddressIPPort(net.IPv4zero, 0, 0), wire.NewNetAddressIPPort(net.IPv4zero, 0, 0), 1, 0)
				wire.WriteMessage(c, v, wire.ProtocolVersion, wire.TestNet)
			}()
		}
	}()
	return up.Addr().String()
}

// TestPrivacyCaptureUpstreamDown: capture checks its upstream before it
// listens; a node that is not there is an error (status 1) naming it,
// and a listener that does not speak the protocol is one too.
func TestPrivacyCaptureUpstreamDown(t *testing.T) {
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer mute.Close()
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			c.Write([]byte("HTTP/1.0 400 Bad Request\r\n\r\n"))
			c.Close()
		}
	}()
	out := filepath.Join(t.TempDir(), "capture.jsonl")
	for _, upstream := range []string{"127.0.0.1:1", mute.Addr().String()} {
		stdout, stderr, status := runCLI(t, "", "privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", upstream,
			"--network", "regtest", "--out", out, "--duration", "5s")
		if status != exitFailure || !strings.Contains(stderr, upstream) || stdout != "" || strings.Contains(stderr, "listening") ||
			strings.Count(stderr, "\n") != 1 {
			t.Errorf("upstream %s: status %d, stdout %q, stderr %q: want 1 naming the address before listening", upstream, status, stdout, stderr)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("upstream %s: the capture file was created", upstream)
		}
	}
}

// TestPrivacyCaptureContract runs capture in front of a real btcd: a
// --listen address in use is a failure of the machine (status 1), not bad
// input, and leaves no empty --out behind (an --out that was there stays
// as it was); with --json every line on standard error is JSON; and an
// upstream of another network is named with the network asked for. An
// address of no interface says what to give: before, only what was wrong.
func TestPrivacyCaptureContract(t *testing.T) {
	node := peertest.StartBtcd(t)
	out := filepath.Join(t.TempDir(), "capture.jsonl")
	kept := filepath.Join(t.TempDir(), "kept.jsonl")
	const record = `{"time":"2024-01-01T00:00:00Z","client":"127.0.0.1:5","command":"filterclear"}` + "\n"
	if err := os.WriteFile(kept, []byte(record), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, out string
		after     string // "" for a file that must not be there
	}{
		{"listen address in use", out, ""},
		{"listen address in use, --out there before", kept, record},
	} {
		t.Run(tt.name, func(t *testing.T) {
			// btcd's own port is in use.
			stdout, stderr, status := runCLI(t, "", "privacy", "capture", "--listen", node.P2PAddr, "--upstream", node.P2PAddr,
				"--network", "regtest", "--out", tt.out, "--duration", "2s")
			if status != exitFailure || stdout != "" || !strings.Contains(stderr, "--listen "+node.P2PAddr+": the address is in use: another program listens there") ||
				strings.Contains(stderr, "bind:") || strings.Contains(stderr, "relay:") || strings.Count(stderr, "\n") != 1 {
				t.Fatalf("status %d, stdout %q, stderr %q: want 1 naming --listen, in use", status, stdout, stderr)
			}
			b, err := os.ReadFile(tt.out)
			switch {
			case tt.after == "" && !errors.Is(err, fs.ErrNotExist):
				t.Errorf("--out %s left behind (%q, %v)", tt.out, b, err)
			case tt.after != "" && string(b) != tt.after:
				t.Errorf("--out %s holds %q, want %q as before (%v)", tt.out, b, tt.after, err)
			}
		})
	}
	// An address no interface of this machine has (192.0.2.1, kept for
	// documentation) says what to give instead.
	for _, tt := range []struct{ name, listen, want string }{
		{"listen address of no interface", "192.0.2.1:0", "--listen 192.0.2.1:0: no interface of this machine has that address: " +
			"give 127.0.0.1 (this machine only), an address of one of its interfaces, or none (:PORT) for every interface"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, stderr, status := runCLI(t, "", "privacy", "capture", "--listen", tt.listen, "--upstream", node.P2PAddr,
				"--network", "regtest", "--out", "-", "--duration", "2s")
			if status != exitFailure || !strings.Contains(stderr, tt.want) || strings.Contains(stderr, "bind:") {
				t.Errorf("status %d, stderr %q: want %d and %q", status, stderr, exitFailure, tt.want)
			}
		})
	}
	t.Run("json on standard error", func(t *testing.T) {
		stdout, stderr, status := runCLI(t, "", "privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node.P2PAddr,
			"--network", "regtest", "--out", out, "--duration", "300ms", "--json")
		if status != exitOK || !json.Valid([]byte(stdout)) {
			t.Fatalf("status %d, stdout %q, stderr %q", status, stdout, stderr)
		}
		lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
		for _, line := range lines {
			if !json.Valid([]byte(line)) {
				t.Errorf("stderr line %q is not JSON", line)
			}
		}
		var l struct{ Listening string }
		if err := json.Unmarshal([]byte(lines[0]), &l); err != nil || !strings.HasPrefix(l.Listening, "127.0.0.1:") {
			t.Errorf("first stderr line %q: want the address listened on", lines[0])
		}
	})
	t.Run("upstream of another network", func(t *testing.T) {
		stdout, stderr, status := runCLI(t, "", "privacy", "capture", "--listen", "127.0.0.1:0", "--upstream", node.P2PAddr,
			"--network", "testnet3", "--out", out, "--duration", "2s")
		if status != exitFailure || stdout != "" || !strings.Contains(stderr, "--upstream "+node.P2PAddr+": it hung up on the version message") ||
			!strings.Contains(stderr, "(is --network testnet3 right?)") {
			t.Fatalf("status %d, stdout %q, stderr %q: want 1 with the network hint", status, stdout, stderr)
		}
	})
}

// TestPrivacyCaptureLogLines: what the relay logs on standard error (a
// client connected, sent its version, then hung up) reads as the tool's:
// "spvfilter: " before every line, or with --json one JSON object per
// line, without Go's EOF; the statistics, the result, are on standard
// output.
func TestPrivacyCaptureLogLines(t *testing.T) {
	up := startVersionAnswerer(t)
	for _, jsonMode := range []bool{false, true} {
		relayAddr := freeLoopbackAddr(t)
		args := []string{"privacy", "capture", "--listen", relayAddr, "--upstream", up, "--network", "regtest",
			"--out", filepath.Join(t.TempDir(), "c.jsonl"), "--duration", "1s", "--handshake-timeout", "200ms"}
		if jsonMode {
			args = append(args, "--json")
		}
		done := make(chan [2]string, 1)
		go func() {
			stdout, stderr, _ := runCLI(t, "", args...)
			done <- [2]string{stdout, stderr}
		}()
		c := dialRelay(t, relayAddr)
		v := wire.NewMsgVersion(wire.NewNetAddressIPPort(net.IPv4zero, 0, 0), wire.NewNetAddressIPPort(net.IPv4zero, 0, 0), 1, 0)
		if err := wire.WriteMessage(c, v, wire.ProtocolVersion, wire.TestNet); err != nil {
			t.Fatal(err)
		}
		// Hang up: no more to send, and what the relay sends is read
		// to its end, so that the relay sees an end and not a reset.
		c.(*net.TCPConn).CloseWrite()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		io.Copy(io.Discard, c)
		c.Close()
		res := <-done
		stdout, stderr := res[0], res[1]
		if !strings.Contains(stderr, "closed: the client or the node hung up") || strings.Contains(stderr, "EOF") {
			t.Fatalf("json %t: no log line of the client hanging up, in the tool's words: %q", jsonMode, stderr)
		}
		if !strings.Contains(stdout, "client") || strings.Contains(stderr, "client(s)") || strings.Contains(stderr, "client_count") {
			t.Errorf("json %t: the statistics are not on standard output alone: stdout %q, stderr %q", jsonMode, stdout, stderr)
		}
		for _, line := range strings.Split(strings.TrimSuffix(stderr, "\n"), "\n") {
			if jsonMode && !strings.HasPrefix(line, "{") || !jsonMode && !strings.HasPrefix(line, "spvfilter: ") {
				t.Errorf("json %t: stderr line %q", jsonMode, line)
			}
		}
	}
}
