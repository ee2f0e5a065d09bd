package client

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestCancelledSyncRecordsDeparted: a header sync of two peers takes
// blocks 109 and 110 out of the chain with the first peer's headers
// (109'..111' replace them) and is cancelled while the second peer, held,
// has not answered, as the service's rest sync is when another peer
// announces a block (see preemptOnNews). The blocks that left are
// recorded all the same: a subscription from 110, as a caller whose
// subscription ended asks from the last block it told, starts from the
// fork (109' first) rather than failing with ErrUnknownBlock, the next
// result names them disconnected, and the peers' tips learnt on the old
// branch are lowered to the fork.
func TestCancelledSyncRecordsDeparted(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	slow := &heldHeaders{release: make(chan struct{})}
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, slow.lie)
	t.Cleanup(slow.let) // before the proxy stops
	c := connectTo(t, node, 30*time.Second, node.P2PAddr, liar.Addr)
	old := Stamp{Height: 110, Hash: c.chain.Hash(110), Header: c.chain.Header(110)}
	gone := []any{c.chain.Hash(109), old.Hash}

	hash109, err := node.RPC().GetBlockHash(109)
	if err != nil {
		t.Fatal(err)
	}
	if err := node.RPC().InvalidateBlock(hash109); err != nil {
		t.Fatal(err)
	}
	node.Generate(t, 3) // 109', 110', 111'
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	syncCtx, cancelSync := context.WithCancel(ctx)
	defer cancelSync()
	slow.held.Store(true)
	synced := make(chan error, 1)
	go func() {
		_, err := c.SyncHeaders(syncCtx)
		synced <- err
	}()
	for c.chain.Hash(110) == old.Hash {
		select {
		case err := <-synced:
			t.Fatalf("the header sync ended (%v) before the chain changed, the second peer held", err)
		case <-ctx.Done():
			t.Fatal("the chain did not change within a minute")
		case <-time.After(10 * time.Millisecond):
		}
	}
	// The chain holds 109'..111'; the sync waits for the held peer.
	cancelSync()
	if err := <-synced; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled header sync returned %v, want context.Canceled", err)
	}
	// The tips the peers showed before are clamped to the fork: the
	// subscription's own syncs show the new ones, the held peer's too.
	slow.let()

	c.opMu.Lock()
	var disconnected []any
	for _, h := range c.disconnected {
		disconnected = append(disconnected, h)
	}
	tips := map[string]int32{}
	for _, m := range c.pool.Members() {
		if tip := c.views.tip(m); tip > 108 {
			tips[m.Addr()] = tip
		}
	}
	c.opMu.Unlock()
	if len(tips) > 0 {
		t.Errorf("tips learnt on the branch that left the chain, above its fork 108, kept: %v", tips)
	}
	if !slices.Equal(disconnected, gone) {
		t.Errorf("blocks recorded disconnected %v, want 109 and 110 %v", disconnected, gone)
	}
	s, err := c.SubscribeBlocks(ctx, &old)
	if err != nil {
		t.Fatalf("subscribing from block 110, taken out of the chain by the cancelled sync: %v", err)
	}
	defer s.Cancel()
	for h := int32(109); h <= 111; h++ {
		hash, err := node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		if e := nextBlockEvent(t, s); e.Kind != EventConnected || e.Height != h || e.BlockHash != *hash {
			t.Fatalf("event %+v, want block %d of the new chain connected", e, h)
		}
	}
}
