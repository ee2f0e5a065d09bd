package client

import (
	"context"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// nextBlockEvent returns the subscription's next event, failing after a
// minute.
func nextBlockEvent(t *testing.T, s *BlockSubscription) Event {
	t.Helper()
	select {
	case e, ok := <-s.Events():
		if !ok {
			t.Fatalf("events closed: %v", s.Err())
		}
		return e
	case <-time.After(time.Minute):
		t.Fatal("no event within a minute")
	}
	return Event{}
}

// TestSubscribeBlocks: a client without the service (it syncs the
// headers itself) reports each new block with its header, and on a reorganization of 2 blocks reports them disconnected,
// highest first, before the new ones; a subscription from a block that
// left the chain starts from the fork; an unknown block is refused.
func TestSubscribeBlocks(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	c := connectTo(t, node, 5*time.Second)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := c.SubscribeBlocks(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Cancel()
	node.Generate(t, 2)
	var old []Event
	for h := int32(111); h <= 112; h++ {
		e := nextBlockEvent(t, s)
		hash, _ := node.RPC().GetBlockHash(int64(h))
		if e.Kind != EventConnected || e.Height != h || e.BlockHash != *hash || e.Header.BlockHash() != *hash {
			t.Fatalf("event %+v, want block %d connected", e, h)
		}
		old = append(old, e)
	}
	hash111, _ := node.RPC().GetBlockHash(111)
	if err := node.RPC().InvalidateBlock(hash111); err != nil {
		t.Fatal(err)
	}
	node.Generate(t, 3) // 111', 112', 113'
	for _, want := range []Event{old[1], old[0]} {
		if e := nextBlockEvent(t, s); e.Kind != EventDisconnected || e.Height != want.Height || e.BlockHash != want.BlockHash {
			t.Fatalf("event %+v, want block %d disconnected", e, want.Height)
		}
	}
	for h := int32(111); h <= 113; h++ {
		e := nextBlockEvent(t, s)
		hash, _ := node.RPC().GetBlockHash(int64(h))
		if e.Kind != EventConnected || e.Height != h || e.BlockHash != *hash {
			t.Fatalf("event %+v, want block %d of the new chain connected", e, h)
		}
	}
	if got := c.BytesReceived(); got == 0 {
		t.Error("no bytes received")
	}
	for _, st := range c.Peers() {
		if st.Banned || st.Reason != "" {
			t.Errorf("peer blamed: %+v", st)
		}
	}

	stale := Stamp{Height: old[1].Height, Hash: old[1].BlockHash}
	from, err := c.SubscribeBlocks(ctx, &stale)
	if err != nil {
		t.Fatal(err)
	}
	defer from.Cancel()
	if e := nextBlockEvent(t, from); e.Kind != EventConnected || e.Height != 111 {
		t.Fatalf("from a block that left the chain: %+v, want 111 of the new chain", e)
	}
	if _, err := c.SubscribeBlocks(ctx, &Stamp{Height: 5, Hash: old[0].Header.PrevBlock}); err == nil {
		t.Error("a subscription from a block never in the chain was taken")
	}
}
