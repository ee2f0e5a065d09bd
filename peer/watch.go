package peer

import (
	"bytes"
	"crypto/sha256"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// Match is a transaction found by a scan.
type Match struct {
	Txid      chainhash.Hash
	Tx        *wire.MsgTx
	Height    int32
	BlockHash chainhash.Hash
	// WatchItems are the indexes, into the watch list, of the items the
	// transaction pays to or spends from.
	WatchItems []int
	// FalsePositive marks a transaction the node sent because the BIP 37
	// filter matched it, but which involves no watch item.
	FalsePositive bool
}

// ScanResult is what a scan found and what it cost.
type ScanResult struct {
	Matches []Match
	// BlocksScanned is the number of blocks in the range.
	BlocksScanned int
	// FiltersReceived counts compact filters (BIP 157).
	FiltersReceived int
	// MerkleBlocksReceived counts merkle blocks (BIP 37).
	MerkleBlocksReceived int
	// BlocksFetched counts full blocks downloaded (BIP 157).
	BlocksFetched int
	// FalsePositiveBlocks counts blocks the filter matched that hold no
	// transaction of the watch list.
	FalsePositiveBlocks int
	// BytesReceived counts every byte read from the node during the scan.
	BytesReceived uint64
}

// watchList decides locally whether a transaction involves a watched output
// script. It remembers the outputs found paying to a watched script, so a
// later spend of one is recognized.
type watchList struct {
	scripts  [][]byte
	byScript map[string][]int
	byHash   map[string][]int // hash160 of P2PKH/P2WPKH/P2SH, sha256 of P2WSH
	found    map[wire.OutPoint][]int
}

func newWatchList(scripts [][]byte) *watchList {
	w := &watchList{
		scripts:  scripts,
		byScript: make(map[string][]int),
		byHash:   make(map[string][]int),
		found:    make(map[wire.OutPoint][]int),
	}
	for i, s := range scripts {
		w.byScript[string(s)] = append(w.byScript[string(s)], i)
		if h := spendHash(s); h != nil {
			w.byHash[string(h)] = append(w.byHash[string(h)], i)
		}
	}
	return w
}

// spendHash returns the hash a spend of script reveals the preimage of:
// the key or script hash of P2PKH, P2WPKH, P2SH and P2WSH outputs.
func spendHash(s []byte) []byte {
	switch {
	case len(s) == 25 && s[0] == txscript.OP_DUP && s[1] == txscript.OP_HASH160 && s[2] == 20 &&
		s[23] == txscript.OP_EQUALVERIFY && s[24] == txscript.OP_CHECKSIG:
		return s[3:23]
	case len(s) == 22 && s[0] == txscript.OP_0 && s[1] == 20:
		return s[2:22]
	case len(s) == 23 && s[0] == txscript.OP_HASH160 && s[1] == 20 && s[22] == txscript.OP_EQUAL:
		return s[2:22]
	case len(s) == 34 && s[0] == txscript.OP_0 && s[1] == 32:
		return s[2:34]
	}
	return nil
}

// involve returns the watch items tx pays to or spends from, and records
// its outputs paying to watched scripts.
func (w *watchList) involve(tx *wire.MsgTx) []int {
	var items []int
	add := func(is []int) {
		for _, i := range is {
			if !containsInt(items, i) {
				items = append(items, i)
			}
		}
	}
	for _, in := range tx.TxIn {
		if is, ok := w.found[in.PreviousOutPoint]; ok {
			add(is)
			continue
		}
		add(w.revealed(in))
	}
	txid := tx.TxHash()
	for i, out := range tx.TxOut {
		if is, ok := w.byScript[string(out.PkScript)]; ok {
			add(is)
			w.found[wire.OutPoint{Hash: txid, Index: uint32(i)}] = is
		}
	}
	return items
}

// revealed recognizes a spend of a watched P2PKH, P2WPKH, P2SH or P2WSH
// output funded before the scanned range: the input reveals the key or
// script that hashes to the watched hash.
func (w *watchList) revealed(in *wire.TxIn) []int {
	if len(w.byHash) == 0 {
		return nil
	}
	var items []int
	if n := len(in.Witness); n > 0 {
		last := in.Witness[n-1]
		s := sha256.Sum256(last)
		items = append(items, w.byHash[string(s[:])]...)
		items = append(items, w.byHash[string(btcutil.Hash160(last))]...)
	}
	if pushes, err := txscript.PushedData(in.SignatureScript); err == nil && len(pushes) > 0 {
		items = append(items, w.byHash[string(btcutil.Hash160(pushes[len(pushes)-1]))]...)
	}
	return items
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
