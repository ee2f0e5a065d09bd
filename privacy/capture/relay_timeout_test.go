package capture

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
)

func startRelayConfig(t *testing.T, cfg RelayConfig) *Relay {
	t.Helper()
	cfg.Listen, cfg.Net = "127.0.0.1:0", wire.TestNet
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	r, err := NewRelay(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Serve(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return r
}

// silentClient connects and reads the relayed version of the node, which
// shows it holds a slot; it sends nothing.
func silentClient(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var hdr [frameHeaderSize]byte
	var p bytes.Buffer
	if cmd, err := readFrame(c, wire.TestNet, &hdr, &p); err != nil || cmd != "version" {
		t.Fatalf("silent client not served: %q %v", cmd, err)
	}
	return c
}

// waitClosed fails unless the relay closes c within limit.
func waitClosed(t *testing.T, c net.Conn, limit time.Duration, what string) {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(limit))
	var ne net.Error
	if _, err := io.Copy(io.Discard, c); errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("%s: still connected after %v", what, limit)
	}
}

func waitStat(t *testing.T, r *Relay, what string, get func(RelayStats) int64, want int64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for get(r.Stats()) != want && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := get(r.Stats()); got != want {
		t.Fatalf("%s = %d, want %d (%+v)", what, got, want, r.Stats())
	}
}

func TestRelayDropsSilentClients(t *testing.T) {
	node := startFakeNode(t)
	const hs = 150 * time.Millisecond
	r := startRelayConfig(t, RelayConfig{Upstream: node.ln.Addr().String(), MaxClients: 3, HandshakeTimeout: hs})
	addr := r.Addr().String()
	start := time.Now()
	var silent []net.Conn
	for range 3 {
		silent = append(silent, silentClient(t, addr))
	}
	for i, c := range silent {
		waitClosed(t, c, 5*time.Second, "silent client")
		if i == 0 && time.Since(start) < hs {
			t.Fatalf("dropped after %v, before the handshake timeout", time.Since(start))
		}
	}
	waitStat(t, r, "handshake timeouts", func(s RelayStats) int64 { return s.HandshakeTimeouts }, 3)
	// The slots are free again: three real clients in turn, each past
	// its version, are not dropped by the handshake timeout.
	for range 3 {
		goodExchange(t, addr, node)
	}
	if st := r.Stats(); st.HandshakeTimeouts != 3 || st.Evicted != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestRelayServesRealClientWhileSlotsFull(t *testing.T) {
	node := startFakeNode(t)
	// A long handshake timeout: the silent clients stay while the real
	// one arrives.
	r := startRelayConfig(t, RelayConfig{Upstream: node.ln.Addr().String(), MaxClients: 3, HandshakeTimeout: time.Minute})
	addr := r.Addr().String()
	var silent []net.Conn
	for range 3 {
		silent = append(silent, silentClient(t, addr))
	}
	goodExchange(t, addr, node)
	// The oldest silent client gave up its slot.
	waitClosed(t, silent[0], 5*time.Second, "oldest silent client")
	waitStat(t, r, "evicted", func(s RelayStats) int64 { return s.Evicted }, 1)
	// A client past its version is never evicted: with it and the two
	// other silent ones holding the slots, new clients take the silent
	// ones' slots, not its.
	real, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer real.Close()
	real.SetDeadline(time.Now().Add(10 * time.Second))
	var hdr [frameHeaderSize]byte
	var p bytes.Buffer
	if cmd, err := readFrame(real, wire.TestNet, &hdr, &p); err != nil || cmd != "version" {
		t.Fatalf("real client: %q %v", cmd, err)
	}
	v := wire.NewMsgVersion(wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 2, 0), wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 1, 0), 9, 0)
	records := r.Stats().Records
	if _, err := real.Write(frame(wire.TestNet, "version", encodeMsg(t, v))); err != nil {
		t.Fatal(err)
	}
	// The relay has read the version once it has recorded it: only then
	// is the client past its version.
	waitStat(t, r, "records", func(s RelayStats) int64 { return s.Records }, records+1)
	for range 2 {
		silentClient(t, addr) // evicts silent[1], then silent[2]
	}
	waitStat(t, r, "evicted", func(s RelayStats) int64 { return s.Evicted }, 3)
	waitClosed(t, silent[1], 5*time.Second, "second silent client")
	waitClosed(t, silent[2], 5*time.Second, "third silent client")
	ping := frame(wire.TestNet, "ping", encodeMsg(t, wire.NewMsgPing(0xfeed)))
	if _, err := real.Write(ping); err != nil {
		t.Fatalf("real client cut off: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !node.receivedContains(ping) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !node.receivedContains(ping) {
		t.Fatal("the real client's ping did not reach the node")
	}
}

func TestRelayIdleTimeout(t *testing.T) {
	node := startFakeNode(t)
	const idle = 400 * time.Millisecond
	r := startRelayConfig(t, RelayConfig{Upstream: node.ln.Addr().String(), HandshakeTimeout: time.Minute, IdleTimeout: idle})
	addr := r.Addr().String()
	handshake := func() net.Conn {
		c := silentClient(t, addr)
		v := wire.NewMsgVersion(wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 2, 0), wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 1, 0), 9, 0)
		if _, err := c.Write(frame(wire.TestNet, "version", encodeMsg(t, v))); err != nil {
			t.Fatal(err)
		}
		return c
	}
	// A client that keeps talking stays, past several idle periods.
	busy := handshake()
	// One that falls silent after its version is dropped.
	quiet := handshake()
	start := time.Now()
	for i := uint64(0); time.Since(start) < 4*idle; i++ {
		if _, err := busy.Write(frame(wire.TestNet, "ping", encodeMsg(t, wire.NewMsgPing(i)))); err != nil {
			t.Fatalf("busy client dropped: %v", err)
		}
		time.Sleep(idle / 5)
	}
	waitClosed(t, quiet, 5*time.Second, "idle client")
	waitStat(t, r, "idle timeouts", func(s RelayStats) int64 { return s.IdleTimeouts }, 1)
	last := frame(wire.TestNet, "ping", encodeMsg(t, wire.NewMsgPing(0x1a57)))
	if _, err := busy.Write(last); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !node.receivedContains(last) && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !node.receivedContains(last) {
		t.Fatal("the busy client was dropped")
	}
	if st := r.Stats(); st.HandshakeTimeouts != 0 || st.IdleTimeouts != 1 {
		t.Errorf("stats %+v", st)
	}
}
