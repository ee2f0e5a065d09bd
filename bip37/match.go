package bip37

import (
	"encoding/binary"
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// bloomUpdateMask is Core's BLOOM_UPDATE_MASK: only the two low bits of the
// flags select the update rule.
const bloomUpdateMask = 3

// MatchTxAndUpdate reports whether tx is relevant to the filter, updating
// the filter as Bitcoin Core's CBloomFilter::IsRelevantAndUpdate does:
//
//  1. A 0-byte filter matches every transaction.
//  2. The txid matches.
//  3. For each output, its scriptPubKey is parsed push by push; the first
//     non-empty push the filter contains makes the transaction match and,
//     with BloomUpdateAll, adds the outpoint (txid, index) to the filter;
//     with BloomUpdateP2PubkeyOnly, adds it only when the script is
//     pay-to-pubkey or bare multisig (Core's Solver rules). The rest of that
//     output's pushes are skipped; later outputs are still checked, so each
//     matching output adds its outpoint.
//  4. If nothing matched so far: for each input, the outpoint it spends,
//     then the non-empty pushes of its scriptSig.
//
// Parsing a script stops at a malformed push; pushes before it still count.
// Witness data is never examined. The txid is computed without allocating,
// into a buffer the filter keeps.
func (f *Filter) MatchTxAndUpdate(tx *wire.MsgTx) bool {
	if f.nbits == 0 {
		return true
	}
	txid := f.txid(tx)
	return f.matchTxAndUpdate(tx, &txid)
}

// matchTxAndUpdate is MatchTxAndUpdate for a caller that has computed the
// txid already (NewMerkleBlock needs it for the tree too).
func (f *Filter) matchTxAndUpdate(tx *wire.MsgTx, txid *chainhash.Hash) bool {
	if f.nbits == 0 {
		return true
	}
	found := f.Contains(txid[:])

	update := f.flags & bloomUpdateMask
	var opBuf [chainhash.HashSize + 4]byte
	for i, out := range tx.TxOut {
		script := out.PkScript
		for pc := 0; pc < len(script); {
			_, data, next, ok := nextOp(script, pc)
			if !ok {
				break
			}
			pc = next
			if len(data) == 0 || !f.Contains(data) {
				continue
			}
			found = true
			switch update {
			case wire.BloomUpdateAll:
				f.Add(outPointBytes(&opBuf, txid, uint32(i)))
			case wire.BloomUpdateP2PubkeyOnly:
				if isPayToPubKey(script) || isMultisig(script) {
					f.Add(outPointBytes(&opBuf, txid, uint32(i)))
				}
			}
			break
		}
	}
	if found {
		return true
	}

	for _, in := range tx.TxIn {
		if f.Contains(outPointBytes(&opBuf, &in.PreviousOutPoint.Hash, in.PreviousOutPoint.Index)) {
			return true
		}
		script := in.SignatureScript
		for pc := 0; pc < len(script); {
			_, data, next, ok := nextOp(script, pc)
			if !ok {
				break
			}
			pc = next
			if len(data) != 0 && f.Contains(data) {
				return true
			}
		}
	}
	return false
}

// txid returns the double-SHA256 of tx's serialization without witness
// data, the same value as tx.TxHash(), serialized into f.txbuf.
func (f *Filter) txid(tx *wire.MsgTx) chainhash.Hash {
	b := f.txbuf[:0]
	b = binary.LittleEndian.AppendUint32(b, uint32(tx.Version))
	b = appendVarInt(b, uint64(len(tx.TxIn)))
	for _, in := range tx.TxIn {
		b = appendHash(b, &in.PreviousOutPoint.Hash)
		b = binary.LittleEndian.AppendUint32(b, in.PreviousOutPoint.Index)
		b = appendVarInt(b, uint64(len(in.SignatureScript)))
		b = append(b, in.SignatureScript...)
		b = binary.LittleEndian.AppendUint32(b, in.Sequence)
	}
	b = appendVarInt(b, uint64(len(tx.TxOut)))
	for _, out := range tx.TxOut {
		b = binary.LittleEndian.AppendUint64(b, uint64(out.Value))
		b = appendVarInt(b, uint64(len(out.PkScript)))
		b = append(b, out.PkScript...)
	}
	b = binary.LittleEndian.AppendUint32(b, tx.LockTime)
	// Keep the buffer for the next transaction, unless one huge
	// transaction grew it beyond what is worth holding on to.
	if cap(b) <= 1<<20 {
		f.txbuf = b
	}
	return chainhash.DoubleHashH(b)
}

// appendHash appends a 32-byte hash as one fixed-size move (append with a
// slice would call memmove).
func appendHash(b []byte, h *chainhash.Hash) []byte {
	n := len(b)
	b = slices.Grow(b, chainhash.HashSize)[:n+chainhash.HashSize]
	*(*chainhash.Hash)(b[n:]) = *h
	return b
}
