package client

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// statusOf returns the status of the peer at addr, and whether it is one.
func statusOf(c *Client, addr string) (PeerStatus, bool) {
	for _, st := range c.Peers() {
		if st.Address == addr {
			return st, true
		}
	}
	return PeerStatus{}, false
}

// waitStatus waits up to 30 s for the peer at addr to satisfy cond.
func waitStatus(t *testing.T, c *Client, addr, what string, cond func(PeerStatus, bool) bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st, ok := statusOf(c, addr)
		if cond(st, ok) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: peer %s %+v (a peer: %v)", what, addr, st, ok)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestPeersAtRuntime: a started client takes a peer added at runtime
// (live, its headers synced, its bytes counted), disconnects one (it is
// redialled, as a permanent peer), removes one (forgotten, its bytes
// still counted), and every connection goes through Config.Dialer.
func TestPeersAtRuntime(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 20)
	second := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	var dials atomic.Int32
	var d net.Dialer
	dialer := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return d.DialContext(ctx, network, addr)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	if _, err := Connect(ctx, Config{Peers: []string{node.P2PAddr}, Params: node.Params, Proxy: "socks5://127.0.0.1:1", Dialer: dialer}); err == nil {
		t.Error("Proxy and Dialer together were taken")
	}
	c, err := Connect(ctx, Config{Peers: []string{node.P2PAddr}, Params: node.Params, Timeout: 5 * time.Second, ConnectOnly: true, Dialer: dialer})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if n := dials.Load(); n != 1 {
		t.Errorf("%d dials through the Dialer after Connect, want 1", n)
	}
	plain, err := Connect(ctx, Config{Peers: []string{node.P2PAddr}, Params: node.Params, Timeout: 5 * time.Second, ConnectOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.AddPeer(ctx, "expyuzz4wqqyqhjn.onion:8333", true); err == nil || !strings.Contains(err.Error(), "onion") {
		t.Errorf("an onion address without a proxy or a dialer: %v", err)
	}
	plain.Close()
	if err := c.AddPeer(ctx, second.Addr, true); err != nil {
		t.Fatal(err)
	}
	if n := dials.Load(); n != 2 {
		t.Errorf("%d dials through the Dialer after AddPeer, want 2", n)
	}
	waitStatus(t, c, second.Addr, "the added peer synced", func(st PeerStatus, ok bool) bool {
		return ok && st.Reason == "" && st.Tip == 20 && st.BytesReceived > 0 && st.BytesSent > 0
	})
	var sum uint64
	for _, st := range c.Peers() {
		sum += st.BytesReceived
	}
	if got := c.BytesReceived(); got < sum {
		t.Errorf("BytesReceived %d, below the peers' %d", got, sum)
	}

	before, _ := statusOf(c, second.Addr)
	if err := c.DisconnectPeer(second.Addr); err != nil {
		t.Fatal(err)
	}
	waitStatus(t, c, second.Addr, "disconnected", func(st PeerStatus, ok bool) bool {
		return ok && strings.HasPrefix(st.Reason, "disconnected")
	})
	waitStatus(t, c, second.Addr, "redialled", func(st PeerStatus, ok bool) bool {
		return ok && st.Reason == "" && st.BytesReceived > before.BytesReceived
	})
	if n := dials.Load(); n < 3 {
		t.Errorf("%d dials through the Dialer after the redial, want 3", n)
	}

	total := c.BytesReceived()
	if err := c.RemovePeer(second.Addr); err != nil {
		t.Fatal(err)
	}
	if _, ok := statusOf(c, second.Addr); ok || len(c.Peers()) != 1 {
		t.Errorf("removed peer still listed: %+v", c.Peers())
	}
	if got := c.BytesReceived(); got < total {
		t.Errorf("BytesReceived fell from %d to %d when a peer was removed", total, got)
	}
	if err := c.RemovePeer(second.Addr); !errors.Is(err, pool.ErrNotMember) {
		t.Errorf("removing it again: %v, want ErrNotMember", err)
	}
	if err := c.DisconnectPeer("127.0.0.1:1"); !errors.Is(err, pool.ErrNotMember) {
		t.Errorf("disconnecting a stranger: %v, want ErrNotMember", err)
	}
	// Not dialled again once removed.
	n := dials.Load()
	time.Sleep(time.Second)
	if got := dials.Load(); got != n {
		t.Errorf("a removed peer was dialled again (%d dials, then %d)", n, got)
	}
	if _, err := c.GetBlock(ctx, c.Chain().Hash(20)); err != nil {
		t.Errorf("the remaining peer: %v", err)
	}
}
