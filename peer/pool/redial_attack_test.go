package pool

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestAbandonedEndsLeaveHonestIn: an honest member with failures in a
// row from an earlier outage, connected again, whose requests this side
// abandons (as when another peer answered first), one after another. Run's
// look used to set its next dial at its earlier failures' backoff (see
// ended), and RedialDue left it out until then: 2 s each time after
// three failures, 8 s after five, the failures never clearing while its
// connections did not last stableConnection, and a send meanwhile went to
// the other peers alone. Now it is charged nothing and dialled again at
// once.
func TestAbandonedEndsLeaveHonestIn(t *testing.T) {
	node, hashes := abandonNode(t)
	tests := []struct {
		name   string
		before int // failures in a row from the outage
	}{
		{"no failure before", 0},
		{"three failures before", 3},
		{"five failures before", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, m, c := connectOne(t, node, nil)
			p.mu.Lock()
			m.failures = tt.before
			p.mu.Unlock()
			var outs []time.Duration
			for round := range 3 {
				abandon(t, c, hashes)
				<-c.Done()
				p.mu.Lock()
				if err := p.endedUnnoticed(m, time.Now()); err != nil { // Run's look
					t.Fatal(err)
				}
				p.mu.Unlock()
				start := time.Now()
				for {
					if err := p.RedialDue(context.Background(), m); err == nil {
						break
					} else if time.Since(start) > 30*time.Second {
						t.Fatalf("round %d: still left out after %v: %v", round, time.Since(start), err)
					}
					time.Sleep(100 * time.Millisecond)
				}
				outs = append(outs, time.Since(start).Round(10*time.Millisecond))
				c = p.Conn(m)
			}
			p.mu.Lock()
			failures := m.failures
			p.mu.Unlock()
			t.Logf("left out by RedialDue after each abandoned end for %v; failures %d (before %d)", outs, failures, tt.before)
			if failures != tt.before {
				t.Errorf("%d failures after ends this side caused; want %d, as before", failures, tt.before)
			}
			for _, out := range outs {
				if out > 300*time.Millisecond {
					t.Errorf("left out %v after an end this side caused; want it dialled again at once", out)
				}
			}
		})
	}
}

// TestStalledHandshakeDialPace: a node whose connection ended and that
// then stalls every handshake, asked by requests whose deadline is
// shorter than the pool's timeout, and no Run. Each dial is cut by the
// request's deadline, which charges nothing (see dialCharged). Measured:
// it is dialled once per request (one dial at a time: 33 dials in 10 s
// for requests of 300 ms), not at the backoff's pace Redial's comment
// promises, its failures staying at the end's one; with Run too, as the
// requests' dials leave Run none of its own (charged) to start. Asserted
// only what holds: no more than a dial per request, and no goroutine
// left. A client's requests pick live members only, and the end once
// taken in leaves this one not live: through the client it is dialled
// once (see the client's TestStalledHandshakeSends).
func TestStalledHandshakeDialPace(t *testing.T) {
	node := peertest.StartBtcd(t)
	const span = 10 * time.Second
	tests := []struct {
		name     string
		deadline time.Duration
		run      bool
	}{
		{"requests of 300 ms, no Run", 300 * time.Millisecond, false},
		{"requests of 1 s, no Run", time.Second, false},
		{"requests of 300 ms, Run", 300 * time.Millisecond, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stall atomic.Bool
			var dials atomic.Int32
			proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(msg wire.Message) ([]wire.Message, bool) {
				if _, ok := msg.(*wire.MsgVersion); ok && stall.Load() {
					dials.Add(1)
					time.Sleep(4 * time.Second) // past the pool's timeout
				}
				return []wire.Message{msg}, false
			})
			p, _, err := New(Config{Params: node.Params, Peers: []string{proxy.Addr}, ConnectOnly: true, Timeout: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			p.Connect(context.Background())
			m := p.Members()[0]
			c := p.Conn(m)
			if c == nil {
				t.Fatal("not connected")
			}
			if tt.run {
				rctx, stop := context.WithCancel(context.Background())
				done := make(chan struct{})
				go func() { p.Run(rctx); close(done) }()
				defer func() { stop(); <-done }()
			}
			stall.Store(true)
			c.Close()
			<-c.Done()
			g0 := runtime.NumGoroutine()
			requests := 0
			for start := time.Now(); time.Since(start) < span; requests++ {
				ctx, cancel := context.WithTimeout(context.Background(), tt.deadline)
				p.RedialDue(ctx, m)
				<-ctx.Done()
				cancel()
			}
			p.mu.Lock()
			failures, wait := m.failures, time.Until(m.nextDial)
			p.mu.Unlock()
			n := int(dials.Load())
			time.Sleep(5 * time.Second) // the stalled handshakes end
			g1 := runtime.NumGoroutine()
			t.Logf("%d requests in %v: %d dials of the stalling node (%.1f/s), %d failures, next dial in %v, goroutines %d -> %d",
				requests, span, n, float64(n)/span.Seconds(), failures, wait.Round(time.Millisecond), g0, g1)
			if n > requests+1 {
				t.Errorf("%d dials for %d requests: more than one each", n, requests)
			}
			if g1 > g0+5 {
				t.Errorf("goroutines %d before, %d after the dials ended", g0, g1)
			}
		})
	}
}
