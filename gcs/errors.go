package gcs

import "errors"

// Errors returned when building or decoding filters. Returned errors wrap
// them with details; test with errors.Is.
var (
	// ErrNTooLarge reports an N of 2^32 or more, or an N larger than the
	// encoded bytes can hold (every value takes at least P+1 bits).
	ErrNTooLarge = errors.New("gcs: N too large")

	// ErrTruncated reports a stream or CompactSize that ends early.
	ErrTruncated = errors.New("gcs: truncated filter")

	// ErrTrailingData reports whole bytes or non-zero padding bits left
	// after the N-th value.
	ErrTrailingData = errors.New("gcs: trailing data after filter")

	// ErrValueOutOfRange reports a decoded value of N*M or more.
	ErrValueOutOfRange = errors.New("gcs: value out of range")

	// ErrBadP reports a Golomb-Rice parameter P outside 1..32.
	ErrBadP = errors.New("gcs: bad parameter P")

	// ErrBadM reports a false-positive parameter M of zero, or one whose
	// product with N does not fit in 64 bits.
	ErrBadM = errors.New("gcs: bad parameter M")

	// ErrNonCanonicalN reports an N encoded as a CompactSize longer than
	// necessary.
	ErrNonCanonicalN = errors.New("gcs: non-canonical CompactSize for N")
)

// Why a block proves nothing of its filter (BasicCheck.NoProof).
var (
	// ErrUncommittedBlock reports a block whose transactions are not
	// those its header commits to: another merkle root, a transaction
	// twice, a witness commitment that does not hold.
	ErrUncommittedBlock = errors.New("gcs: the block's transactions are not those its header commits to")

	// ErrAmbiguousBlock reports a block whose coinbase is 64 bytes long
	// without its witness, so that its merkle tree cannot tell its leaves
	// from inner nodes (CVE-2017-12842); with a coinbase of another size,
	// the leaves' depth is fixed and a 64-byte transaction is no
	// ambiguity.
	ErrAmbiguousBlock = errors.New("gcs: the block's coinbase is 64 bytes long, which its merkle tree cannot tell from an inner node (CVE-2017-12842)")
)
