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
// should be given the transaction first in about half the sends, so
// sends are repeated, a new transaction each, until each peer was given
// one first, at most maxOrderTries times. A nearby spy that answers at
// once would otherwise be given every transaction first (before: the
// near peer first in 8 of 8 sends).
func TestSendFirstTurnNotBySpeed(t *testing.T) {
	const delay = 150 * time.Millisecond
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 100+maxOrderTries)
	near := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	far := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgNotFound); ok {
			time.Sleep(delay)
		}
		return []wire.Message{m}, false
	}, peertest.AlsoSees(wire.CmdNotFound))
	c := connectTo(t, node, 10*time.Second, near.Addr, far.Addr)
	first := map[string]int{}
	for i := 0; first[near.Addr] == 0 || first[far.Addr] == 0; i++ {
		// In random order one peer is first in all of maxOrderTries
		// sends with probability 2^(1-maxOrderTries), 2 in a million.
		if i == maxOrderTries {
			t.Fatalf("in %d sends the far peer was given the transaction first %d times, the near one %d: the first turn goes by speed",
				maxOrderTries, first[far.Addr], first[near.Addr])
		}
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
		res, err := c.SendTransaction(context.Background(), tx)
		if err != nil || len(res.Given) == 0 {
			t.Fatalf("send %d: %v, result %+v", i, err, res)
		}
		first[res.Given[0]]++
		t.Logf("send %d: given first to the %s peer (given %v, seen %v)", i, map[bool]string{true: "far", false: "near"}[res.Given[0] == far.Addr], res.Given, res.Seen)
	}
}
