package client

import (
	"slices"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
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
	items []WatchItem
	// scripts are the scripts of items, each once (Scripts): what a
	// filter must match.
	scripts  [][]byte
	byScript map[string][]int // script items by script
	found    map[wire.OutPoint][]int
}

func newWatchList(items []WatchItem) *watchList {
	w := &watchList{
		items:    items,
		scripts:  Scripts(items),
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
// output funded before the scan, by the script its input shows it spends
// (gcs.SpendCandidates: the key of a P2PKH or P2WPKH spend, the redeem or
// witness script of a P2SH or P2WSH spend, the leaf script and control
// block of a P2TR script-path spend): a spend is attributed only to a
// watched script of the very type the input spends. P2PK, bare multisig
// and P2TR key-path spends show no script: only a watched outpoint finds
// them.
func (w *watchList) involve(tx *wire.MsgTx) []int {
	items, _ := w.match(tx)
	return items
}

// match is involve, and also says which inputs spend watched outputs.
func (w *watchList) match(tx *wire.MsgTx) (items []int, spends []Spend) {
	for j, in := range tx.TxIn {
		var is []int
		if found, ok := w.found[in.PreviousOutPoint]; ok {
			is = found
		} else if len(w.byScript) > 0 && (in.PreviousOutPoint.Index != wire.MaxPrevOutIndex || in.PreviousOutPoint.Hash != chainhash.Hash{}) {
			// (A coinbase spends nothing.)
			_, cands := gcs.SpendCandidates(in)
			for _, s := range cands {
				is = add(is, w.byScript[string(s)])
			}
		}
		if len(is) > 0 {
			items = add(items, is)
			spends = append(spends, Spend{Input: j, OutPoint: in.PreviousOutPoint, Items: slices.Clone(is)})
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
	return items, spends
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

func containsInt(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// Spend is an input of a matched transaction that spends a watched
// output.
type Spend struct {
	// Input is the input's position in the transaction.
	Input int
	// OutPoint is the output it spends.
	OutPoint wire.OutPoint
	// Items are the indexes, into the watch list, of the items of that
	// output.
	Items []int
}
