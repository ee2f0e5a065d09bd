package lab

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/gcs"
)

// opReturn marks a provably unspendable output, which BIP 158 leaves out.
const opReturn = 0x6a

// Block is one block as the lab sees it: the set its basic filter holds
// and what downloading it costs.
type Block struct {
	Height int32
	Hash   chainhash.Hash
	// Size is the block's serialized size, witness data included: what a
	// client downloads when its filter matches.
	Size int
	// Elements are the distinct scripts of the block's BIP 158 basic
	// filter, in the order first seen.
	Elements [][]byte
}

// Key returns the key of the block's filters: the basic filter's
// SipHash key (gcs.BasicKey).
func (b *Block) Key() [16]byte { return gcs.BasicKey(&b.Hash) }

// NewBlock returns block as the lab sees it, with prevOutScripts the
// scripts of the outputs its inputs spend (in any order; the coinbase
// spends none).
func NewBlock(height int32, block *wire.MsgBlock, prevOutScripts [][]byte) Block {
	var s elementSet
	s.addOutputs(block)
	for _, p := range prevOutScripts {
		s.add(p)
	}
	return Block{Height: height, Hash: block.BlockHash(), Size: block.SerializeSize(), Elements: s.elems}
}

// elementSet collects distinct non-empty scripts in the order first seen.
type elementSet struct {
	seen  map[string]struct{}
	elems [][]byte
}

func (s *elementSet) add(script []byte) {
	if len(script) == 0 {
		return
	}
	if s.seen == nil {
		s.seen = map[string]struct{}{}
	}
	if _, ok := s.seen[string(script)]; ok {
		return
	}
	s.seen[string(script)] = struct{}{}
	s.elems = append(s.elems, script)
}

// addOutputs adds block's output scripts but OP_RETURN ones.
func (s *elementSet) addOutputs(block *wire.MsgBlock) {
	for _, tx := range block.Transactions {
		for _, out := range tx.TxOut {
			if len(out.PkScript) > 0 && out.PkScript[0] != opReturn {
				s.add(out.PkScript)
			}
		}
	}
}

// DefaultMaxTracked is the default number of unspent outputs a Chain
// remembers the scripts of.
const DefaultMaxTracked = 5_000_000

// Chain turns consecutive blocks into Blocks, finding the scripts their
// inputs spend among the outputs of the blocks added before. An input
// whose output was created before the first block added (or was not
// remembered, beyond the bound on tracked outputs) is counted as unknown,
// and its script is missing from its block's set.
type Chain struct {
	blocks     []Block
	utxo       map[wire.OutPoint][]byte
	maxTracked int
	unknown    int
	untracked  int
}

// NewChain returns an empty Chain that remembers the scripts of at most
// maxTracked unspent outputs (DefaultMaxTracked if maxTracked <= 0), so
// that its memory stays bounded on any chain.
func NewChain(maxTracked int) *Chain {
	if maxTracked <= 0 {
		maxTracked = DefaultMaxTracked
	}
	return &Chain{utxo: map[wire.OutPoint][]byte{}, maxTracked: maxTracked}
}

// Add adds the block at height, which must follow the block added last.
func (c *Chain) Add(height int32, block *wire.MsgBlock) error {
	if n := len(c.blocks); n > 0 && height != c.blocks[n-1].Height+1 {
		return fmt.Errorf("lab: block at height %d after height %d", height, c.blocks[n-1].Height)
	}
	var s elementSet
	s.addOutputs(block)
	for _, tx := range block.Transactions {
		if !isCoinbase(tx) {
			for _, in := range tx.TxIn {
				script, ok := c.utxo[in.PreviousOutPoint]
				if !ok {
					c.unknown++
					continue
				}
				delete(c.utxo, in.PreviousOutPoint)
				s.add(script)
			}
		}
		hash := tx.TxHash()
		for i, out := range tx.TxOut {
			if len(out.PkScript) > 0 && out.PkScript[0] == opReturn {
				continue // never spent
			}
			if len(c.utxo) >= c.maxTracked {
				c.untracked++
				continue
			}
			c.utxo[wire.OutPoint{Hash: hash, Index: uint32(i)}] = out.PkScript
		}
	}
	c.blocks = append(c.blocks, Block{Height: height, Hash: block.BlockHash(), Size: block.SerializeSize(), Elements: s.elems})
	return nil
}

// isCoinbase reports whether tx is a coinbase: one input spending the
// null outpoint.
func isCoinbase(tx *wire.MsgTx) bool {
	return len(tx.TxIn) == 1 && tx.TxIn[0].PreviousOutPoint.Index == wire.MaxPrevOutIndex &&
		tx.TxIn[0].PreviousOutPoint.Hash == chainhash.Hash{}
}

// Blocks returns the blocks added so far.
func (c *Chain) Blocks() []Block { return c.blocks }

// Unknown returns how many inputs spent an output whose script the chain
// did not know (created before the first block, or not tracked), and
// how many outputs were not tracked because of the bound.
func (c *Chain) Unknown() (inputs, untracked int) { return c.unknown, c.untracked }
