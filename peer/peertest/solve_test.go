package peertest

import (
	"testing"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// TestSolveBlockAccepted: a block SolveBlock builds on the node's genesis
// is taken by btcd as its new tip.
func TestSolveBlockAccepted(t *testing.T) {
	n := StartBtcd(t)
	sig, err := txscript.NewScriptBuilder().AddInt64(1).AddData([]byte("solve")).Script()
	if err != nil {
		t.Fatal(err)
	}
	cb := wire.NewMsgTx(wire.TxVersion)
	cb.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{}, wire.MaxPrevOutIndex), sig, nil))
	cb.AddTxOut(wire.NewTxOut(blockchain.CalcBlockSubsidy(1, n.Params), []byte{txscript.OP_TRUE}))
	b, err := SolveBlock(n.Params, *n.Params.GenesisHash, time.Now().Truncate(time.Second), []*wire.MsgTx{cb})
	if err != nil {
		t.Fatal(err)
	}
	if err := n.RPC().SubmitBlock(btcutil.NewBlock(b), nil); err != nil {
		t.Fatalf("submitblock: %v", err)
	}
	if got, err := n.RPC().GetBestBlockHash(); err != nil || *got != b.BlockHash() {
		t.Fatalf("best block %v (%v), want the solved block %v", got, err, b.BlockHash())
	}
}
