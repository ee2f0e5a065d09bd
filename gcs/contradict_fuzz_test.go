package gcs

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"testing"

	"github.com/btcsuite/btcd/btcec/v2"
	"github.com/btcsuite/btcd/btcec/v2/schnorr"
	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
)

// FuzzCheckBasic feeds CheckBasic untrusted blocks and filters, and
// blocks of random valid spends.
//
// On a block read from raw, committed to by its header (commitBlock) so
// that its contents can prove something: CheckBasic must never panic; a
// filter is Undecodable exactly when DecodeBasic refuses it; a
// contradiction names scripts the filter does not hold; every input but
// the coinbase's is counted once. And it must never contradict a filter
// of the block's outputs and, for each input, the script consensus fixes
// (P2SH of the witness program a P2SH-wrapped input pushes, the output
// of the block an input spends) or else any script at all, empty
// included: what an honest node could have built, whatever the outputs
// spent were.
//
// From spends, a block of transactions each spending one output, of a
// standard type or not (an output anyone can spend, a hash puzzle,
// witness versions 1 to 16, a P2SH or P2WSH of random script), with a
// signature script and witness signed or shaped as standard spends or
// random, sometimes spending the previous transaction's output in the
// block: only spends btcd's script engine accepts under the consensus
// rules are kept. The honest filter BuildBasic makes of them is never
// contradicted, nor is the block refused but for a 64-byte transaction;
// when every spent output is of a standard type, it fits every input
// (no IfStandard); and a filter that leaves out what a P2SH-wrapped
// witness input spends is contradicted, unless a false positive hides it.
func FuzzCheckBasic(f *testing.F) {
	for i, v := range loadVectors(f) {
		var buf bytes.Buffer
		if err := v.Block.Serialize(&buf); err != nil {
			f.Fatal(err)
		}
		f.Add(buf.Bytes(), v.Filter, uint8(0), []byte{byte(i), 0x11, 0x93})
	}
	block, prevs := spendBlock(append(everySpend(f), nonStandardSpends(f)...))
	honest, err := BuildBasic(block, prevs)
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	if err := block.Serialize(&buf); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes(), honest.NBytes(), uint8(1), []byte{})
	// Seeds of spends: each kind of spent output, with each shape.
	for k := range byte(numFuzzOutputs) {
		for shape := range byte(8) {
			f.Add([]byte{}, []byte{0}, k, []byte{3, k, shape * 2, 1, k + 1, shape*2 + 1, 0x80, k + 2, shape * 2})
		}
	}
	g := newFuzzSpender()
	f.Fuzz(func(t *testing.T, raw, filter []byte, pick uint8, spends []byte) {
		if len(raw) <= 200_000 {
			var block wire.MsgBlock
			if err := block.Deserialize(bytes.NewReader(raw)); err == nil {
				commitBlock(&block)
				checkArbitrary(t, &block, filter, pick)
			}
		}
		g.check(t, spends)
	})
}

// checkArbitrary checks CheckBasic on an arbitrary block (see
// FuzzCheckBasic).
func checkArbitrary(t *testing.T, block *wire.MsgBlock, filter []byte, pick uint8) {
	res := CheckBasicBytes(block, filter)
	fl, err := DecodeBasic(filter)
	if (err != nil) != (res.Contradiction != nil && res.Contradiction.Kind == Undecodable) {
		t.Fatalf("DecodeBasic: %v; CheckBasicBytes: %v", err, res.Contradiction)
	}
	if err == nil {
		checkContradiction(t, block, fl, res)
	}
	// An honest node's filter, whatever the outputs spent: never
	// contradicted.
	txids := map[chainhash.Hash]int{}
	for i, tx := range block.Transactions {
		txids[tx.TxHash()] = i
	}
	var chosen [][]byte
	for i, tx := range block.Transactions {
		if i == 0 {
			continue
		}
		for j, in := range tx.TxIn {
			op := in.PreviousOutPoint
			if k, ok := txids[op.Hash]; ok && k > 0 && int(op.Index) < len(block.Transactions[k].TxOut) {
				if s := block.Transactions[k].TxOut[op.Index].PkScript; len(s) == 0 || s[0] != opReturn {
					chosen = append(chosen, s)
					continue
				}
			}
			typ, cands := SpentScripts(tx, j)
			if typ.Certain() {
				chosen = append(chosen, cands[0])
				continue
			}
			if len(cands) > 0 && pick%2 == 0 {
				chosen = append(chosen, cands[int(pick/2)%len(cands)])
				continue
			}
			sum := sha256.Sum256(append([]byte{pick}, in.SignatureScript...))
			chosen = append(chosen, sum[:int(pick)%33])
		}
	}
	built, err := BuildBasic(block, chosen)
	if err != nil {
		return // more items than a filter holds
	}
	got := CheckBasic(block, built)
	if got.Contradiction != nil {
		t.Fatalf("the filter of the block's outputs, the scripts consensus fixes and any others is contradicted: %v", got.Contradiction)
	}
	checkContradiction(t, block, built, got)
}

// checkContradiction checks what CheckBasic said of f: the inputs
// counted, and a contradiction's scripts not in the filter.
func checkContradiction(t *testing.T, block *wire.MsgBlock, f *Filter, res BasicCheck) {
	t.Helper()
	inputs := 0
	for i, tx := range block.Transactions {
		if i > 0 {
			inputs += len(tx.TxIn)
		}
	}
	counted := 0
	for _, n := range res.Inputs {
		counted += n
	}
	if counted != inputs {
		t.Fatalf("%d inputs counted, the block has %d", counted, inputs)
	}
	if len(res.IfStandard) > MaxStandardMisses {
		t.Fatalf("%d inputs in IfStandard", len(res.IfStandard))
	}
	c := res.Contradiction
	if c == nil {
		return
	}
	if res.NoProof != nil || len(res.IfStandard) > 0 {
		t.Fatalf("%v, yet no proof %v, not fitting %v", c, res.NoProof, res.IfStandard)
	}
	hash := block.BlockHash()
	key := BasicKey(&hash)
	switch c.Kind {
	case MissingOutput, MissingSpent:
		if len(c.Scripts) == 0 || f.MatchAny(key, c.Scripts) {
			t.Fatalf("%v: names %x, which the filter holds", c, c.Scripts)
		}
	case TooFew, TooMany:
		if int(f.N()) >= c.Min && int(f.N()) <= c.Max {
			t.Fatalf("%v: N %d is within %d..%d", c, f.N(), c.Min, c.Max)
		}
	default:
		t.Fatalf("contradiction of kind %d on a filter that decodes", c.Kind)
	}
	if c.Error() == "" {
		t.Fatal("a contradiction without a message")
	}
}

// The outputs the fuzzer spends: those below fuzzBare are of standard
// types.
const (
	fuzzP2PKH = iota
	fuzzP2PK
	fuzzP2WPKH
	fuzzP2SHP2WPKH
	fuzzP2SH // of a random redeem script
	fuzzP2WSH
	fuzzP2SHP2WSH
	fuzzP2TRKeyPath
	fuzzP2TRScriptPath
	fuzzBare       // a script that accepts many stacks, or random bytes
	fuzzWitnessAny // witness version 1 not 32 bytes long, 2 to 16
	fuzzEmpty
	numFuzzOutputs
)

// fuzzSpender makes blocks of valid spends from fuzz bytes, with two keys
// whose public keys and key-path taproot scripts it computes once.
type fuzzSpender struct {
	keys [2]fuzzKey
}

type fuzzKey struct {
	priv    *btcec.PrivateKey
	pub     *btcec.PublicKey
	keyPath []byte
}

func newFuzzSpender() *fuzzSpender {
	g := &fuzzSpender{}
	for i, seed := range []string{"fuzz one", "fuzz two"} {
		priv := testKey(seed)
		pub := priv.PubKey()
		g.keys[i] = fuzzKey{priv: priv, pub: pub,
			keyPath: append([]byte{txscript.OP_1, txscript.OP_DATA_32}, schnorr.SerializePubKey(txscript.ComputeTaprootKeyNoScript(pub))...)}
	}
	return g
}

// fuzzBytes reads fuzz input, zeros once it is used up.
type fuzzBytes struct {
	b []byte
}

func (r *fuzzBytes) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

// bytes returns up to n bytes, as many as are left.
func (r *fuzzBytes) bytes(n int) []byte {
	n = min(n, len(r.b))
	out := r.b[:n:n]
	r.b = r.b[n:]
	return out
}

// script returns a short script: one of the acceptors (scripts that
// succeed on many stacks) or random bytes.
func (r *fuzzBytes) script() []byte {
	one := []byte{txscript.OP_TRUE}
	switch c := r.byte(); c % 8 {
	case 0:
		return one
	case 1:
		return []byte{txscript.OP_DROP, txscript.OP_TRUE}
	case 2:
		return []byte{txscript.OP_2DROP, txscript.OP_TRUE}
	case 3:
		return []byte{txscript.OP_DEPTH}
	case 4:
		h := sha256.Sum256(r.bytes(int(c / 8 % 4)))
		return append(append([]byte{txscript.OP_SHA256, txscript.OP_DATA_32}, h[:]...), txscript.OP_EQUAL)
	case 5:
		h := btcutil.Hash160(r.bytes(int(c / 8 % 4)))
		return append(append([]byte{txscript.OP_HASH160, txscript.OP_DATA_20}, h...), txscript.OP_EQUAL)
	default:
		return r.bytes(int(c / 8 % 12))
	}
}

// items returns a few random stack items.
func (r *fuzzBytes) items() [][]byte {
	c := r.byte()
	out := make([][]byte, c%4)
	for i := range out {
		if c&0x80 != 0 {
			out[i] = []byte{txscript.OP_TRUE}
			continue
		}
		out[i] = r.bytes(int(r.byte() % 40))
	}
	return out
}

// output is an output to spend: its script, and how a spend of it signs.
type output struct {
	script []byte
	sign   func(tx *wire.MsgTx, hashes *txscript.TxSigHashes, value int64) error
}

// output reads the next output to spend, of a standard type or not, and
// the shape of its spend.
func (g *fuzzSpender) output(r *fuzzBytes) (output, bool) {
	kind, shape := int(r.byte())%numFuzzOutputs, r.byte()
	o := g.outputOf(r, kind, shape)
	return o, kind < fuzzBare
}

// outputOf returns an output of the kind and the spend of the shape.
func (g *fuzzSpender) outputOf(r *fuzzBytes, kind int, shape byte) output {
	k := g.keys[shape&1]
	key, pk := k.priv, k.pub.SerializeCompressed()
	p2pkh := payToPubKeyHash(pk)
	wpkh := payToWitness(btcutil.Hash160(pk))
	scriptSig := func(items ...[]byte) func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ int64) error {
		return func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ int64) error {
			b := txscript.NewScriptBuilder()
			for _, it := range items {
				b.AddData(it)
			}
			s, err := b.Script()
			tx.TxIn[0].SignatureScript = s
			return err
		}
	}
	witness := func(items ...[]byte) func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ int64) error {
		return func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ int64) error {
			tx.TxIn[0].Witness = items
			return nil
		}
	}
	signP2PKH := func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ int64) error {
		s, err := txscript.SignatureScript(tx, 0, p2pkh, txscript.SigHashAll, key, true)
		tx.TxIn[0].SignatureScript = s
		return err
	}
	signP2WPKH := func(tx *wire.MsgTx, hs *txscript.TxSigHashes, value int64) error {
		w, err := txscript.WitnessSignature(tx, hs, 0, value, wpkh, txscript.SigHashAll, key, true)
		tx.TxIn[0].Witness = w
		return err
	}
	leaf := r.script()
	ws := r.script()
	items := r.items()
	// A taproot output of two leaves, the first the leaf script, and its
	// control block (the curve arithmetic only when needed).
	var p2tr, control []byte
	if kind == fuzzP2TRScriptPath || kind >= fuzzBare && shape/2%8 == 6 {
		tree := txscript.AssembleTaprootScriptTree(txscript.NewBaseTapLeaf(leaf), txscript.NewBaseTapLeaf([]byte{txscript.OP_RETURN}))
		root := tree.RootNode.TapHash()
		p2tr = append([]byte{txscript.OP_1, txscript.OP_DATA_32}, schnorr.SerializePubKey(txscript.ComputeTaprootOutputKey(k.pub, root[:]))...)
		cb := tree.LeafMerkleProofs[0].ToControlBlock(k.pub)
		control, _ = cb.ToBytes()
	}
	// The shapes a spend of an output of no standard type takes.
	shapes := []func(*wire.MsgTx, *txscript.TxSigHashes, int64) error{
		signP2PKH, signP2WPKH, scriptSig(items...), witness(items...), scriptSig(append(items, leaf)...),
		witness(append(items, ws)...), witness(append(items, leaf, control)...), scriptSig([]byte{txscript.OP_TRUE}),
	}
	shaped := shapes[shape/2%8]
	switch kind {
	case fuzzP2PKH:
		return output{script: p2pkh, sign: signP2PKH}
	case fuzzP2PK:
		p2pk, _ := txscript.NewScriptBuilder().AddData(pk).AddOp(txscript.OP_CHECKSIG).Script()
		return output{script: p2pk, sign: func(tx *wire.MsgTx, _ *txscript.TxSigHashes, _ int64) error {
			sig, err := txscript.RawTxInSignature(tx, 0, p2pk, txscript.SigHashAll, key)
			if err == nil {
				tx.TxIn[0].SignatureScript, err = txscript.NewScriptBuilder().AddData(sig).Script()
			}
			return err
		}}
	case fuzzP2WPKH:
		return output{script: wpkh, sign: signP2WPKH}
	case fuzzP2SHP2WPKH:
		return output{script: payToScriptHash(wpkh), sign: func(tx *wire.MsgTx, hs *txscript.TxSigHashes, value int64) error {
			tx.TxIn[0].SignatureScript = append([]byte{byte(len(wpkh))}, wpkh...)
			return signP2WPKH(tx, hs, value)
		}}
	case fuzzP2SH:
		return output{script: payToScriptHash(leaf), sign: scriptSig(append(items, leaf)...)}
	case fuzzP2WSH:
		h := sha256.Sum256(ws)
		return output{script: payToWitness(h[:]), sign: witness(append(items, ws)...)}
	case fuzzP2SHP2WSH:
		h := sha256.Sum256(ws)
		program := payToWitness(h[:])
		return output{script: payToScriptHash(program), sign: func(tx *wire.MsgTx, hs *txscript.TxSigHashes, value int64) error {
			tx.TxIn[0].SignatureScript = append([]byte{byte(len(program))}, program...)
			tx.TxIn[0].Witness = append(items, ws)
			return nil
		}}
	case fuzzP2TRKeyPath:
		keyPath := k.keyPath
		return output{script: keyPath, sign: func(tx *wire.MsgTx, hs *txscript.TxSigHashes, value int64) error {
			w, err := txscript.TaprootWitnessSignature(tx, hs, 0, value, keyPath, txscript.SigHashDefault, key)
			tx.TxIn[0].Witness = w
			return err
		}}
	case fuzzP2TRScriptPath:
		return output{script: p2tr, sign: witness(append(items, leaf, control)...)}
	case fuzzBare:
		return output{script: ws, sign: shaped}
	case fuzzWitnessAny:
		version := txscript.OP_1 + shape%16
		program := r.bytes(2 + int(r.byte())%39)
		if len(program) < 2 {
			program = []byte{0x4e, 0x73} // P2A
		}
		if version == txscript.OP_1 && len(program) == 32 {
			program = program[:31]
		}
		return output{script: append([]byte{version, byte(len(program))}, program...), sign: shaped}
	}
	return output{script: nil, sign: scriptSig([]byte{txscript.OP_TRUE})}
}

// check builds a block of the valid spends data describes and checks
// CheckBasic on it (see FuzzCheckBasic).
func (g *fuzzSpender) check(t *testing.T, data []byte) {
	r := &fuzzBytes{b: data}
	n := 1 + int(r.byte())%6
	cb := wire.NewMsgTx(1)
	cb.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: wire.MaxPrevOutIndex}, []byte{0x51, 0x51}, nil))
	cb.AddTxOut(wire.NewTxOut(5000, payToPubKeyHash([]byte("miner"))))
	block := &wire.MsgBlock{Header: wire.BlockHeader{Version: 4, Bits: 0x207fffff}, Transactions: []*wire.MsgTx{cb}}
	var prevs [][]byte
	allStandard := true
	var last *wire.MsgTx // the last transaction kept, whose output 0 pays lastPays
	var lastPays output
	lastStandard := false
	wrapped := -1 // a transaction spending P2SH of a witness program
	for i := range n {
		spent, standard := g.output(r)
		op := wire.OutPoint{Hash: chainhash.DoubleHashH(append([]byte{byte(i)}, data...)), Index: uint32(i)}
		value := int64(1_000_000)
		if last != nil && r.byte()&1 == 1 {
			// Spend the output of the last transaction, in the block.
			spent, standard = lastPays, lastStandard
			op, value = wire.OutPoint{Hash: last.TxHash()}, last.TxOut[0].Value
		}
		pays, paysStandard := g.output(r)
		tx := wire.NewMsgTx(2)
		tx.AddTxIn(wire.NewTxIn(&op, nil, nil))
		tx.AddTxOut(wire.NewTxOut(value-1000, pays.script))
		fetch := txscript.NewCannedPrevOutputFetcher(spent.script, value)
		hashes := txscript.NewTxSigHashes(tx, fetch)
		if spent.sign(tx, hashes, value) != nil {
			continue
		}
		vm, err := txscript.NewEngine(spent.script, tx, 0, consensusFlags, nil, hashes, value, fetch)
		if err != nil || vm.Execute() != nil {
			continue // not a valid spend
		}
		block.Transactions = append(block.Transactions, tx)
		prevs = append(prevs, spent.script)
		allStandard = allStandard && standard
		if spentBy(tx.TxIn[0]).typ.Certain() {
			wrapped = len(block.Transactions) - 1
		}
		last, lastPays, lastStandard = tx, pays, paysStandard
	}
	if len(prevs) == 0 {
		return
	}
	commitBlock(block)
	honest, err := BuildBasic(block, prevs)
	if err != nil {
		t.Fatal(err)
	}
	res := CheckBasic(block, honest)
	if res.Contradiction != nil {
		t.Fatalf("the honest filter of valid spends of %x is contradicted: %v", prevs, res.Contradiction)
	}
	if res.NoProof != nil {
		if !errors.Is(res.NoProof, ErrAmbiguousBlock) {
			t.Fatalf("a block committed to: %v", res.NoProof)
		}
		return
	}
	if allStandard && len(res.IfStandard) > 0 {
		t.Fatalf("the honest filter of valid spends of standard outputs %x does not fit %v", prevs, res.IfStandard)
	}
	checkContradiction(t, block, honest, res)
	if wrapped < 0 {
		return
	}
	_, fixed := SpentScripts(block.Transactions[wrapped], 0)
	var left [][]byte
	for _, p := range prevs {
		if !bytes.Equal(p, fixed[0]) {
			left = append(left, p)
		}
	}
	forged, err := BuildBasic(block, left)
	if err != nil {
		t.Fatal(err)
	}
	hash := block.BlockHash()
	if got := CheckBasic(block, forged).Contradiction; got == nil && !forged.Match(BasicKey(&hash), fixed[0]) && !outputOf(block, fixed[0]) {
		t.Fatalf("the filter without %x, which a P2SH-wrapped witness input spends, is not contradicted", fixed[0])
	}
}

// outputOf reports whether script is an output script of block.
func outputOf(block *wire.MsgBlock, script []byte) bool {
	for _, tx := range block.Transactions {
		for _, o := range tx.TxOut {
			if bytes.Equal(o.PkScript, script) {
				return true
			}
		}
	}
	return false
}
