package client

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendUntilMined: a transaction is sent to two peers, announced
// again until mined, and reported with its block.
func TestSendUntilMined(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	second := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, second.Addr)
	go func() {
		time.Sleep(500 * time.Millisecond)
		if _, err := node.GenerateErr(1); err != nil {
			t.Errorf("mining: %v", err)
		}
	}()
	conf, err := c.SendUntilMined(ctx, tx, 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	block, err := node.RPC().GetBlock(&conf.BlockHash)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, btx := range block.Transactions {
		found = found || btx.TxHash() == tx.TxHash()
	}
	if conf.Height != 102 || !found {
		t.Fatalf("confirmation %+v; transaction in that block: %v", conf, found)
	}
}

// TestSendEcho: a peer that takes the transaction and serves it back
// without relaying it is believed by nobody: alone, it leaves acceptance
// unconfirmed (a warning); among honest peers, acceptance is confirmed by
// a peer the transaction was not given to, and the node holds it.
func TestSendEcho(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	t.Run("alone", func(t *testing.T) {
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
		echo := peertest.NewEcho(t, node.P2PAddr, node.Params.Net)
		c := connectTo(t, node, 2*time.Second, echo.Addr)
		res, err := c.SendTransaction(context.Background(), tx)
		if err != nil {
			t.Fatal(err)
		}
		if !echo.Held(tx.TxHash()) || node.InMempool(t, tx.TxHash()) {
			t.Fatal("the echo did not take the transaction, or passed it on")
		}
		if res.Propagated() || len(res.Seen) != 0 || !slices.Equal(res.Accepted, []string{echo.Addr}) ||
			!slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "unconfirmed") }) {
			t.Errorf("result %+v: want acceptance unconfirmed", res)
		}
	})
	t.Run("among honest peers", func(t *testing.T) {
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
		echo := peertest.NewEcho(t, node.P2PAddr, node.Params.Net)
		honest := []string{peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr}
		c := connectTo(t, node, 2*time.Second, echo.Addr, honest[0], honest[1])
		res, err := c.SendTransaction(context.Background(), tx)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Propagated() || !node.InMempool(t, tx.TxHash()) || len(res.Warnings) != 0 {
			t.Errorf("result %+v: want propagation seen and the transaction in the node's mempool", res)
		}
		// What was seen was seen before it was given: the first peer
		// given it never counts, nor does the echo once given it.
		if slices.Contains(res.Seen, res.Given[0]) || slices.Contains(res.Given, echo.Addr) && slices.Index(res.Given, echo.Addr) == 0 && slices.Contains(res.Seen, echo.Addr) {
			t.Errorf("a peer counted as seeing a transaction it was given: %+v", res)
		}
	})
}

// TestSendMined: a transaction already in the chain is reported where it
// was mined, well before the timeout, not as stalled.
func TestSendMined(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	tx := node.SpendCoinbase(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	block := node.Confirm(t, tx)
	node.Generate(t, 3)
	const timeout = 10 * time.Second
	c := connectTo(t, node, timeout)
	start := time.Now()
	res, err := c.SendTransaction(context.Background(), tx)
	if err != nil {
		t.Fatal(err)
	}
	if res.Mined == nil || res.Mined.BlockHash != *block || res.Mined.Height != 102 || !res.Propagated() {
		t.Fatalf("result %+v, want mined at 102 in %v", res, block)
	}
	if d := time.Since(start); d > timeout/2 {
		t.Errorf("took %v, against a timeout of %v", d, timeout)
	}
}

// TestSendUntilMinedWhileRedialling announces a transaction again every
// few milliseconds while its peer's connection keeps being dropped and
// redialled: under -race, the member's connection is read and replaced
// under one rule.
func TestSendUntilMinedWhileRedialling(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	c := connectTo(t, node, 5*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	// Ten drops while the transaction is announced again every few
	// milliseconds, then the block that mines it.
	dropped := make(chan int, 1)
	go func() {
		time.Sleep(300 * time.Millisecond) // the transaction is sent
		n := 0
		for ; n < 10; n++ {
			time.Sleep(20 * time.Millisecond)
			c.pool.Conn(c.pool.Members()[0]).Close()
		}
		dropped <- n
		if _, err := node.GenerateErr(1); err != nil {
			t.Errorf("mining: %v", err)
		}
	}()
	conf, err := c.SendUntilMined(ctx, tx, 5*time.Millisecond)
	if n := <-dropped; n != 10 {
		t.Errorf("the connection was dropped %d times", n)
	}
	if err != nil {
		t.Fatal(err)
	}
	if conf.Height != 102 {
		t.Errorf("confirmation %+v", conf)
	}
}
