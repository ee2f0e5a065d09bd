package peer

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestFinishBegun: a request whose context ends while the node's answer
// is on its way (held 200 ms by a proxy, the context cancelled as it
// comes) is dropped with its connection under a plain context, and runs
// to its answer, the connection kept and usable, under FinishBegun,
// unless a context derived from FinishBegun's was cancelled on its own; a
// request begun under FinishBegun after the end sends nothing and keeps
// the connection too. A node that never answers still ends the request
// at the timeout, the connection dropped.
func TestFinishBegun(t *testing.T) {
	needFixture(t)
	const timeout = 2 * time.Second
	known := syncHeaders(t, dial(t, fx.node.P2PAddr, timeout))
	blocks, err := known.Hashes(1, 3)
	if err != nil {
		t.Fatal(err)
	}
	headers := func(p *Peer, ctx context.Context) error {
		_, err := p.SyncHeaders(ctx, chain.New(fx.node.Params))
		return err
	}
	filters := func(p *Peer, ctx context.Context) error {
		return p.GetCFilters(ctx, 1, blocks, func(int, []byte) error { return nil })
	}
	isHeaders := func(m wire.Message) bool { _, ok := m.(*wire.MsgHeaders); return ok }
	isFilter := func(m wire.Message) bool { _, ok := m.(*wire.MsgCFilter); return ok }
	tests := []struct {
		name    string
		request func(*Peer, context.Context) error
		on      func(wire.Message) bool // the answer held, the context cancelled as it comes
		finish  bool                    // under FinishBegun
		own     bool                    // a context derived from FinishBegun's cancelled instead
		before  bool                    // the context ended before the request began
		answer  bool                    // the held answer is passed on
		ok      bool                    // the request succeeds
		kept    bool                    // the connection is kept
	}{
		{"headers, plain", headers, isHeaders, false, false, false, true, false, false},
		{"headers", headers, isHeaders, true, false, false, true, true, true},
		{"filters, plain", filters, isFilter, false, false, false, true, false, false},
		{"filters", filters, isFilter, true, false, false, true, true, true},
		{"filters, own cancel", filters, isFilter, true, true, false, true, false, false},
		{"ended before", headers, isHeaders, true, false, true, true, false, true},
		{"never answered", headers, isHeaders, true, false, false, false, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			rctx := ctx
			if tt.finish {
				rctx = FinishBegun(ctx)
			}
			end := cancel
			if tt.own {
				rctx, end = context.WithCancel(rctx)
				defer end()
			}
			var armed, done atomic.Bool
			proxy := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
				if !armed.Load() || !tt.on(m) {
					return []wire.Message{m}, false
				}
				if done.CompareAndSwap(false, true) {
					end()
					time.Sleep(200 * time.Millisecond)
				}
				if !tt.answer {
					return nil, false
				}
				return []wire.Message{m}, false
			})
			p := dial(t, proxy.Addr, timeout)
			armed.Store(true)
			if tt.before {
				end()
			}
			start := time.Now()
			err := tt.request(p, rctx)
			took := time.Since(start)
			t.Logf("%v after %v", err, took.Round(time.Millisecond))
			if (err == nil) != tt.ok {
				t.Errorf("error %v: want success %t", err, tt.ok)
			}
			if !tt.ok && tt.answer && !errors.Is(err, context.Canceled) {
				t.Errorf("error %v: want context.Canceled", err)
			}
			if took > timeout+300*time.Millisecond {
				t.Errorf("the request took %v: want the timeout, %v, at most", took, timeout)
			}
			if kept := p.Err() == nil; kept != tt.kept {
				t.Fatalf("connection kept: %t, want %t (%v)", kept, tt.kept, p.Err())
			}
			if tt.kept {
				if _, err := p.SyncHeaders(context.Background(), chain.New(fx.node.Params)); err != nil {
					t.Errorf("the kept connection's next request: %v", err)
				}
			}
		})
	}
}
