package universe

import (
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// Appearance is one appearance of a candidate in a block, as the index
// records it: an output script, or the script an input shows it spends.
type Appearance struct {
	// Candidate names the script as a universe line does (ScriptCandidate).
	Candidate string
	// Script is the output script itself, the element a block's BIP 158
	// basic filter holds for it: the output's, or for a spend the script
	// rebuilt from what the input shows.
	Script []byte
	// Tx is the position of its transaction in the block (0: the coinbase).
	Tx int
	// Spent is true for the script an input spends.
	Spent bool
}

// Appearances calls fn for every appearance in b of a candidate the index
// records (the rule Writer.AddBlock follows with an IndexWriter): each
// output script but OP_RETURN ones, and each script an input shows it
// spends. It returns the inputs whose spent script the input does not
// show (a taproot key-path or P2PK spend), which the index misses.
func Appearances(b *wire.MsgBlock, params *chaincfg.Params, fn func(Appearance)) (unattributed int) {
	return ScriptAppearances(b, params, func(a Appearance) {
		a.Candidate = ScriptCandidate(a.Script, params)
		fn(a)
	})
}

// ScriptAppearances is Appearances without naming the candidates
// (Appearance.Candidate is empty): each script stands for one candidate,
// and naming it (ScriptCandidate) costs more than finding it, so that a
// caller that needs only to tell candidates apart can key them by script.
func ScriptAppearances(b *wire.MsgBlock, params *chaincfg.Params, fn func(Appearance)) (unattributed int) {
	var sp spender
	for pos, tx := range b.Transactions {
		for _, out := range tx.TxOut {
			if len(out.PkScript) > 0 && !isNullData(out.PkScript) {
				fn(Appearance{Script: out.PkScript, Tx: pos})
			}
		}
		if isCoinBase(tx) {
			continue
		}
		for _, in := range tx.TxIn {
			pk := sp.spentScript(in)
			if pk == nil {
				unattributed++
				continue
			}
			fn(Appearance{Script: pk, Tx: pos, Spent: true})
		}
	}
	return unattributed
}

// ScriptCandidate names an output script as a universe line and the index
// do: the address of a standard script (P2PKH, P2SH, P2WPKH, P2WSH, P2TR),
// the public key's hex for P2PK, or else the script's hex. An OP_RETURN
// script (which BIP 158 leaves out of a block's filter) and an empty one
// give "".
func ScriptCandidate(pk []byte, params *chaincfg.Params) string {
	return scriptCandidate(pk, params)
}

// isNullData reports whether an output script is an OP_RETURN one, as
// txscript classes it: only a script that begins with OP_RETURN can be,
// so that the others, nearly all, are not classed.
func isNullData(pk []byte) bool {
	return pk[0] == txscript.OP_RETURN && txscript.GetScriptClass(pk) == txscript.NullDataTy
}
