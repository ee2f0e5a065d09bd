package bip37

import (
	"crypto/sha256"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// MaxMerkleTransactions is the largest transaction count a merkle proof
// may claim: the block weight limit over the weight of the smallest valid
// transaction, Bitcoin Core's MAX_BLOCK_WEIGHT / MIN_TRANSACTION_WEIGHT
// (4,000,000 / 240).
const MaxMerkleTransactions = 4_000_000 / 240

// MerkleMatch is a transaction proven by a merkle block: its txid
// (internal byte order, as chainhash.Hash) and its position in the block.
type MerkleMatch struct {
	Txid  chainhash.Hash
	Index uint32
}

// NewMerkleBlock builds the merkleblock message a BIP 37 node sends for
// block to a peer that loaded filter f. Like Bitcoin Core's CMerkleBlock
// constructor it runs f.MatchTxAndUpdate on every transaction in block
// order, so f is updated exactly as a serving node's filter would be. It
// returns the message and the matched transactions in block order.
//
// A nil filter matches nothing, like a null filter in Core's constructor:
// the proof then holds the merkle root alone.
//
// A block without transactions yields a message claiming zero
// transactions, which VerifyMerkleBlock rejects.
func NewMerkleBlock(block *wire.MsgBlock, f *Filter) (*wire.MsgMerkleBlock, []MerkleMatch) {
	if f == nil {
		return NewMerkleBlockFromTxids(block, nil)
	}
	txids := make([]chainhash.Hash, len(block.Transactions))
	match := make([]bool, len(txids))
	var matches []MerkleMatch
	for i, tx := range block.Transactions {
		// The filter's txid serializes into a buffer it keeps: no
		// allocation per transaction, unlike tx.TxHash.
		txids[i] = f.txid(tx)
		if f.matchTxAndUpdate(tx, &txids[i]) {
			match[i] = true
			matches = append(matches, MerkleMatch{Txid: txids[i], Index: uint32(i)})
		}
	}
	return buildMerkleBlock(&block.Header, txids, match), matches
}

// NewMerkleBlockFromTxids builds a merkle block proving those transactions
// of block whose txids (internal byte order) are in txids; txids not in the
// block are ignored. It is Bitcoin Core's CMerkleBlock constructor for a
// txid set (as used by gettxoutproof), except that it also returns the
// matched transactions in block order.
func NewMerkleBlockFromTxids(block *wire.MsgBlock, txids []chainhash.Hash) (*wire.MsgMerkleBlock, []MerkleMatch) {
	want := make(map[chainhash.Hash]struct{}, len(txids))
	for _, id := range txids {
		want[id] = struct{}{}
	}
	all := merkleBlockTxids(block)
	match := make([]bool, len(all))
	var matches []MerkleMatch
	for i, id := range all {
		if _, ok := want[id]; ok {
			match[i] = true
			matches = append(matches, MerkleMatch{Txid: id, Index: uint32(i)})
		}
	}
	return buildMerkleBlock(&block.Header, all, match), matches
}

// merkleBlockTxids returns the txid (witness stripped) of every transaction.
func merkleBlockTxids(block *wire.MsgBlock) []chainhash.Hash {
	txids := make([]chainhash.Hash, len(block.Transactions))
	for i, tx := range block.Transactions {
		txids[i] = tx.TxHash()
	}
	return txids
}

// merkleTreeWidth is the number of nodes at height h of the merkle tree over n
// leaves (height 0 holds the leaves).
func merkleTreeWidth(n uint32, h uint) uint32 {
	return uint32((uint64(n) + (1 << h) - 1) >> h)
}

// merkleTreeHeight is the height of the root of the tree over n leaves.
func merkleTreeHeight(n uint32) uint {
	h := uint(0)
	for merkleTreeWidth(n, h) > 1 {
		h++
	}
	return h
}

// merkleHashPair is a merkle tree node: double-SHA256 of left || right.
func merkleHashPair(left, right *chainhash.Hash) chainhash.Hash {
	var buf [64]byte
	copy(buf[:32], left[:])
	copy(buf[32:], right[:])
	first := sha256.Sum256(buf[:])
	return sha256.Sum256(first[:])
}

// merkleTreeBuilder holds the state of one partial merkle tree construction
// (Core's CPartialMerkleTree::TraverseAndBuild).
type merkleTreeBuilder struct {
	n      uint32
	txids  []chainhash.Hash
	parent [][]bool // parent[h][pos]: node (h, pos) has a matched leaf below
	hashes []chainhash.Hash
	flags  []byte
	nbits  uint32
}

// buildMerkleBlock builds the partial merkle tree over txids with the
// leaves flagged in match and wraps it with the header.
func buildMerkleBlock(header *wire.BlockHeader, txids []chainhash.Hash, match []bool) *wire.MsgMerkleBlock {
	mb := &wire.MsgMerkleBlock{Header: *header, Transactions: uint32(len(txids))}
	if len(txids) == 0 {
		return mb
	}
	b := merkleTreeBuilder{n: uint32(len(txids)), txids: txids}
	height := merkleTreeHeight(b.n)

	// Mark, level by level, which nodes lie above a matched leaf, instead
	// of scanning the leaves under every visited node as Core does.
	b.parent = make([][]bool, height+1)
	b.parent[0] = match
	for h := uint(1); h <= height; h++ {
		below := b.parent[h-1]
		level := make([]bool, merkleTreeWidth(b.n, h))
		for i := range below {
			if below[i] {
				level[i/2] = true
			}
		}
		b.parent[h] = level
	}

	b.traverse(height, 0)

	mb.Flags = b.flags
	mb.Hashes = make([]*chainhash.Hash, len(b.hashes))
	for i := range b.hashes {
		mb.Hashes[i] = &b.hashes[i]
	}
	return mb
}

// traverse visits node (h, pos) depth first: one flag bit per node, and a
// hash for every leaf and for every subtree without a match.
func (b *merkleTreeBuilder) traverse(h uint, pos uint32) {
	isParent := b.parent[h][pos]
	if b.nbits%8 == 0 {
		b.flags = append(b.flags, 0)
	}
	if isParent {
		b.flags[b.nbits/8] |= 1 << (b.nbits % 8)
	}
	b.nbits++
	if h == 0 || !isParent {
		b.hashes = append(b.hashes, b.subtreeHash(h, pos))
		return
	}
	b.traverse(h-1, pos*2)
	if pos*2+1 < merkleTreeWidth(b.n, h-1) {
		b.traverse(h-1, pos*2+1)
	}
}

// subtreeHash computes the hash of node (h, pos) from the leaves; a node
// without a right child is paired with itself.
func (b *merkleTreeBuilder) subtreeHash(h uint, pos uint32) chainhash.Hash {
	if h == 0 {
		return b.txids[pos]
	}
	left := b.subtreeHash(h-1, pos*2)
	right := left
	if pos*2+1 < merkleTreeWidth(b.n, h-1) {
		right = b.subtreeHash(h-1, pos*2+1)
	}
	return merkleHashPair(&left, &right)
}
