package peer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// TestUnansweredAtOnce: btcd says nothing when asked for the filters,
// filter headers or checkpoints up to a block it does not have on its
// chain (an honest reorganization leaves such requests). The barrier's
// pong ends each at once, with an UnansweredError that wraps ErrStalled,
// well within the 20 s timeout; the connection is dropped, as after a
// timeout. A request answered whole leaves its pong to come after it,
// dropped, not charged: 150 of them, over the budget of unsolicited
// messages, end nothing.
func TestUnansweredAtOnce(t *testing.T) {
	needFixture(t)
	const timeout = 20 * time.Second
	c := syncHeaders(t, dial(t, fx.node.P2PAddr, timeout))
	ctx := context.Background()
	gone := chainhash.DoubleHashH([]byte("a block no longer on the chain"))
	var p *Peer
	for _, tc := range []struct {
		name string
		ask  func() error
	}{
		{"getcfilters", func() error {
			return p.GetCFilters(ctx, 1, []chainhash.Hash{c.Hash(1), gone}, func(int, []byte) error { return nil })
		}},
		{"getcfheaders", func() error {
			_, _, err := p.GetCFHeaders(ctx, 1, gone, 2)
			return err
		}},
		{"getcfcheckpt", func() error {
			_, err := p.GetCFCheckpt(ctx, gone, 1)
			return err
		}},
	} {
		p = dial(t, fx.node.P2PAddr, timeout)
		began := time.Now()
		err := tc.ask()
		var ue *UnansweredError
		if !errors.As(err, &ue) || !errors.Is(err, ErrStalled) {
			t.Fatalf("%s up to a block not on the chain: %v, want an UnansweredError wrapping ErrStalled", tc.name, err)
		}
		if took := time.Since(began); took > timeout/4 {
			t.Errorf("%s: unanswered after %v, want well within the timeout %v", tc.name, took, timeout)
		}
		if p.Err() == nil {
			t.Errorf("%s: the connection outlived the unanswered request", tc.name)
		}
	}
	p = dial(t, fx.node.P2PAddr, timeout)
	for i := range 150 {
		n := 0
		if err := p.GetCFilters(ctx, 1, []chainhash.Hash{c.Hash(1), c.Hash(2)}, func(int, []byte) error { n++; return nil }); err != nil || n != 2 {
			t.Fatalf("request %d: %d of 2 filters, %v", i, n, err)
		}
		if _, _, err := p.GetCFHeaders(ctx, 1, c.Hash(2), 2); err != nil {
			t.Fatalf("request %d: %v", i, err)
		}
	}
	time.Sleep(100 * time.Millisecond) // the last pongs
	if err := p.Err(); err != nil {
		t.Fatalf("after 300 requests answered whole: %v", err)
	}
}
