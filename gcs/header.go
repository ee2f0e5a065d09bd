package gcs

import "github.com/btcsuite/btcd/chaincfg/chainhash"

// Hash returns the filter hash: double-SHA256 of NBytes, in internal byte
// order (reverse it for display).
func (f *Filter) Hash() chainhash.Hash {
	return chainhash.DoubleHashH(f.enc)
}

// Header returns the filter header that follows prev in the filter header
// chain. The genesis block's previous header is the zero hash.
func (f *Filter) Header(prev *chainhash.Hash) chainhash.Hash {
	h := f.Hash()
	return MakeHeader(&h, prev)
}

// MakeHeader returns double-SHA256(filterHash || prevHeader), the BIP 157
// filter header, from hashes in internal byte order.
func MakeHeader(filterHash, prevHeader *chainhash.Hash) chainhash.Hash {
	var b [2 * chainhash.HashSize]byte
	copy(b[:chainhash.HashSize], filterHash[:])
	copy(b[chainhash.HashSize:], prevHeader[:])
	return chainhash.DoubleHashH(b[:])
}
