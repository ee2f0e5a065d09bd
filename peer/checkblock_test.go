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
	tx := wire.NewMsgTx(1)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{9}}, []byte{1, 2, 3, 4}, nil))
	tx.AddTxOut(wire.NewTxOut(1000, nil))
	if n := tx.SerializeSizeStripped(); n != 64 {
		t.Fatalf("transaction of %d bytes", n)
	}
	return tx
}

// blockOf returns a block of the regtest genesis coinbase and txs, its
// header committing to them.
func blockOf(txs ...*wire.MsgTx) *wire.MsgBlock {
	b := wire.NewMsgBlock(&chaincfg.RegressionNetParams.GenesisBlock.Header)
	b.AddTransaction(chaincfg.RegressionNetParams.GenesisBlock.Transactions[0])
	for _, tx := range txs {
		b.AddTransaction(tx)
	}
	b.Header.MerkleRoot = blockchain.CalcMerkleRoot(btcutil.NewBlock(b).Transactions(), false)
	return b
}

// TestCheckBlock: a block is checked against its header's commitments,
// and one holding a 64-byte transaction proves nothing, as gcs.CheckBasic
// holds (CVE-2017-12842).
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
		{"a 64-byte transaction", blockOf(other, tx64(t)), ErrAmbiguousBlock},
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
// holding a 64-byte transaction, and says why without calling it a lie;
// GetFilteredBlocks refuses a matched transaction of 64 bytes, which its
// proof could show as an inner node.
func TestAmbiguousBlocksNotHandedOut(t *testing.T) {
	b := blockOf(tx64(t))
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
