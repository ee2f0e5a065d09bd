package privacy

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
)

func hexOf(b []byte) string { return hex.EncodeToString(b) }

func TestUniverseWriter(t *testing.T) {
	params := &chaincfg.MainNetParams
	w := NewWallet(5, 6)
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
	uw := NewUniverseWriter(&out, params)
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
	st := uw.Stats()
	if st.Addresses != 3 || st.PubKeys != 5 || st.Lines != st.Addresses+st.PubKeys+st.Scripts {
		t.Errorf("stats %+v", st)
	}
	// Every line is a valid candidate, and a wallet filter of the keys
	// matches the wallet's lines.
	f := w.Filter(0.0001, 0, 1)
	r, err := Analyze([]*bip37.Filter{f}, strings.NewReader(text), AnalyzeOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if r.UniverseSize != uint64(st.Lines) || r.MatchedCount < 7 {
		t.Errorf("universe %d lines, %d matched:\n%s", r.UniverseSize, r.MatchedCount, text)
	}
}
