package client

import (
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// spendOf is a transaction spending, with a P2PKH signature script,
// the coin of key from prev, paying outs.
func spendOf(key *peertest.Key, prev chainhash.Hash, outs ...*wire.TxOut) *wire.MsgTx {
	tx := wire.NewMsgTx(2)
	sig, err := txscript.NewScriptBuilder().AddData(make([]byte, 71)).AddData(key.Priv.PubKey().SerializeCompressed()).Script()
	if err != nil {
		panic(err)
	}
	tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&prev, 0), sig, nil))
	for _, o := range outs {
		tx.AddTxOut(o)
	}
	return tx
}

// TestChangeOf: the change is told by script type first, then by the
// one amount not rounded; a transaction of one output pays none; where
// no rule decides, an output is taken all the same.
func TestChangeOf(t *testing.T) {
	a, b, c := peertest.NewKey("change a"), peertest.NewKey("change b"), peertest.NewKey("change c")
	var prev chainhash.Hash
	for _, tc := range []struct {
		name string
		outs []*wire.TxOut
		want int // -2: any output
	}{
		{"one output", []*wire.TxOut{wire.NewTxOut(990_000, b.PkScript())}, -1},
		{"the rounded one paid", []*wire.TxOut{wire.NewTxOut(1_000_000, b.PkScript()), wire.NewTxOut(990_000, c.PkScript())}, 1},
		{"the rounded one paid, change first", []*wire.TxOut{wire.NewTxOut(37_990_000, c.PkScript()), wire.NewTxOut(2_000_000, b.PkScript())}, 0},
		{"the input's type over amounts", []*wire.TxOut{wire.NewTxOut(1_000_000, c.PkScript()), wire.NewTxOut(990_000, b.P2WPKHScript())}, 0},
		{"nothing decides", []*wire.TxOut{wire.NewTxOut(1_234_567, b.PkScript()), wire.NewTxOut(7_654_321, c.PkScript())}, -2},
	} {
		got := changeOf(spendOf(a, prev, tc.outs...))
		if tc.want == -2 && (got < 0 || got >= len(tc.outs)) || tc.want != -2 && got != tc.want {
			t.Errorf("%s: change %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestOwnerChains: a spend's coin and its change are one chain, its
// payee another; a payee spent by a later transaction joins its
// spender's chain, never the payer's.
func TestOwnerChains(t *testing.T) {
	coin, payee, change := peertest.NewKey("owner coin"), peertest.NewKey("owner payee"), peertest.NewKey("owner change")
	change2, payee2 := peertest.NewKey("owner change 2"), peertest.NewKey("owner payee 2")
	var prev chainhash.Hash
	pay := spendOf(coin, prev, wire.NewTxOut(1_000_000, payee.PkScript()), wire.NewTxOut(990_000, change.PkScript()))
	// The payee spends what it was paid, keeping change of its own.
	next := spendOf(payee, pay.TxHash(), wire.NewTxOut(500_000, payee2.PkScript()), wire.NewTxOut(490_000, change2.PkScript()))
	got := ownerChains([]*wire.MsgTx{pay, next})
	id := func(k *peertest.Key) int {
		i, ok := got[string(k.PkScript())]
		if !ok {
			t.Fatalf("%x has no chain", k.PkScript())
		}
		return i
	}
	if id(coin) != id(change) {
		t.Error("the coin spent and its change are in different chains")
	}
	if id(payee) == id(coin) {
		t.Error("the payee is in the payer's chain")
	}
	if id(payee) != id(change2) {
		t.Error("the payee, spending its coin, is not in one chain with its own change")
	}
	if id(payee2) == id(payee) || id(payee2) == id(coin) {
		t.Error("the second payee is in a spender's chain")
	}
}
