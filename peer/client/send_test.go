package client

import (
	"context"
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
