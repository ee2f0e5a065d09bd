package client

import (
	"context"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendFirstTurnNotBySpeed: the first peer given a transaction knows
// it came from this client, so the turns are in random order, and how
// fast a peer answers whether it holds the transaction must not put it
// first (SendTransaction's and firstAnswers' doc comments say so). Two
// honest peers in front of one node, one of them far (its notfound comes
// 150 ms late, a round trip across an ocean, well within askWait): each
// should be given the transaction first in about half of orderSends
// sends, and each must be in orderMinFirst of them at least. A nearby
// spy that answers at once would otherwise be given every transaction
// first (before: the near peer first in 8 of 8 sends).
func TestSendFirstTurnNotBySpeed(t *testing.T) {
	const delay = 150 * time.Millisecond
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 100+orderSends)
	near := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	far := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgNotFound); ok {
			time.Sleep(delay)
		}
		return []wire.Message{m}, false
	}, peertest.AlsoSees(wire.CmdNotFound))
	c := connectTo(t, node, 10*time.Second, near.Addr, far.Addr)
	first := map[string]int{}
	for i := range orderSends {
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
		res, err := c.SendTransaction(context.Background(), tx)
		if err != nil || len(res.Given) == 0 {
			t.Fatalf("send %d: %v, result %+v", i, err, res)
		}
		first[res.Given[0]]++
		t.Logf("send %d: given first to the %s peer (given %v, seen %v)", i, map[bool]string{true: "far", false: "near"}[res.Given[0] == far.Addr], res.Given, res.Seen)
	}
	t.Logf("given first in %d sends: the far peer %d times, the near one %d", orderSends, first[far.Addr], first[near.Addr])
	if first[far.Addr] < orderMinFirst || first[near.Addr] < orderMinFirst {
		t.Errorf("in %d sends the far peer was given the transaction first %d times, the near one %d: want each %d times at least, the order not by speed",
			orderSends, first[far.Addr], first[near.Addr], orderMinFirst)
	}
}

// orderSends and orderMinFirst size TestSendFirstTurnNotBySpeed: in
// random order one of two peers is first in fewer than 2 of 20 sends
// with chance 2 * 21 / 2^20 = 4*10^-5 (at 8 sends, the far peer first in
// none, 1 in 256), while a peer first in 9 sends of 10 by its speed
// fails the test in 39% of runs (43% before), one first in all of them
// in every run.
const orderSends, orderMinFirst = 20, 2
