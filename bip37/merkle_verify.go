package bip37

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// VerifyMerkleBlock checks the partial merkle tree of mb against the merkle
// root in its header and returns the transactions it proves, in block
// order, with their positions in the block.
//
// It applies every check of Bitcoin Core's CPartialMerkleTree::
// ExtractMatches: at least one and at most MaxMerkleTransactions
// transactions, no more hashes than transactions, at least one flag bit per
// hash, no identical sibling subtrees (the CVE-2012-2459 mutation), every
// hash and every flag byte consumed by the tree walk. It is stricter than
// Core in one point: the padding bits of the last flag byte must be zero,
// as Core and btcd write them, so that a proof has one encoding only.
//
// The errors match ErrMerkleNoTransactions, ErrMerkleTooManyTransactions,
// ErrMerkleMutated, ErrMerkleRootMismatch or ErrMerkleBadEncoding (and one
// of its precise kinds) with errors.Is. A valid proof only shows that the
// transactions are committed to by the header; checking the header's
// proof of work and place in the chain is the caller's job. As in Core,
// the transaction count itself is not committed to, so an inner node can
// pass for a 64-byte transaction in a proof claiming a deeper tree; a
// caller that knows the block's real transaction count should compare it
// with mb.Transactions.
func VerifyMerkleBlock(mb *wire.MsgMerkleBlock) ([]MerkleMatch, error) {
	n := mb.Transactions
	switch {
	case n == 0:
		return nil, ErrMerkleNoTransactions
	case n > MaxMerkleTransactions:
		return nil, fmt.Errorf("%w: %d > %d", ErrMerkleTooManyTransactions, n, MaxMerkleTransactions)
	case uint64(len(mb.Hashes)) > uint64(n):
		return nil, fmt.Errorf("%w: %s for %s", ErrMerkleSurplusHashes, plural(len(mb.Hashes), "hash"), plural(n, "transaction"))
	case uint64(len(mb.Flags))*8 < uint64(len(mb.Hashes)):
		return nil, fmt.Errorf("%w: %s for %s", ErrMerkleMissingBits, plural(len(mb.Flags)*8, "flag bit"), plural(len(mb.Hashes), "hash"))
	}
	for i, h := range mb.Hashes {
		if h == nil {
			return nil, fmt.Errorf("%w: hash %d is nil", ErrMerkleNonCanonical, i)
		}
	}

	v := merkleTreeVerifier{n: n, hashes: mb.Hashes, flags: mb.Flags}
	root, err := v.traverse(merkleTreeHeight(n), 0)
	if err != nil {
		return nil, err
	}
	if (v.bitsUsed+7)/8 != uint64(len(mb.Flags)) {
		return nil, fmt.Errorf("%w: %s, the tree uses %s", ErrMerkleSurplusBits, plural(len(mb.Flags), "flag byte"), plural(v.bitsUsed, "bit"))
	}
	if pad := v.bitsUsed % 8; pad != 0 && mb.Flags[len(mb.Flags)-1]>>pad != 0 {
		return nil, fmt.Errorf("%w: non-zero padding bits in the last flag byte", ErrMerkleSurplusBits)
	}
	if v.hashesUsed != len(mb.Hashes) {
		return nil, fmt.Errorf("%w: %s, the tree uses %s", ErrMerkleSurplusHashes, plural(len(mb.Hashes), "hash"), plural(v.hashesUsed, "hash"))
	}
	if root != mb.Header.MerkleRoot {
		return nil, fmt.Errorf("%w: proof gives %v, header has %v", ErrMerkleRootMismatch, root, mb.Header.MerkleRoot)
	}
	return v.matches, nil
}

// merkleTreeVerifier holds the state of one partial merkle tree walk (Core's
// CPartialMerkleTree::TraverseAndExtract).
type merkleTreeVerifier struct {
	n          uint32
	hashes     []*chainhash.Hash
	flags      []byte
	bitsUsed   uint64
	hashesUsed int
	matches    []MerkleMatch
}

// traverse returns the hash of node (h, pos), consuming flag bits and
// hashes depth first. The depth is at most merkleTreeHeight(MaxMerkleTransactions)
// = 15, since the caller bounds the transaction count first.
func (v *merkleTreeVerifier) traverse(h uint, pos uint32) (chainhash.Hash, error) {
	if v.bitsUsed >= uint64(len(v.flags))*8 {
		return chainhash.Hash{}, fmt.Errorf("%w: the tree needs more than %s", ErrMerkleMissingBits, plural(v.bitsUsed, "flag bit"))
	}
	isParent := v.flags[v.bitsUsed/8]>>(v.bitsUsed%8)&1 == 1
	v.bitsUsed++
	if h == 0 || !isParent {
		if v.hashesUsed >= len(v.hashes) {
			return chainhash.Hash{}, fmt.Errorf("%w: the tree needs more than %s", ErrMerkleMissingHashes, plural(v.hashesUsed, "hash"))
		}
		hash := *v.hashes[v.hashesUsed]
		v.hashesUsed++
		if h == 0 && isParent {
			v.matches = append(v.matches, MerkleMatch{Txid: hash, Index: pos})
		}
		return hash, nil
	}
	left, err := v.traverse(h-1, pos*2)
	if err != nil {
		return left, err
	}
	right := left
	if pos*2+1 < merkleTreeWidth(v.n, h-1) {
		right, err = v.traverse(h-1, pos*2+1)
		if err != nil {
			return right, err
		}
		// Distinct transactions never give identical subtrees; equal
		// siblings mean a duplicated txid list (CVE-2012-2459).
		if right == left {
			return right, fmt.Errorf("%w: at height %d, position %d", ErrMerkleMutated, h-1, pos*2+1)
		}
	}
	return merkleHashPair(&left, &right), nil
}
