package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestReplansCountAway: a download plans blocks again once a member of
// the pool, those away at its start (dropped, their next dial a backoff
// off) too, since they may be back during it and each take a plan:
// counting only those serving at the start, colluders that hang up in
// turn, some of them away when the download starts, failed it beside an
// honest peer (one download in eight, with three of six away).
func TestReplansCountAway(t *testing.T) {
	needFixture(t)
	const n, away = maxRefusedPlans + 3, 4
	var peers []string
	for range n {
		peers = append(peers, peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil).Addr)
	}
	c := connectWith(t, Config{Peers: peers, Params: fx.node.Params, Timeout: 10 * time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	waitServing(ctx, t, c, fx.tip, peers...)
	for _, a := range peers[:away] {
		c.pool.Drop(clientMember(t, c, a), errors.New("away at the download's start"))
	}
	serving := len(c.pool.Serving(wire.SFNodeWitness))
	if got := c.replans(); got < n {
		t.Errorf("a download plans again %d times with %d members, %d of them serving: want %d, one a member", got, n, serving, n)
	}
	if serving >= n {
		t.Errorf("%d serving after %d of %d dropped: the test shows nothing", serving, away, n)
	}
}
