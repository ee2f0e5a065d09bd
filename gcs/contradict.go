package gcs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// InputType is what an input shows of the output script it spends.
type InputType uint8

// The kinds of inputs, by what their signature script and witness show.
const (
	// InputHidden: an empty signature script and witness, which anyone
	// could give (an anchor, an output anyone can spend).
	InputHidden InputType = iota
	// InputNonStandard: a signature script that is not push-only, or a
	// witness beside a signature script that is not one push of a
	// witness program.
	InputNonStandard
	// InputSignature: a push-only signature script ending in a
	// signature: a P2PK or bare multisig spend, whose keys it does not
	// carry.
	InputSignature
	// InputP2TRKeyPath: a witness of one item (an annex aside): a P2TR
	// key-path spend, whose output key it does not carry.
	InputP2TRKeyPath
	// InputP2PKH: a push-only signature script of two pushes or more
	// ending in a public key (P2PKH, or P2SH of that push).
	InputP2PKH
	// InputP2SH: a push-only signature script ending in a redeem script.
	InputP2SH
	// InputP2SHP2WPKH, InputP2SHP2WSH: P2SH around a version 0 witness
	// program of a key hash or a script hash.
	InputP2SHP2WPKH
	InputP2SHP2WSH
	// InputP2SHWitness: P2SH around another witness program.
	InputP2SHWitness
	// InputP2WPKH: a witness of a signature and a compressed public key.
	InputP2WPKH
	// InputP2WSH: a witness ending in a witness script.
	InputP2WSH
	// InputP2TRScriptPath: a witness ending in a leaf script and a
	// control block of the base leaf version (BIP 342).
	InputP2TRScriptPath
	// NumInputTypes is the number of input types.
	NumInputTypes
)

var inputTypeNames = [NumInputTypes]string{
	InputHidden:         "empty",
	InputNonStandard:    "non-standard",
	InputSignature:      "P2PK or bare multisig",
	InputP2TRKeyPath:    "P2TR key path",
	InputP2PKH:          "P2PKH",
	InputP2SH:           "P2SH",
	InputP2SHP2WPKH:     "P2SH-P2WPKH",
	InputP2SHP2WSH:      "P2SH-P2WSH",
	InputP2SHWitness:    "P2SH-wrapped witness program",
	InputP2WPKH:         "P2WPKH",
	InputP2WSH:          "P2WSH",
	InputP2TRScriptPath: "P2TR script path",
}

func (t InputType) String() string {
	if t < NumInputTypes {
		return inputTypeNames[t]
	}
	return fmt.Sprintf("InputType(%d)", uint8(t))
}

// Reveals reports whether inputs of this type show the script they spend
// (among a few), so that a block can decide whether a filter holds it.
func (t InputType) Reveals() bool { return t >= InputP2PKH && t < NumInputTypes }

// ContradictionKind says how a block proves a filter false.
type ContradictionKind uint8

// The ways a block proves its basic filter false.
const (
	// Undecodable: the filter does not decode as a basic filter.
	Undecodable ContradictionKind = iota + 1
	// MissingOutput: an output script is not in the filter.
	MissingOutput
	// MissingSpent: none of the scripts an input may spend is in the
	// filter.
	MissingSpent
	// TooFew, TooMany: the filter's N is outside what the block allows.
	TooFew
	TooMany
)

// A Contradiction is a block's proof that a basic filter is false.
type Contradiction struct {
	Kind ContradictionKind
	// Tx and Index locate the output (MissingOutput) or input
	// (MissingSpent): the transaction's index in the block and the
	// output's or input's in the transaction.
	Tx, Index int
	// Input is what the input shows (MissingSpent).
	Input InputType
	// Scripts are the output script left out, or the scripts one of
	// which the input spends, none of them in the filter.
	Scripts [][]byte
	// N is the filter's count; Min and Max the counts the block allows
	// (TooFew, TooMany).
	N        uint32
	Min, Max int
	// Err is why the filter does not decode (Undecodable).
	Err error
}

func (c *Contradiction) Error() string {
	switch c.Kind {
	case Undecodable:
		return fmt.Sprintf("gcs: filter does not decode: %v", c.Err)
	case MissingOutput:
		return fmt.Sprintf("gcs: filter leaves out output script %x (transaction %d, output %d)", c.Scripts[0], c.Tx, c.Index)
	case MissingSpent:
		hexes := make([]string, len(c.Scripts))
		for i, s := range c.Scripts {
			hexes[i] = hex.EncodeToString(s)
		}
		return fmt.Sprintf("gcs: filter leaves out the script input %d of transaction %d spends, a %s spend: it holds none of %s",
			c.Index, c.Tx, c.Input, strings.Join(hexes, ", "))
	case TooFew:
		return fmt.Sprintf("gcs: filter holds %d items where the block gives at least %d", c.N, c.Min)
	case TooMany:
		return fmt.Sprintf("gcs: filter holds %d items where the block allows at most %d", c.N, c.Max)
	}
	return fmt.Sprintf("gcs: contradiction of kind %d", c.Kind)
}

// Unwrap returns why the filter does not decode (Undecodable), else nil.
func (c *Contradiction) Unwrap() error { return c.Err }

// BasicCheck is what a block says about a basic filter.
type BasicCheck struct {
	// Contradiction, if not nil, proves the filter false: the first
	// output, then input, then count that the filter cannot hold.
	Contradiction *Contradiction
	// Inputs counts the block's inputs (the coinbase's left out) by
	// what they show of the scripts they spend.
	Inputs [NumInputTypes]int
}

// Undecided returns how many inputs show nothing of the script they
// spend: a filter may hold anything for them.
func (c *BasicCheck) Undecided() int {
	n := 0
	for t, k := range c.Inputs {
		if !InputType(t).Reveals() {
			n += k
		}
	}
	return n
}

// CheckBasicBytes is CheckBasic of a filter as carried in cfilter messages
// (DecodeBasic); one that does not decode is contradicted (Undecodable).
func CheckBasicBytes(block *wire.MsgBlock, nbytes []byte) BasicCheck {
	f, err := DecodeBasic(nbytes)
	if err != nil {
		return BasicCheck{Contradiction: &Contradiction{Kind: Undecodable, Err: err}}
	}
	return CheckBasic(block, f)
}

// CheckBasic says whether block proves f false as its BIP 158 basic
// filter, from the block alone. A filter it does not contradict may still
// be false in what the undecided inputs spend.
//
// BuildBasic needs the scripts of the outputs a block's inputs spend,
// which the block does not carry; CheckBasic asks the other question: does
// the block alone prove a filter false? It does when the filter leaves out
// an output script (non-empty, not OP_RETURN), leaves out the script an
// input shows it spends, or holds a count of items the block cannot give.
//
// An input shows the script it spends only in part: it carries a
// signature script and a witness, and several output scripts may accept
// the same ones. So an input stands for the set of scripts it could spend
// (its candidates), and a filter that holds one of them is not
// contradicted by it. The set holds the true script whatever the spent
// output was, as long as it was of a standard type (P2PK, P2PKH, P2SH,
// bare multisig, P2WPKH, P2WSH, P2TR) and segwit's rules (BIP 141) apply
// to the block; for each such type every spend consensus accepts is
// accounted for, however unusual:
//
//   - a push-only signature script whose last push L is not a signature
//     (a signature starts with 0x30, the DER sequence tag): P2SH of L (L is
//     the redeem script) or, with two pushes or more, P2PKH of L. P2PK and
//     bare multisig outputs need a signature last and are ruled out. A
//     P2SH redeem script shaped as a public key is never taken for one,
//     nor an uncompressed key for a compressed one: L is hashed as it is.
//   - a signature script that is exactly one push of a witness program R,
//     with a witness: P2SH of R and nothing else (a native witness program
//     needs an empty signature script, any other output no witness).
//   - an empty signature script and a witness: a witness program. The
//     last item W gives P2WSH of SHA-256(W); two items give P2WPKH of
//     HASH160(W) too; a last item (the annex aside, BIP 341) shaped as a
//     taproot control block gives the P2TR output key its internal key,
//     leaf version and merkle path commit to with the script before it, an
//     unknown leaf version included. With one item left, a P2TR key-path
//     spend is possible, whose output key no input carries.
//
// Outputs of other scripts exist, and their spends can take any of these
// shapes: an empty or OP_TRUE script anyone can spend with OP_1, a hash
// puzzle, a witness version not yet defined (anyone can spend it with any
// witness). Taking such a spend for a standard one would prove an honest
// filter false, so before a filter that holds none of an input's
// candidates is called contradicted, each candidate must pass as a spend
// the input really makes, by the rules nodes relay by (stricter than
// consensus: a spend they would refuse is no evidence; a high-S signature
// is still a signature, though):
//
//   - a P2PKH or P2SH candidate of a signature script: the input, run by
//     btcd's script engine against it (the legacy signature hash needs
//     nothing but the transaction), succeeds: its signatures verify, a
//     redeem script runs to true;
//   - a P2WPKH candidate: the witness is a strict DER signature with a
//     known hash type and a compressed public key (its signature hash
//     needs the spent amount, which the block does not carry);
//   - a P2WSH candidate: the witness script parses and is of a standard
//     size;
//   - a P2TR candidate: the control block parses and the output key's
//     parity is the one it states;
//   - a P2SH candidate around a witness program needs nothing more.
//
// An input none of whose candidates passes is undecided. What stays
// undecided is thus what the input does not carry (a key-path spend, a
// lone signature of P2PK or bare multisig, an empty spend, a signature
// script that is not push-only) and the spends of non-standard outputs.
// One case remains: a miner that takes transactions nodes do not relay
// could mine a spend of an undefined witness version, or of a
// non-standard output deliberately signed as a standard one, that passes
// as a standard spend; an honest filter of that block would be proven
// false.
//
// The count bounds: the filter holds each distinct script once, so its N
// is at least the number of distinct output scripts and P2SH-wrapped
// witness programs (whose script is certain), and at most that plus one
// for every other input.
func CheckBasic(block *wire.MsgBlock, f *Filter) BasicCheck {
	var c BasicCheck
	hash := block.BlockHash()
	key := BasicKey(&hash)
	// certain holds the distinct scripts the filter must hold; the
	// others add at most one each.
	certain := make(map[string]struct{})
	for i, tx := range block.Transactions {
		for j, out := range tx.TxOut {
			s := out.PkScript
			if len(s) == 0 || s[0] == opReturn {
				continue
			}
			if _, ok := certain[string(s)]; ok {
				continue
			}
			certain[string(s)] = struct{}{}
			if c.Contradiction == nil && !f.Match(key, s) {
				c.Contradiction = &Contradiction{Kind: MissingOutput, Tx: i, Index: j, Scripts: [][]byte{s}}
			}
		}
	}
	others := 0
	for i, tx := range block.Transactions {
		if i == 0 {
			continue // the coinbase spends nothing
		}
		for j, in := range tx.TxIn {
			sp := spentBy(in)
			c.Inputs[sp.typ]++
			if sp.typ.wrapped() {
				certain[string(sp.cands[0].script)] = struct{}{}
			} else {
				others++
			}
			if c.Contradiction != nil || !sp.typ.Reveals() || sp.heldBy(f, key) {
				continue
			}
			if proven := sp.passing(tx, j); len(proven) > 0 {
				c.Contradiction = &Contradiction{Kind: MissingSpent, Tx: i, Index: j, Input: sp.typ, Scripts: proven}
			}
		}
	}
	if c.Contradiction != nil {
		return c
	}
	n, lo, hi := f.N(), len(certain), len(certain)+others
	switch {
	case int(n) < lo:
		c.Contradiction = &Contradiction{Kind: TooFew, N: n, Min: lo, Max: hi}
	case int(n) > hi:
		c.Contradiction = &Contradiction{Kind: TooMany, N: n, Min: lo, Max: hi}
	}
	return c
}

// wrapped reports whether t is P2SH around a witness program, whose
// spent script is certain.
func (t InputType) wrapped() bool {
	return t == InputP2SHP2WPKH || t == InputP2SHP2WSH || t == InputP2SHWitness
}

// SpentScripts returns what input index of tx (not a coinbase) shows of
// the output script it spends: its type and, for a type that Reveals,
// the candidates that pass as spends it really makes, as CheckBasic
// takes them (none, if it spends a non-standard output).
func SpentScripts(tx *wire.MsgTx, index int) (InputType, [][]byte) {
	sp := spentBy(tx.TxIn[index])
	if !sp.typ.Reveals() {
		return sp.typ, nil
	}
	return sp.typ, sp.passing(tx, index)
}

// candKind is the output type of a candidate.
type candKind uint8

const (
	candP2PKH candKind = iota
	candP2SH
	candWrapped // P2SH around a witness program
	candP2WPKH
	candP2WSH
	candP2TR
)

// cand is a script an input may spend.
type cand struct {
	kind   candKind
	script []byte
}

// spend is what an input shows of the script it spends: its candidates,
// and the P2TR one a leaf script and control block give, computed only
// when needed since it takes elliptic-curve arithmetic.
type spend struct {
	typ     InputType
	cands   []cand
	witness wire.TxWitness
	// leaf and control, when set, give one more candidate (tapScript).
	leaf, control []byte
}

// heldBy reports whether f holds one of the input's candidates.
func (s *spend) heldBy(f *Filter, key [16]byte) bool {
	for _, c := range s.cands {
		if f.Match(key, c.script) {
			return true
		}
	}
	if s.control == nil {
		return false
	}
	t, ok := tapScript(s.leaf, s.control)
	return ok && f.Match(key, t)
}

// passing returns the candidates that pass as a spend input index of tx
// really makes (see CheckBasic).
func (s *spend) passing(tx *wire.MsgTx, index int) [][]byte {
	var out [][]byte
	for _, c := range s.cands {
		if c.passes(tx, index, s.witness) {
			out = append(out, c.script)
		}
	}
	if s.control != nil {
		if t, ok := tapScript(s.leaf, s.control); ok {
			out = append(out, t)
		}
	}
	return out
}

// legacyFlags are the rules a signature script's spend is run by: those
// nodes relay by, but for the witness's (it has none).
const legacyFlags = txscript.StandardVerifyFlags &^ (txscript.ScriptVerifyWitness |
	txscript.ScriptVerifyDiscourageUpgradeableWitnessProgram | txscript.ScriptVerifyWitnessPubKeyType |
	txscript.ScriptVerifyTaproot | txscript.ScriptVerifyDiscourageUpgradeableTaprootVersion |
	txscript.ScriptVerifyDiscourageOpSuccess | txscript.ScriptVerifyDiscourageUpgradeablePubkeyType |
	txscript.ScriptVerifyLowS)

// maxStandardWitnessScript is the largest P2WSH witness script nodes
// relay (Bitcoin Core's MAX_STANDARD_P2WSH_SCRIPT_SIZE).
const maxStandardWitnessScript = 3600

// passes reports whether the input passes as a spend of c (see
// CheckBasic).
func (c cand) passes(tx *wire.MsgTx, index int, w wire.TxWitness) bool {
	switch c.kind {
	case candP2PKH, candP2SH:
		vm, err := txscript.NewEngine(c.script, tx, index, legacyFlags, nil, nil, 0, txscript.NewCannedPrevOutputFetcher(c.script, 0))
		return err == nil && vm.Execute() == nil
	case candWrapped:
		return true
	case candP2WPKH:
		sig, key := w[0], w[1]
		if len(sig) == 0 || len(key) != 33 {
			return false
		}
		if _, err := ecdsa.ParseDERSignature(sig[:len(sig)-1]); err != nil {
			return false
		}
		if ht := txscript.SigHashType(sig[len(sig)-1]) &^ txscript.SigHashAnyOneCanPay; ht < txscript.SigHashAll || ht > txscript.SigHashSingle {
			return false
		}
		_, err := btcec.ParsePubKey(key)
		return err == nil
	case candP2WSH:
		ws := w[len(w)-1]
		if len(ws) > maxStandardWitnessScript {
			return false
		}
		t := txscript.MakeScriptTokenizer(0, ws)
		for t.Next() {
		}
		return t.Err() == nil
	}
	return false
}

// spentBy reads what an input shows of the script it spends (see
// CheckBasic).
func spentBy(in *wire.TxIn) spend {
	if len(in.SignatureScript) == 0 {
		if len(in.Witness) == 0 {
			return spend{typ: InputHidden}
		}
		return witnessSpend(in.Witness)
	}
	items, ok := pushes(in.SignatureScript)
	if !ok || len(items) == 0 {
		return spend{typ: InputNonStandard}
	}
	last := items[len(items)-1]
	if len(in.Witness) > 0 {
		// Only P2SH around a witness program takes a signature script
		// and a witness, and its signature script is one push of the
		// program (BIP 141).
		if len(items) != 1 || !txscript.IsWitnessProgram(last) {
			return spend{typ: InputNonStandard}
		}
		typ := InputP2SHWitness
		switch {
		case last[0] == txscript.OP_0 && len(last) == 22:
			typ = InputP2SHP2WPKH
		case last[0] == txscript.OP_0 && len(last) == 34:
			typ = InputP2SHP2WSH
		}
		return spend{typ: typ, cands: []cand{{candWrapped, payToScriptHash(last)}}}
	}
	if len(last) > 0 && last[0] == 0x30 {
		// Maybe a signature: P2PK or bare multisig, whose keys the
		// input does not carry.
		return spend{typ: InputSignature}
	}
	s := spend{typ: InputP2SH, cands: []cand{{candP2SH, payToScriptHash(last)}}}
	if len(items) >= 2 {
		s.cands = append(s.cands, cand{candP2PKH, payToPubKeyHash(last)})
		if isPubKey(last) {
			s.typ = InputP2PKH
		}
	}
	return s
}

// witnessSpend reads a witness beside an empty signature script: the
// spend of a witness program.
func witnessSpend(w wire.TxWitness) spend {
	n := len(w)
	last := w[n-1]
	sum := sha256.Sum256(last)
	s := spend{typ: InputP2WSH, witness: w, cands: []cand{{candP2WSH, payToWitness(sum[:])}}}
	if n == 2 {
		s.cands = append([]cand{{candP2WPKH, payToWitness(btcutil.Hash160(last))}}, s.cands...)
		if len(last) == 33 && (last[0] == 0x02 || last[0] == 0x03) {
			s.typ = InputP2WPKH
		}
	}
	items := n
	if n >= 2 && len(last) > 0 && last[0] == txscript.TaprootAnnexTag {
		items-- // the annex (BIP 341)
	}
	if items == 1 {
		// A P2TR key-path spend is possible, and its output key is
		// nowhere in the input.
		return spend{typ: InputP2TRKeyPath}
	}
	control := w[items-1]
	if isControlBlockShaped(control) {
		s.leaf, s.control = w[items-2], control
		if s.typ == InputP2WSH && txscript.TapscriptLeafVersion(control[0]&txscript.TaprootLeafMask) == txscript.BaseLeafVersion {
			s.typ = InputP2TRScriptPath
		}
	}
	return s
}

// isControlBlockShaped reports whether b has a taproot control block's
// length: the leaf version and internal key, and up to 128 path hashes.
func isControlBlockShaped(b []byte) bool {
	return len(b) >= txscript.ControlBlockBaseSize && len(b) <= txscript.ControlBlockMaxSize &&
		(len(b)-txscript.ControlBlockBaseSize)%txscript.ControlBlockNodeSize == 0
}

// tapScript returns the P2TR output script whose output key the control
// block's internal key and merkle path commit to with the leaf script;
// false when the control block does not parse or states another parity
// of the output key (no P2TR output accepts the spend).
func tapScript(leaf, control []byte) ([]byte, bool) {
	cb, err := txscript.ParseControlBlock(control)
	if err != nil {
		return nil, false
	}
	key := txscript.ComputeTaprootOutputKey(cb.InternalKey, cb.RootHash(leaf))
	if odd := key.SerializeCompressed()[0] == 0x03; odd != cb.OutputKeyYIsOdd {
		return nil, false
	}
	return append([]byte{txscript.OP_1, txscript.OP_DATA_32}, schnorr.SerializePubKey(key)...), true
}

// pushes returns the stack a push-only script leaves, bottom first; false
// for a script that does anything but push (OP_RESERVED included, which
// fails when run) or does not parse.
func pushes(script []byte) ([][]byte, bool) {
	var out [][]byte
	t := txscript.MakeScriptTokenizer(0, script)
	for t.Next() {
		switch op := t.Opcode(); {
		case op == txscript.OP_0:
			out = append(out, nil)
		case op <= txscript.OP_PUSHDATA4:
			out = append(out, t.Data())
		case op == txscript.OP_1NEGATE:
			out = append(out, []byte{0x81})
		case op >= txscript.OP_1 && op <= txscript.OP_16:
			out = append(out, []byte{op - txscript.OP_1 + 1})
		default:
			return nil, false
		}
	}
	return out, t.Err() == nil
}

// isPubKey reports whether b has the shape of a serialized public key:
// compressed, uncompressed or hybrid.
func isPubKey(b []byte) bool {
	switch len(b) {
	case 33:
		return b[0] == 0x02 || b[0] == 0x03
	case 65:
		return b[0] == 0x04 || b[0] == 0x06 || b[0] == 0x07
	}
	return false
}

func payToPubKeyHash(pushed []byte) []byte {
	h := btcutil.Hash160(pushed)
	return append(append([]byte{txscript.OP_DUP, txscript.OP_HASH160, txscript.OP_DATA_20}, h...), txscript.OP_EQUALVERIFY, txscript.OP_CHECKSIG)
}

func payToScriptHash(redeem []byte) []byte {
	h := btcutil.Hash160(redeem)
	return append(append([]byte{txscript.OP_HASH160, txscript.OP_DATA_20}, h...), txscript.OP_EQUAL)
}

// payToWitness returns the version 0 witness program of a 20-byte key
// hash or a 32-byte script hash.
func payToWitness(h []byte) []byte {
	return append([]byte{txscript.OP_0, byte(len(h))}, h...)
}
