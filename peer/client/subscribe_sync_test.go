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

// heldSyncReorg is a client of two peers of one node, the second's
// headers held, whose header sync has taken blocks 109 and 110 out of
// the chain with the first peer's headers (109'..111' replace them)
// and waits for the second.
type heldSyncReorg struct {
	node   *peertest.Node
	slow   *heldHeaders
	c      *Client
	old    Stamp        // block 110 before it left the chain
	gone   []any        // the hashes of 109 and 110 that left it
	synced <-chan error // the sync's end
}

// startHeldSyncReorg reorganizes the node below 110 and starts a header
// sync with syncCtx, returning once the chain holds 109'..111'.
func startHeldSyncReorg(t *testing.T, ctx, syncCtx context.Context) *heldSyncReorg {
	t.Helper()
	r := &heldSyncReorg{node: peertest.StartBtcd(t, peertest.WithArgs("--nobanning")), slow: &heldHeaders{release: make(chan struct{})}}
	r.node.Generate(t, 110)
	liar := peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, r.slow.lie)
	t.Cleanup(r.slow.let) // before the proxy stops
	r.c = connectTo(t, r.node, 30*time.Second, r.node.P2PAddr, liar.Addr)
	r.old = Stamp{Height: 110, Hash: r.c.chain.Hash(110), Header: r.c.chain.Header(110)}
	r.gone = []any{r.c.chain.Hash(109), r.old.Hash}
	hash109, err := r.node.RPC().GetBlockHash(109)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.node.RPC().InvalidateBlock(hash109); err != nil {
		t.Fatal(err)
	}
	r.node.Generate(t, 3) // 109', 110', 111'
	r.slow.held.Store(true)
	synced := make(chan error, 1)
	r.synced = synced
	go func() {
		_, err := r.c.SyncHeaders(syncCtx)
		synced <- err
	}()
	for r.c.chain.Hash(110) == r.old.Hash {
		select {
		case err := <-synced:
			t.Fatalf("the header sync ended (%v) before the chain changed, the second peer held", err)
		case <-ctx.Done():
			t.Fatal("the chain did not change within a minute")
		case <-time.After(10 * time.Millisecond):
		}
	}
	return r
}

// wantNewBlocks reads 109', 110' and 111' connected from s.
func (r *heldSyncReorg) wantNewBlocks(t *testing.T, s *BlockSubscription) {
	t.Helper()
	for h := int32(109); h <= 111; h++ {
		hash, err := r.node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		if e := nextBlockEvent(t, s); e.Kind != EventConnected || e.Height != h || e.BlockHash != *hash {
			t.Fatalf("event %+v, want block %d of the new chain connected", e, h)
		}
	}
}

// TestSubscribeFromBlockLeavingDuringSync: a header sync of two peers
// takes block 110 out of the chain with the first peer's headers (109'..
// 111' replace 109 and 110) and records where it forked only once the
// second peer, held, has answered. A subscription from 110 asked in
// between, as a caller whose subscription ended with ErrReorgTooDeep
// asks from the last block it told, starts from the fork (109' first)
// once the sync has ended, rather than failing with ErrUnknownBlock,
// which made block epochs skip to the tip.
func TestSubscribeFromBlockLeavingDuringSync(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := startHeldSyncReorg(t, ctx, ctx)
	// The chain holds 109'..111'; the sync waits for the held peer.
	time.AfterFunc(300*time.Millisecond, r.slow.let)
	s, err := r.c.SubscribeBlocks(ctx, &r.old)
	if err != nil {
		t.Fatalf("subscribing from block 110 just taken out of the chain: %v", err)
	}
	defer s.Cancel()
	if err := <-r.synced; err != nil {
		t.Fatal(err)
	}
	r.wantNewBlocks(t, s)
}
