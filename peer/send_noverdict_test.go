package peer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestBroadcastNoVerdict: a node that is not btcd, holding back its
// announcements (a Core-like node on a trickle of a minute), gives no
// verdict on a transaction it took: the broadcast reports a
// *NoVerdictError (ErrNoVerdict), neither rejected nor stalled (before, a
// *DroppedError, which wraps ErrRejected), after the timeout, or as soon
// as the caller's enough is closed (BroadcastUntil), the node still
// served the transaction it asked for.
func TestBroadcastNoVerdict(t *testing.T) {
	needFixture(t)
	const timeout = 2 * time.Second
	tests := []struct {
		name   string
		enough bool
		within time.Duration
	}{
		{"timeout", false, timeout + 1500*time.Millisecond},
		{"enough", true, 1500 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core := peertest.NewCoreLike(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.CoreLikeTicks(time.Minute))
			tx := fx.node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, fx.alice.P2WPKHScript()))
			w := watchTx(t, fx.node, core.Addr, tx)
			p := dial(t, core.Addr, timeout)
			var enough chan struct{}
			if tt.enough {
				enough = make(chan struct{})
				close(enough)
			}
			start := time.Now()
			s, _, err := p.BroadcastUntil(context.Background(), tx, w, enough)
			elapsed := time.Since(start)
			t.Logf("%v after %v", err, elapsed.Round(time.Millisecond))
			var nv *NoVerdictError
			if s != nil || !errors.As(err, &nv) || !errors.Is(err, ErrNoVerdict) || errors.Is(err, ErrRejected) || errors.Is(err, ErrStalled) ||
				nv.Txid != tx.TxHash() || nv.Enough != tt.enough {
				t.Fatalf("sighting %+v, error %v: want no verdict (enough %t)", s, err, tt.enough)
			}
			if elapsed > tt.within {
				t.Errorf("took %v: want %v at most", elapsed, tt.within)
			}
			for deadline := time.Now().Add(3 * time.Second); !fx.node.InMempool(t, tx.TxHash()); time.Sleep(50 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the node behind never got the transaction: it was not served")
				}
			}
		})
	}
}
