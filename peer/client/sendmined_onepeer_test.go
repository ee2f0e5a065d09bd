package client

import (
	"fmt"
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
			m := minedBesideLiars{honest: honest, good: tt.honest(t), liars: []string{liar.P2PAddr}, block: block, tip: tip, timeout: timeout}
			var mined, silent, lost int
			for i, tx := range txs[ti*attempts : (ti+1)*attempts] {
				o := m.send(t, i, tx)
				if o.err != nil || o.res.Mined == nil {
					// Not reported mined: the honest node is given it.
					if !o.inHonest {
						t.Errorf("send %d: not reported mined, and the honest node did not get the transaction", i)
					}
					// The chain search found the liar's block, which it
					// alone holds: the result names it with the liar.
					if m.searched(tt.name == "Core-like", o) && !m.namesLiars(o, true) {
						t.Errorf("send %d: the chain search found the transaction in %v, which only %s holds, and the result says nothing of it", i, block, liar.P2PAddr)
					}
					continue
				}
				mined++
				if o.res.Mined.BlockHash != *block {
					t.Fatalf("mined in %v, want the liar's %v", o.res.Mined.BlockHash, block)
				}
				if !m.namesLiars(o, false) {
					silent++
					if !o.inHonest {
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
