package gcs

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/ecdsa"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// InputType is what an input shows of the output script it spends.
type InputType uint8

// The kinds of inputs, by what their signature script and witness show.
// Only the P2SH-wrapped witness programs fix the script they spend by
// consensus (Certain); the others name it only if the output they spend
// was of a standard type (Reveals), or not at all.
const (
	// InputHidden: an empty signature script and witness, which anyone
	// could give (an anchor, an output anyone can spend).
	InputHidden InputType = iota
	// InputNonStandard: a signature script that is not push-only, or a
	// witness beside a signature script that is not exactly one
	// canonical push of a witness program (which consensus refuses).
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
// (among a few) if the output they spend was of a standard type: the
// block then favours a filter that holds it, but proves nothing unless
// the type is also Certain (see CheckBasic).
func (t InputType) Reveals() bool { return t >= InputP2PKH && t < NumInputTypes }

// Certain reports whether consensus fixes the script inputs of this type
// spend: P2SH of the witness program their signature script pushes (see
// CheckBasic). A filter that leaves it out is proven false.
func (t InputType) Certain() bool {
	return t == InputP2SHP2WPKH || t == InputP2SHP2WSH || t == InputP2SHWitness
}

// ContradictionKind says how a block proves a filter false.
type ContradictionKind uint8

// The ways a block proves its basic filter false.
const (
	// Undecodable: the filter does not decode as a basic filter.
	Undecodable ContradictionKind = iota + 1
	// MissingOutput: an output script is not in the filter.
	MissingOutput
	// MissingSpent: the script an input spends, which consensus fixes
	// (P2SH around a witness program), is not in the filter.
	MissingSpent
	// TooFew, TooMany: the filter's N is outside what the block allows.
	TooFew
	TooMany
)

// A Contradiction is a block's proof that a basic filter is false, by
// consensus rules alone (see CheckBasic).
type Contradiction struct {
	Kind ContradictionKind
	// Tx and Index locate the output (MissingOutput) or input
	// (MissingSpent): the transaction's index in the block and the
	// output's or input's in the transaction.
	Tx, Index int
	// Input is what the input shows (MissingSpent).
	Input InputType
	// Scripts holds the output script left out, or the script the input
	// spends.
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
		return fmt.Sprintf("gcs: filter leaves out %x, the script input %d of transaction %d spends (a %s spend, which consensus allows of no other script)",
			c.Scripts[0], c.Index, c.Tx, c.Input)
	case TooFew:
		return fmt.Sprintf("gcs: filter holds %d items where the block gives at least %d", c.N, c.Min)
	case TooMany:
		return fmt.Sprintf("gcs: filter holds %d items where the block allows at most %d", c.N, c.Max)
	}
	return fmt.Sprintf("gcs: contradiction of kind %d", c.Kind)
}

// Unwrap returns why the filter does not decode (Undecodable), else nil.
func (c *Contradiction) Unwrap() error { return c.Err }

// A StandardMiss is an input whose shape names the scripts it spends if
// the output it spends was of a standard type, none of which the filter
// holds. It is evidence against the filter, never a proof: the output may
// have been of no standard type (see CheckBasic).
type StandardMiss struct {
	// Tx and Index locate the input: the transaction's index in the
	// block and the input's in the transaction.
	Tx, Index int
	// Input is what the input shows.
	Input InputType
	// Scripts are the scripts one of which the input spends if the
	// output it spends was standard.
	Scripts [][]byte
}

func (m StandardMiss) String() string {
	hexes := make([]string, len(m.Scripts))
	for i, s := range m.Scripts {
		hexes[i] = hex.EncodeToString(s)
	}
	return fmt.Sprintf("input %d of transaction %d, a %s spend, spends one of %s if the output it spends was standard, and the filter holds none",
		m.Index, m.Tx, m.Input, strings.Join(hexes, ", "))
}

// MaxStandardMisses bounds BasicCheck.IfStandard.
const MaxStandardMisses = 16

// BasicCheck is what a block says about a basic filter.
type BasicCheck struct {
	// Contradiction, if not nil, proves the filter false by consensus
	// alone: the first output, then input, then count that the filter
	// cannot hold.
	Contradiction *Contradiction
	// IfStandard, when there is no Contradiction, lists the inputs (the
	// first MaxStandardMisses, in block order) whose shape names the
	// scripts they spend if the outputs they spend were standard, none of
	// which the filter holds. Between two filters neither of which is
	// contradicted, the block favours one without such inputs if the
	// spent outputs were standard: evidence, never a proof.
	IfStandard []StandardMiss
	// NoProof, if not nil, is why the block proves nothing of the filter
	// (ErrUncommittedBlock, ErrAmbiguousBlock): its transactions are not
	// certainly the ones its header commits to.
	NoProof error
	// Inputs counts the block's inputs (the coinbase's left out) by
	// what they show of the scripts they spend.
	Inputs [NumInputTypes]int
}

// Undecided returns how many inputs show nothing of the script they
// spend, even if the output they spend was standard.
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
// (DecodeBasic); one that does not decode is contradicted (Undecodable),
// whatever the block.
func CheckBasicBytes(block *wire.MsgBlock, nbytes []byte) BasicCheck {
	f, err := DecodeBasic(nbytes)
	if err != nil {
		return BasicCheck{Contradiction: &Contradiction{Kind: Undecodable, Err: err}}
	}
	return CheckBasic(block, f)
}

// CheckBasic says whether block proves f false as its BIP 158 basic
// filter, from the block alone and by consensus rules alone; and, apart
// from any proof, which inputs f does not fit if the outputs they spend
// were of standard types.
//
// BuildBasic needs the scripts of the outputs a block's inputs spend,
// which the block does not carry. What consensus forces of the filter
// without them, and so all CheckBasic calls a Contradiction:
//
//   - every output script (non-empty, not starting with OP_RETURN) is in
//     the filter (MissingOutput);
//   - an input whose witness is not empty and whose signature script is
//     exactly one canonical push of a witness program R spends P2SH of R:
//     BIP 141 refuses a witness beside any output but a native witness
//     program, which needs an empty signature script, and P2SH around a
//     witness program, which needs exactly that push (btcd's
//     txscript.NewEngine checks the same). The filter holds that script
//     (MissingSpent);
//   - the filter holds each distinct script once, so its N is at least
//     the number of distinct output scripts and such P2SH scripts
//     (TooFew), and at most that plus one for every other input (TooMany)
//     but those that spend an output of the block itself: a
//     transaction's outputs follow from its txid, so the script such an
//     input spends is one of the block's outputs, already counted (or
//     empty, and not held). The coinbase spends nothing, and its outputs
//     cannot be spent in their own block (maturity): a spend of its txid
//     is not read as one;
//   - the filter decodes (Undecodable, CheckBasicBytes).
//
// Nothing else an input shows is forced. A legacy signature script is
// accepted by many output scripts: any bare script that succeeds on the
// stack it leaves (OP_TRUE, OP_DROP OP_TRUE, a hash puzzle), and P2SH of
// its last push whenever that push runs to true as a redeem script. A
// native witness spends a witness program, but versions 2 to 16, and
// version 1 programs of another length than 32 (P2A), are spent by any
// witness. So a P2PKH-, P2SH-, P2WPKH-, P2WSH- or P2TR-shaped input names
// the script it spends only if the output it spends was of a standard
// type. That is no proof: spends of other outputs are valid by
// consensus; btcd relays them on regtest, simnet and testnet, Bitcoin
// Core with -acceptnonstdtxn, and a miner may mine them on any network.
// Were a shape a proof, one such spend mined would make its block
// "prove" every honest filter of it false, for ever.
//
// That evidence is IfStandard. An input stands for the set of scripts it
// could spend if the spent output was standard (its candidates): for each
// standard type, every spend of it that consensus accepts is accounted
// for, however unusual:
//
//   - a push-only signature script whose last push L is not a signature
//     (a signature starts with 0x30, the DER sequence tag): P2SH of L (L is
//     the redeem script) or, with two pushes or more, P2PKH of L. P2PK and
//     bare multisig outputs need a signature last and are ruled out. A
//     P2SH redeem script shaped as a public key is never taken for one,
//     nor an uncompressed key for a compressed one: L is hashed as it is.
//   - an empty signature script and a witness: a witness program. The
//     last item W gives P2WSH of SHA-256(W); two items give P2WPKH of
//     HASH160(W) too; a last item (the annex aside, BIP 341) shaped as a
//     taproot control block gives the P2TR output key its internal key,
//     leaf version and merkle path commit to with the script before it, an
//     unknown leaf version included. With one item left, a P2TR key-path
//     spend is possible, whose output key no input carries.
//
// A candidate counts only if the input passes as a spend of it that
// nodes relay (stricter than consensus; a high-S signature is still a
// signature, though): for P2PKH and P2SH, the input run by btcd's script
// engine against it succeeds (the legacy signature hash needs nothing
// but the transaction); for P2WPKH, the witness is a strict DER signature
// with a known hash type and a compressed public key (its signature hash
// needs the spent amount, which the block does not carry); for P2WSH, the
// witness script parses and is of a standard size; for P2TR, the control
// block parses and the output key's parity is the one it states. An input
// is listed when the filter holds none of its candidates and one passes.
//
// A block proves nothing at all (NoProof) unless its transactions are
// certainly the ones its header commits to: their merkle root is the
// header's, no transaction appears twice (the CVE-2012-2459 mutation),
// the witness commitment holds (BIP 141; without one, no witness: a
// witness added by whoever served the block would make an input that
// pushes a witness program seem to spend P2SH of it), its first
// transaction is a coinbase, and that coinbase is not 64 bytes long
// without its witness. A 64-byte transaction cannot be told from an
// inner node of the merkle tree (CVE-2017-12842), but every leaf lies at
// the coinbase's depth: a peer could serve, under the header, a block
// where a leaf stands for a subtree or a subtree for a leaf only if the
// coinbase were such a leaf too (or an inner node spelt a coinbase's null
// outpoint, a preimage no one can find). A block with a 64-byte coinbase,
// even an honest one, is no evidence.
func CheckBasic(block *wire.MsgBlock, f *Filter) BasicCheck {
	var c BasicCheck
	for i, tx := range block.Transactions {
		if i > 0 {
			for _, in := range tx.TxIn {
				c.Inputs[spentBy(in).typ]++
			}
		}
	}
	txids, err := committed(block)
	if err != nil {
		c.NoProof = err
		return c
	}
	hash := block.BlockHash()
	key := BasicKey(&hash)
	// certain holds the distinct scripts the filter must hold; the
	// others add at most one each.
	certain := make(map[string]struct{})
	for i, tx := range block.Transactions {
		for j, out := range tx.TxOut {
			s := out.PkScript
			if !BasicOutput(s) {
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
	if c.Contradiction != nil {
		return c
	}
	others := 0
	for i, tx := range block.Transactions[1:] {
		i++
		for j, in := range tx.TxIn {
			if inBlock(block, txids, in.PreviousOutPoint) {
				continue // an output of the block, already counted
			}
			sp := spentBy(in)
			if !sp.typ.Certain() {
				others++
				c.evidence(&sp, f, key, tx, i, j)
				continue
			}
			s := sp.cands[0].script
			certain[string(s)] = struct{}{}
			if !f.Match(key, s) {
				c.Contradiction = &Contradiction{Kind: MissingSpent, Tx: i, Index: j, Input: sp.typ, Scripts: [][]byte{s}}
				c.IfStandard = nil
				return c
			}
		}
	}
	n, lo, hi := f.N(), len(certain), len(certain)+others
	switch {
	case int(n) < lo:
		c.Contradiction = &Contradiction{Kind: TooFew, N: n, Min: lo, Max: hi}
	case int(n) > hi:
		c.Contradiction = &Contradiction{Kind: TooMany, N: n, Min: lo, Max: hi}
	}
	if c.Contradiction != nil {
		c.IfStandard = nil
	}
	return c
}

// evidence adds input j of tx, the block's i-th transaction, to
// c.IfStandard if it names scripts it spends if the output it spends was
// standard, and f holds none of them.
func (c *BasicCheck) evidence(sp *spend, f *Filter, key [16]byte, tx *wire.MsgTx, i, j int) {
	if len(c.IfStandard) >= MaxStandardMisses || !sp.typ.Reveals() || sp.heldBy(f, key) {
		return
	}
	if named := sp.passing(tx, j); len(named) > 0 {
		c.IfStandard = append(c.IfStandard, StandardMiss{Tx: i, Index: j, Input: sp.typ, Scripts: named})
	}
}

// CheckCommitted checks that block's transactions are certainly the ones
// its header commits to, the rule CheckBasic applies first (see its
// documentation): the error wraps ErrUncommittedBlock, or
// ErrAmbiguousBlock for a block whose 64-byte coinbase leaves the depth of
// its leaves open.
func CheckCommitted(block *wire.MsgBlock) error {
	_, err := committed(block)
	return err
}

// committed checks that block's transactions are the ones its header
// commits to (see CheckBasic) and returns the index of each by txid.
func committed(block *wire.MsgBlock) (map[chainhash.Hash]int, error) {
	if len(block.Transactions) == 0 {
		return nil, fmt.Errorf("%w: it has no transactions", ErrUncommittedBlock)
	}
	coinbase := block.Transactions[0]
	if !blockchain.IsCoinBaseTx(coinbase) {
		return nil, fmt.Errorf("%w: its first transaction is not a coinbase", ErrUncommittedBlock)
	}
	blk := btcutil.NewBlock(block)
	txs := blk.Transactions()
	txids := make(map[chainhash.Hash]int, len(txs))
	for i, tx := range txs {
		if _, dup := txids[*tx.Hash()]; dup {
			return nil, fmt.Errorf("%w: transaction %v appears twice (CVE-2012-2459)", ErrUncommittedBlock, tx.Hash())
		}
		txids[*tx.Hash()] = i
	}
	if root := blockchain.CalcMerkleRoot(txs, false); root != block.Header.MerkleRoot {
		return nil, fmt.Errorf("%w: its transactions hash to merkle root %v, its header says %v", ErrUncommittedBlock, root, block.Header.MerkleRoot)
	}
	if err := blockchain.ValidateWitnessCommitment(blk); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUncommittedBlock, err)
	}
	// Every leaf of the merkle tree lies at the coinbase's depth: a
	// 64-byte transaction could stand for an inner node, or an inner node
	// for one, only if the coinbase did too, which a coinbase not 64 bytes
	// long (or an inner node spelling a coinbase's null outpoint) rules
	// out.
	if coinbase.SerializeSizeStripped() == 64 {
		return nil, fmt.Errorf("%w: its coinbase (%v)", ErrAmbiguousBlock, txs[0].Hash())
	}
	return txids, nil
}

// inBlock reports whether op is an output of one of the block's
// transactions but the coinbase, whose script the block then shows (not
// one starting with OP_RETURN, which no valid block spends).
func inBlock(block *wire.MsgBlock, txids map[chainhash.Hash]int, op wire.OutPoint) bool {
	i, ok := txids[op.Hash]
	if !ok || i == 0 {
		return false
	}
	outs := block.Transactions[i].TxOut
	if op.Index >= uint32(len(outs)) {
		return false
	}
	s := outs[op.Index].PkScript
	return len(s) == 0 || s[0] != opReturn
}

// SpentScripts returns what input index of tx (not a coinbase) shows of
// the output script it spends: its type and, for a type that Reveals,
// the scripts it may spend as CheckBasic reads them: for a Certain type,
// the one script consensus allows; for the others, the candidates that
// pass as spends it really makes if the output it spends was standard
// (none, if it spends a non-standard output).
func SpentScripts(tx *wire.MsgTx, index int) (InputType, [][]byte) {
	sp := spentBy(tx.TxIn[index])
	if !sp.typ.Reveals() {
		return sp.typ, nil
	}
	return sp.typ, sp.passing(tx, index)
}

// SpendCandidates returns what input in shows of the output script it
// spends by its shape alone: its type and, for a type that Reveals, the
// scripts it may spend (the P2TR output its control block commits to
// included), not checked as spends the input really makes: SpentScripts
// keeps those that pass. It is cheap where SpentScripts runs the
// input's scripts: a caller looking for given scripts asks it first.
func SpendCandidates(in *wire.TxIn) (InputType, [][]byte) {
	sp := spentBy(in)
	if !sp.typ.Reveals() {
		return sp.typ, nil
	}
	out := make([][]byte, 0, len(sp.cands)+1)
	for _, c := range sp.cands {
		out = append(out, c.script)
	}
	if sp.control != nil {
		if t, ok := tapScript(sp.leaf, sp.control); ok {
			out = append(out, t)
		}
	}
	return sp.typ, out
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
		// and a witness, and its signature script is exactly one
		// canonical push of the program (BIP 141).
		if s := in.SignatureScript; int(s[0]) != len(s)-1 || !txscript.IsWitnessProgram(s[1:]) {
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
