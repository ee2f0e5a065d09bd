package client

import (
	"context"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// redialGate forwards its first connection to target at once, and every
// later one (a redial) after delay, or never with a negative delay: it
// holds those silent, as a peer that lets itself be redialled and then
// stalls the handshake. It returns its address, the connections it
// took, and its connections (closeAll ends those open).
func redialGate(t *testing.T, target string, delay time.Duration) (string, *atomic.Int32, *gateConns) {
	var n atomic.Int32
	addr, g := listenLoopback(t, func(g *gateConns, c net.Conn) {
		k := n.Add(1)
		go g.forward(c, target, k > 1, delay)
	})
	return addr, &n, g
}

// listenLoopback accepts connections on a free loopback port until its
// test ends, holds each in g (closed when the test ends) and hands it to
// serve, in turn: serve starts what must run beside the next accept. It
// returns the address and g.
func listenLoopback(t *testing.T, serve func(g *gateConns, c net.Conn)) (string, *gateConns) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &gateConns{}
	t.Cleanup(func() {
		ln.Close()
		g.closeAll()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			g.add(c)
			serve(g, c)
		}
	}()
	return ln.Addr().String(), g
}

// gateConns holds a gate's connections, closed when its test ends.
type gateConns struct {
	mu    sync.Mutex
	conns []net.Conn
}

func (g *gateConns) add(c net.Conn) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.conns = append(g.conns, c)
}

func (g *gateConns) closeAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, c := range g.conns {
		c.Close()
	}
}

// forward relays c to target; a redial waits for delay first, or reads c
// and answers nothing with a negative delay.
func (g *gateConns) forward(c net.Conn, target string, redial bool, delay time.Duration) {
	if redial {
		if delay < 0 {
			io.Copy(io.Discard, c)
			return
		}
		time.Sleep(delay)
	}
	u, err := net.Dial("tcp", target)
	if err != nil {
		c.Close()
		return
	}
	g.add(u)
	go io.Copy(u, c)
	io.Copy(c, u)
}

// TestLostBatchRedialsOnlyWhenNeeded: a trickler whose batch of filters
// a fast peer served first, behind a gate that holds every later
// connection silent. The trickler is not dialled again for batches the
// fast peer can serve, so its stalled handshake costs the scan at most
// the grace of a header sync, not a whole handshake timeout.
func TestLostBatchRedialsOnlyWhenNeeded(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 2000)
	const timeout = 3 * time.Second
	measure := func(peers ...string) time.Duration {
		c := connectTo(t, node, timeout, peers...)
		c.cfg.Log = tlog{t}
		start := time.Now()
		res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}, From: 1, To: 2000})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("warnings %q", res.Warnings)
		return time.Since(start)
	}
	alone := measure(node.P2PAddr)
	trickler := peertest.NewFlooder(t, node.P2PAddr, node.Params.Net, peertest.Flood{Kind: peertest.SlowAnswers, Delay: 1500 * time.Microsecond})
	addr, n, _ := redialGate(t, trickler.Addr, -1)
	d := measure(node.P2PAddr, addr)
	t.Logf("alone %v, beside a trickler that stalls its redial: %v (connections to it: %d)", alone.Round(time.Millisecond), d.Round(time.Millisecond), n.Load())
	if d > alone+timeout-time.Second/2 {
		t.Errorf("scan stretched from %v to %v by a redial the peer stalls (timeout %v)", alone.Round(time.Millisecond), d.Round(time.Millisecond), timeout)
	}
}

// TestBannedDuringRedialStaysDisconnected: BanPeer while the scan dials
// again a peer whose connection ended (its first header sync does, the
// gate holding the new connection for a second): the new connection is
// closed, the banned peer holds none after the scan, and it is not
// dialled again. The connection is ended before the scan starts, so the
// redial comes at a known point, not only when a batch another peer
// served first happens to end it.
func TestBannedDuringRedialStaysDisconnected(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 3000)
	addr, n, gate := redialGate(t, node.P2PAddr, time.Second)
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, addr)
	c.cfg.Log = tlog{t}
	var gated *pool.Member
	for _, m := range c.pool.Members() {
		if m.Addr() == addr {
			gated = m
		}
	}
	p := c.pool.Conn(gated)
	if p == nil {
		t.Fatalf("%s not connected: %+v", addr, c.pool.Status(gated))
	}
	gate.closeAll()
	select {
	case <-p.Done():
	case <-time.After(10 * time.Second):
		t.Fatal("the connection the gate closed did not end")
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}, From: 1, To: 3000})
		done <- err
	}()
	for n.Load() < 2 {
		select {
		case err := <-done:
			t.Fatalf("scan ended before a redial (err %v)", err)
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := c.BanPeer(addr, "test: banned by the user during the scan"); err != nil {
		t.Fatal(err)
	}
	err := <-done
	t.Logf("scan: %v; connections to the banned peer: %d", err, n.Load())
	time.Sleep(200 * time.Millisecond)
	var open bool
	if p := c.pool.Conn(gated); p != nil {
		select {
		case <-p.Done():
		default:
			open = true
		}
	}
	st := c.pool.Status(gated)
	t.Logf("member banned=%v err=%v connection open=%v", st.Banned, st.Reason, open)
	if open {
		t.Errorf("a peer banned during the scan holds a live connection after it (redialled by the scan)")
	}
	if !st.Banned {
		t.Errorf("the peer is not banned: %+v", st)
	}
	if k := n.Load(); k != 2 {
		t.Errorf("%d connections to the peer, want 2 (dialled again once, and not after its ban)", k)
	}
}

// tlog writes a client's log into the test's.
type tlog struct{ t *testing.T }

func (l tlog) Write(b []byte) (int, error) { l.t.Logf("log: %s", b); return len(b), nil }
