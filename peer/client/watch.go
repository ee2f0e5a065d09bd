package client

import (
	"bytes"
	"crypto/sha256"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
)

// WatchItem is one thing a wallet watches: an output script, whose
// payments and spends a scan finds, or an outpoint, whose spend it finds
// whatever the script type (a P2TR key-path or P2PK spend reveals no
// script, so only its outpoint identifies it).
//
// BIP 158 filters hold scripts, not outpoints: for a BIP 157 scan to see
// the spend of an outpoint, the script it pays must be known, either in
// Script beside the OutPoint or as another watch item.
type WatchItem struct {
	// Script is the output script; for an outpoint item, the script of
	// the output if known.
	Script []byte
	// OutPoint is the watched output, when IsOutPoint is set.
	OutPoint   wire.OutPoint
	IsOutPoint bool
}

// ScriptItem watches an output script.
func ScriptItem(script []byte) WatchItem { return WatchItem{Script: script} }

// OutPointItem watches the spend of an output; script, which may be nil,
// is the script the output pays.
func OutPointItem(op wire.OutPoint, script []byte) WatchItem {
	return WatchItem{OutPoint: op, IsOutPoint: true, Script: script}
}

// Scripts returns the scripts of items, each once, in order: what a
// filter must match.
func Scripts(items []WatchItem) [][]byte {
	var out [][]byte
	seen := map[string]bool{}
	for _, it := range items {
		if len(it.Script) > 0 && !seen[string(it.Script)] {
			seen[string(it.Script)] = true
			out = append(out, it.Script)
		}
	}
	return out
}

// findable returns the outputs of tx a basic filter holds (see
// gcs.BasicOutput), as watch items: what finds the block that mines tx.
func findable(tx *wire.MsgTx) []WatchItem {
	var out []WatchItem
	for _, o := range tx.TxOut {
		if gcs.BasicOutput(o.PkScript) {
			out = append(out, ScriptItem(o.PkScript))
		}
	}
	return out
}

// watchList decides locally whether a transaction involves a watch item.
// It remembers the outputs found paying to a watched script, so a later
// spend of one is recognized by its outpoint.
type watchList struct {
	items    []WatchItem
	byScript map[string][]int // script items by script
	found    map[wire.OutPoint][]int
}

func newWatchList(items []WatchItem) *watchList {
	w := &watchList{
		items:    items,
		byScript: make(map[string][]int),
		found:    make(map[wire.OutPoint][]int),
	}
	for i, it := range items {
		if it.IsOutPoint {
			w.found[it.OutPoint] = append(w.found[it.OutPoint], i)
			continue
		}
		w.byScript[string(it.Script)] = append(w.byScript[string(it.Script)], i)
	}
	return w
}

// add appends the items of is to items, each once.
func add(items []int, is []int) []int {
	for _, i := range is {
		if !containsInt(items, i) {
			items = append(items, i)
		}
	}
	return items
}

// involve returns the watch items tx pays to or spends from, and records
// its outputs paying to watched scripts. A spend is recognized by its
// outpoint (an output found earlier, or a watched outpoint), or, for an
// output funded before the scan, by the script its input proves it spends
// (see spentScripts): a spend is attributed only to a watched script of
// the very type the input spends.
func (w *watchList) involve(tx *wire.MsgTx) []int {
	var items []int
	for _, in := range tx.TxIn {
		if is, ok := w.found[in.PreviousOutPoint]; ok {
			items = add(items, is)
			continue
		}
		for _, s := range spentScripts(in) {
			items = add(items, w.byScript[string(s)])
		}
	}
	txid := tx.TxHash()
	for i, out := range tx.TxOut {
		if is, ok := w.byScript[string(out.PkScript)]; ok {
			items = add(items, is)
			op := wire.OutPoint{Hash: txid, Index: uint32(i)}
			w.found[op] = add(w.found[op], is)
		}
	}
	return items
}

// pays reports whether tx has an output paying to a watched script.
func (w *watchList) pays(tx *wire.MsgTx) bool {
	for _, out := range tx.TxOut {
		if _, ok := w.byScript[string(out.PkScript)]; ok {
			return true
		}
	}
	return false
}

// spentScripts returns the output scripts an input provably spends, from
// what it reveals: the key of a P2PKH or P2WPKH spend, the redeem script
// of a P2SH spend (nested segwit included), the witness script of a P2WSH
// spend. The witness is needed for segwit spends. P2PK spends (a lone
// signature) and P2TR spends (a signature, or a taproot control block
// last) reveal no script and return nothing.
func spentScripts(in *wire.TxIn) [][]byte {
	pushes, err := txscript.PushedData(in.SignatureScript)
	if err != nil {
		return nil
	}
	if len(pushes) > 0 {
		last := pushes[len(pushes)-1]
		switch {
		case len(in.Witness) == 0 && isPubKey(last):
			return [][]byte{payToPubKeyHash(btcutil.Hash160(last))}
		case len(pushes) == 1 && len(in.Witness) == 0 && isSignature(last):
			return nil // P2PK
		}
		return [][]byte{payToScriptHash(btcutil.Hash160(last))}
	}
	n := len(in.Witness)
	if n == 0 || len(in.SignatureScript) != 0 {
		return nil
	}
	last := in.Witness[n-1]
	switch {
	case n == 2 && len(last) == 33 && isPubKey(last):
		return [][]byte{payToWitness(btcutil.Hash160(last))}
	case n == 1 && (len(last) == 64 || len(last) == 65):
		return nil // P2TR key path
	case n >= 2 && len(last) > 0 && last[0] == 0x50:
		return nil // P2TR with an annex (BIP 341)
	case n >= 2 && isControlBlock(last):
		return nil // P2TR script path
	}
	s := sha256.Sum256(last)
	return [][]byte{payToWitness(s[:])}
}

// isSignature reports whether b looks like a DER signature with its
// sighash byte.
func isSignature(b []byte) bool {
	return len(b) >= 9 && len(b) <= 73 && b[0] == 0x30 && int(b[1]) == len(b)-3
}

// isControlBlock reports whether b looks like a taproot control block: a
// leaf version byte, the internal key, and 32-byte path elements.
func isControlBlock(b []byte) bool {
	return len(b) >= 33 && (len(b)-33)%32 == 0 && len(b) <= 33+128*32 && txscript.TapscriptLeafVersion(b[0]&0xfe) == txscript.BaseLeafVersion
}

// isPubKey reports whether b looks like a serialized public key.
func isPubKey(b []byte) bool {
	switch len(b) {
	case 33:
		return b[0] == 0x02 || b[0] == 0x03
	case 65:
		return b[0] == 0x04
	}
	return false
}

func payToPubKeyHash(h []byte) []byte {
	return append(append([]byte{txscript.OP_DUP, txscript.OP_HASH160, 20}, h...), txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG)
}

func payToScriptHash(h []byte) []byte {
	return append(append([]byte{txscript.OP_HASH160, 20}, h...), txscript.OP_EQUAL)
}

// payToWitness returns the version 0 witness program of a 20-byte key hash
// or a 32-byte script hash.
func payToWitness(h []byte) []byte {
	return append([]byte{txscript.OP_0, byte(len(h))}, h...)
}

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// watchElements returns the data pushes of a script: what a BIP 37 filter
// must hold for a node to match outputs paying to it.
func watchElements(script []byte) [][]byte {
	pushes, err := txscript.PushedData(script)
	if err != nil {
		return nil
	}
	var out [][]byte
	for _, p := range pushes {
		if len(p) > 0 && !containsBytes(out, p) {
			out = append(out, p)
		}
	}
	return out
}

func containsBytes(s [][]byte, v []byte) bool {
	for _, x := range s {
		if bytes.Equal(x, v) {
			return true
		}
	}
	return false
}

// outPointBytes serializes an outpoint as BIP 37 filters hold it.
func outPointBytes(op *wire.OutPoint) []byte {
	b := make([]byte, chainhash.HashSize+4)
	copy(b, op.Hash[:])
	b[32] = byte(op.Index)
	b[33] = byte(op.Index >> 8)
	b[34] = byte(op.Index >> 16)
	b[35] = byte(op.Index >> 24)
	return b
}
