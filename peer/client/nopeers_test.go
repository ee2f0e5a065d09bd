package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestNoPeersWhateverHowMany: Connect with nodes that all refuse, one or
// two, fails with an ErrNoPeers naming each (errors.As finds a
// *peer.PeerError); with one, its text is that node's own error, as it
// was, without "no usable peer" (it used to be no ErrNoPeers at all, so
// that what callers do when no peer is left did not apply to one peer).
func TestNoPeersWhateverHowMany(t *testing.T) {
	for _, n := range []int{1, 2} {
		var addrs []string
		for range n {
			addrs = append(addrs, peertest.ClosedAddr(t))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		c, err := Connect(ctx, Config{Peers: addrs, Params: &chaincfg.RegressionNetParams, ConnectOnly: true, Timeout: 5 * time.Second})
		cancel()
		if c != nil {
			c.Close()
			t.Fatalf("%d peers that refuse: connected", n)
		}
		t.Logf("%d peers: %v", n, err)
		var pe *peer.PeerError
		if !errors.Is(err, ErrNoPeers) || !errors.As(err, &pe) {
			t.Errorf("%d peers that refuse: %v, want an ErrNoPeers wrapping a *peer.PeerError", n, err)
			continue
		}
		for _, a := range addrs {
			if !strings.Contains(err.Error(), a) {
				t.Errorf("%d peers that refuse: %v does not name %s", n, err, a)
			}
		}
		if one := strings.Contains(err.Error(), ErrNoPeers.Error()); one != (n > 1) {
			t.Errorf("%d peers that refuse: %q says %q: %v, want %v", n, err, ErrNoPeers, one, n > 1)
		}
	}
}

// TestQueryNamesLonePeersFailure: the only peer of a client without the
// service hangs up before the client synced, and holds every later
// connection silent. A query's own header sync runs out of peers (an
// ErrNoPeers): the query fails with a *SyncWaitError that says what the
// peer did, naming it (a *peer.PeerError), not only that no peer is left.
func TestQueryNamesLonePeersFailure(t *testing.T) {
	needFixture(t)
	addr, _, g := redialGate(t, fx.node.P2PAddr, -1)
	c := connectUnsynced(t, fx.node, time.Second, addr)
	g.closeAll()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err := c.BestBlock(ctx)
	t.Log(err)
	var we *SyncWaitError
	var pe *peer.PeerError
	if !errors.As(err, &we) || !errors.Is(err, ErrNoPeers) || !errors.As(err, &pe) || pe.Peer != addr {
		t.Fatalf("the best block, the only peer gone: %v, want a *SyncWaitError, an ErrNoPeers naming %s's failure", err, addr)
	}
	if ctx.Err() != nil {
		t.Fatalf("the query waited out its context: %v", err)
	}
}
