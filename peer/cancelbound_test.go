package peer

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestHasTxWithinCancelledHostile: HasTxWithin's context ends once the
// writer took its getdata, and the node then plays for time: it reads
// the getdata only just before the write's deadline and never answers,
// answers late, or answers with a stream of notfounds of other
// transactions. The ask still ends within the timeout of the call,
// whatever its bound for the answer (before, a getdata read just before
// the write's deadline had its answer awaited the bound after: with the
// bound the timeout, 3.7 s for a 2 s timeout), the connection is
// dropped (a late answer can be taken for no later request's), and the
// goroutines are back to what they were once the connection is closed.
func TestHasTxWithinCancelledHostile(t *testing.T) {
	needFixture(t)
	const timeout, within = 2 * time.Second, time.Second
	asked := chainhash.Hash{0xa5}
	silent := func(*wire.MsgNotFound) []wire.Message { return nil }
	tests := []struct {
		name   string
		within time.Duration // the ask's bound for the answer; 0: within
		resume time.Duration // the node reads again this long after the getdata was taken
		lie    func(m *wire.MsgNotFound) []wire.Message
	}{
		{name: "slow_read_silent", resume: timeout - 300*time.Millisecond, lie: silent},
		{name: "slow_read_silent_bound_timeout", within: timeout, resume: timeout - 300*time.Millisecond, lie: silent},
		{name: "late_answer", resume: 100 * time.Millisecond, lie: func(m *wire.MsgNotFound) []wire.Message {
			time.Sleep(within + 500*time.Millisecond)
			return []wire.Message{m}
		}},
		{name: "unrelated_flood", resume: 100 * time.Millisecond, lie: func(*wire.MsgNotFound) []wire.Message {
			out := make([]wire.Message, 0, 200)
			for i := range 200 {
				nf := wire.NewMsgNotFound()
				h := chainhash.Hash{byte(i), 0xee}
				nf.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessTx, &h))
				out = append(out, nf)
			}
			return out
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lying atomic.Bool
			proxy := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
				if nf, ok := m.(*wire.MsgNotFound); ok && lying.Load() {
					return tt.lie(nf), false
				}
				return []wire.Message{m}, false
			}, peertest.AlsoSees(wire.CmdNotFound))
			base := runtime.NumGoroutine()
			p, conn := dialStallingTo(t, proxy.Addr, timeout)
			lying.Store(true)
			conn.stall()
			actx, acancel := context.WithCancel(context.Background())
			type result struct {
				held bool
				err  error
			}
			done := make(chan result, 1)
			start := time.Now()
			bound := tt.within
			if bound == 0 {
				bound = within
			}
			go func() {
				held, err := p.HasTxWithin(actx, asked, bound)
				done <- result{held, err}
			}()
			conn.waitStalled(t) // the writer took the getdata
			acancel()
			time.AfterFunc(tt.resume, conn.resume)
			r := <-done
			took := time.Since(start)
			t.Logf("held %v, %v after %v", r.held, r.err, took.Round(time.Millisecond))
			if took > timeout+200*time.Millisecond {
				t.Errorf("the cancelled ask took %v: want the timeout, %v, at most", took, timeout)
			}
			if r.err == nil {
				t.Errorf("held %v: want the ask to fail", r.held)
			}
			select {
			case <-p.Done():
			case <-time.After(time.Second):
				t.Fatal("the connection was kept after an ask not answered in its bound")
			}
			if held, err := p.HasTx(context.Background(), asked); !errors.Is(err, ErrDisconnected) {
				t.Errorf("asked again: %v, %v: want ErrDisconnected, not a late answer", held, err)
			}
			p.Close()
			var now int
			for end := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				if now = runtime.NumGoroutine(); now <= base || time.Now().After(end) {
					break
				}
			}
			t.Logf("goroutines %d before dial, %d after close", base, now)
			if now > base {
				t.Errorf("goroutines %d before dial, %d after close", base, now)
			}
		})
	}
}
