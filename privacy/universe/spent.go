package universe

import (
	"crypto/sha256"
	"encoding/hex"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// scriptCandidate names an output script as a universe line does: the
// address of a standard script (P2PKH, P2SH, P2WPKH, P2WSH, P2TR), the
// public key's hex for P2PK, or else the script's hex. An OP_RETURN script
// (which BIP 158 leaves out of a block's filter) and an empty one give "".
func scriptCandidate(pk []byte, params *chaincfg.Params) string {
	if len(pk) == 0 {
		return ""
	}
	class, addrs, _, err := txscript.ExtractPkScriptAddrs(pk, params)
	if err != nil {
		return hex.EncodeToString(pk)
	}
	switch class {
	case txscript.PubKeyHashTy, txscript.ScriptHashTy, txscript.WitnessV0PubKeyHashTy, txscript.WitnessV0ScriptHashTy, txscript.WitnessV1TaprootTy:
		if len(addrs) == 1 {
			return addrs[0].EncodeAddress()
		}
	case txscript.PubKeyTy:
		if pka, ok := addrs[0].(*btcutil.AddressPubKey); ok && len(addrs) == 1 {
			return hex.EncodeToString(pka.ScriptAddress())
		}
	case txscript.NullDataTy:
		return ""
	}
	return hex.EncodeToString(pk)
}

// spender rebuilds the output scripts inputs spend (spentScript), cut
// from one arena for a block's inputs.
type spender struct {
	arena []byte // the scripts are cut from it; a full arena is left to them
	sum   [32]byte
}

// spentScript is the output script an input spends, as far as the input
// shows it: a P2PKH (signature and key), P2SH (a redeem script as the
// last push), P2WPKH (witness of signature and key) or P2WSH (witness
// script last) script. A taproot or P2PK spend, which does not reveal the
// script, gives nil. The script is the one the spent output's address
// pays to (txscript.PayToAddrScript), and stays valid.
func (s *spender) spentScript(in *wire.TxIn) []byte {
	if len(in.SignatureScript) > 0 {
		if !txscript.IsPushOnlyScript(in.SignatureScript) {
			return nil
		}
		var last []byte
		n := 0
		tok := txscript.MakeScriptTokenizer(0, in.SignatureScript)
		for tok.Next() {
			last = tok.Data()
			n++
		}
		if tok.Err() != nil || n == 0 {
			return nil
		}
		switch {
		case n == 2 && isPubKey(last) && len(in.Witness) == 0:
			return s.script([]byte{txscript.OP_DUP, txscript.OP_HASH160, txscript.OP_DATA_20}, btcutil.Hash160(last), []byte{txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG})
		case len(last) > 1 && !isPubKey(last) && txscript.GetScriptClass(last) != txscript.NonStandardTy:
			return s.script([]byte{txscript.OP_HASH160, txscript.OP_DATA_20}, btcutil.Hash160(last), []byte{txscript.OP_EQUAL})
		}
		return nil
	}
	w := in.Witness
	if len(w) > 1 && len(w[len(w)-1]) > 0 && w[len(w)-1][0] == txscript.TaprootAnnexTag {
		return nil // an annex: taproot
	}
	switch {
	case len(w) == 2 && isPubKey(w[1]) && len(w[1]) == 33:
		return s.script([]byte{txscript.OP_0, txscript.OP_DATA_20}, btcutil.Hash160(w[1]), nil)
	case len(w) >= 2 && !isControlBlock(w[len(w)-1]):
		s.sum = sha256.Sum256(w[len(w)-1])
		return s.script([]byte{txscript.OP_0, txscript.OP_DATA_32}, s.sum[:], nil)
	}
	return nil
}

// script is head, h and tail joined, cut from the arena.
func (s *spender) script(head, h, tail []byte) []byte {
	n := len(head) + len(h) + len(tail)
	if cap(s.arena)-len(s.arena) < n {
		s.arena = make([]byte, 0, 64*n)
	}
	start := len(s.arena)
	s.arena = append(append(append(s.arena, head...), h...), tail...)
	return s.arena[start:len(s.arena):len(s.arena)]
}

// isControlBlock reports whether b has the form of a taproot control block:
// a leaf version byte 0xc0 or 0xc1, a 32-byte key and 32-byte hashes.
func isControlBlock(b []byte) bool {
	return len(b) >= 33 && (len(b)-33)%32 == 0 && b[0]&0xfe == 0xc0
}
