package client

import (
	"fmt"
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
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := minedBesideLiars{honest: honest, good: tt.honest(t), liars: liars, block: block, tip: tip, timeout: timeout}
			var mined, silent, lost int
			for i, tx := range tt.txs {
				o := m.send(t, i, tx)
				if !o.inHonest {
					lost++
				}
				if o.err != nil || o.res.Mined == nil {
					if m.searched(tt.name == "Core-like", o) && !m.namesLiars(o, true) {
						t.Errorf("send %d: the chain search found the transaction in %v, which only %v hold, and the result says nothing of it", i, block, liars)
					}
					continue
				}
				mined++
				if !m.namesLiars(o, false) {
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
