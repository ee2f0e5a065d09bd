package lab

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/gcs"
)

// testChain is a chain of blocks whose transactions spend earlier outputs
// (of earlier blocks and of the same block), with the scripts each block
// spends known.
type testChain struct {
	blocks []*wire.MsgBlock
	prev   [][][]byte // the scripts each block's inputs spend
	// spendsBefore[i][k]: inputs of block i spending outputs of blocks
	// below k.
	spendsBefore [][]int
}

// newTestChain builds n blocks of random transactions: outputs of
// several script types, some repeated, empty or OP_RETURN; inputs spend
// random unspent outputs, some created earlier in the same block.
func newTestChain(seed uint64, n int) *testChain {
	rng := rand.New(rand.NewPCG(seed, 9))
	type utxo struct {
		op     wire.OutPoint
		script []byte
		block  int
	}
	var unspent []utxo
	c := &testChain{}
	shared := []byte{0x51} // OP_TRUE, paid again and again
	script := func() []byte {
		switch rng.IntN(8) {
		case 0:
			return shared
		case 1:
			return nil // empty
		case 2:
			return []byte{opReturn, 4, 1, 2, 3, 4}
		}
		s := make([]byte, 22+rng.IntN(13))
		fillRandom(rng, s)
		s[0] = 0 // not OP_RETURN
		return s
	}
	for h := range n {
		b := &wire.MsgBlock{Header: wire.BlockHeader{Nonce: uint32(h)}}
		cb := wire.NewMsgTx(1)
		cb.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex}, SignatureScript: []byte{byte(h), byte(h >> 8)}})
		cb.AddTxOut(&wire.TxOut{Value: 50, PkScript: script()})
		b.AddTransaction(cb)
		var prev [][]byte
		before := make([]int, h+1)
		for range 3 + rng.IntN(20) {
			tx := wire.NewMsgTx(2)
			for range 1 + rng.IntN(3) {
				if len(unspent) == 0 {
					break
				}
				i := rng.IntN(len(unspent))
				u := unspent[i]
				unspent[i] = unspent[len(unspent)-1]
				unspent = unspent[:len(unspent)-1]
				tx.AddTxIn(&wire.TxIn{PreviousOutPoint: u.op})
				prev = append(prev, u.script)
				for k := u.block + 1; k <= h; k++ {
					before[k]++
				}
			}
			if len(tx.TxIn) == 0 {
				continue
			}
			for range 1 + rng.IntN(3) {
				tx.AddTxOut(&wire.TxOut{Value: 1, PkScript: script()})
			}
			b.AddTransaction(tx)
			// Outputs of this transaction may be spent later in the
			// block.
			hash := tx.TxHash()
			for i, o := range tx.TxOut {
				if len(o.PkScript) == 0 || o.PkScript[0] != opReturn {
					unspent = append(unspent, utxo{wire.OutPoint{Hash: hash, Index: uint32(i)}, o.PkScript, h})
				}
			}
		}
		if s := cb.TxOut[0].PkScript; len(s) == 0 || s[0] != opReturn {
			unspent = append(unspent, utxo{wire.OutPoint{Hash: cb.TxHash()}, s, h})
		}
		c.blocks = append(c.blocks, b)
		c.prev = append(c.prev, prev)
		c.spendsBefore = append(c.spendsBefore, before)
	}
	return c
}

// TestChainMatchesBuildBasic: the sets Chain finds build, block after
// block, the filter gcs.BuildBasic builds from the scripts the block
// spends, given explicitly; so do NewBlock's.
func TestChainMatchesBuildBasic(t *testing.T) {
	tc := newTestChain(1, 60)
	c := NewChain(0)
	for h, b := range tc.blocks {
		if err := c.Add(int32(h), b); err != nil {
			t.Fatal(err)
		}
	}
	if unknown, untracked := c.Unknown(); unknown != 0 || untracked != 0 {
		t.Fatalf("%d unknown inputs, %d untracked outputs, want none", unknown, untracked)
	}
	spends := 0
	for h, got := range c.Blocks() {
		b := tc.blocks[h]
		spends += len(tc.prev[h])
		want, err := gcs.BuildBasic(b, tc.prev[h])
		if err != nil {
			t.Fatal(err)
		}
		for name, blk := range map[string]Block{"Chain": got, "NewBlock": NewBlock(int32(h), b, tc.prev[h])} {
			if blk.Hash != b.BlockHash() || blk.Size != b.SerializeSize() || blk.Height != int32(h) {
				t.Fatalf("%s: block %d: hash %v size %d", name, h, blk.Hash, blk.Size)
			}
			f, err := gcs.Build(blk.Key(), gcs.BasicP, gcs.BasicM, blk.Elements)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(f.NBytes(), want.NBytes()) {
				t.Fatalf("%s: block %d: %d elements build %x, BuildBasic %x", name, h, len(blk.Elements), f.NBytes(), want.NBytes())
			}
		}
	}
	if spends < 200 {
		t.Fatalf("only %d spends: the chain tests little", spends)
	}
}

// TestChainUnknownSpends starts a chain part way: the spends of outputs
// created before its first block are counted and left out; a bound on
// tracked outputs is counted too.
func TestChainUnknownSpends(t *testing.T) {
	tc := newTestChain(2, 40)
	const first = 25
	c := NewChain(0)
	for h := first; h < len(tc.blocks); h++ {
		if err := c.Add(int32(h), tc.blocks[h]); err != nil {
			t.Fatal(err)
		}
	}
	want := 0
	for h := first; h < len(tc.blocks); h++ {
		want += tc.spendsBefore[h][first]
	}
	if unknown, _ := c.Unknown(); unknown != want || want == 0 {
		t.Errorf("%d unknown inputs, want %d (> 0)", unknown, want)
	}
	if err := c.Add(first, tc.blocks[0]); err == nil {
		t.Error("a block at a height already added is accepted")
	}
	bounded := NewChain(5)
	for h, b := range tc.blocks {
		if err := bounded.Add(int32(h), b); err != nil {
			t.Fatal(err)
		}
	}
	if unknown, untracked := bounded.Unknown(); untracked == 0 || unknown == 0 || len(bounded.utxo) > 5 {
		t.Errorf("bound 5: %d unknown, %d untracked, %d tracked", unknown, untracked, len(bounded.utxo))
	}
}

// TestIsCoinbase: only the null outpoint alone makes a coinbase.
func TestIsCoinbase(t *testing.T) {
	null := wire.OutPoint{Index: wire.MaxPrevOutIndex}
	tests := []struct {
		ins  []wire.OutPoint
		want bool
	}{
		{[]wire.OutPoint{null}, true},
		{[]wire.OutPoint{{Index: 0}}, false},
		{[]wire.OutPoint{{Hash: chainhash.Hash{1}, Index: wire.MaxPrevOutIndex}}, false},
		{[]wire.OutPoint{null, null}, false},
	}
	for i, tt := range tests {
		tx := wire.NewMsgTx(1)
		for _, op := range tt.ins {
			tx.AddTxIn(&wire.TxIn{PreviousOutPoint: op})
		}
		if got := isCoinbase(tx); got != tt.want {
			t.Errorf("case %d: isCoinbase = %v", i, got)
		}
	}
}
