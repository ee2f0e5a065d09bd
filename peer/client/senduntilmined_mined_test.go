package client

import (
	"context"
	"testing"
	"time"

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
