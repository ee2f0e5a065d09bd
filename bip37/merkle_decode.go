package bip37

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// merkleBlockFixedSize is the block header and the transaction count.
const merkleBlockFixedSize = wire.MaxBlockHeaderPayload + 4

// DecodeMerkleBlock decodes the payload of a merkleblock message: an
// 80-byte block header, a uint32 transaction count, a CompactSize count of
// 32-byte hashes and the hashes, a CompactSize count of flag bytes and the
// flag bytes. It is strict: a payload cut short gives ErrTruncated, bytes
// after the flags give ErrTrailingData, a CompactSize not in its shortest
// form gives ErrMerkleNonCanonical. It never allocates more than the
// payload can hold, whatever the counts claim.
//
// Decoding does not check the proof; pass the result to VerifyMerkleBlock.
func DecodeMerkleBlock(payload []byte) (*wire.MsgMerkleBlock, error) {
	if len(payload) < merkleBlockFixedSize {
		return nil, fmt.Errorf("%w: merkleblock of %s, the header and transaction count alone take %d bytes",
			ErrTruncated, plural(len(payload), "byte"), merkleBlockFixedSize)
	}
	mb := new(wire.MsgMerkleBlock)
	if err := mb.Header.Deserialize(bytes.NewReader(payload[:wire.MaxBlockHeaderPayload])); err != nil {
		return nil, fmt.Errorf("%w: merkleblock header: %w", ErrTruncated, err)
	}
	mb.Transactions = binary.LittleEndian.Uint32(payload[wire.MaxBlockHeaderPayload:])
	rest := payload[merkleBlockFixedSize:]

	count, rest, err := readMerkleCount(rest, "hash count")
	if err != nil {
		return nil, err
	}
	if count > uint64(len(rest))/chainhash.HashSize {
		return nil, fmt.Errorf("%w: %s declared, %s left", ErrTruncated, plural(count, "hash"), plural(len(rest), "byte"))
	}
	if count > 0 {
		hashes := make([]chainhash.Hash, count)
		mb.Hashes = make([]*chainhash.Hash, count)
		for i := range hashes {
			copy(hashes[i][:], rest[:chainhash.HashSize])
			rest = rest[chainhash.HashSize:]
			mb.Hashes[i] = &hashes[i]
		}
	}

	nflags, rest, err := readMerkleCount(rest, "flag byte count")
	if err != nil {
		return nil, err
	}
	if nflags > uint64(len(rest)) {
		return nil, fmt.Errorf("%w: %s declared, %s left", ErrTruncated, plural(nflags, "flag byte"), plural(len(rest), "byte"))
	}
	if nflags > 0 {
		mb.Flags = bytes.Clone(rest[:nflags])
	}
	if rest = rest[nflags:]; len(rest) != 0 {
		return nil, fmt.Errorf("%w: %s after the merkleblock flags", ErrTrailingData, plural(len(rest), "byte"))
	}
	return mb, nil
}

// EncodeMerkleBlock serializes mb as a merkleblock message payload, the
// inverse of DecodeMerkleBlock. It fails only if a hash is nil.
func EncodeMerkleBlock(mb *wire.MsgMerkleBlock) ([]byte, error) {
	size := merkleBlockFixedSize + wire.VarIntSerializeSize(uint64(len(mb.Hashes))) +
		len(mb.Hashes)*chainhash.HashSize + wire.VarIntSerializeSize(uint64(len(mb.Flags))) + len(mb.Flags)
	buf := bytes.NewBuffer(make([]byte, 0, size))
	if err := mb.Header.Serialize(buf); err != nil {
		return nil, err
	}
	buf.Write(binary.LittleEndian.AppendUint32(nil, mb.Transactions))
	buf.Write(appendVarInt(nil, uint64(len(mb.Hashes))))
	for i, h := range mb.Hashes {
		if h == nil {
			return nil, fmt.Errorf("%w: hash %d is nil", ErrMerkleNonCanonical, i)
		}
		buf.Write(h[:])
	}
	buf.Write(appendVarInt(nil, uint64(len(mb.Flags))))
	buf.Write(mb.Flags)
	return buf.Bytes(), nil
}

// readMerkleCount reads a CompactSize count from the front of b and returns
// it with the bytes after it. what names the field in errors.
func readMerkleCount(b []byte, what string) (uint64, []byte, error) {
	v, n, err := readVarInt(b)
	switch {
	case errors.Is(err, ErrNonCanonicalSize):
		return 0, nil, fmt.Errorf("%w: merkleblock %s: %w", ErrMerkleNonCanonical, what, err)
	case err != nil:
		return 0, nil, fmt.Errorf("merkleblock %s cut short: %w", what, err)
	}
	return v, b[n:], nil
}
