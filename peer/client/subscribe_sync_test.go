package client

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// heldHeaders is a peer whose headers, once held, wait for release.
type heldHeaders struct {
	held    atomic.Bool
	release chan struct{}
	once    sync.Once
}

// lie forwards every message, a headers message once held only after
// release.
func (h *heldHeaders) lie(m wire.Message) ([]wire.Message, bool) {
	if _, ok := m.(*wire.MsgHeaders); ok && h.held.Load() {
		<-h.release
	}
	return []wire.Message{m}, false
}

// let lets the held headers go.
func (h *heldHeaders) let() { h.once.Do(func() { close(h.release) }) }

// TestSubscribeFromBlockLeavingDuringSync: a header sync of two peers
// takes block 110 out of the chain with the first peer's headers (109'..
// 111' replace 109 and 110) and records where it forked only once the
// second peer, held, has answered. A subscription from 110 asked in
// between, as a caller whose subscription ended with ErrReorgTooDeep
// asks from the last block it told, starts from the fork (109' first)
// once the sync has ended, rather than failing with ErrUnknownBlock,
// which made block epochs skip to the tip.
func TestSubscribeFromBlockLeavingDuringSync(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	slow := &heldHeaders{release: make(chan struct{})}
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, slow.lie)
	t.Cleanup(slow.let) // before the proxy stops
	c := connectTo(t, node, 30*time.Second, node.P2PAddr, liar.Addr)
	old := Stamp{Height: 110, Hash: c.chain.Hash(110), Header: c.chain.Header(110)}

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
	slow.held.Store(true)
	synced := make(chan error, 1)
	go func() {
		_, err := c.SyncHeaders(ctx)
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
	time.AfterFunc(300*time.Millisecond, slow.let)
	s, err := c.SubscribeBlocks(ctx, &old)
	if err != nil {
		t.Fatalf("subscribing from block 110 just taken out of the chain: %v", err)
	}
	defer s.Cancel()
	if err := <-synced; err != nil {
		t.Fatal(err)
	}
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
