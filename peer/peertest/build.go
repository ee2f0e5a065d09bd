package peertest

import (
	"testing"

	"github.com/btcsuite/btcd/wire"
)

// BuildSpend is Spend without submitting the transaction: it spends ins
// (P2PKH, P2PK, P2WPKH or P2TR outputs of their keys) to outs and signs
// it, ready to send to a node some other way.
func BuildSpend(t testing.TB, ins []Output, outs ...*wire.TxOut) *wire.MsgTx {
	t.Helper()
	tx, err := sign(ins, outs)
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// BuildSpendErr is BuildSpend for callers without a testing.TB.
func BuildSpendErr(ins []Output, outs ...*wire.TxOut) (*wire.MsgTx, error) {
	return sign(ins, outs)
}
