package peertest

import (
	"fmt"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// SolveBlock builds the block of txs on prev at time ts and finds a
// nonce meeting params' proof-of-work limit (about two tries on regtest),
// for a chain built without mining it on a node.
func SolveBlock(params *chaincfg.Params, prev chainhash.Hash, ts time.Time, txs []*wire.MsgTx) (*wire.MsgBlock, error) {
	utxs := make([]*btcutil.Tx, len(txs))
	for i, tx := range txs {
		utxs[i] = btcutil.NewTx(tx)
	}
	block := &wire.MsgBlock{
		Header: wire.BlockHeader{
			Version:    0x20000000,
			PrevBlock:  prev,
			MerkleRoot: blockchain.CalcMerkleRoot(utxs, false),
			Timestamp:  ts,
			Bits:       params.PowLimitBits,
		},
		Transactions: txs,
	}
	target := blockchain.CompactToBig(params.PowLimitBits)
	for nonce := uint32(0); nonce < 1<<20; nonce++ {
		block.Header.Nonce = nonce
		hash := block.Header.BlockHash()
		if blockchain.HashToBig(&hash).Cmp(target) <= 0 {
			return block, nil
		}
	}
	return nil, fmt.Errorf("no nonce meets the proof-of-work limit for a block on %v", prev)
}
