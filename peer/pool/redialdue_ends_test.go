package pool

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestRedialDueAbandonedWaitsNoBackoff: a connection this side dropped,
// abandoning a request over it, charges its member nothing and, when Run
// looks, does not put its next dial off (see ended). Run's look used to
// put it at the backoff of the member's earlier failures: a request
// queued on that connection (a node that hung up on each request before,
// its failures never cleared) waited inside RedialDue for that backoff,
// 16 s after six failures, and the member was out of Serving meanwhile.
// A next dial put off for another reason (a sit-out) is still not waited
// for beyond redialMin: RedialDue returns at once, wrapping
// peer.ErrAbandoned (no blame), the failures as they were.
func TestRedialDueAbandonedWaitsNoBackoff(t *testing.T) {
	node, hashes := abandonNode(t)
	tests := []struct {
		name     string
		before   int           // failures in a row before the abandoned end
		dueIn    time.Duration // the next dial, put off before the end
		runLook  bool          // Run found the end before the request
		wantDial bool
	}{
		{"no failure before, Run looked", 0, 0, true, true},
		{"a failure before, Run looked", 1, 0, true, true},
		{"six failures before, Run looked", 6, 0, true, true},
		{"six failures before, long past, Run did not look", 6, 0, false, true},
		{"six failures, sitting out 8 s, Run looked", 6, 8 * time.Second, true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, m, c := connectOne(t, node, nil)
			p.mu.Lock()
			m.failures = tt.before
			if tt.dueIn > 0 {
				m.nextDial = time.Now().Add(tt.dueIn)
			}
			p.mu.Unlock()
			abandon(t, c, hashes)
			<-c.Done()
			p.mu.Lock()
			if tt.runLook {
				if err := p.endedUnnoticed(m, time.Now()); err != nil {
					t.Fatal(err)
				}
			}
			wantTook := time.Until(m.nextDial)
			p.mu.Unlock()
			if !tt.wantDial || wantTook < 0 {
				wantTook = 0
			}
			start := time.Now()
			err := p.RedialDue(context.Background(), m)
			took := time.Since(start)
			p.mu.Lock()
			failures := m.failures
			p.mu.Unlock()
			dialled := p.Conn(m) != c
			t.Logf("RedialDue after %v: %v", took.Round(time.Millisecond), err)
			if (err == nil) != tt.wantDial || dialled != tt.wantDial || failures != tt.before {
				t.Errorf("RedialDue: %v, dialled %v, %d failures; want dialled %v, %d failures", err, dialled, failures, tt.wantDial, tt.before)
			}
			if err != nil && !errors.Is(err, peer.ErrAbandoned) {
				t.Errorf("RedialDue's error %v does not say this side ended the connection", err)
			}
			if took < wantTook || took > wantTook+redialMin/2 {
				t.Errorf("RedialDue took %v; want %v", took, wantTook)
			}
		})
	}
}

// TestRedialDeadlineNotCharged: a request's RedialDue waits for a
// node's first failure's backoff (the node ended the connection), then
// dials; when the request's deadline, spent on that wait, cuts the dial
// short, the dial is no failure of the node's, which answered within
// the pool's timeout. It was counted as one, doubling the backoff of an
// honest node whose handshake took longer than the request had left. A
// node that does not finish its handshake within the pool's timeout
// fails its dial, whatever the request's deadline. Each row checks that
// the dial took place (the proxy saw its version): a wait that used the
// whole deadline would fail the same way and show nothing.
func TestRedialDeadlineNotCharged(t *testing.T) {
	node := peertest.StartBtcd(t)
	tests := []struct {
		name         string
		timeout      time.Duration // the pool's
		handshake    time.Duration // how long the node's version is held
		deadline     time.Duration // the request's, after the wait; 0 for none
		wantFailures int           // the end's, and the dial's if charged
	}{
		{"the request's deadline cut the dial", 5 * time.Second, 400 * time.Millisecond, 200 * time.Millisecond, 1},
		{"the node stalled its handshake, no deadline", 300 * time.Millisecond, 2 * time.Second, 0, 2},
		{"the node stalled its handshake past a later deadline", 300 * time.Millisecond, 2 * time.Second, time.Second, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var hold atomic.Int64
			var versions atomic.Int32 // the handshakes the client began
			proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(msg wire.Message) ([]wire.Message, bool) {
				if _, ok := msg.(*wire.MsgVersion); ok {
					versions.Add(1)
					time.Sleep(time.Duration(hold.Load()))
				}
				return []wire.Message{msg}, false
			})
			p, _, err := New(Config{Params: node.Params, Peers: []string{proxy.Addr}, ConnectOnly: true, Timeout: tt.timeout})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			p.Connect(context.Background())
			m := p.Members()[0]
			c := p.Conn(m)
			if c == nil || !p.Status(m).Live {
				t.Fatalf("not connected: %+v", p.Status(m))
			}
			hold.Store(int64(tt.handshake))
			dialsBefore := versions.Load()
			c.Close() // as far as the pool can tell, the node's end: one failure, redialMin's backoff
			<-c.Done()
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, redialBackoff(1)+tt.deadline)
				defer cancel()
			}
			start := time.Now()
			err = p.RedialDue(ctx, m)
			took := time.Since(start)
			p.mu.Lock()
			failures, wait := m.failures, time.Until(m.nextDial)
			p.mu.Unlock()
			// The version a dial sends may reach the proxy after
			// RedialDue gave up on it.
			var dials int32
			for limit := time.Now().Add(time.Second); ; time.Sleep(10 * time.Millisecond) {
				if dials = versions.Load() - dialsBefore; dials > 0 || time.Now().After(limit) {
					break
				}
			}
			t.Logf("RedialDue after %v: %v; %d dials, %d failures, next dial in %v", took.Round(time.Millisecond), err, dials, failures, wait.Round(time.Millisecond))
			if err == nil {
				t.Fatalf("the dial succeeded: the handshake was not held long enough to show anything")
			}
			if dials != 1 {
				t.Fatalf("%d dials after the backoff (%v): want 1; none means the wait used the whole deadline and nothing was shown", dials, err)
			}
			if failures != tt.wantFailures {
				t.Errorf("after the dial failed (%v): %d failures; want %d", err, failures, tt.wantFailures)
			}
		})
	}
}
