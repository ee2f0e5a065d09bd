package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestFloodEndedBannedByVerification: a client without its service (so
// no look of the pool's after the members bans a flooder, see pool.Run)
// has two honest peers and one that floods inv messages, whose connection
// ends for the flood. The pool still lists it (see pool.Pool.Serving),
// for the request that finds the flood's end to ban it; a verification
// of filter headers is such a request (FilterHeader, twice). Each finds
// it and leaves it out; the first bans it, named with the flood, and the
// verification succeeds from the honest peers. Before, the verification
// left it out and logged it, unbanned, each time: no request of
// FilterHeader's banned it.
func TestFloodEndedBannedByVerification(t *testing.T) {
	needFixture(t)
	honest := honestPeers(t, 2)
	inv := peertest.NewFlooder(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.Flood{Kind: peertest.FloodInv, Entries: 500, Interval: 50 * time.Millisecond})
	c := connectWith(t, Config{Peers: append(honest, inv.Addr), Params: fx.node.Params, Timeout: 5 * time.Second, ConnectOnly: true})
	m := clientMember(t, c, inv.Addr)
	deadline := time.Now().Add(20 * time.Second)
	for {
		p := c.pool.Conn(m)
		if p == nil {
			t.Fatalf("no connection of the flooder: %+v", c.pool.Status(m))
		}
		done := false
		select {
		case <-p.Done():
			done = true
		default:
		}
		if done {
			if !errors.Is(p.Err(), peer.ErrFlooding) {
				t.Fatalf("premise: the flooder's connection ended for %v, want the flood", p.Err())
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("premise: the flooder's connection did not end for its flood in 20 s")
		}
		time.Sleep(50 * time.Millisecond)
	}
	if st := c.pool.Status(m); st.Banned {
		t.Fatalf("premise: the flooder banned before a request found it: %+v", st)
	}
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := c.FilterHeader(ctx, fx.tip)
		cancel()
		st := c.pool.Status(m)
		t.Logf("verification %d: %v; the flooder %+v", i, err, st)
		if err != nil {
			t.Errorf("verification %d with an honest peer: %v", i, err)
		}
		if !st.Banned || !strings.Contains(st.Reason, inv.Addr) || !strings.Contains(st.Reason, peer.ErrFlooding.Error()) {
			t.Errorf("verification %d found the flood's end: the flooder %+v, want it banned for the flood, named", i, st)
		}
	}
	for _, h := range honest {
		unharmedAt(t, c, h)
	}
}
