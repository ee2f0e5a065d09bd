package peer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// TestAbandonedDropIsTyped: a connection this side dropped because it
// abandoned a request (its context ended while the answer came in) says
// so, ErrAbandoned, to every request after it, so that a caller does not
// charge the node; one dropped for the node's own failure (a notfound
// for a block asked for) does not.
func TestAbandonedDropIsTyped(t *testing.T) {
	needFixture(t)
	tests := []struct {
		name      string
		drop      func(p *Peer, hashes []chainhash.Hash) error
		wantFirst error
		abandoned bool
	}{
		{"abandoned while its answer came in", func(p *Peer, hashes []chainhash.Hash) error {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			return p.GetBlocks(ctx, hashes, func(int, *wire.MsgBlock) error {
				cancel()
				return nil
			})
		}, context.Canceled, true},
		{"the node's notfound", func(p *Peer, _ []chainhash.Hash) error {
			return p.GetBlocks(context.Background(), []chainhash.Hash{{1}}, func(int, *wire.MsgBlock) error { return nil })
		}, ErrMissingBlocks, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := dial(t, fx.node.P2PAddr, 10*time.Second)
			c := syncHeaders(t, p)
			var hashes []chainhash.Hash
			for h := int32(1); h <= 8; h++ {
				hashes = append(hashes, c.Hash(h))
			}
			if err := tt.drop(p, hashes); !errors.Is(err, tt.wantFirst) {
				t.Fatalf("the request that drops the connection: %v, want %v", err, tt.wantFirst)
			}
			select {
			case <-p.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("the connection was kept")
			}
			err := p.GetBlocks(context.Background(), hashes[:1], func(int, *wire.MsgBlock) error { return nil })
			if !errors.Is(err, ErrDisconnected) || errors.Is(err, ErrAbandoned) != tt.abandoned {
				t.Errorf("the next request: %v, want ErrDisconnected, ErrAbandoned %v", err, tt.abandoned)
			}
			if errors.Is(p.Err(), ErrAbandoned) != tt.abandoned {
				t.Errorf("Err: %v, want ErrAbandoned %v", p.Err(), tt.abandoned)
			}
		})
	}
}
