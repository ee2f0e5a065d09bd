package client

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendAskBehindSlowBlock: one honest btcd node behind a proxy that
// takes 3 s to deliver a block, longer than askWait. A block is asked
// for, and the transaction sent 300 ms later: the send's question
// whether the node holds the transaction waits for the connection
// behind the block. Its bound starts when it is written, so the send
// succeeds and the node's connection is kept. Before, the bound started
// with the ask: it ran out while the ask waited, the connection was
// dropped before the question went out, and the send failed "no peer
// took transaction ... no answer whether it holds the transaction".
func TestSendAskBehindSlowBlock(t *testing.T) {
	const timeout, delay = 10 * time.Second, 3 * time.Second
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	var slow atomic.Bool
	proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgBlock); ok && slow.Load() {
			time.Sleep(delay)
		}
		return []wire.Message{m}, false
	})
	c := connectTo(t, node, timeout, proxy.Addr)
	if delay <= c.askWait() {
		t.Fatalf("the block's delay %v must exceed askWait %v", delay, c.askWait())
	}
	tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	tip, err := node.RPC().GetBestBlockHash()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	slow.Store(true)
	gotBlock := make(chan error, 1)
	go func() {
		_, err := c.GetBlock(ctx, *tip)
		gotBlock <- err
	}()
	time.Sleep(300 * time.Millisecond)
	start := time.Now()
	res, err := c.SendTransaction(ctx, tx)
	t.Logf("send: %v after %v; result %+v", err, time.Since(start).Round(time.Millisecond), res)
	if err != nil {
		t.Fatalf("send behind a slow block failed: %v", err)
	}
	if !slices.Contains(res.Accepted, proxy.Addr) || res.Failed[proxy.Addr] != nil {
		t.Errorf("accepted %v, failed %v: want the node to have taken it, nothing failed", res.Accepted, res.Failed)
	}
	if err := <-gotBlock; err != nil {
		t.Errorf("the block: %v", err)
	}
	if in, err := node.RPC().GetRawMempool(); err != nil || !slices.ContainsFunc(in, func(h *chainhash.Hash) bool { return *h == tx.TxHash() }) {
		t.Errorf("the node's mempool %v (%v) lacks the transaction", in, err)
	}
}
