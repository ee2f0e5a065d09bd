package universe_test

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/privacy/attack"
	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

func hexOf(b []byte) string { return hex.EncodeToString(b) }

func TestUniverseWriter(t *testing.T) {
	params := &chaincfg.MainNetParams
	w := model.NewWallet(5, 6)
	k := w.PubKeys
	p2pkh, _ := btcutil.NewAddressPubKeyHash(w.Hashes[0], params)
	p2wpkh, _ := btcutil.NewAddressWitnessPubKeyHash(w.Hashes[1], params)
	p2tr, _ := btcutil.NewAddressTaproot(k[2][1:], params)
	pkP2PKH, _ := txscript.PayToAddrScript(p2pkh)
	pkP2WPKH, _ := txscript.PayToAddrScript(p2wpkh)
	pkP2TR, _ := txscript.PayToAddrScript(p2tr)
	pkP2PK, _ := txscript.NewScriptBuilder().AddData(k[3]).AddOp(txscript.OP_CHECKSIG).Script()
	ret, _ := txscript.NullDataScript([]byte("hello"))
	redeem, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_1).AddData(k[4]).AddData(k[5]).AddOp(txscript.OP_2).AddOp(txscript.OP_CHECKMULTISIG).Script()
	sigScript, _ := txscript.NewScriptBuilder().AddData(make([]byte, 71)).AddData(k[0]).Script()
	p2shSig, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(make([]byte, 71)).AddData(redeem).Script()

	coinbase := wire.NewMsgTx(1)
	coinbase.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex}, SignatureScript: []byte{1, 2}})
	coinbase.AddTxOut(wire.NewTxOut(50, pkP2PKH))
	spend := wire.NewMsgTx(2)
	spend.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: 0}, SignatureScript: sigScript})
	spend.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: 1}, Witness: wire.TxWitness{make([]byte, 71), k[1]}})
	spend.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: 2}, SignatureScript: p2shSig})
	for _, pk := range [][]byte{pkP2WPKH, pkP2TR, pkP2PK, ret, pkP2PKH} {
		spend.AddTxOut(wire.NewTxOut(1, pk))
	}
	block := &wire.MsgBlock{Transactions: []*wire.MsgTx{coinbase, spend}}

	var out bytes.Buffer
	uw := universe.NewWriter(&out, params)
	uw.Comment("test block\n  7")
	if err := uw.AddBlock(7, block); err != nil {
		t.Fatal(err)
	}
	if err := uw.Flush(); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	if !strings.HasPrefix(text, "# test block 7\n") {
		t.Errorf("comment line: %q", text[:20])
	}
	for _, want := range []string{p2pkh.EncodeAddress(), p2wpkh.EncodeAddress(), p2tr.EncodeAddress()} {
		if strings.Count(text, want+" #") != 1 {
			t.Errorf("address %s not written once:\n%s", want, text)
		}
	}
	for i := 0; i < 6; i++ {
		if i == 2 {
			continue // only its x-only form appears, inside the P2TR address
		}
		if !strings.Contains(text, hexOf(k[i])+" # pair ") {
			t.Errorf("key %d not written as a pair:\n%s", i, text)
		}
	}
	if strings.Contains(text, "hello") || strings.Contains(text, "68656c6c6f") {
		t.Errorf("OP_RETURN data written")
	}
	// Keys 0 and 1 take over the address lines written before them, in
	// "listed" fields; the others' addresses are only in their "pair".
	p2pkh1, _ := btcutil.NewAddressPubKeyHash(w.Hashes[1], params)
	for _, want := range []string{
		hexOf(k[0]) + " # pair " + p2pkh.EncodeAddress() + ", listed " + p2pkh.EncodeAddress() + ", height 7\n",
		hexOf(k[1]) + " # pair " + p2pkh1.EncodeAddress() + ", listed " + p2wpkh.EncodeAddress() + ", height 7\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("universe lacks %q:\n%s", want, text)
		}
	}
	st := uw.Stats()
	if st.Addresses != 3 || st.PubKeys != 5 || st.Listed != 2 || st.Lines != st.Addresses+st.PubKeys+st.Scripts {
		t.Errorf("stats %+v", st)
	}
	// A later output to a key's address adds no line: the key's line
	// stands for it.
	later := wire.NewMsgTx(2)
	later.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: 9}})
	pkK3, _ := btcutil.NewAddressPubKeyHash(w.Hashes[3], params)
	pkK3Script, _ := txscript.PayToAddrScript(pkK3)
	later.AddTxOut(wire.NewTxOut(1, pkK3Script))
	if err := uw.AddBlock(8, &wire.MsgBlock{Transactions: []*wire.MsgTx{coinbase, later}}); err != nil {
		t.Fatal(err)
	}
	if uw.Stats().Lines != st.Lines {
		t.Errorf("a key's address written after its key: %+v", uw.Stats())
	}

	// Every line is a valid candidate, and a wallet filter of the keys
	// matches the wallet's candidates, each once: the five keys, as the
	// addresses they stand for (the P2TR output key is x-only, not in
	// the filter).
	f := w.Filter(0.0001, 0, 1)
	for _, pair := range []bool{false, true} {
		r, err := attack.Analyze([]*bip37.Filter{f}, strings.NewReader(text), attack.AnalyzeOptions{PairTest: pair})
		if err != nil {
			t.Fatal(err)
		}
		if r.UniverseSize != uint64(st.Lines-st.Listed) || r.MatchedCount != 5 || len(r.Matched) != 5 ||
			r.Pairs != 5 || r.MergedAddressLines != 2 {
			t.Errorf("pair test %v: universe %d (lines %d), %d matched, %d pairs, %d merged:\n%s\n%+v",
				pair, r.UniverseSize, st.Lines, r.MatchedCount, r.Pairs, r.MergedAddressLines, text, r.Matched)
		}
		for _, m := range r.Matched {
			if m.Kind != universe.KindAddress || m.PubKey == "" || m.PairTested != pair {
				t.Errorf("match %+v, want an address with its key", m)
			}
		}
	}
}
