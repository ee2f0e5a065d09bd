package client

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestGoneNodeLeftOutOfVerification: a peer the pool lists as serving
// whose node is gone, its process stopped after the client synced with
// it, beside two honest nodes. Its connection ended, either by the node's
// stop (its next dial due within a first failure's backoff) or, before
// it, by a request this client abandoned (no backoff), so
// pool.Pool.Serving still lists it, and the verification of filter
// headers reads its peers from there; dialled again before the
// verification (Client.ready), it is refused. Left out of the
// verification, the filter header asked is verified by the two honest
// nodes, the gone peer not banned. Kept in, its request failed the
// verification with the refused dial, and FilterHeader, which does not
// try again, returned that error. (A scan without the service is no row:
// its header sync, before the verification, dials the peer first and
// drops it; and a failed pass is tried again without the peer dropped.)
func TestGoneNodeLeftOutOfVerification(t *testing.T) {
	needFixture(t)
	twin := twinShared.Get(t)
	h := fx.tip - 3
	hash, err := fx.node.RPC().GetBlockHash(int64(h))
	if err != nil {
		t.Fatal(err)
	}
	want, err := fx.node.RPC().GetCFilterHeader(hash, wire.GCSFilterRegular)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		// abandon has a request of this client end the connection
		// before the node stops.
		abandon bool
	}{
		{"node stopped", false},
		{"request abandoned, then node stopped", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gone := peertest.CopyChain(t, fx.node, peertest.WithArgs("--nobanning"))
			c := connect(t, 10*time.Second, fx.node.P2PAddr, twin.P2PAddr, gone.P2PAddr)
			m := clientMember(t, c, gone.P2PAddr)
			conn := c.pool.Conn(m)
			if tt.abandon {
				abandonRequest(t, c, m)
			}
			if err := gone.Stop(); err != nil {
				t.Fatalf("stopping the node: %v", err)
			}
			select {
			case <-conn.Done():
			case <-time.After(10 * time.Second):
				t.Fatal("the stopped node's connection did not end")
			}
			if !slices.Contains(c.pool.Serving(wire.SFNodeCF), m) || !c.needsRedial(m) {
				t.Fatalf("the pool does not list the stopped node as serving, its connection ended (%+v): the case is not made", c.pool.Status(m))
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			got, err := c.FilterHeader(ctx, h)
			t.Logf("FilterHeader(%d) took %v; the stopped node's peer: %+v", h, time.Since(start).Round(time.Millisecond), c.pool.Status(m))
			if err != nil {
				t.Fatalf("FilterHeader(%d) with a node gone beside two honest ones: %v", h, err)
			}
			if got != want.PrevFilterHeader {
				t.Errorf("FilterHeader(%d) = %v, the honest nodes' %v", h, got, want.PrevFilterHeader)
			}
			if st := c.pool.Status(m); st.Banned {
				t.Errorf("the stopped node's peer was banned: %+v", st)
			}
			unharmedAt(t, c, fx.node.P2PAddr)
			unharmedAt(t, c, twin.P2PAddr)
		})
	}
}
