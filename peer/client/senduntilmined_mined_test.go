package client

import (
	"context"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendUntilMinedAlreadyMined: SendUntilMined of a transaction the
// chain already holds (SendTransaction reports it Mined) returns that
// block at once; it must not follow the chain from above the tip for a
// block that will never come, and fail when ctx ends as if it were never
// mined.
func TestSendUntilMinedAlreadyMined(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	tx := node.SpendCoinbase(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	block := node.Confirm(t, tx)
	node.Generate(t, 3)
	const timeout, wait = 5 * time.Second, 20 * time.Second
	c := connectTo(t, node, timeout)
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	start := time.Now()
	conf, err := c.SendUntilMined(ctx, tx, time.Second)
	elapsed := time.Since(start)
	t.Logf("%+v, %v after %v", conf, err, elapsed.Round(time.Millisecond))
	if err != nil || conf == nil || conf.BlockHash != *block || conf.Height != 102 {
		t.Fatalf("confirmation %+v, error %v after %v: want block %v at 102", conf, err, elapsed.Round(time.Millisecond), block)
	}
	if elapsed > wait/2 {
		t.Errorf("took %v", elapsed)
	}
}

// TestSendUntilMinedRestsOnOnePeer: while SendUntilMined waits, a liar
// (a node of the honest one's chain that never connects to it) mines
// the transaction in a block it shows nobody else. That block rests on
// the liar alone (its EventConnected names it), and SendUntilMined,
// whose Confirmation has no word for that, must not return it while
// the liar alone holds it (three timeouts here; before, it returned it
// once the others were waited for, 6.0 s after the block in two runs);
// once the honest node holds the block too (EventRechecked), it returns
// it.
func TestSendUntilMinedRestsOnOnePeer(t *testing.T) {
	const timeout = 5 * time.Second
	honest := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	honest.Generate(t, 101)
	liar := peertest.CopyChain(t, honest, peertest.WithArgs("--nobanning"))
	tx := honest.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	c := connectTo(t, honest, timeout, honest.P2PAddr, liar.P2PAddr)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	type result struct {
		conf *Confirmation
		err  error
	}
	done := make(chan result, 1)
	go func() {
		conf, err := c.SendUntilMined(ctx, tx, 200*time.Millisecond)
		done <- result{conf, err}
	}()
	// The send is over once both nodes hold the transaction.
	for end := time.Now().Add(20 * time.Second); !honest.InMempool(t, tx.TxHash()) || !liar.InMempool(t, tx.TxHash()); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatal("the nodes did not both take the transaction")
		}
	}
	lone := liar.Confirm(t, tx)
	mined := time.Now()
	select {
	case r := <-done:
		t.Fatalf("returned %+v, %v %v after the liar mined its block alone: want no block only the liar holds",
			r.conf, r.err, time.Since(mined).Round(time.Millisecond))
	case <-time.After(3 * timeout):
	}
	// The honest node gets the liar's block: it no longer rests on one peer.
	block, err := liar.RPC().GetBlock(lone)
	if err != nil {
		t.Fatal(err)
	}
	if err := honest.RPC().SubmitBlock(btcutil.NewBlock(block), nil); err != nil {
		t.Fatal(err)
	}
	shared := time.Now()
	r := <-done
	t.Logf("returned %+v, %v, %v after the honest node held the block", r.conf, r.err, time.Since(shared).Round(time.Millisecond))
	if r.err != nil || r.conf == nil || r.conf.BlockHash != *lone || r.conf.Height != 102 {
		t.Fatalf("confirmation %+v, error %v: want block %v at 102", r.conf, r.err, lone)
	}
}
