package client

import (
	"context"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendRemovePeerDuring: the client's methods are safe for concurrent
// use, so a peer removed (RemovePeer) while a send still asks it whether
// it holds the transaction must end as a failure of that peer, not a
// nil connection dereferenced on the send's goroutines (a crash of the
// process). A node taken directly and a peer that hides the
// transaction (notfound for it, no announcement) in front of the same
// node: once the node took it, the hiding peer is asked every sendPoll
// until the timeout, and is removed meanwhile. The order of the turns
// is random: sends are repeated, by a client of its own each, until the
// node is given the transaction first, at most maxOrderTries times.
func TestSendRemovePeerDuring(t *testing.T) {
	const timeout = 4 * time.Second
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 100+maxOrderTries)
	for try := 1; try <= maxOrderTries; try++ {
		hider := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
			switch m := m.(type) {
			case *wire.MsgTx:
				nf := wire.NewMsgNotFound()
				h := m.TxHash()
				nf.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessTx, &h))
				return []wire.Message{nf}, false
			case *wire.MsgInv:
				return nil, false // announces nothing
			}
			return []wire.Message{m}, false
		}, peertest.AlsoSees(wire.CmdInv))
		c := connectTo(t, node, timeout, node.P2PAddr, hider.Addr)
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
		type result struct {
			given []string
			err   error
		}
		done := make(chan result, 1)
		go func() {
			res, err := c.SendTransaction(context.Background(), tx)
			var given []string
			if res != nil {
				given = res.Given
			}
			done <- result{given, err}
		}()
		time.Sleep(timeout / 4)
		if err := c.RemovePeer(hider.Addr); err != nil {
			t.Fatal(err)
		}
		r := <-done
		t.Logf("try %d: given %v, %v", try, r.given, r.err)
		if len(r.given) > 0 && r.given[0] == node.P2PAddr {
			// The hiding peer was asked after its removal, and the send
			// ended without a crash.
			if r.err != nil {
				t.Errorf("the node took the transaction, yet the send failed: %v", r.err)
			}
			return
		}
	}
	t.Fatalf("the node was never given the transaction first in %d sends: the hiding peer was not asked after its removal", maxOrderTries)
}
