package pool

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// slowPair starts a real btcd and a pool, with the timeout given, of two
// members: the node itself, and a proxy in front of it that holds each
// headers answer for *delay (nanoseconds, none at 0). Run looks after the
// pool until the test ends. Both members are live when it returns.
func slowPair(t *testing.T, timeout time.Duration) (p *Pool, slow *Member, delay *atomic.Int64) {
	t.Helper()
	node := peertest.StartBtcd(t)
	node.Generate(t, 5) // btcd answers getheaders once its tip is recent
	proxy, delay := slowProxy(t, node)
	p, _, err := New(Config{Params: node.Params, Peers: []string{node.P2PAddr, proxy.Addr}, ConnectOnly: true, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	p.Connect(ctx)
	var run sync.WaitGroup
	run.Add(1)
	go func() {
		defer run.Done()
		p.Run(ctx)
	}()
	t.Cleanup(func() {
		stop()
		run.Wait()
		p.Close()
	})
	for _, m := range p.Members() {
		if st := p.Status(m); !st.Live {
			t.Fatalf("%s not connected: %+v", m.Addr(), st)
		}
	}
	return p, p.Members()[1], delay
}

// slowProxy starts a proxy in front of node that holds each headers
// answer for *delay (nanoseconds, none at 0).
func slowProxy(t *testing.T, node *peertest.Node) (*peertest.Liar, *atomic.Int64) {
	t.Helper()
	delay := new(atomic.Int64)
	proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(msg wire.Message) ([]wire.Message, bool) {
		if _, ok := msg.(*wire.MsgHeaders); ok {
			time.Sleep(time.Duration(delay.Load()))
		}
		return []wire.Message{msg}, false
	})
	return proxy, delay
}

// syncRound is one round of Each under b over the live members: each
// syncs the node's headers into a chain of its own. It returns how long
// the round took and whether slow was asked.
func syncRound(t *testing.T, p *Pool, b *Budget, slow *Member) (time.Duration, bool) {
	t.Helper()
	ms := p.Serving(0)
	start := time.Now()
	err := p.Each(context.Background(), b, ms, func(ctx context.Context, m *Member) error {
		c := p.Conn(m)
		if c == nil {
			return errors.New("not connected")
		}
		_, err := c.SyncHeaders(ctx, chain.New(p.cfg.Params))
		return err
	})
	if err != nil {
		t.Fatalf("a round: %v", err)
	}
	return time.Since(start), slices.Contains(ms, slow)
}

// waitLive waits, up to limit, for m to be live, and returns how long
// that took.
func waitLive(t *testing.T, p *Pool, m *Member, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for !p.Status(m).Live {
		if time.Since(start) > limit {
			t.Fatalf("%s not live again after %v: %+v", m.Addr(), limit, p.Status(m))
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// TestOnceSlowSitsOutBriefly: beside a fast member, a real btcd behind a
// proxy answers one round 2 s late, past the hold of a timeout of 4 s
// (1 s): it is cut off and left out, but only for the first step of the
// redial backoff, not a minute, and is back as soon as that has passed
// (Run redials it). Slow again each time it is back, its sit-out doubles;
// once its connection has lasted stableConnection (it answered in time
// meanwhile), a slow answer costs it the first step again. The error
// says how long it is left out; the figures are logged.
func TestOnceSlowSitsOutBriefly(t *testing.T) {
	p, slow, delay := slowPair(t, 4*time.Second)
	for _, tt := range []struct {
		name   string
		calm   bool // its connection lasted stableConnection first
		sitOut time.Duration
	}{
		{"first slow answer", false, redialBackoff(1)},
		{"slow again once back", false, redialBackoff(2)},
		{"and again", false, redialBackoff(3)},
		{"slow after a minute in time", true, redialBackoff(1)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			waitLive(t, p, slow, 5*time.Second)
			if tt.calm {
				p.mu.Lock()
				slow.connectedAt = time.Now().Add(-stableConnection) // as if it had answered in time for a minute
				p.mu.Unlock()
			}
			delay.Store(int64(2 * time.Second))
			took, asked := syncRound(t, p, NewBudget(), slow)
			cut := time.Now()
			delay.Store(0)
			st := p.Status(slow)
			if !asked || st.Live || !strings.Contains(st.Reason, "too slow") {
				t.Fatalf("asked %t; the slow member after a round of %v: %+v, want it cut off as too slow", asked, took, st)
			}
			if want := "left out for " + tt.sitOut.String(); !strings.Contains(st.Reason, want) {
				t.Errorf("reason %q: want %q", st.Reason, want)
			}
			waitLive(t, p, slow, 90*time.Second)
			out := time.Since(cut)
			t.Logf("cut off after a round of %v; out for %v (sit-out %v): %q", took.Round(time.Millisecond), out.Round(time.Millisecond), tt.sitOut, st.Reason)
			// Run looks every managerInterval, then dials and shakes hands.
			if slack := managerInterval + time.Second; out < tt.sitOut-50*time.Millisecond || out > tt.sitOut+slack {
				t.Errorf("out for %v: want its sit-out, %v, and %v at most for the redial", out, tt.sitOut, slack)
			}
		})
	}
}

// TestSlowEveryTimeBounded: the worst case of a slow node: beside a fast
// member, a real btcd behind a proxy holds every headers answer until
// just before it would be cut off (the hold of a timeout of 4 s, 1 s,
// less 150 ms), through back-to-back operations of three rounds each (a
// Budget each). Each operation it is in waits for it its budget at most
// (the hold), however often it comes back: its sit-outs do not reset its
// lag. It is cut off once per sit-out at most, the sit-outs doubling
// (see redialBackoff), so over the window it costs no more operations
// than the backoff allows. The window is SITOUT_WINDOW seconds (default
// 20); the rounds held, cut-offs and time lost are logged.
func TestSlowEveryTimeBounded(t *testing.T) {
	window := time.Duration(peertest.EnvCount(t, "SITOUT_WINDOW", 20)) * time.Second
	p, slow, delay := slowPair(t, 4*time.Second)
	hold := p.hold()
	delay.Store(int64(hold - 150*time.Millisecond))
	const slack = 300 * time.Millisecond // the rounds' own time, scheduling
	var ops, rounds, held, cuts int
	var lost, worst time.Duration
	for start := time.Now(); time.Since(start) < window; ops++ {
		b, opLost := NewBudget(), time.Duration(0)
		for range 3 {
			took, asked := syncRound(t, p, b, slow)
			rounds++
			if !asked {
				continue
			}
			opLost += took
			if took > hold/2 {
				held++
			}
			if st := p.Status(slow); !st.Live && strings.Contains(st.Reason, "too slow") {
				cuts++
			}
		}
		time.Sleep(10 * time.Millisecond) // the caller's own work between operations
		lost += opLost
		worst = max(worst, opLost)
		if opLost > hold+slack {
			t.Errorf("operation %d waited %v for the slow member: its budget is %v", ops, opLost, hold)
		}
	}
	allowed := backoffDials(window)
	t.Logf("%v: %d operations, %d rounds, %d held by the slow member, %d cut-offs (the backoff allows %d), %v lost (%v at most in one operation)",
		window, ops, rounds, held, cuts, allowed, lost.Round(time.Millisecond), worst.Round(time.Millisecond))
	if cuts == 0 {
		t.Fatalf("the slow member was never cut off")
	}
	if int64(cuts) > allowed {
		t.Errorf("%d cut-offs in %v: its sit-outs allow %d", cuts, window, allowed)
	}
	if limit := time.Duration(cuts+1) * (hold + slack); lost > limit {
		t.Errorf("%v lost to the slow member over %d cut-offs: want %v at most", lost, cuts, limit)
	}
}

// TestSitOutCounts: the sit-out of a member cut off as too slow is the
// backoff of its failures in a row, the cut counted once: after a
// connection that did not last, one more; after one that lasted
// stableConnection, the first; when Run found the connection ended first
// (and counted it), not again; a handshake cut (no connection), one more.
// Each cut counts as slow too (counted for the backoff, not for
// forgetting); a connection that lasted clears both counts.
func TestSitOutCounts(t *testing.T) {
	now := time.Now()
	for _, tt := range []struct {
		name      string
		connected bool
		lasted    bool
		lapsed    bool // Run counted the end already
		failures  int  // before the cut
		slow      int  // of them, cut-offs as too slow
		want      int  // failures after
		wantSlow  int  // slow after
	}{
		{"connection that did not last", true, false, false, 2, 1, 3, 2},
		{"connection that lasted", true, true, false, 5, 4, 1, 1},
		{"counted by Run", true, false, true, 3, 1, 3, 1},
		{"counted by Run, after one that lasted", true, true, true, 0, 0, 1, 1},
		{"handshake cut", false, false, false, 0, 0, 1, 1},
		{"handshake cut, after failures", false, false, false, 2, 0, 3, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			m := &Member{addr: "127.0.0.1:1", failures: tt.failures, slow: tt.slow, lapsed: tt.lapsed, connectedAt: now.Add(-time.Second)}
			if tt.connected {
				m.p = &peer.Peer{}
			}
			if tt.lasted {
				m.connectedAt = now.Add(-stableConnection)
			}
			got := m.sitOut(now)
			if m.failures != tt.want || got != redialBackoff(tt.want) || !m.nextDial.Equal(now.Add(got)) {
				t.Errorf("failures %d, sit-out %v, next dial in %v; want %d failures, %v", m.failures, got, m.nextDial.Sub(now), tt.want, redialBackoff(tt.want))
			}
			if m.slow != tt.wantSlow {
				t.Errorf("%d slow failures, want %d", m.slow, tt.wantSlow)
			}
		})
	}
}
