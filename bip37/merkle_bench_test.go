package bip37

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/bloom"
	"github.com/btcsuite/btcd/wire"
)

// BenchmarkNewMerkleBlock builds the merkle block for a block of 2000
// transactions with filters holding the txids of a few or of a quarter of
// them, against btcutil's bloom.NewMerkleBlock with an identical filter.
// Both sides hash every transaction and run the filter match on each;
// BloomUpdateNone keeps the filters unchanged between iterations.
func BenchmarkNewMerkleBlock(b *testing.B) {
	rng := rand.New(rand.NewPCG(11, 12))
	block := pmtRandomBlock(rng, 2000)
	for _, every := range []int{400, 4} {
		name := fmt.Sprintf("2000tx-match-1in%d", every)
		f := NewFilter(uint32(2000/every), 1e-6, 0, wire.BloomUpdateNone)
		for i, tx := range block.Transactions {
			if i%every == 0 {
				h := tx.TxHash()
				f.Add(h[:])
			}
		}
		bf := btcutilFilter(f) // the same bits: the two sizing rules differ
		b.Run(name+"/spvfilter", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				NewMerkleBlock(block, f)
			}
		})
		b.Run(name+"/btcutil", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				// A fresh btcutil.Block each time: its cached txids would
				// otherwise skip the hashing our side does.
				bloom.NewMerkleBlock(btcutil.NewBlock(block), bf)
			}
		})
	}
}
