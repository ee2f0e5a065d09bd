package client

import (
	"context"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendCancelledStalled: a send is cancelled as a getdata asking
// whether the node holds the transaction is being written, and the node
// never reads again. Its write is waited for, not its ctx: the send
// returns once the write's deadline (the timeout) passed, the
// connection dropped, and no later than the timeout and askWait after
// the cancel; Client.Close meanwhile ends it at once. Either way no
// goroutine of the send is left once the client is closed.
func TestSendCancelledStalled(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	const timeout = 3 * time.Second
	tests := []struct {
		name  string
		close bool // Client.Close right after the cancel
		// release writes the getdata this long before its deadline
		// (0: never; the timeout: at once), after which the node
		// answers nothing.
		release time.Duration
	}{
		{name: "waited"},
		{name: "closed", close: true},
		{name: "read_late_silent", release: 300 * time.Millisecond},
		{name: "read_silent", release: timeout},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clog := &stampedWriter{w: &lockedWriter{w: &strings.Builder{}}, start: time.Now()}
			st := &stallAsked{cancel: cancel, stalled: make(chan struct{}), release: tt.release}
			target := node.P2PAddr
			if tt.release > 0 {
				target = peertest.NewLiar(t, target, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
					if _, ok := m.(*wire.MsgNotFound); ok && st.done.Load() {
						return nil, false
					}
					return []wire.Message{m}, false
				}, peertest.AlsoSees(wire.CmdNotFound)).Addr
			}
			base := runtime.NumGoroutine()
			c := connectWith(t, Config{Peers: []string{target}, Params: node.Params, Timeout: timeout, Log: clog, Dialer: st.dial})
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the client's log:\n%s", clog)
				}
			})
			done := make(chan error, 1)
			go func() {
				_, err := c.SendTransaction(ctx, orphanTx())
				done <- err
			}()
			select {
			case <-st.stalled:
			case <-time.After(30 * time.Second):
				t.Fatal("no getdata written after the announcement")
			}
			cancelled := time.Now()
			if tt.close {
				c.Close()
			}
			var err error
			select {
			case err = <-done:
			case <-time.After(4 * timeout):
				t.Fatalf("the send had not returned %v after the cancel", 4*timeout)
			}
			took := time.Since(cancelled)
			t.Logf("%v, %v after the cancel", err, took.Round(time.Millisecond))
			bound := timeout + c.askWait()
			if tt.close {
				bound = time.Second
			}
			if took > bound {
				t.Errorf("the send returned %v after the cancel: want %v at most", took, bound)
			}
			c.Close()
			var now int
			for end := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if now = runtime.NumGoroutine(); now <= base || time.Now().After(end) {
					break
				}
			}
			t.Logf("goroutines %d before connecting, %d after close", base, now)
			if now > base {
				buf := make([]byte, 1<<16)
				t.Errorf("goroutines %d before connecting, %d after close:\n%s", base, now, buf[:runtime.Stack(buf, true)])
			}
		})
	}
}

// stallAsked dials connections on which the first getdata written after
// an inv cancels a send and never goes out: the node stopped reading.
// The write waits for its deadline or the connection's close.
type stallAsked struct {
	cancel  context.CancelFunc
	stalled chan struct{} // closed once the getdata stalls
	done    atomic.Bool
	release time.Duration // see TestSendCancelledStalled
}

func (s *stallAsked) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return &stallingConn{Conn: conn, s: s, closed: make(chan struct{})}, nil
}

// stallingConn is a connection of stallAsked's.
type stallingConn struct {
	net.Conn
	s         *stallAsked
	announced bool // an inv was written
	stuck     bool // the getdata stalled: nothing goes out after

	mu       sync.Mutex
	deadline time.Time
	closed   chan struct{}
	once     sync.Once
}

func (w *stallingConn) SetWriteDeadline(t time.Time) error {
	w.mu.Lock()
	w.deadline = t
	w.mu.Unlock()
	return w.Conn.SetWriteDeadline(t)
}

func (w *stallingConn) Close() error {
	w.once.Do(func() { close(w.closed) })
	return w.Conn.Close()
}

// Write looks at the command of each message header written (a
// message's header is written on its own, then its payload).
func (w *stallingConn) Write(b []byte) (int, error) {
	if len(b) == wire.MessageHeaderSize {
		switch cmd := strings.TrimRight(string(b[4:16]), "\x00"); {
		case cmd == wire.CmdInv:
			w.announced = true
		case cmd == wire.CmdGetData && w.announced && w.s.done.CompareAndSwap(false, true):
			w.stuck = true
			w.s.cancel()
			close(w.s.stalled)
		}
	}
	if !w.stuck {
		return w.Conn.Write(b)
	}
	w.mu.Lock()
	deadline := w.deadline
	w.mu.Unlock()
	wait := time.Until(deadline)
	if w.s.release > 0 {
		wait -= w.s.release
	}
	timer := time.NewTimer(wait)
	defer timer.Stop()
	select {
	case <-w.closed:
		return 0, net.ErrClosed
	case <-timer.C:
		if w.s.release > 0 {
			return w.Conn.Write(b)
		}
		return 0, os.ErrDeadlineExceeded
	}
}
