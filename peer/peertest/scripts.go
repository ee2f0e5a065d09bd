package peertest

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
)

// ScriptKind is an output type a Key can be paid to and spend: every
// standard type, so that a chain can hold a spend of each.
type ScriptKind int

// The output types of a key.
const (
	P2PKH ScriptKind = iota
	// P2PKHUncompressed pays the hash of the uncompressed public key.
	P2PKHUncompressed
	P2PK
	// BareMultisig is a 1-of-1 multisig output script.
	BareMultisig
	// P2SH is P2SH of the redeem script <key> OP_CHECKSIG.
	P2SH
	P2SHP2WPKH
	// P2SHP2WSH and P2WSH are of the witness script <key> OP_CHECKSIG.
	P2SHP2WSH
	P2WPKH
	P2WSH
	// P2TRKeyPath is a key-path-only taproot output.
	P2TRKeyPath
	// P2TRScriptPath is a taproot output of two leaves, spent by the
	// first, <x-only key> OP_CHECKSIG.
	P2TRScriptPath
	// NumScriptKinds is the number of kinds.
	NumScriptKinds
)

var scriptKindNames = [NumScriptKinds]string{"P2PKH", "P2PKH (uncompressed key)", "P2PK", "bare multisig", "P2SH", "P2SH-P2WPKH",
	"P2SH-P2WSH", "P2WPKH", "P2WSH", "P2TR key path", "P2TR script path"}

func (s ScriptKind) String() string {
	if s >= 0 && s < NumScriptKinds {
		return scriptKindNames[s]
	}
	return fmt.Sprintf("ScriptKind(%d)", int(s))
}

// Script returns the key's output script of the kind.
func (k *Key) Script(kind ScriptKind) []byte {
	pk := k.Priv.PubKey().SerializeCompressed()
	switch kind {
	case P2PKH:
		return k.PkScript()
	case P2PKHUncompressed:
		return payToPubKeyHash(btcutil.Hash160(k.Priv.PubKey().SerializeUncompressed()))
	case P2PK:
		return k.P2PKScript()
	case BareMultisig:
		return append(append([]byte{txscript.OP_1, txscript.OP_DATA_33}, pk...), txscript.OP_1, txscript.OP_CHECKMULTISIG)
	case P2SH:
		return payToScriptHash(k.P2PKScript())
	case P2SHP2WPKH:
		return payToScriptHash(k.P2WPKHScript())
	case P2SHP2WSH:
		return payToScriptHash(k.Script(P2WSH))
	case P2WPKH:
		return k.P2WPKHScript()
	case P2WSH:
		h := sha256.Sum256(k.P2PKScript())
		return append([]byte{txscript.OP_0, txscript.OP_DATA_32}, h[:]...)
	case P2TRKeyPath:
		return k.P2TRScript()
	case P2TRScriptPath:
		script, err := txscript.PayToTaprootScript(txscript.ComputeTaprootOutputKey(k.Priv.PubKey(), k.tapRoot()))
		if err != nil {
			panic(err)
		}
		return script
	}
	panic(fmt.Sprintf("peertest: unknown script kind %d", int(kind)))
}

// tapTree is the key's taproot script tree: its first leaf, which spends,
// and a leaf nobody can spend.
func (k *Key) tapTree() *txscript.IndexedTapScriptTree {
	xonly := k.Priv.PubKey().SerializeCompressed()[1:]
	spend := append(append([]byte{txscript.OP_DATA_32}, xonly...), txscript.OP_CHECKSIG)
	return txscript.AssembleTaprootScriptTree(txscript.NewBaseTapLeaf(spend), txscript.NewBaseTapLeaf([]byte{txscript.OP_RETURN}))
}

// tapRoot returns the merkle root of the key's script tree.
func (k *Key) tapRoot() []byte {
	h := k.tapTree().RootNode.TapHash()
	return h[:]
}

// kindOf returns the kind of the key's script, if it is one of the key's.
func (k *Key) kindOf(script []byte) (ScriptKind, bool) {
	for kind := ScriptKind(0); kind < NumScriptKinds; kind++ {
		if string(k.Script(kind)) == string(script) {
			return kind, true
		}
	}
	return 0, false
}

// signAs signs input i of tx, which spends value from the key's script of
// the kind.
func (k *Key) signAs(kind ScriptKind, tx *wire.MsgTx, i int, value int64, hashes *txscript.TxSigHashes) error {
	in := tx.TxIn[i]
	script := k.Script(kind)
	var err error
	switch kind {
	case P2PKH:
		in.SignatureScript, err = txscript.SignatureScript(tx, i, script, txscript.SigHashAll, k.Priv, true)
	case P2PKHUncompressed:
		in.SignatureScript, err = txscript.SignatureScript(tx, i, script, txscript.SigHashAll, k.Priv, false)
	case P2PK, BareMultisig, P2SH:
		code := script
		if kind == P2SH {
			code = k.P2PKScript()
		}
		var sig []byte
		if sig, err = txscript.RawTxInSignature(tx, i, code, txscript.SigHashAll, k.Priv); err != nil {
			return err
		}
		b := txscript.NewScriptBuilder()
		if kind == BareMultisig {
			b.AddOp(txscript.OP_0)
		}
		b.AddData(sig)
		if kind == P2SH {
			b.AddData(code)
		}
		in.SignatureScript, err = b.Script()
	case P2WPKH, P2SHP2WPKH:
		in.Witness, err = txscript.WitnessSignature(tx, hashes, i, value, k.P2WPKHScript(), txscript.SigHashAll, k.Priv, true)
		if err == nil && kind == P2SHP2WPKH {
			in.SignatureScript, err = txscript.NewScriptBuilder().AddData(k.P2WPKHScript()).Script()
		}
	case P2WSH, P2SHP2WSH:
		ws := k.P2PKScript()
		var sig []byte
		if sig, err = txscript.RawTxInWitnessSignature(tx, hashes, i, value, ws, txscript.SigHashAll, k.Priv); err != nil {
			return err
		}
		in.Witness = wire.TxWitness{sig, ws}
		if kind == P2SHP2WSH {
			in.SignatureScript, err = txscript.NewScriptBuilder().AddData(k.Script(P2WSH)).Script()
		}
	case P2TRKeyPath:
		in.Witness, err = txscript.TaprootWitnessSignature(tx, hashes, i, value, script, txscript.SigHashDefault, k.Priv)
	case P2TRScriptPath:
		tree := k.tapTree()
		proof := tree.LeafMerkleProofs[0]
		var sig, control []byte
		if sig, err = txscript.RawTxInTapscriptSignature(tx, hashes, i, value, script, proof.TapLeaf, txscript.SigHashDefault, k.Priv); err != nil {
			return err
		}
		cb := proof.ToControlBlock(k.Priv.PubKey())
		if control, err = cb.ToBytes(); err != nil {
			return err
		}
		in.Witness = wire.TxWitness{sig, proof.TapLeaf.Script, control}
	default:
		return fmt.Errorf("peertest: cannot sign %v", kind)
	}
	return err
}

func payToPubKeyHash(h []byte) []byte {
	return append(append([]byte{txscript.OP_DUP, txscript.OP_HASH160, txscript.OP_DATA_20}, h...), txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG)
}

func payToScriptHash(redeem []byte) []byte {
	return append(append([]byte{txscript.OP_HASH160, txscript.OP_DATA_20}, btcutil.Hash160(redeem)...), txscript.OP_EQUAL)
}

// PrevOutScripts returns the scripts of the outputs the block's inputs
// spend (the coinbase's left out), in the order of the inputs, as BIP 158
// needs them. The node must index transactions (start it WithArgs
// "--txindex").
func (n *Node) PrevOutScripts(b *wire.MsgBlock) ([][]byte, error) {
	var out [][]byte
	txs := map[string]*wire.MsgTx{}
	for _, tx := range b.Transactions {
		txs[tx.TxHash().String()] = tx
	}
	for _, tx := range b.Transactions[1:] {
		for _, in := range tx.TxIn {
			op := in.PreviousOutPoint
			prev, ok := txs[op.Hash.String()]
			if !ok {
				got, err := n.rpc.GetRawTransaction(&op.Hash)
				if err != nil {
					return nil, fmt.Errorf("peertest: getrawtransaction %v (is the node started with --txindex?): %w", op.Hash, err)
				}
				prev = got.MsgTx()
			}
			if int(op.Index) >= len(prev.TxOut) {
				return nil, fmt.Errorf("peertest: outpoint %v past the outputs of its transaction", op)
			}
			out = append(out, prev.TxOut[op.Index].PkScript)
		}
	}
	return out, nil
}

// LeaveOut returns a forge function for Forge: the block's true basic
// filter but for the previous output scripts drop picks, read from the
// node (which must index transactions: see PrevOutScripts). A filter that
// leaves out the script an input spends hides the spend from a wallet
// that watches it.
func LeaveOut(t testing.TB, node *Node, drop func(prevOut []byte) bool) func(*wire.MsgBlock) []byte {
	return func(b *wire.MsgBlock) []byte {
		prevs, err := node.PrevOutScripts(b)
		if err != nil {
			t.Errorf("peertest: %v", err)
			return nil
		}
		var kept [][]byte
		for _, p := range prevs {
			if !drop(p) {
				kept = append(kept, p)
			}
		}
		f, err := gcs.BuildBasic(b, kept)
		if err != nil {
			t.Errorf("peertest: %v", err)
			return nil
		}
		return f.NBytes()
	}
}
