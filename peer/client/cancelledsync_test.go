package client

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"
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
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	syncCtx, cancelSync := context.WithCancel(ctx)
	defer cancelSync()
	r := startHeldSyncReorg(t, ctx, syncCtx)
	c := r.c
	// The chain holds 109'..111'; the sync waits for the held peer.
	cancelSync()
	if err := <-r.synced; !errors.Is(err, context.Canceled) {
		t.Fatalf("the cancelled header sync returned %v, want context.Canceled", err)
	}
	// The tips the peers showed before are clamped to the fork: the
	// subscription's own syncs show the new ones, the held peer's too.
	r.slow.let()

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
	if !slices.Equal(disconnected, r.gone) {
		t.Errorf("blocks recorded disconnected %v, want 109 and 110 %v", disconnected, r.gone)
	}
	s, err := c.SubscribeBlocks(ctx, &r.old)
	if err != nil {
		t.Fatalf("subscribing from block 110, taken out of the chain by the cancelled sync: %v", err)
	}
	defer s.Cancel()
	r.wantNewBlocks(t, s)
}
