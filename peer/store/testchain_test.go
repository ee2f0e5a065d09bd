package store

import (
	"encoding/binary"
	"testing"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
)

var regtest = &chaincfg.RegressionNetParams

// mineChain returns the headers 0..n of a regtest chain: the genesis
// block and n headers on it that meet regtest's target (which half of all
// hashes do). branch tells apart chains that share the genesis block: the
// same n and branch give the same headers.
func mineChain(n int, branch uint32) []wire.BlockHeader {
	return extendChain([]wire.BlockHeader{regtest.GenesisBlock.Header}, n, branch)
}

// extendChain returns hs with n mined headers appended.
func extendChain(hs []wire.BlockHeader, n int, branch uint32) []wire.BlockHeader {
	for i := 0; i < n; i++ {
		prev := &hs[len(hs)-1]
		h := wire.BlockHeader{
			Version:   4,
			PrevBlock: prev.BlockHash(),
			Timestamp: prev.Timestamp.Add(10 * time.Minute),
			Bits:      regtest.PowLimitBits,
		}
		binary.LittleEndian.PutUint32(h.MerkleRoot[:], uint32(len(hs)))
		binary.LittleEndian.PutUint32(h.MerkleRoot[4:], branch)
		setNonce(&h, true)
		hs = append(hs, h)
	}
	return hs
}

// setNonce counts h's nonce up to the first whose hash meets h's target,
// or, with meets false, to the first whose hash misses it.
func setNonce(h *wire.BlockHeader, meets bool) {
	target := blockchain.CompactToBig(h.Bits)
	for {
		hash := h.BlockHash()
		if (blockchain.HashToBig(&hash).Cmp(target) <= 0) == meets {
			return
		}
		h.Nonce++
	}
}

// fakeFilter is the stand-in basic filter of the block at height of a
// test chain, and fakeFilterHeaders the filter headers that commit to
// them.
func fakeFilter(height int) []byte {
	return binary.LittleEndian.AppendUint32([]byte("filter"), uint32(height))
}

func fakeFilterHeaders(n int) []chainhash.Hash {
	out := make([]chainhash.Hash, n)
	var prev chainhash.Hash
	for h := range out {
		filterHash := chainhash.DoubleHashH(fakeFilter(h))
		out[h] = gcs.MakeHeader(&filterHash, &prev)
		prev = out[h]
	}
	return out
}

// sliceChain is a HeaderSource over a slice of headers.
type sliceChain []wire.BlockHeader

func (c sliceChain) Height() int32                   { return int32(len(c)) - 1 }
func (c sliceChain) Hash(h int32) chainhash.Hash     { return c[h].BlockHash() }
func (c sliceChain) Header(h int32) wire.BlockHeader { return c[h] }

// openTest opens a store in dir, failing the test on error.
func openTest(t testing.TB, dir string, opts Options) *Store {
	t.Helper()
	s, err := OpenWith(dir, regtest, opts)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// checkPrefix checks that the store holds exactly want[0..Height()] and
// that Height() is at least min.
func checkPrefix(t *testing.T, s *Store, want []wire.BlockHeader, minHeight int32) {
	t.Helper()
	tip := s.Height()
	if tip < minHeight || int(tip) >= len(want) {
		t.Fatalf("stored height %d, want %d..%d", tip, minHeight, len(want)-1)
	}
	got, err := s.ReadHeaders(0, tip)
	if err != nil {
		t.Fatal(err)
	}
	for h := range got {
		if got[h].BlockHash() != want[h].BlockHash() {
			t.Fatalf("header %d is %v, want %v", h, got[h].BlockHash(), want[h].BlockHash())
		}
	}
	if hash, err := s.Hash(tip); err != nil || hash != want[tip].BlockHash() {
		t.Fatalf("Hash(tip %d) = %v, %v; want %v", tip, hash, err, want[tip].BlockHash())
	}
}
