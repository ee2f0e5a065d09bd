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

// spentAddress is the address of the output script an input spends, as
// far as the input shows it: a P2PKH (signature and key), P2SH (a redeem
// script as the last push), P2WPKH (witness of signature and key) or P2WSH
// (witness script last) script. A taproot or P2PK spend, which does not
// reveal the script, gives nil.
func spentAddress(in *wire.TxIn, params *chaincfg.Params) btcutil.Address {
	addr := func(a btcutil.Address, err error) btcutil.Address {
		if err != nil {
			return nil
		}
		return a
	}
	if len(in.SignatureScript) > 0 {
		if !txscript.IsPushOnlyScript(in.SignatureScript) {
			return nil
		}
		var pushes [][]byte
		tok := txscript.MakeScriptTokenizer(0, in.SignatureScript)
		for tok.Next() {
			pushes = append(pushes, tok.Data())
		}
		if tok.Err() != nil || len(pushes) == 0 {
			return nil
		}
		last := pushes[len(pushes)-1]
		switch {
		case len(pushes) == 2 && isPubKey(last) && len(in.Witness) == 0:
			return addr(btcutil.NewAddressPubKeyHash(btcutil.Hash160(last), params))
		case len(last) > 1 && !isPubKey(last) && txscript.GetScriptClass(last) != txscript.NonStandardTy:
			return addr(btcutil.NewAddressScriptHash(last, params))
		}
		return nil
	}
	w := in.Witness
	if len(w) > 1 && len(w[len(w)-1]) > 0 && w[len(w)-1][0] == txscript.TaprootAnnexTag {
		return nil // an annex: taproot
	}
	switch {
	case len(w) == 2 && isPubKey(w[1]) && len(w[1]) == 33:
		return addr(btcutil.NewAddressWitnessPubKeyHash(btcutil.Hash160(w[1]), params))
	case len(w) >= 2 && !isControlBlock(w[len(w)-1]):
		h := sha256.Sum256(w[len(w)-1])
		return addr(btcutil.NewAddressWitnessScriptHash(h[:], params))
	}
	return nil
}

// isControlBlock reports whether b has the form of a taproot control block:
// a leaf version byte 0xc0 or 0xc1, a 32-byte key and 32-byte hashes.
func isControlBlock(b []byte) bool {
	return len(b) >= 33 && (len(b)-33)%32 == 0 && b[0]&0xfe == 0xc0
}
