package peer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
)

// tx64 returns a transaction of 64 bytes without its witness: the size of
// an inner node of a merkle tree.
func tx64(t *testing.T) *wire.MsgTx {
	return tx64Spending(t, wire.OutPoint{Hash: chainhash.Hash{9}})
}

// coinbase64 returns a coinbase of 64 bytes.
func coinbase64(t *testing.T) *wire.MsgTx {
	return tx64Spending(t, wire.OutPoint{Index: wire.MaxPrevOutIndex})
}

// tx64Spending returns a transaction of 64 bytes spending op.
func tx64Spending(t *testing.T, op wire.OutPoint) *wire.MsgTx {
	t.Helper()
	tx := wire.NewMsgTx(1)
	tx.AddTxIn(wire.NewTxIn(&op, []byte{1, 2, 3, 4}, nil))
	tx.AddTxOut(wire.NewTxOut(1000, nil))
	if n := tx.SerializeSizeStripped(); n != 64 {
		t.Fatalf("transaction of %d bytes", n)
	}
	return tx
}

// blockOf returns a block of the regtest genesis coinbase and txs, its
// header committing to them.
func blockOf(txs ...*wire.MsgTx) *wire.MsgBlock {
	return blockOfAll(append([]*wire.MsgTx{chaincfg.RegressionNetParams.GenesisBlock.Transactions[0]}, txs...)...)
}

// blockOfAll returns a block of txs, its header committing to them.
func blockOfAll(txs ...*wire.MsgTx) *wire.MsgBlock {
	b := wire.NewMsgBlock(&chaincfg.RegressionNetParams.GenesisBlock.Header)
	for _, tx := range txs {
		b.AddTransaction(tx)
	}
	b.Header.MerkleRoot = blockchain.CalcMerkleRoot(btcutil.NewBlock(b).Transactions(), false)
	return b
}

// TestCheckBlock: a block is checked against its header's commitments and
// must start with a coinbase; one whose coinbase is 64 bytes proves
// nothing, as gcs.CheckBasic holds (CVE-2017-12842), while a 64-byte
// transaction after a coinbase of another size is no ambiguity.
func TestCheckBlock(t *testing.T) {
	other := wire.NewMsgTx(1)
	other.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{9}}, []byte{1, 2, 3, 4, 5}, nil))
	other.AddTxOut(wire.NewTxOut(1000, nil))
	bad := blockOf(other)
	bad.Header.MerkleRoot[0] ^= 1
	tests := []struct {
		name  string
		block *wire.MsgBlock
		want  error
	}{
		{"committed", blockOf(other), nil},
		{"a 64-byte transaction", blockOf(other, tx64(t)), nil},
		{"a 64-byte coinbase", blockOfAll(coinbase64(t), other), ErrAmbiguousBlock},
		{"no coinbase first", blockOfAll(other, tx64(t)), ErrBadBlock},
		{"another merkle root", bad, ErrBadBlock},
		{"no transactions", wire.NewMsgBlock(&bad.Header), ErrBadBlock},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckBlock(tt.block)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("error %v, want %v", err, tt.want)
			}
		})
	}
}

// TestAmbiguousBlocksNotHandedOut: GetBlocks does not hand out a block
// whose coinbase is 64 bytes, and says why without calling it a lie;
// GetFilteredBlocks refuses a matched transaction of 64 bytes, which its
// proof could show as an inner node.
func TestAmbiguousBlocksNotHandedOut(t *testing.T) {
	b := blockOfAll(coinbase64(t), tx64(t))
	hash := b.BlockHash()
	p := pipePeer(t, Config{Timeout: 5 * time.Second}, frame(t, b), true)
	called := false
	err := p.GetBlocks(context.Background(), []chainhash.Hash{hash}, func(int, *wire.MsgBlock) error { called = true; return nil })
	if !errors.Is(err, ErrAmbiguousBlock) || errors.Is(err, ErrBadBlock) || called {
		t.Fatalf("error %v, block handed out: %v", err, called)
	}

	mb, _ := bip37.NewMerkleBlockFromTxids(b, []chainhash.Hash{b.Transactions[1].TxHash()})
	p = pipePeer(t, Config{Timeout: 5 * time.Second}, frame(t, mb, b.Transactions[1]), true)
	_, err = p.GetFilteredBlocks(context.Background(), []chainhash.Hash{hash})
	checkPeerError(t, err, p.Addr(), ErrAmbiguousBlock)
}
