package peer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// TestHasTxWithinCancelledWhileWritten: HasTxWithin's context ends
// while its getdata is being written (the node stopped reading, its
// connection stalled). The writer took the getdata: the node is asked,
// so its answer is waited for within the bound, and the connection is
// kept (before, the context's end dropped it, as it did on a loaded
// machine whenever the context ended as the write completed: a
// cancelled send cost its peer's connection though the node answered
// at once). Cancelled while the getdata waits in the queue behind
// another message, the ask is withdrawn, nothing asked, the connection
// kept. A node that never reads again still ends the ask at the write's
// deadline (the timeout), the connection dropped.
func TestHasTxWithinCancelledWhileWritten(t *testing.T) {
	needFixture(t)
	const timeout, within = 2 * time.Second, time.Second
	tests := []struct {
		name   string
		ahead  bool          // a message is being written ahead of the ask, which waits in the queue
		resume time.Duration // the node reads again this long after the cancel; 0: never
		want   error         // the ask's error: nil (the node's notfound), the context's, a timeout
		kept   bool
	}{
		{name: "being_written", resume: 200 * time.Millisecond, kept: true},
		{name: "queued", ahead: true, resume: 200 * time.Millisecond, want: context.Canceled, kept: true},
		{name: "never_written", want: &TimeoutError{}},
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
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type result struct {
				held bool
				err  error
			}
			asked := make(chan result, 1)
			start := time.Now()
			go func() {
				held, err := p.HasTxWithin(ctx, chainhash.Hash{1}, within)
				asked <- result{held, err}
			}()
			if !tt.ahead {
				conn.waitStalled(t) // the getdata is being written
			} else {
				time.Sleep(100 * time.Millisecond) // the getdata is queued
			}
			cancel()
			if tt.resume > 0 {
				time.AfterFunc(tt.resume, conn.resume)
			}
			r := <-asked
			took := time.Since(start)
			t.Logf("held %v, %v after %v", r.held, r.err, took.Round(time.Millisecond))
			var te *TimeoutError
			switch {
			case tt.want == nil && (r.err != nil || r.held):
				t.Fatalf("held %v, %v: want the node's notfound, awaited after the cancel", r.held, r.err)
			case errors.Is(tt.want, context.Canceled) && !errors.Is(r.err, context.Canceled):
				t.Fatalf("%v: want the context's error", r.err)
			case errors.As(tt.want, &te) && (!errors.As(r.err, &te) || took > timeout+within):
				t.Fatalf("%v after %v: want a *TimeoutError within the timeout", r.err, took)
			}
			select {
			case <-p.Done():
				if tt.kept {
					t.Fatalf("the connection was dropped: %v", p.Err())
				}
				return
			default:
				if !tt.kept {
					t.Fatal("the connection was kept")
				}
			}
			if ahead != nil {
				if err := <-ahead; err != nil {
					t.Fatalf("the message ahead: %v", err)
				}
			}
			if held, err := p.HasTx(context.Background(), chainhash.Hash{2}); err != nil || held {
				t.Errorf("asked again: %v, %v: want notfound on the connection kept", held, err)
			}
		})
	}
}

// TestReannounceCancelledKeeps: an inv written for a context that ended
// (before it was queued, or while it is being written) keeps the
// connection: no request awaits an answer to it, and the node's getdata
// for it is served whenever it comes (before, it dropped the
// connection, so that a send cancelled as its announcement was due cost
// its peer's connection).
func TestReannounceCancelledKeeps(t *testing.T) {
	needFixture(t)
	tests := []struct {
		name  string
		stall bool // the inv is being written when the context ends
	}{
		{name: "ended_before"},
		{name: "being_written", stall: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, conn := dialStalling(t, 2*time.Second)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			if tt.stall {
				conn.stall()
				go func() { done <- p.Reannounce(ctx, fx.pay) }()
				conn.waitStalled(t)
				cancel()
				time.AfterFunc(100*time.Millisecond, conn.resume)
			} else {
				cancel()
				done <- p.Reannounce(ctx, fx.pay)
			}
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("%v: want the context's error", err)
			}
			select {
			case <-p.Done():
				t.Fatalf("the connection was dropped: %v", p.Err())
			default:
			}
			if held, err := p.HasTx(context.Background(), chainhash.Hash{2}); err != nil || held {
				t.Errorf("asked again: %v, %v: want notfound on the connection kept", held, err)
			}
		})
	}
}
