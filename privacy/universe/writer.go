package universe

import (
	"bufio"
	"encoding/hex"
	"fmt"
	"io"
	"strings"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// Stats counts the lines a Writer wrote.
type Stats struct {
	Blocks    int `json:"blocks"`
	Addresses int `json:"addresses"`
	PubKeys   int `json:"pubkeys"` // each a pubkey/pubkey-hash pair
	Scripts   int `json:"scripts"`
	Lines     int `json:"lines"`
	// Listed counts the address lines that a later key line takes over
	// (see Writer): the universe holds Lines-Listed candidates.
	Listed int `json:"listed"`
	// With an index (SetIndex): the spends whose spent script was read
	// from the input, and those it cannot be read from (a taproot
	// key-path spend or a P2PK spend, whose spent script the input does
	// not show; the index misses those appearances).
	SpendsIndexed      int `json:"spends_indexed,omitempty"`
	SpendsUnattributed int `json:"spends_unattributed,omitempty"`
}

// Writer writes the candidates found in blocks as universe lines,
// each once:
//
//   - the address of every standard output script (P2PKH, P2SH, P2WPKH,
//     P2WSH, P2TR), with "# height" as a comment;
//   - the hex of every public key seen in a P2PK or multisig output, an
//     input script or a witness, with "# pair <P2PKH address>": the line
//     stands for the addresses of the key's HASH160 (P2PKH and P2WPKH),
//     tested by the key and its hash, the pubkey/pubkey-hash pair. Those
//     of these addresses already written on their own line are named in
//     "listed <address>" fields, so that the analyzer counts them and the
//     key once; those not yet written are not written later;
//   - the hex of non-standard output scripts and of redeem and witness
//     scripts, tested by their data pushes.
//
// It remembers what it wrote, so its memory grows with the distinct
// candidates of the range.
type Writer struct {
	w      *bufio.Writer
	params *chaincfg.Params
	seen   map[string]struct{}
	stats  Stats
	index  *IndexWriter
	err    error
}

// SetIndex makes the writer also record, in ix, every block each output
// script appears in and its transactions there: as an output (RolePaid),
// and as the script an input spends (RoleSpent; what a block's BIP 158
// basic filter holds), named as a universe line names it (its address,
// or the script's hex).
func (u *Writer) SetIndex(ix *IndexWriter) { u.index = ix }

// NewWriter writes to w, encoding addresses for params.
func NewWriter(w io.Writer, params *chaincfg.Params) *Writer {
	return &Writer{w: bufio.NewWriter(w), params: params, seen: map[string]struct{}{}}
}

// Stats returns the counts so far.
func (u *Writer) Stats() Stats { return u.stats }

// Flush writes out buffered lines.
func (u *Writer) Flush() error {
	if u.err != nil {
		return u.err
	}
	return u.w.Flush()
}

// Comment writes a comment line (universe readers skip it).
func (u *Writer) Comment(text string) {
	if u.err == nil {
		_, u.err = fmt.Fprintf(u.w, "# %s\n", strings.Join(strings.Fields(text), " "))
	}
}

func (u *Writer) emit(candidate, comment string, count *int) {
	if u.err != nil {
		return
	}
	if _, dup := u.seen[candidate]; dup {
		return
	}
	u.seen[candidate] = struct{}{}
	*count++
	u.stats.Lines++
	if comment != "" {
		_, u.err = fmt.Fprintf(u.w, "%s # %s\n", candidate, comment)
	} else {
		_, u.err = fmt.Fprintln(u.w, candidate)
	}
}

func (u *Writer) pubKey(pk []byte, height int32) {
	key := hex.EncodeToString(pk)
	if _, dup := u.seen[key]; dup || u.err != nil {
		return
	}
	h := btcutil.Hash160(pk)
	a, err := btcutil.NewAddressPubKeyHash(h, u.params)
	if err != nil {
		return
	}
	comment := "pair " + a.EncodeAddress()
	// The addresses of the key's hash: those already written are named
	// as "listed", the others are marked seen, so that the key's line
	// stands for all of them and the analyzer counts them once.
	same := []string{a.EncodeAddress()}
	if w, err := btcutil.NewAddressWitnessPubKeyHash(h, u.params); err == nil {
		same = append(same, w.EncodeAddress())
	}
	for _, s := range same {
		if _, ok := u.seen[s]; ok {
			comment += ", listed " + s
			u.stats.Listed++
		} else {
			u.seen[s] = struct{}{}
		}
	}
	u.emit(key, fmt.Sprintf("%s, height %d", comment, height), &u.stats.PubKeys)
}

// script emits the public keys among a script's pushes, or else the
// script itself if it has data pushes.
func (u *Writer) script(s []byte, height int32) {
	if len(s) == 0 {
		return
	}
	tok := txscript.MakeScriptTokenizer(0, s)
	pushes, keys := 0, 0
	for tok.Next() {
		d := tok.Data()
		if len(d) == 0 {
			continue
		}
		pushes++
		if isPubKey(d) {
			keys++
			u.pubKey(d, height)
		}
	}
	if tok.Err() == nil && pushes > keys && pushes > 0 {
		u.emit(hex.EncodeToString(s), fmt.Sprintf("script, height %d", height), &u.stats.Scripts)
	}
}

// AddBlock writes the candidates of one block.
func (u *Writer) AddBlock(height int32, b *wire.MsgBlock) error {
	u.stats.Blocks++
	if u.index != nil {
		u.stats.SpendsUnattributed += Appearances(b, u.params, func(a Appearance) {
			role := RolePaid
			if a.Spent {
				role = RoleSpent
				u.stats.SpendsIndexed++
			}
			u.index.AddRole(a.Candidate, height, a.Tx, role)
		})
	}
	for _, tx := range b.Transactions {
		for _, out := range tx.TxOut {
			u.output(out.PkScript, height)
		}
		if isCoinBase(tx) {
			continue
		}
		for _, in := range tx.TxIn {
			tok := txscript.MakeScriptTokenizer(0, in.SignatureScript)
			var last []byte
			for tok.Next() {
				if d := tok.Data(); len(d) > 0 {
					last = d
					if isPubKey(d) {
						u.pubKey(d, height)
					}
				}
			}
			// A P2SH redeem script is the last push of the input script.
			if last != nil && !isPubKey(last) && txscript.IsPushOnlyScript(in.SignatureScript) && len(last) > 1 {
				if txscript.GetScriptClass(last) != txscript.NonStandardTy {
					u.script(last, height)
				}
			}
			for i, item := range in.Witness {
				switch {
				case isPubKey(item):
					u.pubKey(item, height)
				case i == len(in.Witness)-1 && len(in.Witness) > 2:
					u.script(item, height) // a P2WSH witness script
				}
			}
		}
	}
	return u.err
}

func (u *Writer) output(pk []byte, height int32) {
	class, addrs, _, err := txscript.ExtractPkScriptAddrs(pk, u.params)
	if err != nil {
		return
	}
	comment := fmt.Sprintf("height %d", height)
	switch class {
	case txscript.PubKeyHashTy, txscript.ScriptHashTy, txscript.WitnessV0PubKeyHashTy, txscript.WitnessV0ScriptHashTy, txscript.WitnessV1TaprootTy:
		for _, a := range addrs {
			u.emit(a.EncodeAddress(), comment, &u.stats.Addresses)
		}
	case txscript.PubKeyTy, txscript.MultiSigTy:
		for _, a := range addrs {
			if pka, ok := a.(*btcutil.AddressPubKey); ok {
				u.pubKey(pka.ScriptAddress(), height)
			}
		}
	case txscript.NullDataTy:
		// OP_RETURN data names no one.
	default:
		u.script(pk, height)
	}
}

func isCoinBase(tx *wire.MsgTx) bool {
	if len(tx.TxIn) != 1 {
		return false
	}
	prev := tx.TxIn[0].PreviousOutPoint
	return prev.Index == wire.MaxPrevOutIndex && prev.Hash == [32]byte{}
}
