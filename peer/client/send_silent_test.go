package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendSilentPeer: two honest btcd nodes that relay to each other and
// a peer that, once the client is connected, never answers again (a
// proxy that passes nothing more of its node's: no transaction, no
// notfound, no pong, no handshake on a new connection). The send must
// not wait for that peer's answers beyond askWait (each ask of it is
// cut short then, its connection dropped): the transaction propagates
// between the honest nodes, the send ends well before the timeout, and
// only a proof counts (the silent peer is neither seen nor accepted; its
// failure names the ask it left unanswered, where it said "connection
// dropped after an earlier error"). A peer that says at once that it
// holds the transaction (an inv of it for the notfound its node sends)
// and never serves nor announces it is held to the same: its word is
// no answer. A peer that ends the connection when asked counts for
// nothing either, and holds up nothing: with no ask left in flight the
// send ends before askWait (54 ms and 105 ms). Nor must the turns wait
// for the first answer of a peer that gives none: an honest node is
// given the transaction (it asks for it, through a proxy that notes
// when) within askWait/2 of the send's start.
// Before, every send waited the whole timeout for the silent peer's
// answer to the first ask (whether it held the transaction already).
// Then the first round of asks waited for every answer, or askWait:
// an honest node was given the transaction 2.00 s after the start, and
// the sends took 2.26 s in the median, 2.27 s at the longest. Then it
// was given it after 3 ms in the median, 15 ms at the longest; since
// the first turn waits for every peer's first answer, firstWait at most
// (see TestSendFirstTurnNotBySpeed), after 0.50 s, 0.52 s at the
// longest on a loaded machine (beside the peer that hangs up, at once).
// The sends take 2.00 s: the silent peer's first ask, written at the
// start, is waited for until it is cut short, as is every ask written
// (none outlives the send; the silent peer, given the transaction once
// it propagated, waits behind its ask).
func TestSendSilentPeer(t *testing.T) {
	const n, timeout = 4, 10 * time.Second
	// What the peer does with its node's messages once the client is
	// connected.
	tests := []struct {
		name string
		lie  peertest.LieFunc
		sees []string
		// cut: its ask is cut short askWait after it was written;
		// otherwise it ends the connection mid-ask, and the send ends
		// before askWait.
		cut bool
	}{
		{name: "silent", lie: func(wire.Message) ([]wire.Message, bool) { return nil, false },
			sees: []string{wire.CmdNotFound, wire.CmdInv, wire.CmdGetData, wire.CmdPing, wire.CmdPong, wire.CmdVerAck, wire.CmdReject}, cut: true},
		{name: "says_it_holds", lie: func(m wire.Message) ([]wire.Message, bool) {
			switch m := m.(type) {
			case *wire.MsgNotFound:
				inv := wire.NewMsgInv()
				for _, iv := range m.InvList {
					inv.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &iv.Hash))
				}
				return []wire.Message{inv}, false
			case *wire.MsgTx, *wire.MsgInv:
				// Never serves the transaction, nor announces it.
				return nil, false
			}
			return []wire.Message{m}, false
		}, sees: []string{wire.CmdNotFound, wire.CmdTx, wire.CmdInv}, cut: true},
		{name: "hangs_up", lie: func(m wire.Message) ([]wire.Message, bool) {
			switch m.(type) {
			case *wire.MsgTx, *wire.MsgNotFound:
				// Asked for the transaction, it ends the connection.
				return nil, true
			}
			return []wire.Message{m}, false
		}, sees: []string{wire.CmdNotFound, wire.CmdTx}},
	}
	blocks := int64(100 + n*len(tests))
	first := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--trickleinterval=50ms"))
	first.Generate(t, int(blocks))
	second := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--trickleinterval=50ms", "--connect="+first.P2PAddr))
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if h, err := second.RPC().GetBlockCount(); err == nil && h == blocks {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the second node did not sync")
		}
	}
	// The honest nodes are reached through proxies that note when each
	// first asks for a transaction (getdata): when it was given it.
	var givenMu sync.Mutex
	given := map[chainhash.Hash]time.Time{}
	note := func(m wire.Message) ([]wire.Message, bool) {
		if gd, ok := m.(*wire.MsgGetData); ok {
			givenMu.Lock()
			for _, iv := range gd.InvList {
				if _, ok := given[iv.Hash]; !ok {
					given[iv.Hash] = time.Now()
				}
			}
			givenMu.Unlock()
		}
		return []wire.Message{m}, false
	}
	viaFirst := peertest.NewLiar(t, first.P2PAddr, first.Params.Net, note, peertest.AlsoSees(wire.CmdGetData))
	viaSecond := peertest.NewLiar(t, second.P2PAddr, second.Params.Net, note, peertest.AlsoSees(wire.CmdGetData))
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mute atomic.Bool
			silent := peertest.NewLiar(t, first.P2PAddr, first.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
				if mute.Load() {
					return tt.lie(m)
				}
				return []wire.Message{m}, false
			}, peertest.AlsoSees(tt.sees...))
			clients := make([]*Client, n)
			txs := make([]*wire.MsgTx, n)
			for i := range clients {
				clients[i] = connectTo(t, first, timeout, viaFirst.Addr, viaSecond.Addr, silent.Addr)
				txs[i] = first.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
			}
			mute.Store(true)
			var times, firsts []time.Duration
			for i, c := range clients {
				start := time.Now()
				res, err := c.SendTransaction(context.Background(), txs[i])
				elapsed := time.Since(start)
				times = append(times, elapsed)
				givenMu.Lock()
				at, ok := given[txs[i].TxHash()]
				givenMu.Unlock()
				firstGiven := at.Sub(start)
				if !ok {
					firstGiven = elapsed
				}
				firsts = append(firsts, firstGiven)
				t.Logf("send %d: %v after %v, an honest node given it after %v (%v); given %v, seen %v, accepted %v, failed %v", i, err,
					elapsed.Round(time.Millisecond), firstGiven.Round(time.Millisecond), ok, res.Given, res.Seen, res.Accepted, res.Failed)
				if !ok || firstGiven > c.askWait()/2 {
					t.Errorf("send %d: no honest node asked for the transaction within %v of the start (given: %v, after %v): the turns waited for the silent peer", i, c.askWait()/2, ok, firstGiven.Round(time.Millisecond))
				}
				if err != nil || !res.Propagated() || slices.Contains(res.Seen, silent.Addr) || slices.Contains(res.Accepted, silent.Addr) {
					t.Fatalf("send %d: error %v, result %+v: want it propagated between the honest nodes, the silent peer counted for nothing", i, err, res)
				}
				var te *peer.TimeoutError
				err = res.Failed[silent.Addr]
				if !strings.Contains(fmt.Sprint(err), silent.Addr) || !errors.Is(err, peer.ErrDisconnected) || errors.As(err, &te) != tt.cut ||
					tt.cut && te.Within != c.askWait() {
					t.Errorf("send %d: the %s peer's failure is %v: want its ended connection named, its ask cut short after %v: %v", i, tt.name, err, c.askWait(), tt.cut)
				}
				if !tt.cut && elapsed >= c.askWait() {
					t.Errorf("send %d took %v: want less than askWait %v, no ask left in flight", i, elapsed.Round(time.Millisecond), c.askWait())
				}
			}
			slices.Sort(times)
			slices.Sort(firsts)
			t.Logf("%d sends with a %s peer, timeout %v: median %v, longest %v; an honest node given it after median %v, longest %v", n, tt.name, timeout,
				times[n/2].Round(time.Millisecond), times[n-1].Round(time.Millisecond), firsts[n/2].Round(time.Millisecond), firsts[n-1].Round(time.Millisecond))
			if times[n-1] > timeout/2 {
				t.Errorf("a send took %v: the silent peer held it up (want %v at most)", times[n-1].Round(time.Millisecond), timeout/2)
			}
		})
	}
}
