package peer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestHasTxWithinBehindRequest: HasTxWithin asked while a block comes
// slowly (a proxy in front of btcd delays it 2 s) on the same
// connection. Its bound (1 s) starts when its getdata is written, after
// the block: it gets btcd's notfound. Cancelled while it waits for the
// connection, it returns the context's error and the connection stays:
// nothing was asked. Before, the wait for the connection ignored the
// context, and the getdata not yet written was given up by dropping the
// connection.
func TestHasTxWithinBehindRequest(t *testing.T) {
	needFixture(t)
	const delay, within = 2 * time.Second, time.Second
	tests := []struct {
		name   string
		cancel time.Duration // the ask's context ends after this; 0: never
	}{
		{name: "bound_from_write"},
		{name: "cancelled_unsent", cancel: 300 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, slow := dialSlowBlocks(t, delay)
			slow.Store(true)
			block := make(chan error, 1)
			go func() {
				block <- p.GetBlocks(context.Background(), []chainhash.Hash{nodeHash(t, fx.node, fx.tip)}, func(int, *wire.MsgBlock) error { return nil })
			}()
			time.Sleep(200 * time.Millisecond)
			ctx := context.Background()
			if tt.cancel > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.cancel)
				defer cancel()
			}
			start := time.Now()
			held, err := p.HasTxWithin(ctx, chainhash.Hash{1}, within)
			took := time.Since(start)
			t.Logf("held %v, %v after %v", held, err, took.Round(time.Millisecond))
			switch {
			case tt.cancel == 0 && (err != nil || held):
				t.Errorf("held %v, %v: want btcd's notfound, the bound counted from the write", held, err)
			case tt.cancel > 0 && (!errors.Is(err, context.DeadlineExceeded) || took > delay/2):
				t.Errorf("%v after %v: want the context's error when it ended (%v)", err, took, tt.cancel)
			}
			if err := <-block; err != nil {
				t.Fatalf("the block: %v", err)
			}
			select {
			case <-p.Done():
				t.Fatalf("the connection was dropped: %v", p.Err())
			default:
			}
			if held, err := p.HasTx(context.Background(), chainhash.Hash{2}); err != nil || held {
				t.Errorf("asked again: %v, %v: want notfound on the connection kept", held, err)
			}
		})
	}
}

// dialSlowBlocks dials fx's node through a proxy that holds each block
// it passes delay while slow is true (false at first).
func dialSlowBlocks(t *testing.T, delay time.Duration) (p *Peer, slow *atomic.Bool) {
	slow = new(atomic.Bool)
	proxy := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgBlock); ok && slow.Load() {
			time.Sleep(delay)
		}
		return []wire.Message{m}, false
	})
	return dial(t, proxy.Addr, 10*time.Second), slow
}
