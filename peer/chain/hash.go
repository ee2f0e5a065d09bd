package chain

import (
	"encoding/binary"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// headerHash returns h's hash, as h.BlockHash does, from its 80 bytes
// laid out on the stack: BlockHash streams them into a hash state it
// allocates, which for every header of a sync cost more than the hashing.
func headerHash(h *wire.BlockHeader) chainhash.Hash {
	var b [wire.MaxBlockHeaderPayload]byte
	binary.LittleEndian.PutUint32(b[0:], uint32(h.Version))
	copy(b[4:], h.PrevBlock[:])
	copy(b[36:], h.MerkleRoot[:])
	binary.LittleEndian.PutUint32(b[68:], uint32(h.Timestamp.Unix()))
	binary.LittleEndian.PutUint32(b[72:], h.Bits)
	binary.LittleEndian.PutUint32(b[76:], h.Nonce)
	return chainhash.DoubleHashH(b[:])
}
