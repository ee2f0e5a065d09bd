package peer

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestFinishBegunBetweenHeaderRounds: a header sync of a real btcd's
// chain of 4,100 blocks takes three getheaders (answered with 2,000
// headers, 2,000 and 100). Its context is ended as the answer of one
// round comes (held 200 ms by a proxy). Under FinishBegun that round runs
// to its answer, which extends the chain; no getheaders follows it; the
// sync returns at once with the context's error (or, ended in the last
// round, with that round's success), and the connection is kept: the
// next sync goes on from there. Under a plain context the round is
// abandoned and the connection dropped.
func TestFinishBegunBetweenHeaderRounds(t *testing.T) {
	const (
		blocks  = 4100
		timeout = 10 * time.Second
		held    = 200 * time.Millisecond
	)
	node := peertest.StartBtcd(t)
	node.Generate(t, blocks)
	for _, tt := range []struct {
		name   string
		on     int  // the answer (1, 2 or 3) as which the context ends
		finish bool // under FinishBegun
		height int32
		asked  int   // getheaders sent by the sync
		err    error // of the sync
		kept   bool
	}{
		{"plain, first round", 1, false, 0, 1, context.Canceled, false},
		{"first round", 1, true, 2000, 1, context.Canceled, true},
		{"second round", 2, true, 4000, 2, context.Canceled, true},
		{"last round", 3, true, blocks, 3, nil, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rctx := ctx
			if tt.finish {
				rctx = FinishBegun(ctx)
			}
			var armed atomic.Bool
			var answers atomic.Int32
			proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
				if _, ok := m.(*wire.MsgHeaders); ok && armed.Load() && int(answers.Add(1)) == tt.on {
					cancel()
					time.Sleep(held)
				}
				return []wire.Message{m}, false
			})
			p, err := Dial(context.Background(), Config{Addr: proxy.Addr, Params: node.Params, Timeout: timeout})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			getheaders := func() int {
				return len(slices.DeleteFunc(proxy.Commands(), func(c string) bool { return c != wire.CmdGetHeaders }))
			}
			before := getheaders()
			c := chain.New(node.Params)
			armed.Store(true)
			start := time.Now()
			res, err := p.SyncHeaders(rctx, c)
			took := time.Since(start)
			time.Sleep(300 * time.Millisecond) // a getheaders sent late would show by now
			asked := getheaders() - before
			t.Logf("%v after %v: chain at %d (tip %d), %d getheaders, connection error %v",
				err, took.Round(time.Millisecond), c.Height(), res.Tip, asked, p.Err())
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Errorf("error %v, want %v", err, tt.err)
			}
			if c.Height() != tt.height {
				t.Errorf("the chain reached %d, want %d: the round under way (and only it) completes", c.Height(), tt.height)
			}
			if asked != tt.asked {
				t.Errorf("%d getheaders sent, want %d: none after the context ended", asked, tt.asked)
			}
			// Promptly: the held answer and the chain's checks, not the
			// timeout of a round that should not have begun.
			if limit := held + 2*time.Second; took > limit {
				t.Errorf("the sync took %v after its context ended in it: want %v at most", took, limit)
			}
			if kept := p.Err() == nil; kept != tt.kept {
				t.Fatalf("connection kept: %t, want %t (%v)", kept, tt.kept, p.Err())
			}
			if !tt.kept {
				return
			}
			if _, err := p.SyncHeaders(context.Background(), c); err != nil || c.Height() != blocks {
				t.Errorf("the kept connection's next sync: %v, chain at %d, want %d", err, c.Height(), blocks)
			}
		})
	}
}
