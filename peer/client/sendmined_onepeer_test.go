package client

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendMinedRestsOnOnePeer: a liar one block ahead mined the
// transaction in a block of its own (cheap off mainnet; a block's work
// on mainnet), which it shows nobody else. The honest node is Core-like
// (no verdict, announcements on a 5 s trickle), so no peer has taken the
// transaction after minedGrace and the send searches the chain: the
// block that holds it is held by the liar alone. A send that reports it
// mined there rests on one peer and must say so (a warning naming the
// liar), as ScanResult.OnePeer does for a scan; what it must never do is
// report it mined, stop the send, and say nothing.
func TestSendMinedRestsOnOnePeer(t *testing.T) {
	const trickle, timeout, attempts = 5 * time.Second, 10 * time.Second, 4
	honest := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--trickleinterval="+trickle.String()))
	honest.Generate(t, 100+attempts)
	liar := peertest.CopyChain(t, honest, peertest.WithArgs("--nobanning"))
	// One transaction an attempt, all mined in the liar's block above the honest tip.
	var txs []*wire.MsgTx
	for i := range attempts {
		txs = append(txs, liar.SpendCoinbase(t, wire.NewTxOut(2_000_000, peertest.NewKey(fmt.Sprint("alice", i)).P2WPKHScript())))
	}
	block := liar.Confirm(t, txs...)
	core := peertest.NewCoreLike(t, honest.P2PAddr, honest.Params.Net)
	var silent, lost int
	for i, tx := range txs {
		c := connectTo(t, honest, timeout, core.Addr, liar.P2PAddr)
		if h := c.Chain().Height(); h != 101+attempts {
			t.Fatalf("the client's chain is at %d: want the liar's %d", h, 101+attempts)
		}
		start := time.Now()
		res, err := c.SendTransaction(context.Background(), tx)
		elapsed := time.Since(start)
		c.Close()
		if err != nil {
			t.Fatalf("attempt %d: %v", i, err)
		}
		if _, err := honest.RPC().GetBlockHeader(block); err == nil {
			t.Fatal("the honest node holds the liar's block: the test proves nothing")
		}
		// A transaction on its way has a second to reach the mempool.
		inHonest := false
		for end := time.Now().Add(time.Second); !inHonest && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
			inHonest = honest.InMempool(t, tx.TxHash())
		}
		t.Logf("attempt %d: %v; given to %v (honest %s, liar %s); mined %+v; warnings %q; in the honest node's mempool: %t",
			i, elapsed.Round(time.Millisecond), res.Given, core.Addr, liar.P2PAddr, res.Mined, res.Warnings, inHonest)
		if res.Mined == nil {
			continue // not reported mined: nothing rests on the liar
		}
		if res.Mined.BlockHash != *block {
			t.Fatalf("mined in %v, want the liar's %v", res.Mined.BlockHash, block)
		}
		if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, liar.P2PAddr) }) {
			silent++
			if !inHonest {
				lost++
			}
		}
	}
	if silent > 0 {
		t.Errorf("%d of %d sends reported mined in a block only %s holds, with no word of it; in %d of them the transaction never reached the honest node",
			silent, attempts, liar.P2PAddr, lost)
	}
}
