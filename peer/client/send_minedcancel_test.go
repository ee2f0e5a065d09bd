package client

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendCancelledDuringChainSearch: a send that nobody takes (a
// Core-like peer keeps an orphan without a word) searches the chain after
// minedGrace; cancelled while the search's getheaders, or its getcfilters,
// is out on the peer's own connection, it lets that request finish within
// its bound instead of abandoning it (see peer.FinishBegun). The node's answer is held a moment after the
// cancel. Answered, the connection is kept (the one the send began with
// is still open when it returns, and the proxy holds it alone) and the send returns once the answer is in (held
// 300 ms; asserted within 1.3 s of the cancel); before, the abandoned
// getheaders dropped the connection (0 open). Never answered, the request
// still ends at the timeout after it was written, the connection dropped:
// the send returns within the timeout of the cancel.
func TestSendCancelledDuringChainSearch(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	const (
		timeout = 3 * time.Second
		hold    = 300 * time.Millisecond
	)
	tests := []struct {
		name   string
		on     func(wire.Message) bool // the answer held (see cancelOnAnswer)
		answer bool                    // it reaches the client
		within time.Duration           // the send returns this long after the cancel at most
		open   int                     // connections open at the peer after the send
	}{
		{"headers answered", isHeaders, true, hold + time.Second, 1},
		{"headers never answered", isHeaders, false, timeout + time.Second, 0},
		{"filters answered", isFilter, true, hold + time.Second, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			clog := &stampedWriter{w: &lockedWriter{w: &strings.Builder{}}, start: time.Now()}
			hc := &cancelOnAnswer{on: tt.on, cancel: cancel, log: clog, hold: hold, answer: tt.answer}
			liar := peertest.NewLiar(t, core.Addr, node.Params.Net, hc.lie)
			proxy := peertest.NewWatchProxy(t, liar.Addr, node.Params.Net, peertest.WatchPasses, nil)
			c := connectWith(t, Config{Peers: []string{proxy.Addr}, Params: node.Params, Timeout: timeout, Log: clog})
			t.Cleanup(func() {
				if t.Failed() {
					t.Logf("the proxy: %d connections open; the client's log:\n%s", proxy.Open(), clog)
				}
			})
			own := takeOwnConn(t, c)
			hc.armed.Store(true)
			start := time.Now()
			res, err := c.SendTransaction(ctx, orphanTx())
			returned := time.Now()
			fmt.Fprintf(clog, "test: the send returned\n")
			t.Logf("%v after %v; result %+v", err, returned.Sub(start).Round(time.Millisecond), res)
			cancelled, ok := hc.at.Load().(time.Time)
			if !ok {
				t.Fatalf("the chain search was not answered so while the send lasted")
			}
			if !errors.Is(err, context.Canceled) {
				t.Errorf("error %v: want context.Canceled", err)
			}
			after := returned.Sub(cancelled)
			t.Logf("returned %v after the cancel", after.Round(time.Millisecond))
			if after > tt.within {
				t.Errorf("the send returned %v after the cancel: want %v at most", after, tt.within)
			}
			// The connection the send began with, as the send left it.
			if lost := own.lost(); (lost == nil) != tt.answer {
				t.Errorf("the client's own connection kept: %t, want %t (%v)", lost == nil, tt.answer, lost)
			}
			if n := waitOpen(proxy, tt.open); n != tt.open {
				t.Errorf("%d connections open at the peer after the send: want %d", n, tt.open)
			}
		})
	}
}

// cancelOnAnswer is a liar's lie that, once armed, cancels a send when
// the node's first message for which on is true comes (its answer to a
// request of the chain search's), holds it hold, then forwards it if
// answer, else drops it and every such message after.
type cancelOnAnswer struct {
	on     func(wire.Message) bool
	cancel context.CancelFunc
	log    io.Writer
	hold   time.Duration
	answer bool
	armed  atomic.Bool
	done   atomic.Bool
	at     atomic.Value // time.Time of the cancel
}

// isHeaders: the answer to a getheaders.
func isHeaders(m wire.Message) bool { _, ok := m.(*wire.MsgHeaders); return ok }

// isFilter: a filter of the answer to a getcfilters.
func isFilter(m wire.Message) bool { _, ok := m.(*wire.MsgCFilter); return ok }

func (h *cancelOnAnswer) lie(m wire.Message) ([]wire.Message, bool) {
	if !h.on(m) || !h.armed.Load() {
		return []wire.Message{m}, false
	}
	if h.done.CompareAndSwap(false, true) {
		fmt.Fprintf(h.log, "test: the send cancelled, the node's %s held\n", m.Command())
		h.at.Store(time.Now())
		h.cancel()
		time.Sleep(h.hold)
	}
	if !h.answer {
		return nil, false
	}
	return []wire.Message{m}, false
}
