package client

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
)

// hangUpOnGetHeaders starts a loopback relay to the node at target that
// hangs up on the client's first getheaders of each of its first n
// connections (not passed on), as a node restarted during a header sync
// does, and relays every later connection whole. It returns the relay's
// address and how many hang-ups it made.
func hangUpOnGetHeaders(t *testing.T, target string, n int32) (string, *atomic.Int32) {
	t.Helper()
	var conns, ends atomic.Int32
	addr := hangUpOnClient(t, target, func() func(string, []byte) bool {
		first := conns.Add(1) <= n
		return func(cmd string, _ []byte) bool {
			if !first || cmd != wire.CmdGetHeaders {
				return false
			}
			ends.Add(1)
			return true
		}
	})
	return addr, &ends
}

// TestHeaderSyncHangUpRedialled: a peer that hangs up during a header
// sync (its getheaders in flight: a node restarted, or one hanging up on
// purpose) is dropped from that sync, not banned, and is used again once
// it answers: without the service, the next sync dials it again (Revive,
// after its backoff); with it, Run does, and its sync goes on. Hanging up
// on the first connections of a run loses it for none of the rest.
func TestHeaderSyncHangUpRedialled(t *testing.T) {
	needFixture(t)
	for _, tt := range []struct {
		name    string
		ends    int32
		service bool
	}{
		{"once, the next sync", 1, false},
		{"three times, the next syncs", 3, false},
		{"once, the service", 1, true},
		{"three times, the service", 3, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			relay, ends := hangUpOnGetHeaders(t, fx.node.P2PAddr, tt.ends)
			log := &linesLog{t: t, start: time.Now()}
			c := connectWith(t, Config{Peers: []string{fx.node.P2PAddr, relay}, Params: fx.node.Params, Timeout: 5 * time.Second, Log: log})
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if tt.service {
				if err := c.Start(ctx); err != nil {
					t.Fatal(err)
				}
			}
			m := clientMember(t, c, relay)
			start := time.Now()
			for ctx.Err() == nil && (ends.Load() < tt.ends || c.views.tip(m) < fx.tip || !c.pool.Status(m).Live) {
				if !tt.service {
					if _, err := c.SyncHeaders(ctx); err != nil {
						t.Fatal(err)
					}
				}
				time.Sleep(100 * time.Millisecond)
			}
			st := c.pool.Status(m)
			t.Logf("after %d hang-ups, %v: %+v, holds %d; dropped %d times", ends.Load(), time.Since(start).Round(time.Millisecond), st, c.views.tip(m), log.count("dropped "+relay))
			if !st.Live || st.Banned || c.views.tip(m) < fx.tip {
				t.Errorf("the peer that hung up %d times is not used again: %+v", ends.Load(), st)
			}
		})
	}
}
