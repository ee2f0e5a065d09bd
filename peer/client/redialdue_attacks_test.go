package client

import (
	"context"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// outageGate is a loopback relay to a node that can be taken down: its
// connections are closed and new ones refused until it is up again (a
// node restarting, a network glitch).
type outageGate struct {
	down  atomic.Bool
	mu    sync.Mutex
	conns []net.Conn
}

// newOutageGate starts a gate to target and returns it with its address.
func newOutageGate(t *testing.T, target string) (*outageGate, string) {
	t.Helper()
	g := &outageGate{}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ln.Close()
		g.setDown(true)
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			if g.down.Load() {
				c.Close()
				continue
			}
			u, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			g.mu.Lock()
			g.conns = append(g.conns, c, u)
			g.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
	return g, ln.Addr().String()
}

// setDown takes the gate down (closing its connections) or up.
func (g *outageGate) setDown(down bool) {
	g.down.Store(down)
	if !down {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.conns {
		c.Close()
	}
	g.conns = nil
}

// TestAbandonedHonestInSend: an honest peer whose request this client
// abandoned (as when another peer answered a batch first), beside a peer
// that keeps what it is given (Echo), the client started (Run), with and
// without an outage before (its dials failed a few times: failures in a
// row, cleared only by a connection that lasts stableConnection). Run's
// look used to put its next dial at those failures' backoff (pool's
// ended): it was not live until then, so not among the peers a send goes
// to, and the transaction reached the Echo alone, its warning saying "no
// other peer to ask". Now the honest node is given it and holds it either
// way, charged nothing.
func TestAbandonedHonestInSend(t *testing.T) {
	tests := []struct {
		name   string
		outage time.Duration // the honest node's before the abandoned end
	}{
		{"no outage before", 0},
		{"an outage before", 3500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
			node.Generate(t, 110)
			gate, honest := newOutageGate(t, node.P2PAddr)
			echo := peertest.NewEcho(t, node.P2PAddr, node.Params.Net)
			c := connectTo(t, node, 10*time.Second, honest, echo.Addr)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if err := c.Start(ctx); err != nil {
				t.Fatal(err)
			}
			m := c.pool.Members()[slices.IndexFunc(c.pool.Members(), func(m *pool.Member) bool { return m.Addr() == honest })]
			if tt.outage > 0 {
				gate.setDown(true)
				time.Sleep(tt.outage) // Run counts the end and failed dials
				gate.setDown(false)
				waitLive(t, c, m, 30*time.Second)
			}
			abandonOn(t, c.pool.Conn(m), c.chain)
			time.Sleep(400 * time.Millisecond) // Run's look
			tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").P2WPKHScript()))
			start := time.Now()
			res, err := c.SendTransaction(ctx, tx)
			took := time.Since(start)
			if err != nil {
				t.Fatalf("send after %v: %v", took.Round(time.Millisecond), err)
			}
			reached := node.InMempool(t, tx.TxHash())
			t.Logf("send after %v: given %v, accepted %v, seen %v, warnings %q; honest node holds it: %v",
				took.Round(time.Millisecond), res.Given, res.Accepted, res.Seen, res.Warnings, reached)
			back := waitLive(t, c, m, 70*time.Second)
			t.Logf("the honest peer live again %v after the send", back.Round(time.Millisecond))
			if st := c.pool.Status(m); st.Banned || st.Reason != "" {
				t.Errorf("the honest peer was charged: %+v", st)
			}
			if !reached || !slices.Contains(res.Given, honest) {
				t.Errorf("the honest peer was not given the transaction (given %v, the honest node holds it: %v)", res.Given, reached)
			}
		})
	}
}

// waitLive waits up to limit for m to be live, and returns how long it
// took.
func waitLive(t *testing.T, c *Client, m *pool.Member, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for !c.pool.Status(m).Live || c.pool.Conn(m) == nil {
		if time.Since(start) > limit {
			t.Fatalf("%s not live after %v: %+v", m.Addr(), limit, c.pool.Status(m))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return time.Since(start)
}

// TestStalledHandshakeSends: a peer whose connection ended and whose
// node then stalls every handshake, beside an honest peer; the wallet
// sends with a deadline shorter than the client's timeout. Each send's
// RedialDue of the stalling peer is cut by the send's own deadline,
// which charges the node nothing (see pool's dialCharged). Measured:
// with no Run, the first send is held to its deadline (3 s) and fails,
// though the honest peer was live (its RedialDue cut, sendable dials one
// peer after another); the end then taken in, the stalling peer is no
// longer live and the next sends go to the honest peer at once: one
// dial in all, no storm. With Run, Run took the end in first: every
// send reached the honest node.
func TestStalledHandshakeSends(t *testing.T) {
	const sends = 4
	tests := []struct {
		name  string
		start bool // Run looks after the members
	}{
		{"no Run", false},
		{"Run", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
			node.Generate(t, 100+sends+2)
			var stall atomic.Bool
			var dials atomic.Int32
			staller := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(msg wire.Message) ([]wire.Message, bool) {
				if _, ok := msg.(*wire.MsgVersion); ok && stall.Load() {
					dials.Add(1)
					time.Sleep(12 * time.Second) // past the client's timeout
				}
				return []wire.Message{msg}, false
			})
			c := connectTo(t, node, 10*time.Second, node.P2PAddr, staller.Addr)
			if tt.start {
				if err := c.Start(context.Background()); err != nil {
					t.Fatal(err)
				}
			}
			m := c.pool.Members()[slices.IndexFunc(c.pool.Members(), func(m *pool.Member) bool { return m.Addr() == staller.Addr })]
			stall.Store(true)
			c.pool.Conn(m).Close()
			time.Sleep(100 * time.Millisecond)
			var took []time.Duration
			ok := 0
			for i := 1; i <= sends; i++ {
				tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").P2WPKHScript()))
				ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
				start := time.Now()
				_, err := c.SendTransaction(ctx, tx)
				cancel()
				took = append(took, time.Since(start).Round(time.Millisecond))
				if err == nil && node.InMempool(t, tx.TxHash()) {
					ok++
				} else {
					t.Logf("send %d: %v", i, err)
				}
				time.Sleep(300 * time.Millisecond)
			}
			t.Logf("%d of %d sends reached the honest node, each took %v; %d dials of the stalling peer", ok, sends, took, dials.Load())
			if ok < sends-1 {
				t.Errorf("%d of %d sends reached the honest node: a peer that stalls its handshakes held them to their deadline, uncharged", ok, sends)
			}
		})
	}
}
