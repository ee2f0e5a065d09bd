package peer

import (
	"context"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestBTCDMatchesEmptyPush: btcd, unlike Bitcoin Core, tests the empty
// push of OP_0 against a loaded filter (txscript.PushedData gives OP_0 an
// empty element; Core's IsRelevantAndUpdate skips empty data). A filter
// holding the empty element makes btcd send every transaction with a
// version 0 witness output, which bip37's Core rule does not match. The
// client never loads such a filter (see client's BIP 37 scan); this test
// fails when btcd stops doing so.
func TestBTCDMatchesEmptyPush(t *testing.T) {
	needFixture(t)
	pay := fx.node.SpendCoinbase(t, wire.NewTxOut(1_000_000, peertest.NewKey("empty push").P2WPKHScript()))
	fx.confirm(t, pay)
	p := dial(t, fx.node.P2PAddr, 0)
	c := syncHeaders(t, p)
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		elem  []byte
		wants bool
	}{
		{"empty element", []byte{}, true},
		{"another element", []byte{1}, false},
	} {
		f := bip37.NewFilter(1, 0.0001, 0, wire.BloomUpdateNone)
		f.Add(tc.elem)
		if f.MatchTxAndUpdate(pay) {
			t.Fatalf("%s: the Core rule matches the payment", tc.name)
		}
		if err := p.LoadFilter(ctx, f); err != nil {
			t.Fatal(err)
		}
		blocks, err := p.GetFilteredBlocks(ctx, []chainhash.Hash{c.Hash(fx.tip)})
		if err != nil || len(blocks) != 1 {
			t.Fatalf("%s: filtered block %v, %v", tc.name, blocks, err)
		}
		sent := false
		for _, tx := range blocks[0].Txs {
			sent = sent || tx.TxHash() == pay.TxHash()
		}
		if sent != tc.wants {
			t.Errorf("%s: btcd sent the payment to a witness script: %v, want %v", tc.name, sent, tc.wants)
		}
	}
}
