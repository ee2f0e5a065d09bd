package pool

import (
	"context"
	"io"
	"net"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// hangUpRelay is a loopback relay in front of the node at target that
// closes each connection after, from its accept: long enough for the
// handshake, which the node completes, and no longer. It counts the
// connections it took (the dials of the pool).
func hangUpRelay(t *testing.T, target string, after time.Duration) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			dials.Add(1)
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			wg.Add(2)
			go func() { defer wg.Done(); io.Copy(u, c); u.Close() }()
			go func() { defer wg.Done(); io.Copy(c, u); c.Close() }()
			time.AfterFunc(after, func() { c.Close(); u.Close() })
		}
	}()
	return ln.Addr().String(), &dials
}

// TestHandshakeThenHangUpPace: a node that completes every handshake
// and hangs up 300 ms later, so that each connection made clears its
// next dial (see Member.connected), while plans look for it in Serving
// every 20 ms and dial it for a request when listed (RedialDue), and Run
// looks after it. Its connections never last, so its
// failures in a row only grow and each next dial waits twice as long: it
// is dialled no faster than the backoff allows (backoffDials), however
// often the connection made clears the next dial. Measured too: how
// often a plan picked it (listed by Serving) and the request was then
// refused, and that the goroutines come back.
func TestHandshakeThenHangUpPace(t *testing.T) {
	node := peertest.StartBtcd(t)
	tests := []struct {
		name     string
		deadline time.Duration // of each request
	}{
		{"requests of 200 ms", 200 * time.Millisecond},
		// Long enough to wait for a first failure's backoff (see
		// dueSoon) and dial.
		{"requests of 1 s", time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr, dials := hangUpRelay(t, node.P2PAddr, 300*time.Millisecond)
			p, _, err := New(Config{Params: node.Params, Peers: []string{addr}, ConnectOnly: true, Timeout: 3 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			g0 := runtime.NumGoroutine()
			p.Connect(context.Background())
			m := p.Members()[0]
			if p.Conn(m) == nil {
				t.Fatal("not connected")
			}
			ctx, stop := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { p.Run(ctx); close(done) }()
			const span = 10 * time.Second
			began := time.Now()
			looks, picked, refused := 0, 0, 0
			for time.Since(began) < span {
				looks++
				if slices.Contains(p.Serving(0), m) {
					picked++
					rctx, cancel := context.WithTimeout(ctx, tt.deadline)
					if p.RedialDue(rctx, m) != nil {
						refused++
					}
					cancel()
				}
				time.Sleep(20 * time.Millisecond)
			}
			took := time.Since(began)
			stop()
			<-done
			n := dials.Load()
			allowed := backoffDials(took) + 1 // and the first, Connect's
			p.mu.Lock()
			failures := m.failures
			p.mu.Unlock()
			p.Close()
			time.Sleep(500 * time.Millisecond)
			g1 := runtime.NumGoroutine()
			t.Logf("%v: %d dials (the backoff allows %d), failures %d; %d looks, listed in %d, of which RedialDue refused %d; goroutines %d -> %d",
				took.Round(time.Millisecond), n, allowed, failures, looks, picked, refused, g0, g1)
			if n > allowed {
				t.Errorf("%d dials in %v; the backoff allows %d: the node that hangs up after each handshake is dialled faster than its backoff", n, took, allowed)
			}
			if n < 3 {
				t.Errorf("%d dials: the node was not dialled again, the attack did not run", n)
			}
			if g1 > g0+5 {
				t.Errorf("goroutines %d -> %d", g0, g1)
			}
		})
	}
}
