package notify

import (
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/client"
)

// TestRecheckedMatchToldAtOnce: the rescan scans again a block it told
// resting on one peer and finds a spend the first scan missed (a liar's
// filter left it out): the EventMatch, then EventRechecked. The spend is
// told then, not held for the next block's EventConnected, which a
// reorganization of the block above may never bring (its
// EventDisconnected drops what is pending).
func TestRecheckedMatchToldAtOnce(t *testing.T) {
	n := New(nil, Options{ReorgSafety: 6})
	op := wire.OutPoint{Hash: chainhash.Hash{1}, Index: 0}
	r := newSpendReg(&op, []byte{0x51}, 6, func(*spendReg) {}, delivery{logf: t.Logf})
	defer r.cancel()
	n.spends[r] = true
	a, b := chainhash.Hash{0xa}, chainhash.Hash{0xb}
	tx := wire.NewMsgTx(2)
	tx.AddTxIn(wire.NewTxIn(&op, nil, nil))
	for _, e := range []client.Event{
		{Kind: client.EventConnected, Height: 100, BlockHash: a, OnePeer: "liar"},
		{Kind: client.EventConnected, Height: 101, BlockHash: b, OnePeer: "liar"},
		{Kind: client.EventMatch, Height: 100, BlockHash: a, Match: &client.Match{Txid: tx.TxHash(), Tx: tx, Height: 100, BlockHash: a}},
		{Kind: client.EventRechecked, Height: 100, BlockHash: a},
		{Kind: client.EventDisconnected, Height: 101, BlockHash: b},
	} {
		n.mu.Lock()
		n.handleLocked(e)
		n.mu.Unlock()
	}
	select {
	case d := <-r.spend:
		if d.Height != 100 || d.BlockHash != a || d.SpenderTxid != tx.TxHash() {
			t.Errorf("spend told %+v, want the one in block 100", d)
		}
	case <-time.After(2 * time.Second):
		t.Fatal("the spend found by the recheck of block 100 was never told")
	}
}
