package capture

import (
	"context"
	"errors"
	"io/fs"
	"net"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/model"
)

// failingOut takes its first ok writes and fails every later one with err.
type failingOut struct {
	mu     sync.Mutex
	ok     int
	err    error
	writes int
	lines  []string
}

func (f *failingOut) Write(b []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	if f.writes > f.ok {
		return 0, f.err
	}
	f.lines = append(f.lines, string(b))
	return len(b), nil
}

func (f *failingOut) count() (writes, kept int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes, len(f.lines)
}

// relayGoroutines counts the goroutines running the relay's code.
func relayGoroutines() int {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	k := 0
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "capture.(*Relay).") {
			k++
		}
	}
	return k
}

// bloomClient handshakes with the relay at addr as a regtest client and
// sends a filterload and two filteradds: four records.
func bloomClient(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(10 * time.Second))
	me := wire.NewNetAddressIPPort(net.IPv4(127, 0, 0, 1), 0, 0)
	v := wire.NewMsgVersion(me, me, 11, 0)
	if err := wire.WriteMessage(c, v, wire.ProtocolVersion, wire.TestNet); err != nil {
		t.Fatal(err)
	}
	for got := false; !got; {
		m, _, err := wire.ReadMessage(c, wire.ProtocolVersion, wire.TestNet)
		if err != nil {
			// The relay may close the connection at the version record.
			return c
		}
		_, got = m.(*wire.MsgVerAck)
	}
	f := model.NewWallet(2, 1).Filter(0.001, 0, 7)
	for _, m := range []wire.Message{wire.NewMsgVerAck(), f.MsgFilterLoad(), wire.NewMsgFilterAdd([]byte{1, 2, 3}), wire.NewMsgFilterAdd([]byte{4, 5})} {
		if err := wire.WriteMessage(c, m, wire.ProtocolVersion, wire.TestNet); err != nil {
			return c
		}
	}
	return c
}

// TestRelayEndsAtFailedWrite: the first record Out does not take ends
// Serve with an *OutError that counts the records written before and
// wraps the writer's error; the relay writes nothing after it, closes its
// other clients and leaves no goroutine of its own running. Before, the
// failed write dropped the client that sent the record and the relay
// served on, recording nothing, until its context ended, and Serve
// returned nil.
func TestRelayEndsAtFailedWrite(t *testing.T) {
	node := peertest.StartBtcd(t)
	for _, tc := range []struct {
		name string
		ok   int // writes Out takes
		err  error
	}{
		{"full disk at the first record", 0, &fs.PathError{Op: "write", Path: "capture.jsonl", Err: syscall.ENOSPC}},
		{"reader gone at the third record", 2, &fs.PathError{Op: "write", Path: "|1", Err: syscall.EPIPE}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := &failingOut{ok: tc.ok, err: tc.err}
			r, err := NewRelay(RelayConfig{Listen: "127.0.0.1:0", Upstream: node.P2PAddr, Net: wire.TestNet, Out: out})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			served := make(chan error, 1)
			go func() { served <- r.Serve(ctx) }()
			defer r.Close()

			// A client that connects and sends nothing: the failure
			// must close it too.
			bystander, err := net.Dial("tcp", r.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer bystander.Close()
			waitStat(t, r, "clients", func(s RelayStats) int64 { return s.Clients }, 1)

			start := time.Now()
			bloomClient(t, r.Addr().String())
			var got error
			select {
			case got = <-served:
			case <-time.After(5 * time.Second):
				t.Fatalf("Serve still running 5s after the failed write (stats %+v)", r.Stats())
			}
			var oe *OutError
			if !errors.As(got, &oe) {
				t.Fatalf("Serve returned %v (%T), want an *OutError", got, got)
			}
			if oe.Written != int64(tc.ok) || !errors.Is(got, tc.err.(*fs.PathError).Err) {
				t.Errorf("OutError %+v (%v): want %d written, wrapping %v", oe, got, tc.ok, tc.err)
			}
			if writes, kept := out.count(); writes != tc.ok+1 || kept != tc.ok {
				t.Errorf("Out saw %d writes and kept %d: want %d and %d (nothing written after the failure)", writes, kept, tc.ok+1, tc.ok)
			}
			if st := r.Stats(); st.Records != int64(tc.ok) {
				t.Errorf("Stats().Records = %d, want %d", st.Records, tc.ok)
			}
			waitClosed(t, bystander, 2*time.Second, "the client that sent nothing")
			deadline := time.Now().Add(2 * time.Second)
			for relayGoroutines() > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if k := relayGoroutines(); k > 0 {
				t.Errorf("%d goroutines of the relay still running after Serve returned", k)
			}
			t.Logf("Serve ended %v after the recording client connected", time.Since(start).Round(time.Millisecond))
		})
	}
}
