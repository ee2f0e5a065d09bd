package bip37

import "errors"

// Errors returned by VerifyMerkleBlock and DecodeMerkleBlock. Every
// structural defect of a proof (surplus or missing hashes or flag bits,
// non-canonical encoding) matches ErrMerkleBadEncoding with errors.Is, and
// also its own, more precise sentinel.
var (
	// ErrMerkleRootMismatch: the proof is well formed but the root it
	// commits to is not the merkle root in the block header.
	ErrMerkleRootMismatch = errors.New("merkle root mismatch")

	// ErrMerkleMutated: two sibling subtrees of the proof have the same
	// hash, the CVE-2012-2459 mutation (a block whose transaction list was
	// padded with a duplicate keeps its merkle root).
	ErrMerkleMutated = errors.New("merkle proof mutated: identical sibling hashes (CVE-2012-2459)")

	// ErrMerkleNoTransactions: the proof claims a block of zero
	// transactions; every block has at least a coinbase.
	ErrMerkleNoTransactions = errors.New("merkle proof for zero transactions")

	// ErrMerkleTooManyTransactions: the proof claims more transactions
	// than a block can hold (MaxMerkleTransactions).
	ErrMerkleTooManyTransactions = errors.New("merkle proof claims more transactions than a block can hold")

	// ErrMerkleBadEncoding: the proof's hashes and flag bits do not
	// describe a partial merkle tree of the claimed transaction count.
	ErrMerkleBadEncoding = errors.New("malformed merkle proof")
)

// Precise kinds of ErrMerkleBadEncoding.
var (
	// ErrMerkleSurplusHashes: hashes left over after the tree was walked,
	// or more hashes than transactions.
	ErrMerkleSurplusHashes = merkleSentinelOf("surplus hashes", ErrMerkleBadEncoding)

	// ErrMerkleMissingHashes: the tree walk needs more hashes than given.
	ErrMerkleMissingHashes = merkleSentinelOf("missing hashes", ErrMerkleBadEncoding)

	// ErrMerkleSurplusBits: whole flag bytes left over after the tree was
	// walked, or non-zero padding bits in the last flag byte.
	ErrMerkleSurplusBits = merkleSentinelOf("surplus flag bits", ErrMerkleBadEncoding)

	// ErrMerkleMissingBits: the tree walk needs more flag bits than given,
	// or there are fewer flag bits than hashes.
	ErrMerkleMissingBits = merkleSentinelOf("missing flag bits", ErrMerkleBadEncoding)

	// ErrMerkleNonCanonical: a CompactSize count is not in its shortest
	// form, or a hash in a wire.MsgMerkleBlock is nil.
	ErrMerkleNonCanonical = merkleSentinelOf("non-canonical encoding", ErrMerkleBadEncoding)
)

// merkleSentinel is a sentinel error that also matches a more general one.
type merkleSentinel struct {
	msg    string
	parent error
}

func merkleSentinelOf(msg string, parent error) error { return &merkleSentinel{msg, parent} }

func (e *merkleSentinel) Error() string { return e.parent.Error() + ": " + e.msg }
func (e *merkleSentinel) Unwrap() error { return e.parent }
