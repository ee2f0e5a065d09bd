package chain

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// TestHeaderHashIsBlockHash: headerHash gives wire's BlockHash for the
// genesis blocks and for random headers, negative versions and
// timestamps past 2106 (wire writes their low 32 bits) among them.
func TestHeaderHashIsBlockHash(t *testing.T) {
	headers := []wire.BlockHeader{chaincfg.MainNetParams.GenesisBlock.Header, chaincfg.RegressionNetParams.GenesisBlock.Header}
	r := rand.New(rand.NewPCG(1, 2))
	for range 1000 {
		var h wire.BlockHeader
		h.Version = int32(r.Uint32())
		for i := range h.PrevBlock {
			h.PrevBlock[i], h.MerkleRoot[i] = byte(r.Uint32()), byte(r.Uint32())
		}
		h.Timestamp = time.Unix(int64(r.Uint64N(1<<34)), 0)
		h.Bits, h.Nonce = r.Uint32(), r.Uint32()
		headers = append(headers, h)
	}
	for i := range headers {
		if got, want := headerHash(&headers[i]), headers[i].BlockHash(); got != want {
			t.Fatalf("header %d (%+v): %v, BlockHash %v", i, headers[i], got, want)
		}
	}
}

func BenchmarkHeaderHash(b *testing.B) {
	h := chaincfg.MainNetParams.GenesisBlock.Header
	b.Run("headerHash", func(b *testing.B) {
		for b.Loop() {
			headerHash(&h)
		}
	})
	b.Run("BlockHash", func(b *testing.B) {
		for b.Loop() {
			h.BlockHash()
		}
	})
}
