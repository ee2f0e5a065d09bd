package bip37

import (
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// BenchmarkWallet measures the public API on one wallet's filter: 1,000
// elements at 0.0001 (Core's sizing: 2,396 bytes, 13 hash functions),
// loaded with 1,000 HASH160s, ten of which are paid in a block of 2,000
// two-in two-out P2PKH transactions. btcutil's filter is loaded from ours
// through its MsgFilterLoad, so both sides hold the same bits, and both
// run on the same inputs.
func BenchmarkWallet(b *testing.B) {
	r := rand.New(rand.NewPCG(37, 37))
	wallet := benchElems(4, 1000)
	block := walletBlock(r, wallet[:10])
	ours := NewFilter(1000, 0.0001, 0x5eed, wire.BloomUpdateAll)
	if ours.HashFuncs() != 13 {
		b.Fatalf("%d hash functions", ours.HashFuncs())
	}
	for _, e := range wallet {
		ours.Add(e)
	}
	// MatchTxAndUpdate adds the ten paid outpoints; add them now, so that
	// every iteration sees the same filter.
	for _, tx := range block.Transactions {
		ours.MatchTxAndUpdate(tx)
	}
	theirs := bloom.LoadFilter(ours.MsgFilterLoad())
	misses := benchElems(5, benchPool)
	hits := make([][]byte, benchPool)
	for i := range hits {
		hits[i] = wallet[i%len(wallet)]
	}
	fresh := benchElems(6, benchPool)
	addOurs := NewFilter(1000, 0.0001, 0x5eed, wire.BloomUpdateNone)
	addTheirs := bloom.LoadFilter(addOurs.MsgFilterLoad())

	pair(b, "Add", func(i int) { addOurs.Add(fresh[i%benchPool]) }, func(i int) { addTheirs.Add(fresh[i%benchPool]) })
	pair(b, "Contains/hit", func(i int) { ours.Contains(hits[i%benchPool]) }, func(i int) { theirs.Matches(hits[i%benchPool]) })
	pair(b, "Contains/miss", func(i int) { ours.Contains(misses[i%benchPool]) }, func(i int) { theirs.Matches(misses[i%benchPool]) })
	pair(b, "MatchTxAndUpdate/block2000",
		func(int) {
			for _, tx := range block.Transactions {
				ours.MatchTxAndUpdate(tx)
			}
		},
		func(int) {
			// btcutil takes a btcutil.Tx, which caches the txid: a fresh
			// one per transaction is what a node serving a block pays.
			for _, tx := range block.Transactions {
				theirs.MatchTxAndUpdate(btcutil.NewTx(tx))
			}
		})
	pair(b, "NewMerkleBlock/block2000",
		func(int) { NewMerkleBlock(block, ours) },
		func(int) { bloom.NewMerkleBlock(btcutil.NewBlock(block), theirs) })
}

// pair runs ours and theirs as the sub-benchmarks name/spvfilter and
// name/btcutil, reporting allocations and thread CPU time.
func pair(b *testing.B, name string, ours, theirs func(i int)) {
	for _, side := range []struct {
		name string
		fn   func(int)
	}{{"spvfilter", ours}, {"btcutil", theirs}} {
		b.Run(name+"/"+side.name, func(b *testing.B) {
			t := startCPU(b)
			i := 0
			for ; b.Loop(); i++ {
				side.fn(i)
			}
			t.stop(i)
		})
	}
}

// walletBlock returns a block of 2,000 transactions, each spending two
// outpoints with P2PKH scriptSigs and paying two P2PKH outputs; the
// transactions at evenly spaced positions pay the given HASH160s.
func walletBlock(r *rand.Rand, paid [][]byte) *wire.MsgBlock {
	blk := &wire.MsgBlock{Header: wire.BlockHeader{Version: 4, Nonce: r.Uint32()}}
	for i := range 2000 {
		tx := wire.NewMsgTx(2)
		for range 2 {
			var h chainhash.Hash
			copy(h[:], randBytes(r, 32))
			sig := append(append(append([]byte{71}, randBytes(r, 71)...), 33), genPubKey(r, true)...)
			tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&h, r.Uint32N(4)), sig, nil))
		}
		for o := range 2 {
			h := randBytes(r, 20)
			if o == 0 && i%200 == 0 && i/200 < len(paid) {
				h = paid[i/200]
			}
			tx.AddTxOut(wire.NewTxOut(int64(r.IntN(1e8)), p2pkhScript(h)))
		}
		blk.Transactions = append(blk.Transactions, tx)
	}
	return blk
}
