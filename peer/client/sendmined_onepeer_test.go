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
// on mainnet), which it shows nobody else. The liar is a btcd node that
// holds that block: it does not ask for a transaction it has in its
// chain, so its turn lasts until the timeout. When no peer has taken the
// transaction after minedGrace (the honest node's turn comes second, or
// it is Core-like: no verdict, announcements on a 5 s trickle) the send
// searches the chain, and the block that holds it is held by the liar
// alone. A send that reports it mined there rests on one peer and must
// say so (a warning naming the liar), as ScanResult.OnePeer does for a
// scan; it must never report it mined, stop the send, and say nothing.
// The test counts the sends that do, and among them those after which
// the honest node never got the transaction. Before findMined left out
// blocks only one peer's chain reaches, the sends whose first turn was
// the liar's did beside btcd (2 of 4, then 2 of 3), every send beside
// the Core-like node (4 of 4 twice, 3 of 3), and after 1 to 3 of those
// of a run the honest node did not hold the transaction; now none
// does, and the honest node holds it after every send.
func TestSendMinedRestsOnOnePeer(t *testing.T) {
	const trickle, timeout, attempts = 5 * time.Second, 6 * time.Second, 3
	honest := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--trickleinterval="+trickle.String()))
	honest.Generate(t, 100+2*attempts)
	liar := peertest.CopyChain(t, honest, peertest.WithArgs("--nobanning"))
	// One transaction a send, all mined in the liar's block above the
	// honest tip.
	var txs []*wire.MsgTx
	for i := range 2 * attempts {
		txs = append(txs, liar.SpendCoinbase(t, wire.NewTxOut(2_000_000, peertest.NewKey(fmt.Sprint("alice", i)).P2WPKHScript())))
	}
	block := liar.Confirm(t, txs...)
	tip := int32(101 + 2*attempts)
	tests := []struct {
		name   string
		honest func(t *testing.T) string // the honest peer's address
	}{
		{"btcd", func(*testing.T) string { return honest.P2PAddr }},
		{"Core-like", func(t *testing.T) string { return peertest.NewCoreLike(t, honest.P2PAddr, honest.Params.Net).Addr }},
	}
	for ti, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good := tt.honest(t)
			var mined, silent, lost int
			for i, tx := range txs[ti*attempts : (ti+1)*attempts] {
				c := connectTo(t, honest, timeout, good, liar.P2PAddr)
				if h := c.Chain().Height(); h != tip {
					t.Fatalf("the client's chain is at %d: want the liar's %d", h, tip)
				}
				start := time.Now()
				res, err := c.SendTransaction(context.Background(), tx)
				elapsed := time.Since(start)
				c.Close()
				if _, err := honest.RPC().GetBlockHeader(block); err == nil {
					t.Fatal("the honest node holds the liar's block: the test proves nothing")
				}
				// A transaction on its way has a second to reach the mempool.
				inHonest := false
				for end := time.Now().Add(time.Second); !inHonest && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
					inHonest = honest.InMempool(t, tx.TxHash())
				}
				t.Logf("send %d: %v after %v; given to %v (honest %s, liar %s); mined %+v; warnings %q; in the honest node's mempool: %t",
					i, err, elapsed.Round(time.Millisecond), res.Given, good, liar.P2PAddr, res.Mined, res.Warnings, inHonest)
				if err != nil || res.Mined == nil {
					// Not reported mined: the honest node is given it.
					if !inHonest {
						t.Errorf("send %d: not reported mined, and the honest node did not get the transaction", i)
					}
					// The chain search ran when no peer had taken it after
					// minedGrace: always beside the Core-like node, beside
					// btcd when the liar's turn came first. The block it
					// found, the liar's alone, is named with the liar.
					searched := tt.name == "Core-like" || len(res.Given) > 0 && res.Given[0] == liar.P2PAddr
					named := slices.ContainsFunc(res.Warnings, func(w string) bool {
						return strings.Contains(w, liar.P2PAddr) && strings.Contains(w, block.String())
					})
					if searched && !named {
						t.Errorf("send %d: the chain search found the transaction in %v, which only %s holds, and the result says nothing of it", i, block, liar.P2PAddr)
					}
					continue
				}
				mined++
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
			t.Logf("%d of %d sends reported mined in the liar's block", mined, attempts)
			if silent > 0 {
				t.Errorf("%d of %d sends reported mined in a block only %s holds, with no word of it; after %d of them the honest node did not hold the transaction",
					silent, attempts, liar.P2PAddr, lost)
			}
		})
	}
}
