package gcs

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"slices"
	"testing"

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

// spendBlock returns a block of a coinbase and the cases' transactions,
// and the scripts they spend in the order of their inputs.
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
	return block, prevs
}

// without returns scripts with every copy of drop left out.
func without(scripts [][]byte, drop []byte) [][]byte {
	return slices.DeleteFunc(slices.Clone(scripts), func(s []byte) bool { return bytes.Equal(s, drop) })
}

// TestCheckBasicEveryType: in a block of every spend, the honest filter
// (as this package and btcutil build it, byte for byte) is not
// contradicted; a filter leaving out what one input spends is proven
// false, naming that input, exactly when the input Reveals; a filter
// with more items than the undecided inputs allow is proven false too.
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
	if check.Contradiction != nil {
		t.Fatalf("the honest filter is contradicted: %v", check.Contradiction)
	}
	for i, c := range cases {
		if check.Inputs[c.want] == 0 {
			t.Errorf("%s: no input counted as %v: %v", c.name, c.want, check.Inputs)
		}
		forged, err := BuildBasic(block, without(prevs, c.prev))
		if err != nil {
			t.Fatal(err)
		}
		got := CheckBasic(block, forged).Contradiction
		key := BasicKey(func() *chainhash.Hash { h := block.BlockHash(); return &h }())
		_, cands := SpentScripts(c.tx, 0)
		fp := forged.MatchAny(key, cands)
		switch {
		case c.want.Reveals() && !fp && (got == nil || got.Kind != MissingSpent || got.Tx != i+1 || got.Index != 0):
			t.Errorf("%s: the filter without %x: %v, want the input %d:0 named", c.name, c.prev, got, i+1)
		case !c.want.Reveals() && got != nil:
			t.Errorf("%s: reveals nothing, yet the filter without its script is contradicted: %v", c.name, got)
		}
		t.Logf("%-50s %-22v decided by the block: %v", c.name, c.want, got != nil)
	}
	extra := slices.Clone(prevs)
	for i := 0; i <= check.Undecided(); i++ {
		extra = append(extra, []byte{txscript.OP_RETURN + 1, byte(i)})
	}
	over, err := BuildBasic(block, extra)
	if err != nil {
		t.Fatal(err)
	}
	if got := CheckBasic(block, over).Contradiction; got == nil || got.Kind != TooMany {
		t.Errorf("a filter of %d items, %d more than the undecided inputs allow: %v, want TooMany", over.N(), 1, got)
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
// not contradicted; for every input that Reveals, the script it spends
// is among its candidates; and a filter btcutil builds without that
// script (or without an output script) is proven false unless a false
// positive hides the script.
func TestCheckBasicVectors(t *testing.T) {
	decided, inputs := 0, 0
	for _, v := range loadVectors(t) {
		if res := CheckBasicBytes(v.Block, v.Filter); res.Contradiction != nil {
			t.Errorf("height %d (%s): the vector's filter is contradicted: %v", v.Height, v.Notes, res.Contradiction)
		}
		ref, err := builder.BuildBasicFilter(v.Block, v.PrevScripts)
		if err != nil {
			t.Fatal(err)
		}
		refBytes, _ := ref.NBytes()
		if res := CheckBasicBytes(v.Block, refBytes); res.Contradiction != nil {
			t.Errorf("height %d: btcutil's filter is contradicted: %v", v.Height, res.Contradiction)
		}
		type input struct {
			tx *wire.MsgTx
			i  int
		}
		var spent []input
		for _, tx := range v.Block.Transactions[min(1, len(v.Block.Transactions)):] {
			for i := range tx.TxIn {
				spent = append(spent, input{tx, i})
			}
		}
		if len(spent) != len(v.PrevScripts) {
			t.Fatalf("height %d: %d inputs, %d previous output scripts", v.Height, len(spent), len(v.PrevScripts))
		}
		hash := v.Block.BlockHash()
		key := builder.DeriveKey(&hash)
		forge := func(elems [][]byte) []byte {
			f, err := builder.WithKeyPM(key, BasicP, BasicM).AddEntries(elems).Build()
			if err != nil {
				t.Fatal(err)
			}
			b, _ := f.NBytes()
			return b
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
			typ, cands := SpentScripts(in.tx, in.i)
			inputs++
			if len(cands) == 0 {
				continue
			}
			decided++
			p := v.PrevScripts[i]
			if !slices.ContainsFunc(cands, func(s []byte) bool { return bytes.Equal(s, p) }) {
				t.Errorf("height %d input %d (%v): spends %x, not among %x", v.Height, i, typ, p, cands)
				continue
			}
			data := forge(without(all, p))
			f, _ := DecodeBasic(data)
			res := CheckBasic(v.Block, f)
			if !f.MatchAny(BasicKey(&hash), cands) && res.Contradiction == nil {
				t.Errorf("height %d input %d (%v): the filter without %x is not contradicted", v.Height, i, typ, p)
			}
		}
		for _, o := range outs {
			data := forge(without(all, o))
			f, _ := DecodeBasic(data)
			if !f.Match(BasicKey(&hash), o) && CheckBasic(v.Block, f).Contradiction == nil {
				t.Errorf("height %d: the filter without output script %x is not contradicted", v.Height, o)
			}
		}
	}
	t.Logf("BIP 158 vectors: %d of %d inputs reveal the script they spend", decided, inputs)
	if decided == 0 {
		t.Fatal("no input of the vectors was decided: the test proves nothing")
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
