package client

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendGivenOnlyTold: SendResult.Given lists exactly the peers the
// transaction was announced to. One btcd peer behind a proxy that sees
// the node's notfounds; in one case the send is cancelled while the
// node's answer to the question that begins the peer's turn (its second
// notfound for the transaction, the first answering the question put
// to every peer before the turns) is held back, so that the turn ends
// before the inv is written: the peer must not be listed, its failure
// must be the cancel (its turn ran), and the node must not hold the
// transaction. In another the transaction reaches the node (by RPC) as
// the answer to the first question comes, so that the node holds it
// when the turn's question is asked: nothing is announced, and the peer
// counts as seen, not given. Otherwise the peer is listed.
func TestSendGivenOnlyTold(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 102)
	tests := []struct {
		name      string
		cancel    bool // cancel the send at the turn's question
		submit    bool // the node has the transaction by the turn
		wantGiven bool
	}{
		{name: "cancelled before the inv", cancel: true},
		{name: "held when its turn began", submit: true},
		{name: "not cancelled", wantGiven: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
			txid := tx.TxHash()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var mu sync.Mutex
			notfounds, armed := 0, false
			proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
				nf, ok := m.(*wire.MsgNotFound)
				if !ok || !slices.ContainsFunc(nf.InvList, func(iv *wire.InvVect) bool { return iv.Hash == txid }) {
					return []wire.Message{m}, false
				}
				mu.Lock()
				notfounds++
				first, hold := armed && notfounds == 1, armed && notfounds == 2
				mu.Unlock()
				if first && tt.submit {
					if _, err := node.RPC().SendRawTransaction(tx, true); err != nil {
						t.Errorf("submitting the transaction to the node: %v", err)
					}
				}
				if hold && tt.cancel {
					cancel()
					time.Sleep(300 * time.Millisecond) // the cancel is in before the answer
				}
				return []wire.Message{m}, false
			}, peertest.AlsoSees(wire.CmdNotFound))
			c := connectTo(t, node, 10*time.Second, proxy.Addr)
			mu.Lock()
			armed = true
			mu.Unlock()
			res, err := c.SendTransaction(ctx, tx)
			if res == nil {
				t.Fatalf("send: no result (%v)", err)
			}
			mu.Lock()
			n := notfounds
			mu.Unlock()
			t.Logf("send: %v; %d notfounds; given %v, accepted %v, seen %v, failed %v", err, n, res.Given, res.Accepted, res.Seen, res.Failed)
			if got := slices.Contains(res.Given, proxy.Addr); got != tt.wantGiven {
				t.Errorf("Given %v: listing %s is %t, want %t", res.Given, proxy.Addr, got, tt.wantGiven)
			}
			inPool := node.InMempool(t, txid)
			if tt.cancel {
				if n < 2 || !errors.Is(res.Failed[proxy.Addr], context.Canceled) {
					t.Errorf("%d notfounds, failure %v: want the peer's turn begun and ended by the cancel", n, res.Failed[proxy.Addr])
				}
				if inPool {
					t.Errorf("the node holds the transaction: it was announced")
				}
				return
			}
			if tt.submit {
				if err != nil || !slices.Equal(res.Seen, []string{proxy.Addr}) || !slices.Equal(res.Accepted, []string{proxy.Addr}) {
					t.Errorf("send: %v, seen %v, accepted %v: want the peer seen and accepted", err, res.Seen, res.Accepted)
				}
				return
			}
			if err != nil || !inPool || !slices.Equal(res.Accepted, []string{proxy.Addr}) {
				t.Errorf("send: %v, in the node's mempool %t, accepted %v: want it taken", err, inPool, res.Accepted)
			}
		})
	}
}
