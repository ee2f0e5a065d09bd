package gcs

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/btcutil/gcs/builder"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// consensusFlags are the script rules every block follows since taproot
// (no policy rule: a block may hold what nodes do not relay).
const consensusFlags = txscript.ScriptBip16 | txscript.ScriptVerifyDERSignatures | txscript.ScriptStrictMultiSig |
	txscript.ScriptVerifyWitness | txscript.ScriptVerifyTaproot | txscript.ScriptVerifyCheckLockTimeVerify |
	txscript.ScriptVerifyCheckSequenceVerify

// spendCase is a transaction spending one output: what CheckBasic sees
// of its input, and the script the output had.
type spendCase struct {
	name string
	prev []byte // the spent output's script
	tx   *wire.MsgTx
	want InputType
}

// testKey derives a private key from a seed.
func testKey(seed string) *btcec.PrivateKey {
	sum := sha256.Sum256([]byte(seed))
	k, _ := btcec.PrivKeyFromBytes(sum[:])
	return k
}

// spender builds transactions spending single outputs of a fixed value,
// checked by btcd's script engine under the consensus rules.
type spender struct {
	t     testing.TB
	value int64
	n     uint32 // a counter that makes every spent outpoint different
}

// tx returns a transaction spending the output (prev, s.value) to one
// P2WSH output of a script unique to it; sign fills in its input.
func (s *spender) spend(name string, prev []byte, want InputType, sign func(tx *wire.MsgTx, hashes *txscript.TxSigHashes, fetch txscript.PrevOutputFetcher) error) spendCase {
	s.t.Helper()
	s.n++
	op := wire.OutPoint{Hash: chainhash.DoubleHashH([]byte(name)), Index: s.n}
	tx := wire.NewMsgTx(2)
	tx.AddTxIn(wire.NewTxIn(&op, nil, nil))
	out := sha256.Sum256([]byte("out " + name))
	tx.AddTxOut(wire.NewTxOut(s.value-1000, payToWitness(out[:])))
	fetch := txscript.NewCannedPrevOutputFetcher(prev, s.value)
	hashes := txscript.NewTxSigHashes(tx, fetch)
	if err := sign(tx, hashes, fetch); err != nil {
		s.t.Fatalf("%s: signing: %v", name, err)
	}
	vm, err := txscript.NewEngine(prev, tx, 0, consensusFlags, nil, hashes, s.value, fetch)
	if err == nil {
		err = vm.Execute()
	}
	if err != nil {
		s.t.Fatalf("%s: not a valid spend: %v", name, err)
	}
	return spendCase{name: name, prev: prev, tx: tx, want: want}
}

// push returns a signature script pushing items.
func push(t testing.TB, items ...[]byte) []byte {
	t.Helper()
	b := txscript.NewScriptBuilder()
	for _, it := range items {
		b.AddData(it)
	}
	s, err := b.Script()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// keyShapedScript is a 33-byte script that starts like a compressed
// public key (0x02) and succeeds on one item: push two bytes, drop them
// with the item below, push 28 non-zero bytes.
func keyShapedScript() []byte {
	s := []byte{0x02, 0xaa, 0xbb, txscript.OP_2DROP, txscript.OP_DATA_28}
	return append(s, bytes.Repeat([]byte{1}, 28)...)
}

// everySpend returns a valid spend of every standard output type, and of
// the shapes that make one look like another.
func everySpend(t testing.TB) []spendCase {
	s := &spender{t: t, value: 100_000}
	k1, k2 := testKey("one"), testKey("two")
	pk1, pk2 := k1.PubKey().SerializeCompressed(), k2.PubKey().SerializeCompressed()
	p2pkh := payToPubKeyHash(pk1)
	p2pkhU := payToPubKeyHash(k1.PubKey().SerializeUncompressed())
	multi := func(m int, keys ...[]byte) []byte {
		b := txscript.NewScriptBuilder().AddInt64(int64(m))
		for _, k := range keys {
			b.AddData(k)
		}
		sc, _ := b.AddInt64(int64(len(keys))).AddOp(txscript.OP_CHECKMULTISIG).Script()
		return sc
	}
	checksig := func(k []byte) []byte {
		sc, _ := txscript.NewScriptBuilder().AddData(k).AddOp(txscript.OP_CHECKSIG).Script()
		return sc
	}
	wsh := func(ws []byte) []byte {
		h := sha256.Sum256(ws)
		return payToWitness(h[:])
	}
	p2tr := func(key *btcec.PublicKey) []byte {
		return append([]byte{txscript.OP_1, txscript.OP_DATA_32}, schnorr.SerializePubKey(key)...)
	}
	var cases []spendCase
	add := func(c spendCase) { cases = append(cases, c) }

	add(s.spend("P2PKH", p2pkh, InputP2PKH, func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		sig, err := txscript.SignatureScript(tx, 0, p2pkh, txscript.SigHashAll, k1, true)
		tx.TxIn[0].SignatureScript = sig
		return err
	}))
	add(s.spend("P2PKH, uncompressed key", p2pkhU, InputP2PKH, func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		sig, err := txscript.SignatureScript(tx, 0, p2pkhU, txscript.SigHashAll, k1, false)
		tx.TxIn[0].SignatureScript = sig
		return err
	}))
	redeem := multi(2, pk1, pk2)
	add(s.spend("P2SH 2-of-2", payToScriptHash(redeem), InputP2SH, func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		s1, err := txscript.RawTxInSignature(tx, 0, redeem, txscript.SigHashAll, k1)
		if err != nil {
			return err
		}
		s2, err := txscript.RawTxInSignature(tx, 0, redeem, txscript.SigHashAll, k2)
		tx.TxIn[0].SignatureScript = push(t, nil, s1, s2, redeem)
		return err
	}))
	// A redeem script shaped as a public key, after another push: it
	// must not be taken for P2PKH.
	shaped := keyShapedScript()
	add(s.spend("P2SH of a key-shaped redeem script", payToScriptHash(shaped), InputP2PKH, func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		tx.TxIn[0].SignatureScript = push(t, []byte("not a signature"), shaped)
		return nil
	}))
	wpkh := payToWitness(btcutil.Hash160(pk1))
	add(s.spend("P2SH-P2WPKH", payToScriptHash(wpkh), InputP2SHP2WPKH, func(tx *wire.MsgTx, h *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		w, err := txscript.WitnessSignature(tx, h, 0, s.value, wpkh, txscript.SigHashAll, k1, true)
		tx.TxIn[0].Witness, tx.TxIn[0].SignatureScript = w, push(t, wpkh)
		return err
	}))
	add(s.spend("P2WPKH", wpkh, InputP2WPKH, func(tx *wire.MsgTx, h *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		w, err := txscript.WitnessSignature(tx, h, 0, s.value, wpkh, txscript.SigHashAll, k1, true)
		tx.TxIn[0].Witness = w
		return err
	}))
	ws := multi(1, pk1, pk2)
	add(s.spend("P2WSH 1-of-2", wsh(ws), InputP2WSH, func(tx *wire.MsgTx, h *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		sig, err := txscript.RawTxInWitnessSignature(tx, h, 0, s.value, ws, txscript.SigHashAll, k2)
		tx.TxIn[0].Witness = wire.TxWitness{nil, sig, ws}
		return err
	}))
	add(s.spend("P2SH-P2WSH", payToScriptHash(wsh(ws)), InputP2SHP2WSH, func(tx *wire.MsgTx, h *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		sig, err := txscript.RawTxInWitnessSignature(tx, h, 0, s.value, ws, txscript.SigHashAll, k1)
		tx.TxIn[0].Witness, tx.TxIn[0].SignatureScript = wire.TxWitness{nil, sig, ws}, push(t, wsh(ws))
		return err
	}))
	// A witness script shaped as a public key, after one item: it looks
	// like P2WPKH and must not be taken for it alone.
	add(s.spend("P2WSH of a key-shaped script", wsh(shaped), InputP2WPKH, func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		tx.TxIn[0].Witness = wire.TxWitness{[]byte("not a signature"), shaped}
		return nil
	}))
	// A P2TR script path of three leaves, spending the first with a
	// signature.
	internal := k2.PubKey()
	leafA := txscript.NewBaseTapLeaf(checksig(schnorr.SerializePubKey(k1.PubKey())))
	leafB := txscript.NewBaseTapLeaf(checksig(schnorr.SerializePubKey(k2.PubKey())))
	leafC := txscript.NewBaseTapLeaf([]byte{txscript.OP_TRUE})
	tree := txscript.AssembleTaprootScriptTree(leafA, leafB, leafC)
	root := tree.RootNode.TapHash()
	trScript := p2tr(txscript.ComputeTaprootOutputKey(internal, root[:]))
	controlOf := func(i int) []byte {
		cb := tree.LeafMerkleProofs[i].ToControlBlock(internal)
		b, err := cb.ToBytes()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	add(s.spend("P2TR script path", trScript, InputP2TRScriptPath, func(tx *wire.MsgTx, h *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		sig, err := txscript.RawTxInTapscriptSignature(tx, h, 0, s.value, trScript, leafA, txscript.SigHashDefault, k1)
		tx.TxIn[0].Witness = wire.TxWitness{sig, leafA.Script, controlOf(0)}
		return err
	}))
	// The same tree under another internal key, spending its OP_TRUE
	// leaf with an annex.
	internal3 := testKey("three").PubKey()
	trScript3 := p2tr(txscript.ComputeTaprootOutputKey(internal3, root[:]))
	add(s.spend("P2TR script path with an annex", trScript3, InputP2TRScriptPath, func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		cb := tree.LeafMerkleProofs[2].ToControlBlock(internal3)
		control, err := cb.ToBytes()
		tx.TxIn[0].Witness = wire.TxWitness{leafC.Script, control, {txscript.TaprootAnnexTag, 1, 2, 3}}
		return err
	}))
	// A P2TR output of an unknown leaf version whose spend looks like
	// P2WPKH: a 72-byte "signature" leaf and a 33-byte control block
	// starting with 0x02 or 0x03.
	leafX := txscript.NewTapLeaf(0x02, append([]byte{0x30}, bytes.Repeat([]byte{0x45}, 71)...))
	xInternal, _ := schnorr.ParsePubKey(schnorr.SerializePubKey(testKey("four").PubKey()))
	xKey := txscript.ComputeTaprootOutputKey(xInternal, func() []byte { h := leafX.TapHash(); return h[:] }())
	xControl := append([]byte{0x02 | xKey.SerializeCompressed()[0]&1}, schnorr.SerializePubKey(xInternal)...)
	add(s.spend("P2TR of an unknown leaf version, shaped as P2WPKH", p2tr(xKey), InputP2WPKH, func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		tx.TxIn[0].Witness = wire.TxWitness{leafX.Script, xControl}
		return nil
	}))
	// What reveals nothing.
	keyPath := p2tr(txscript.ComputeTaprootKeyNoScript(k1.PubKey()))
	add(s.spend("P2TR key path", keyPath, InputP2TRKeyPath, func(tx *wire.MsgTx, h *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		w, err := txscript.TaprootWitnessSignature(tx, h, 0, s.value, keyPath, txscript.SigHashDefault, k1)
		tx.TxIn[0].Witness = w
		return err
	}))
	p2pk := checksig(pk1)
	add(s.spend("P2PK", p2pk, InputSignature, func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		sig, err := txscript.RawTxInSignature(tx, 0, p2pk, txscript.SigHashAll, k1)
		tx.TxIn[0].SignatureScript = push(t, sig)
		return err
	}))
	bare := multi(1, pk1, pk2)
	add(s.spend("bare 1-of-2 multisig", bare, InputSignature, func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		sig, err := txscript.RawTxInSignature(tx, 0, bare, txscript.SigHashAll, k2)
		tx.TxIn[0].SignatureScript = push(t, nil, sig)
		return err
	}))
	add(s.spend("anyone can spend", []byte{txscript.OP_TRUE}, InputHidden, func(*wire.MsgTx, *txscript.TxSigHashes, txscript.PrevOutputFetcher) error {
		return nil
	}))
	add(s.spend("not push-only", []byte{txscript.OP_TRUE}, InputNonStandard, func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		tx.TxIn[0].SignatureScript = []byte{txscript.OP_1, txscript.OP_NOP}
		return nil
	}))
	return cases
}

// TestSpentScriptsEveryType: for a valid spend of every standard output
// type, and of the shapes that make one type look like another (a P2SH
// redeem script or a P2WSH witness script shaped as a public key, a P2TR
// spend of an unknown leaf version shaped as P2WPKH, an uncompressed
// key), an input that Reveals names the very script it spends among its
// candidates, and the others are told apart by type.
func TestSpentScriptsEveryType(t *testing.T) {
	for _, c := range everySpend(t) {
		typ, cands := SpentScripts(c.tx, 0)
		if typ != c.want {
			t.Errorf("%s: type %v, want %v", c.name, typ, c.want)
		}
		switch in := slices.ContainsFunc(cands, func(s []byte) bool { return bytes.Equal(s, c.prev) }); {
		case typ.Reveals() && !in:
			t.Errorf("%s: spends %x, not among the candidates that pass, %x", c.name, c.prev, cands)
		case !typ.Reveals() && len(cands) > 0:
			t.Errorf("%s: %v reveals nothing, yet has candidates %x", c.name, typ, cands)
		case len(cands) > 1:
			t.Logf("%s: %d candidates pass: %x", c.name, len(cands), cands)
		}
	}
}

// TestSpendCandidates: an input's candidates by its shape alone are of
// the type SpentScripts gives, and hold every candidate that passes (the
// spent script among them), so that a caller looking for given scripts
// may ask SpendCandidates first and SpentScripts only on a hit.
func TestSpendCandidates(t *testing.T) {
	for _, c := range everySpend(t) {
		typ, shaped := SpendCandidates(c.tx.TxIn[0])
		ptyp, passing := SpentScripts(c.tx, 0)
		if typ != ptyp {
			t.Errorf("%s: type %v by shape, %v by SpentScripts", c.name, typ, ptyp)
		}
		for _, p := range passing {
			if !slices.ContainsFunc(shaped, func(s []byte) bool { return bytes.Equal(s, p) }) {
				t.Errorf("%s: %x passes but is not among the candidates by shape %x", c.name, p, shaped)
			}
		}
		if typ.Reveals() && !slices.ContainsFunc(shaped, func(s []byte) bool { return bytes.Equal(s, c.prev) }) {
			t.Errorf("%s: spends %x, not among the candidates by shape %x", c.name, c.prev, shaped)
		}
		if !typ.Reveals() && len(shaped) > 0 {
			t.Errorf("%s: %v reveals nothing, yet has candidates %x", c.name, typ, shaped)
		}
	}
}

// spendBlock returns a block of a coinbase and the cases' transactions,
// committed to by its header (commitBlock), and the scripts they spend in
// the order of their inputs.
func spendBlock(cases []spendCase) (*wire.MsgBlock, [][]byte) {
	cb := wire.NewMsgTx(1)
	cb.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: wire.MaxPrevOutIndex}, []byte{0x51, 0x51}, nil))
	cb.AddTxOut(wire.NewTxOut(5000, payToPubKeyHash([]byte("miner"))))
	cb.AddTxOut(wire.NewTxOut(0, []byte{txscript.OP_RETURN, 4, 1, 2, 3, 4}))
	block := &wire.MsgBlock{Header: wire.BlockHeader{Version: 4, Bits: 0x207fffff}, Transactions: []*wire.MsgTx{cb}}
	var prevs [][]byte
	for _, c := range cases {
		block.Transactions = append(block.Transactions, c.tx)
		prevs = append(prevs, c.prev)
	}
	commitBlock(block)
	return block, prevs
}

// commitBlock makes block's header and coinbase commit to its
// transactions, as a miner does: a witness commitment (BIP 141, in place
// of any the coinbase had) when one of them has a witness and the first
// is a coinbase, and the merkle root.
func commitBlock(block *wire.MsgBlock) {
	if len(block.Transactions) == 0 {
		return
	}
	cb := block.Transactions[0]
	witness := false
	for _, tx := range block.Transactions[1:] {
		witness = witness || tx.HasWitness()
	}
	cb.TxOut = slices.DeleteFunc(cb.TxOut, func(o *wire.TxOut) bool { return bytes.HasPrefix(o.PkScript, blockchain.WitnessMagicBytes) })
	if witness && blockchain.IsCoinBaseTx(cb) {
		nonce := make([]byte, blockchain.CoinbaseWitnessDataLen)
		cb.TxIn[0].Witness = wire.TxWitness{nonce}
		root := blockchain.CalcMerkleRoot(btcutil.NewBlock(block).Transactions(), true)
		commitment := chainhash.DoubleHashB(append(root[:], nonce...))
		cb.AddTxOut(wire.NewTxOut(0, append(slices.Clone(blockchain.WitnessMagicBytes), commitment...)))
	}
	block.Header.MerkleRoot = blockchain.CalcMerkleRoot(btcutil.NewBlock(block).Transactions(), false)
}

// nonStandardSpends returns valid spends of outputs of no standard type
// shaped as spends of standard ones: an honest filter of their block
// holds the true script, none of those the shape suggests. Each is valid
// by consensus (checked by btcd's script engine), so a miner may mine it
// on any network, and btcd relays it on regtest and testnet.
func nonStandardSpends(t testing.TB) []spendCase {
	s := &spender{t: t, value: 100_000}
	k1 := testKey("one")
	one := []byte{txscript.OP_TRUE}
	h := sha256.Sum256(one)
	puzzle, err := txscript.NewScriptBuilder().AddOp(txscript.OP_SHA256).AddData(h[:]).AddOp(txscript.OP_EQUAL).Script()
	if err != nil {
		t.Fatal(err)
	}
	pkh := payToPubKeyHash(k1.PubKey().SerializeCompressed())
	sigOne := func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		tx.TxIn[0].SignatureScript = push(t, one)
		return nil
	}
	signP2PKH := func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		sig, err := txscript.SignatureScript(tx, 0, pkh, txscript.SigHashAll, k1, true)
		tx.TxIn[0].SignatureScript = sig
		return err
	}
	signP2WPKH := func(tx *wire.MsgTx, hs *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		w, err := txscript.WitnessSignature(tx, hs, 0, s.value, payToWitness(btcutil.Hash160(k1.PubKey().SerializeCompressed())), txscript.SigHashAll, k1, true)
		tx.TxIn[0].Witness = w
		return err
	}
	witnessOf := func(items ...[]byte) func(*wire.MsgTx, *txscript.TxSigHashes, txscript.PrevOutputFetcher) error {
		return func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
			tx.TxIn[0].Witness = items
			return nil
		}
	}
	p2a := []byte{txscript.OP_1, txscript.OP_DATA_2, 0x4e, 0x73}
	v2 := append([]byte{txscript.OP_2, txscript.OP_DATA_32}, h[:]...)
	v16 := append([]byte{txscript.OP_16, txscript.OP_DATA_20}, h[:20]...)
	return []spendCase{
		// S1: an OP_TRUE redeem script's P2SH is a candidate, and passes.
		s.spend("OP_DROP OP_TRUE spent with OP_1 pushed", []byte{txscript.OP_DROP, txscript.OP_TRUE}, InputP2SH, sigOne),
		s.spend("SHA-256 puzzle of 0x51", puzzle, InputP2SH, sigOne),
		s.spend("OP_2DROP OP_TRUE signed as P2PKH", []byte{txscript.OP_2DROP, txscript.OP_TRUE}, InputP2PKH, signP2PKH),
		s.spend("OP_TRUE signed as P2PKH", []byte{txscript.OP_TRUE}, InputP2PKH, signP2PKH),
		// Witness versions 2 to 16, and version 1 programs of other
		// lengths than 32 (P2A), are spent by any witness.
		s.spend("witness v2 signed as P2WPKH", v2, InputP2WPKH, signP2WPKH),
		s.spend("witness v16 with a witness script", v16, InputP2WSH, witnessOf([]byte{1}, one)),
		s.spend("P2A with two items", p2a, InputP2WSH, witnessOf(nil, one)),
		s.spend("P2A with a taproot control block", p2a, InputP2TRScriptPath,
			witnessOf(one, append([]byte{byte(txscript.BaseLeafVersion)}, schnorr.SerializePubKey(k1.PubKey())...))),
	}
}

// without returns scripts with every copy of drop left out.
func without(scripts [][]byte, drop []byte) [][]byte {
	return slices.DeleteFunc(slices.Clone(scripts), func(s []byte) bool { return bytes.Equal(s, drop) })
}

// TestCheckBasicEveryType: in a block of every spend, the honest filter
// (as this package and btcutil build it, byte for byte) is not
// contradicted and fits every input's shape. A filter leaving out what one
// input spends is proven false, naming that input, exactly when
// consensus fixes the script (P2SH around a witness program); when the
// input shows it only if the spent output was standard, the filter is not
// contradicted but the input is listed in IfStandard; when the input
// shows nothing, neither. A filter of more items than the block allows
// (its distinct output scripts and those consensus fixes, and one for
// every other input) is proven false too; one of as many is not.
func TestCheckBasicEveryType(t *testing.T) {
	cases := everySpend(t)
	block, prevs := spendBlock(cases)
	honest, err := BuildBasic(block, prevs)
	if err != nil {
		t.Fatal(err)
	}
	ref, err := builder.BuildBasicFilter(block, prevs)
	if err != nil {
		t.Fatal(err)
	}
	if refBytes, _ := ref.NBytes(); !bytes.Equal(refBytes, honest.NBytes()) {
		t.Fatalf("BuildBasic differs from btcutil's builder on the block of every spend")
	}
	check := CheckBasic(block, honest)
	if check.Contradiction != nil || check.NoProof != nil || len(check.IfStandard) != 0 {
		t.Fatalf("the honest filter: contradicted %v, no proof %v, not fitting %v", check.Contradiction, check.NoProof, check.IfStandard)
	}
	hash := block.BlockHash()
	key := BasicKey(&hash)
	for i, c := range cases {
		if check.Inputs[c.want] == 0 {
			t.Errorf("%s: no input counted as %v: %v", c.name, c.want, check.Inputs)
		}
		forged, err := BuildBasic(block, without(prevs, c.prev))
		if err != nil {
			t.Fatal(err)
		}
		res := CheckBasic(block, forged)
		got := res.Contradiction
		_, cands := SpentScripts(c.tx, 0)
		fp := forged.MatchAny(key, cands)
		listed := slices.ContainsFunc(res.IfStandard, func(m StandardMiss) bool { return m.Tx == i+1 && m.Index == 0 })
		verdict := "undecided"
		switch {
		case c.want.Certain():
			verdict = "proof"
			if !fp && (got == nil || got.Kind != MissingSpent || got.Tx != i+1 || got.Index != 0) {
				t.Errorf("%s: the filter without %x: %v, want the input %d:0 named", c.name, c.prev, got, i+1)
			}
		case got != nil:
			t.Errorf("%s: consensus does not fix what a %v input spends, yet the filter without its script is contradicted: %v", c.name, c.want, got)
		case c.want.Reveals():
			verdict = "favoured if standard"
			if !fp && !listed {
				t.Errorf("%s: the filter without %x: IfStandard %v, want the input %d:0 listed", c.name, c.prev, res.IfStandard, i+1)
			}
		case listed:
			t.Errorf("%s: shows nothing, yet listed: %v", c.name, res.IfStandard)
		}
		t.Logf("%-50s %-22v %s", c.name, c.want, verdict)
	}
	// The most items the block allows: its distinct output scripts and
	// those consensus fixes, and one for every other input.
	fixed := map[string]bool{}
	for _, tx := range block.Transactions {
		for _, o := range tx.TxOut {
			if len(o.PkScript) > 0 && o.PkScript[0] != txscript.OP_RETURN {
				fixed[string(o.PkScript)] = true
			}
		}
	}
	most := 0
	for _, c := range cases {
		if c.want.Certain() {
			fixed[string(c.prev)] = true
		} else {
			most++
		}
	}
	most += len(fixed)
	extra := slices.Clone(prevs)
	for i := 0; i <= most-int(honest.N()); i++ {
		f, err := BuildBasic(block, extra)
		if err != nil {
			t.Fatal(err)
		}
		got := CheckBasic(block, f).Contradiction
		if over := int(f.N()) > most; over != (got != nil) || over && got.Kind != TooMany {
			t.Errorf("a filter of %d items, where the block allows %d: %v", f.N(), most, got)
		}
		extra = append(extra, []byte{txscript.OP_RETURN + 1, byte(i)})
	}
}

// TestCheckBasicOutputs: a filter that leaves out one output script (of
// the coinbase, of a spending transaction) is proven false and the output
// named; OP_RETURN and empty scripts are not needed; one that does not
// decode is contradicted as Undecodable, wrapping the decoder's error.
func TestCheckBasicOutputs(t *testing.T) {
	cases := everySpend(t)[:3]
	block, prevs := spendBlock(cases)
	block.Transactions[2].AddTxOut(wire.NewTxOut(0, nil))
	commitBlock(block)
	var outs [][]byte
	for _, tx := range block.Transactions {
		for _, o := range tx.TxOut {
			if len(o.PkScript) > 0 && o.PkScript[0] != txscript.OP_RETURN {
				outs = append(outs, o.PkScript)
			}
		}
	}
	hash := block.BlockHash()
	key := BasicKey(&hash)
	for i, o := range outs {
		f, err := Build(key, BasicP, BasicM, append(without(outs, o), prevs...))
		if err != nil {
			t.Fatal(err)
		}
		got := CheckBasic(block, f).Contradiction
		if f.Match(key, o) {
			continue // a false positive hides it
		}
		if got == nil || got.Kind != MissingOutput || !bytes.Equal(got.Scripts[0], o) {
			t.Errorf("output %d left out: %v", i, got)
		}
	}
	res := CheckBasicBytes(block, []byte{0x05, 0x01})
	if c := res.Contradiction; c == nil || c.Kind != Undecodable || !errors.Is(c, ErrNTooLarge) {
		t.Errorf("an undecodable filter: %v", res.Contradiction)
	}
}

// TestCheckBasicVectors is the differential test on real blocks: the BIP
// 158 vectors carry the scripts each block's inputs spend. Every filter
// btcutil's builder makes of them, and every filter of the vectors, is
// not contradicted and fits every input; for every input that Reveals,
// the script it spends is among its candidates; a filter btcutil builds
// without an output script is proven false, and one without the script
// an input spends is proven false if consensus fixes it, else has the
// input listed in IfStandard (unless a false positive hides the script).
// The share of each is logged.
func TestCheckBasicVectors(t *testing.T) {
	proven, favoured, inputs := 0, 0, 0
	for _, v := range loadVectors(t) {
		for what, data := range map[string][]byte{"the vector's filter": v.Filter, "btcutil's filter": nil} {
			if data == nil {
				ref, err := builder.BuildBasicFilter(v.Block, v.PrevScripts)
				if err != nil {
					t.Fatal(err)
				}
				data, _ = ref.NBytes()
			}
			if res := CheckBasicBytes(v.Block, data); res.Contradiction != nil || res.NoProof != nil || len(res.IfStandard) != 0 {
				t.Errorf("height %d (%s): %s: contradicted %v, no proof %v, not fitting %v", v.Height, v.Notes, what, res.Contradiction, res.NoProof, res.IfStandard)
			}
		}
		type input struct {
			tx     *wire.MsgTx
			ti, in int
		}
		var spent []input
		for ti, tx := range v.Block.Transactions {
			for in := range tx.TxIn {
				if ti > 0 {
					spent = append(spent, input{tx, ti, in})
				}
			}
		}
		if len(spent) != len(v.PrevScripts) {
			t.Fatalf("height %d: %d inputs, %d previous output scripts", v.Height, len(spent), len(v.PrevScripts))
		}
		hash := v.Block.BlockHash()
		key := builder.DeriveKey(&hash)
		forge := func(elems [][]byte) *Filter {
			f, err := builder.WithKeyPM(key, BasicP, BasicM).AddEntries(elems).Build()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := f.NBytes()
			d, err := DecodeBasic(b)
			if err != nil {
				t.Fatal(err)
			}
			return d
		}
		var outs [][]byte
		for _, tx := range v.Block.Transactions {
			for _, o := range tx.TxOut {
				if len(o.PkScript) > 0 && o.PkScript[0] != txscript.OP_RETURN {
					outs = append(outs, o.PkScript)
				}
			}
		}
		all := append(slices.Clone(outs), v.PrevScripts...)
		for i, in := range spent {
			typ, cands := SpentScripts(in.tx, in.in)
			inputs++
			if len(cands) == 0 {
				continue
			}
			p := v.PrevScripts[i]
			if !slices.ContainsFunc(cands, func(s []byte) bool { return bytes.Equal(s, p) }) {
				t.Errorf("height %d input %d (%v): spends %x, not among %x", v.Height, i, typ, p, cands)
				continue
			}
			if typ.Certain() {
				proven++
			} else {
				favoured++
			}
			if slices.ContainsFunc(outs, func(o []byte) bool { return bytes.Equal(o, p) }) {
				continue // an output too: the outputs' check below
			}
			f := forge(without(all, p))
			res := CheckBasic(v.Block, f)
			listed := slices.ContainsFunc(res.IfStandard, func(m StandardMiss) bool { return m.Tx == in.ti && m.Index == in.in })
			switch {
			case f.MatchAny(BasicKey(&hash), cands):
			case typ.Certain() && res.Contradiction == nil:
				t.Errorf("height %d input %d (%v): the filter without %x is not contradicted", v.Height, i, typ, p)
			case !typ.Certain() && (res.Contradiction != nil || !listed):
				t.Errorf("height %d input %d (%v): the filter without %x: %v, IfStandard %v, want the input listed, no contradiction", v.Height, i, typ, p, res.Contradiction, res.IfStandard)
			}
		}
		for _, o := range outs {
			f := forge(without(all, o))
			if !f.Match(BasicKey(&hash), o) && CheckBasic(v.Block, f).Contradiction == nil {
				t.Errorf("height %d: the filter without output script %x is not contradicted", v.Height, o)
			}
		}
	}
	t.Logf("BIP 158 vectors: of %d inputs, consensus fixes the script %d spend; %d show it if the output they spend was standard", inputs, proven, favoured)
	if favoured == 0 {
		t.Fatal("no input of the vectors shows its script: the test proves nothing")
	}
}

// TestCheckBasicTooFew: a block whose coinbase pays OP_1 and OP_2, with
// the nonce 340190, under whose key the two scripts hash to the same
// value of a one-item filter (found by a search over nonces): the filter
// of OP_1 alone matches both, and only its count proves it false.
func TestCheckBasicTooFew(t *testing.T) {
	block, _ := spendBlock(nil)
	cb := block.Transactions[0]
	one, two := []byte{txscript.OP_1}, []byte{txscript.OP_2}
	cb.TxOut = []*wire.TxOut{wire.NewTxOut(1, one), wire.NewTxOut(1, two)}
	block.Header.MerkleRoot, block.Header.Nonce = cb.TxHash(), 340190
	hash := block.BlockHash()
	key := BasicKey(&hash)
	f, err := Build(key, BasicP, BasicM, [][]byte{one})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Match(key, two) {
		t.Fatal("the nonce no longer makes OP_2 collide with OP_1: the test proves nothing")
	}
	got := CheckBasic(block, f).Contradiction
	if got == nil || got.Kind != TooFew || got.N != 1 || got.Min != 2 {
		t.Fatalf("a one-item filter of a block of two output scripts: %v, want TooFew", got)
	}
	t.Log(got)
}

// TestCheckBasicNonStandardSpends: spends of outputs of no standard type,
// shaped as standard spends (the attacks S1 and S2: a liar's filter swaps
// the true script for the one the shape suggests, and the honest filter
// was proven false): the honest filter of their block is never
// contradicted, alone or all in one block. The shape is evidence only:
// CheckBasic lists the input among those the filter does not fit if the
// spent output was standard, and a filter holding the shape's script in
// place of the true one is not contradicted either.
func TestCheckBasicNonStandardSpends(t *testing.T) {
	cases := nonStandardSpends(t)
	for _, c := range append(cases, spendCase{name: "all in one block"}) {
		in := []spendCase{c}
		if c.tx == nil {
			in = cases
		}
		block, prevs := spendBlock(in)
		honest, err := BuildBasic(block, prevs)
		if err != nil {
			t.Fatal(err)
		}
		check := CheckBasic(block, honest)
		if check.Contradiction != nil {
			t.Errorf("%s: the honest filter is proven false: %v", c.name, check.Contradiction)
		}
		if c.tx == nil {
			continue
		}
		if typ, _ := SpentScripts(c.tx, 0); typ != c.want {
			t.Errorf("%s: type %v, want %v", c.name, typ, c.want)
		}
		_, cands := SpentScripts(c.tx, 0)
		if len(cands) == 0 {
			t.Errorf("%s: no candidate passes: the case shows nothing", c.name)
			continue
		}
		if len(check.IfStandard) != 1 || check.IfStandard[0].Tx != 1 || check.IfStandard[0].Index != 0 {
			t.Errorf("%s: the honest filter, which does not fit the input's shape: IfStandard %v, want input 1:0", c.name, check.IfStandard)
		}
		swapped, err := BuildBasic(block, [][]byte{cands[0]})
		if err != nil {
			t.Fatal(err)
		}
		if got := CheckBasic(block, swapped); got.Contradiction != nil || len(got.IfStandard) != 0 {
			t.Errorf("%s: the filter of the shape's script %x: %v, IfStandard %v", c.name, cands[0], got.Contradiction, got.IfStandard)
		}
	}
}

// TestCheckBasicInBlockSpends: a transaction spending an output of an
// earlier one in the block spends a script the block shows, which adds
// no item: a filter of one item more than the honest one is proven false
// (TooMany), where without the spend read it would fit the bound. A
// spend of the coinbase's txid is not read so (its outputs cannot be
// spent in their block; the txid may be an older coinbase's).
func TestCheckBasicInBlockSpends(t *testing.T) {
	s := &spender{t: t, value: 100_000}
	k1 := testKey("one")
	p2pkh := payToPubKeyHash(k1.PubKey().SerializeCompressed())
	anyone := []byte{txscript.OP_TRUE}
	first := s.spend("pays OP_TRUE", p2pkh, InputP2PKH, func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		tx.TxOut[0].PkScript = anyone
		sig, err := txscript.SignatureScript(tx, 0, p2pkh, txscript.SigHashAll, k1, true)
		tx.TxIn[0].SignatureScript = sig
		return err
	})
	second := wire.NewMsgTx(2)
	second.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: first.tx.TxHash(), Index: 0}, nil, nil))
	second.AddTxOut(wire.NewTxOut(1000, payToWitness(make([]byte, 32))))
	block, prevs := spendBlock([]spendCase{first, {name: "spends it", prev: anyone, tx: second}})
	honest, err := BuildBasic(block, prevs)
	if err != nil {
		t.Fatal(err)
	}
	if got := CheckBasic(block, honest); got.Contradiction != nil || got.NoProof != nil {
		t.Fatalf("the honest filter: %v, %v", got.Contradiction, got.NoProof)
	}
	one, err := BuildBasic(block, append(slices.Clone(prevs), []byte("no input spends this")))
	if err != nil {
		t.Fatal(err)
	}
	if got := CheckBasic(block, one).Contradiction; got == nil || got.Kind != TooMany || got.Max != int(honest.N()) {
		t.Errorf("a filter of %d items, the honest one %d: %v, want TooMany", one.N(), honest.N(), got)
	}
	// The same spend of the coinbase's txid: it may spend anything.
	second.TxIn[0].PreviousOutPoint = wire.OutPoint{Hash: block.Transactions[0].TxHash(), Index: 0}
	commitBlock(block)
	two, err := BuildBasic(block, [][]byte{p2pkh, []byte("an older coinbase's output")})
	if err != nil {
		t.Fatal(err)
	}
	if got := CheckBasic(block, two); got.Contradiction != nil || got.NoProof != nil {
		t.Errorf("a spend of the coinbase's txid read as a spend in the block: %v, %v", got.Contradiction, got.NoProof)
	}
}

// TestCheckBasicNoProof: a block whose transactions are not certainly
// those its header commits to proves nothing, not even against a filter
// that leaves out every script: its merkle root another, its last
// transaction twice (CVE-2012-2459, the same merkle root), a witness a
// peer added to an input its header does not commit to (which would make
// an input that pushes a witness program "prove" that it spends P2SH of
// it), a first transaction that is no coinbase, and, even committed, a
// coinbase of 64 bytes (CVE-2017-12842). A 64-byte transaction after a
// coinbase of another size is no ambiguity: the block proves.
func TestCheckBasicNoProof(t *testing.T) {
	s := &spender{t: t, value: 100_000}
	program := payToWitness(make([]byte, 20))
	// A valid spend of OP_DROP OP_TRUE pushing a witness program.
	pushes := s.spend("pushes a witness program", []byte{txscript.OP_DROP, txscript.OP_TRUE}, InputP2SH,
		func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
			tx.TxIn[0].SignatureScript = push(t, program)
			return nil
		})
	p2a := []byte{txscript.OP_1, txscript.OP_DATA_2, 0x4e, 0x73}
	tiny := s.spend("64 bytes", p2a, InputHidden, func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ txscript.PrevOutputFetcher) error {
		tx.TxOut[0].PkScript = p2a
		return nil
	})
	if n := tiny.tx.SerializeSizeStripped(); n != 64 {
		t.Fatalf("the transaction is %d bytes, not 64", n)
	}
	empty, err := DecodeBasic([]byte{0})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name   string
		cases  []spendCase
		mutate func(b *wire.MsgBlock)
		want   error
	}{
		{"another merkle root", []spendCase{pushes}, func(b *wire.MsgBlock) { b.Header.MerkleRoot[0] ^= 1 }, ErrUncommittedBlock},
		{"a transaction twice", []spendCase{pushes, everySpend(t)[0]}, func(b *wire.MsgBlock) { b.Transactions = append(b.Transactions, b.Transactions[len(b.Transactions)-1]) }, ErrUncommittedBlock},
		{"a witness added", []spendCase{pushes}, func(b *wire.MsgBlock) {
			b.Transactions[1] = b.Transactions[1].Copy()
			b.Transactions[1].TxIn[0].Witness = wire.TxWitness{{1}}
		}, ErrUncommittedBlock},
		{"no coinbase first", []spendCase{pushes}, func(b *wire.MsgBlock) {
			b.Transactions = b.Transactions[1:]
			commitBlock(b)
		}, ErrUncommittedBlock},
		{"a 64-byte coinbase", []spendCase{pushes}, func(b *wire.MsgBlock) {
			cb := wire.NewMsgTx(1)
			cb.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: wire.MaxPrevOutIndex}, []byte{0x51, 0x51}, nil))
			cb.AddTxOut(wire.NewTxOut(5000, []byte{txscript.OP_TRUE, txscript.OP_TRUE}))
			if n := cb.SerializeSizeStripped(); n != 64 {
				t.Fatalf("the coinbase is %d bytes, not 64", n)
			}
			b.Transactions[0] = cb
			commitBlock(b)
		}, ErrAmbiguousBlock},
	} {
		block, prevs := spendBlock(tt.cases)
		root := block.Header.MerkleRoot
		honest, err := BuildBasic(block, prevs)
		if err != nil {
			t.Fatal(err)
		}
		tt.mutate(block)
		if tt.name == "a transaction twice" && blockchain.CalcMerkleRoot(btcutil.NewBlock(block).Transactions(), false) != root {
			t.Fatalf("%s: the merkle root changed: the test proves nothing", tt.name)
		}
		for _, f := range []*Filter{honest, empty} {
			res := CheckBasic(block, f)
			if res.Contradiction != nil || len(res.IfStandard) != 0 || !errors.Is(res.NoProof, tt.want) {
				t.Errorf("%s, a filter of %d items: contradicted %v, not fitting %v, no proof %v, want %v", tt.name, f.N(), res.Contradiction, res.IfStandard, res.NoProof, tt.want)
			}
		}
	}

	block, prevs := spendBlock([]spendCase{pushes, tiny})
	honest, err := BuildBasic(block, prevs)
	if err != nil {
		t.Fatal(err)
	}
	if res := CheckBasic(block, honest); res.NoProof != nil || res.Contradiction != nil {
		t.Errorf("a 64-byte transaction after a coinbase, the honest filter: no proof %v, contradicted %v", res.NoProof, res.Contradiction)
	}
	if res := CheckBasic(block, empty); res.NoProof != nil || res.Contradiction == nil {
		t.Errorf("a 64-byte transaction after a coinbase, an empty filter: no proof %v, contradicted %v; want a contradiction", res.NoProof, res.Contradiction)
	}
}
