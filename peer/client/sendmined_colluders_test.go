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

// TestSendMinedRestsOnColluders: TestSendMinedRestsOnOnePeer with two
// colluders, both btcd nodes holding the same block of their own, one
// above the honest tip, that mines the transaction sent. Two chains
// reach the block, so the search for a block a single peer's chain
// reaches passes it; but the honest peer's chain does not reach it, and
// the block is the colluders' word alone (a majority buys no trust). A
// send must not report the transaction mined there without a warning
// naming both, and the honest node must be given the transaction after
// every send.
func TestSendMinedRestsOnColluders(t *testing.T) {
	const trickle, timeout = 5 * time.Second, 6 * time.Second
	honest := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--trickleinterval="+trickle.String()))
	honest.Generate(t, 100+3)
	liar := peertest.CopyChain(t, honest, peertest.WithArgs("--nobanning"))
	var txs []*wire.MsgTx
	for i := range 3 {
		txs = append(txs, liar.SpendCoinbase(t, wire.NewTxOut(2_000_000, peertest.NewKey(fmt.Sprint("bob", i)).P2WPKHScript())))
	}
	block := liar.Confirm(t, txs...)
	other := peertest.CopyChain(t, liar, peertest.WithArgs("--nobanning"))
	liars := []string{liar.P2PAddr, other.P2PAddr}
	tip := int32(101 + 3)
	tests := []struct {
		name   string
		honest func(t *testing.T) string // the honest peer's address
		txs    []*wire.MsgTx             // one a send
	}{
		// Beside btcd the search runs when a colluder's turn comes first.
		{"btcd", func(*testing.T) string { return honest.P2PAddr }, txs[:2]},
		// Beside a node that gives no verdict it always runs.
		{"Core-like", func(t *testing.T) string { return peertest.NewCoreLike(t, honest.P2PAddr, honest.Params.Net).Addr }, txs[2:]},
	}
	namesBoth := func(w string) bool { return strings.Contains(w, liars[0]) && strings.Contains(w, liars[1]) }
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good := tt.honest(t)
			var mined, silent, lost int
			for i, tx := range tt.txs {
				c := connectTo(t, honest, timeout, good, liars[0], liars[1])
				if h := c.Chain().Height(); h != tip {
					t.Fatalf("the client's chain is at %d: want the colluders' %d", h, tip)
				}
				start := time.Now()
				res, err := c.SendTransaction(context.Background(), tx)
				elapsed := time.Since(start)
				c.Close()
				if _, err := honest.RPC().GetBlockHeader(block); err == nil {
					t.Fatal("the honest node holds the colluders' block: the test proves nothing")
				}
				inHonest := false
				for end := time.Now().Add(time.Second); !inHonest && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
					inHonest = honest.InMempool(t, tx.TxHash())
				}
				t.Logf("send %d: %v after %v; given to %v (honest %s, colluders %v); mined %+v; warnings %q; in the honest node's mempool: %t",
					i, err, elapsed.Round(time.Millisecond), res.Given, good, liars, res.Mined, res.Warnings, inHonest)
				if !inHonest {
					lost++
				}
				if err != nil || res.Mined == nil {
					searched := tt.name == "Core-like" || len(res.Given) > 0 && slices.Contains(liars, res.Given[0])
					named := slices.ContainsFunc(res.Warnings, func(w string) bool { return namesBoth(w) && strings.Contains(w, block.String()) })
					if searched && !named {
						t.Errorf("send %d: the chain search found the transaction in %v, which only %v hold, and the result says nothing of it", i, block, liars)
					}
					continue
				}
				mined++
				if !slices.ContainsFunc(res.Warnings, namesBoth) {
					silent++
				}
			}
			t.Logf("%d of %d sends reported mined in the colluders' block", mined, len(tt.txs))
			if silent > 0 || lost > 0 {
				t.Errorf("%d of %d sends reported mined in a block only %v hold, with no word of it; after %d sends the honest node did not hold the transaction",
					silent, len(tt.txs), liars, lost)
			}
		})
	}
}
