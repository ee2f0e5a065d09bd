package peer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// stallConn is a connection whose writes wait while it is stalled, as
// they do once a node stops reading and the socket's buffers are full;
// the write deadline or Close ends the wait. It keeps what was written.
type stallConn struct {
	net.Conn
	waiting atomic.Int32 // writes waiting
	closed  chan struct{}
	once    sync.Once

	mu       sync.Mutex
	open     chan struct{} // closed while writes pass
	deadline time.Time
	written  bytes.Buffer
}

func newStallConn(c net.Conn) *stallConn {
	s := &stallConn{Conn: c, closed: make(chan struct{}), open: make(chan struct{})}
	close(s.open)
	return s
}

// stall holds the writes from now on.
func (s *stallConn) stall() {
	s.mu.Lock()
	s.open = make(chan struct{})
	s.mu.Unlock()
}

// resume lets the writes through.
func (s *stallConn) resume() {
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-s.open:
	default:
		close(s.open)
	}
}

func (s *stallConn) SetWriteDeadline(t time.Time) error {
	s.mu.Lock()
	s.deadline = t
	s.mu.Unlock()
	return s.Conn.SetWriteDeadline(t)
}

func (s *stallConn) Write(b []byte) (int, error) {
	s.mu.Lock()
	open, deadline := s.open, s.deadline
	s.mu.Unlock()
	var expired <-chan time.Time
	if !deadline.IsZero() {
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		expired = timer.C
	}
	s.waiting.Add(1)
	select {
	case <-open:
	case <-s.closed:
		s.waiting.Add(-1)
		return 0, net.ErrClosed
	case <-expired:
		s.waiting.Add(-1)
		return 0, os.ErrDeadlineExceeded
	}
	s.waiting.Add(-1)
	n, err := s.Conn.Write(b)
	s.mu.Lock()
	s.written.Write(b[:n])
	s.mu.Unlock()
	return n, err
}

func (s *stallConn) Close() error {
	s.once.Do(func() { close(s.closed) })
	return s.Conn.Close()
}

// waitStalled waits until a write waits on s.
func (s *stallConn) waitStalled(t *testing.T) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); s.waiting.Load() == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no write waits on the stalled connection")
		}
	}
}

// askedTxs returns the txids of the getdata messages written to s.
func (s *stallConn) askedTxs(t *testing.T) map[chainhash.Hash]bool {
	t.Helper()
	s.mu.Lock()
	r := bytes.NewReader(s.written.Bytes())
	s.mu.Unlock()
	asked := make(map[chainhash.Hash]bool)
	for {
		_, m, _, err := wire.ReadMessageWithEncodingN(r, wire.ProtocolVersion, fx.node.Params.Net, wire.WitnessEncoding)
		switch {
		case errors.Is(err, io.EOF):
			return asked
		case errors.Is(err, wire.ErrUnknownMessage):
			continue
		case err != nil:
			t.Fatalf("what was written does not decode: %v", err)
		}
		if gd, ok := m.(*wire.MsgGetData); ok {
			for _, iv := range gd.InvList {
				asked[iv.Hash] = true
			}
		}
	}
}

// dialStalling dials fx's node through a stallConn.
func dialStalling(t *testing.T, timeout time.Duration) (*Peer, *stallConn) {
	t.Helper()
	return dialStallingTo(t, fx.node.P2PAddr, timeout)
}

// dialStallingTo dials addr, on fx's network, through a stallConn; the
// peer is closed when the test ends.
func dialStallingTo(t *testing.T, addr string, timeout time.Duration) (*Peer, *stallConn) {
	t.Helper()
	var conn *stallConn
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		conn = newStallConn(c)
		return conn, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	p, err := Dial(ctx, Config{Addr: addr, Params: fx.node.Params, Timeout: timeout, Dial: dial})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, conn
}

// writeAhead has the writer write an inv of fx's payment (as Reannounce
// does) with a write deadline a minute away; it returns the write's
// error when it ends.
func writeAhead(p *Peer) <-chan error {
	txid := fx.pay.TxHash()
	inv := wire.NewMsgInv()
	inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &txid))
	ahead := make(chan error, 1)
	go func() { ahead <- p.write(context.Background(), "inv tx", inv, time.Now().Add(time.Minute)) }()
	return ahead
}

// TestQueuedAskCancelled: the node stops reading (its connection
// stalls) while an ask (getdata) is sent. Cancelled while it waits in
// the write queue behind a message being written, the ask is withdrawn,
// never sent, and the connection kept: once the node reads again, the
// next ask is answered (btcd's notfound). Before, that connection was
// dropped and the next ask failed with ErrDisconnected. Cancelled while
// being written, or not written by its deadline, the ask still costs
// the connection: its answer could come late.
func TestQueuedAskCancelled(t *testing.T) {
	needFixture(t)
	const timeout = 2 * time.Second
	tests := []struct {
		name   string
		ahead  bool          // a message is being written ahead of the ask, which waits in the queue
		cancel time.Duration // the ask's context ends after this; 0: never
		kept   bool          // the connection is kept, the ask withdrawn
	}{
		{name: "queued", ahead: true, cancel: 300 * time.Millisecond, kept: true},
		{name: "being_written", cancel: 300 * time.Millisecond},
		{name: "queued_past_deadline", ahead: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, conn := dialStalling(t, timeout)
			conn.stall()
			var ahead <-chan error
			if tt.ahead {
				ahead = writeAhead(p)
				conn.waitStalled(t)
			}
			ctx := context.Background()
			if tt.cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.cancel)
				defer cancel()
			}
			asked := chainhash.Hash{1}
			start := time.Now()
			held, err := p.HasTx(ctx, asked)
			took := time.Since(start)
			t.Logf("held %v, %v after %v", held, err, took.Round(time.Millisecond))
			var te *TimeoutError
			switch {
			case tt.cancel > 0 && !errors.Is(err, context.DeadlineExceeded):
				t.Fatalf("%v: want the context's error", err)
			case tt.cancel == 0 && (!errors.As(err, &te) || !strings.Contains(err.Error(), "could not send getdata")):
				t.Fatalf("%v: want a *TimeoutError for the getdata not sent", err)
			case tt.cancel == 0 && took < timeout-100*time.Millisecond:
				t.Fatalf("failed after %v, before the timeout (%v)", took, timeout)
			}
			select {
			case <-p.Done():
				if tt.kept {
					t.Fatalf("the connection was dropped: %v", p.Err())
				}
			default:
				if !tt.kept {
					t.Fatal("the connection was kept")
				}
			}
			conn.resume()
			if ahead != nil {
				if err := <-ahead; (err == nil) != tt.kept {
					t.Fatalf("the message ahead: %v", err)
				}
			}
			next := chainhash.Hash{2}
			held, err = p.HasTx(context.Background(), next)
			if tt.kept {
				if err != nil || held {
					t.Fatalf("asked again: %v, %v: want notfound on the connection kept", held, err)
				}
				if got := conn.askedTxs(t); got[asked] || !got[next] {
					t.Fatalf("asked for %v: want %v withdrawn, %v asked", got, asked, next)
				}
				return
			}
			checkPeerError(t, err, fx.node.P2PAddr, ErrDisconnected)
		})
	}
}

// TestCancelledAsksBehindStalledWriter: a node that stops reading while
// ask after ask is cancelled. The withdrawn asks hold at most the queue's
// 8 places until the writer takes them (and skips them), the others end
// waiting for a place; no goroutine is left behind, nothing withdrawn is
// sent, and the connection serves the next ask once the node reads
// again.
func TestCancelledAsksBehindStalledWriter(t *testing.T) {
	needFixture(t)
	const asks = 40
	p, conn := dialStalling(t, 5*time.Second)
	conn.stall()
	ahead := writeAhead(p)
	conn.waitStalled(t)
	before := runtime.NumGoroutine()
	for i := range asks {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err := p.HasTx(ctx, chainhash.Hash{1, byte(i)})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("ask %d: %v: want the context's error", i, err)
		}
	}
	queued, after := len(p.w.queue), runtime.NumGoroutine()
	t.Logf("%d asks cancelled: %d in the queue, goroutines %d -> %d", asks, queued, before, after)
	if queued > writeQueueLen {
		t.Fatalf("%d messages queued, more than %d", queued, writeQueueLen)
	}
	if after > before+2 { // slack for the runtime's own
		t.Fatalf("goroutines %d -> %d", before, after)
	}
	select {
	case <-p.Done():
		t.Fatalf("the connection was dropped: %v", p.Err())
	default:
	}
	conn.resume()
	if err := <-ahead; err != nil {
		t.Fatalf("the message ahead: %v", err)
	}
	next := chainhash.Hash{2}
	if held, err := p.HasTx(context.Background(), next); err != nil || held {
		t.Fatalf("asked again: %v, %v: want notfound", held, err)
	}
	got := conn.askedTxs(t)
	for i := range asks {
		if got[chainhash.Hash{1, byte(i)}] {
			t.Fatalf("withdrawn ask %d was sent", i)
		}
	}
	if !got[next] || len(got) != 1 {
		t.Fatalf("asked for %v, want %v alone", got, next)
	}
}
