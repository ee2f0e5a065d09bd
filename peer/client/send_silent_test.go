package client

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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
// dropped after an earlier error").
// Before, every send waited the whole timeout for the silent peer's
// answer to the first ask (whether it held the transaction already).
func TestSendSilentPeer(t *testing.T) {
	const n, timeout = 4, 10 * time.Second
	first := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--trickleinterval=50ms"))
	first.Generate(t, 100+n)
	second := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--trickleinterval=50ms", "--connect="+first.P2PAddr))
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if h, err := second.RPC().GetBlockCount(); err == nil && h == int64(100+n) {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the second node did not sync")
		}
	}
	var mute atomic.Bool
	silent := peertest.NewLiar(t, first.P2PAddr, first.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if mute.Load() {
			return nil, false
		}
		return []wire.Message{m}, false
	}, peertest.AlsoSees(wire.CmdNotFound, wire.CmdInv, wire.CmdGetData, wire.CmdPing, wire.CmdPong, wire.CmdVerAck, wire.CmdReject))
	clients := make([]*Client, n)
	txs := make([]*wire.MsgTx, n)
	for i := range clients {
		clients[i] = connectTo(t, first, timeout, first.P2PAddr, second.P2PAddr, silent.Addr)
		txs[i] = first.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	}
	mute.Store(true)
	var times []time.Duration
	for i, c := range clients {
		start := time.Now()
		res, err := c.SendTransaction(context.Background(), txs[i])
		elapsed := time.Since(start)
		times = append(times, elapsed)
		t.Logf("send %d: %v after %v; given %v, seen %v, accepted %v, failed %v", i, err, elapsed.Round(time.Millisecond),
			res.Given, res.Seen, res.Accepted, res.Failed)
		if err != nil || !res.Propagated() || slices.Contains(res.Seen, silent.Addr) || slices.Contains(res.Accepted, silent.Addr) {
			t.Fatalf("send %d: error %v, result %+v: want it propagated between the honest nodes, the silent peer counted for nothing", i, err, res)
		}
		var te *peer.TimeoutError
		if err := res.Failed[silent.Addr]; !errors.As(err, &te) || te.Within != c.askWait() || !strings.Contains(err.Error(), silent.Addr) ||
			!errors.Is(err, peer.ErrDisconnected) {
			t.Errorf("send %d: the silent peer's failure is %v: want its unanswered ask named, after %v, and its dropped connection", i, err, c.askWait())
		}
	}
	slices.Sort(times)
	t.Logf("%d sends with a silent peer, timeout %v: median %v, longest %v", n, timeout, times[n/2].Round(time.Millisecond), times[n-1].Round(time.Millisecond))
	if times[n-1] > timeout/2 {
		t.Errorf("a send took %v: the silent peer held it up (want %v at most)", times[n-1].Round(time.Millisecond), timeout/2)
	}
}
