package universe_test

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/privacy/model"
	"github.com/spvfilter/spvfilter/privacy/universe"
)

// appearanceBlocks are two blocks whose transactions spend and pay every
// kind of script the index names: P2PKH, P2WPKH, P2SH and P2TR outputs
// and their spends (a taproot key-path spend shows no script), a P2PK
// output, an OP_RETURN and a non-standard script; the second block spends
// the first's outputs, so that their scripts appear twice.
func appearanceBlocks(t *testing.T, params *chaincfg.Params) (blocks []*wire.MsgBlock, spent map[string][]byte) {
	t.Helper()
	w := model.NewWallet(5, 6)
	k := w.PubKeys
	p2pkh, _ := btcutil.NewAddressPubKeyHash(btcutil.Hash160(k[0]), params)
	p2wpkh, _ := btcutil.NewAddressWitnessPubKeyHash(btcutil.Hash160(k[1]), params)
	p2tr, _ := btcutil.NewAddressTaproot(k[2][1:], params)
	redeem, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_1).AddData(k[4]).AddData(k[5]).AddOp(txscript.OP_2).AddOp(txscript.OP_CHECKMULTISIG).Script()
	p2sh, _ := btcutil.NewAddressScriptHash(redeem, params)
	script := func(a btcutil.Address) []byte {
		pk, err := txscript.PayToAddrScript(a)
		if err != nil {
			t.Fatal(err)
		}
		return pk
	}
	pkP2PK, _ := txscript.NewScriptBuilder().AddData(k[3]).AddOp(txscript.OP_CHECKSIG).Script()
	ret, _ := txscript.NullDataScript([]byte("hello"))
	odd := []byte{txscript.OP_TRUE, txscript.OP_DROP, txscript.OP_TRUE}
	spent = map[string][]byte{p2pkh.EncodeAddress(): script(p2pkh), p2wpkh.EncodeAddress(): script(p2wpkh), p2sh.EncodeAddress(): script(p2sh)}

	coinbase := func(h byte) *wire.MsgTx {
		tx := wire.NewMsgTx(1)
		tx.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex}, SignatureScript: []byte{h, 2}})
		tx.AddTxOut(wire.NewTxOut(50, script(p2pkh)))
		return tx
	}
	pay := wire.NewMsgTx(2)
	pay.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: 7}, Witness: wire.TxWitness{make([]byte, 64)}}) // key path
	for _, pk := range [][]byte{script(p2wpkh), script(p2sh), script(p2tr), pkP2PK, ret, odd} {
		pay.AddTxOut(wire.NewTxOut(1, pk))
	}
	sigScript, _ := txscript.NewScriptBuilder().AddData(make([]byte, 71)).AddData(k[0]).Script()
	p2shSig, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(make([]byte, 71)).AddData(redeem).Script()
	spend := wire.NewMsgTx(2)
	spend.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: 0}, SignatureScript: sigScript})
	spend.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: 1}, Witness: wire.TxWitness{make([]byte, 71), k[1]}})
	spend.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: 2}, SignatureScript: p2shSig})
	spend.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: 3}, Witness: wire.TxWitness{make([]byte, 64)}})
	spend.AddTxOut(wire.NewTxOut(1, script(p2wpkh)))
	blocks = []*wire.MsgBlock{
		{Transactions: []*wire.MsgTx{coinbase(0), pay}},
		{Transactions: []*wire.MsgTx{coinbase(1), spend}},
	}
	return blocks, spent
}

// TestAppearancesAsWriter checks that Appearances names exactly the
// appearances an index written by Writer.AddBlock records, in the same
// transactions, and gives each the script a block's filter holds for it.
func TestAppearancesAsWriter(t *testing.T) {
	params := &chaincfg.MainNetParams
	blocks, spent := appearanceBlocks(t, params)
	const first = 100

	ix := universe.NewIndexWriter(t.TempDir(), 0)
	defer ix.Close()
	uw := universe.NewWriter(io.Discard, params)
	uw.SetIndex(ix)
	hd := &universe.IndexHeader{Network: params.Name, First: first}
	type place struct {
		height int32
		tx     uint32
		role   universe.Role
	}
	want := map[string][]place{}
	unattributed := 0
	for i, b := range blocks {
		h := first + int32(i)
		if err := uw.AddBlock(h, b); err != nil {
			t.Fatal(err)
		}
		hd.Hashes = append(hd.Hashes, chainhash.DoubleHashH([]byte(fmt.Sprint(h))))
		unattributed += universe.Appearances(b, params, func(a universe.Appearance) {
			if got := universe.ScriptCandidate(a.Script, params); got != a.Candidate {
				t.Errorf("appearance %q: its script names %q", a.Candidate, got)
			}
			if s, ok := spent[a.Candidate]; a.Spent && (!ok || !bytes.Equal(s, a.Script)) {
				t.Errorf("spend of %q: script %x, the output spent has %x", a.Candidate, a.Script, s)
			}
			role := universe.RolePaid
			if a.Spent {
				role = universe.RoleSpent
			}
			ps := want[a.Candidate]
			if i := slices.IndexFunc(ps, func(p place) bool { return p.height == h && p.tx == uint32(a.Tx) }); i >= 0 {
				ps[i].role |= role
			} else {
				want[a.Candidate] = append(ps, place{h, uint32(a.Tx), role})
			}
		})
	}
	if st := uw.Stats(); unattributed != 2 || st.SpendsUnattributed != unattributed || st.SpendsIndexed != 3 {
		t.Errorf("unattributed %d, writer's stats %+v; want 2 unattributed and 3 indexed", unattributed, st)
	}
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf, hd); err != nil {
		t.Fatal(err)
	}
	ir, err := universe.NewIndexReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]place{}
	for {
		e, err := ir.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		for i, h := range e.Heights {
			if len(e.Roles) != len(e.Txs) || len(e.Roles[i]) != len(e.Txs[i]) {
				t.Fatalf("%s: roles %v of transactions %v", e.Candidate, e.Roles, e.Txs)
			}
			for j, tx := range e.Txs[i] {
				got[e.Candidate] = append(got[e.Candidate], place{h, tx, e.Roles[i][j]})
			}
		}
	}
	if len(got) != len(want) || len(want) != 6 {
		t.Errorf("index holds %d candidates, Appearances names %d; want 6", len(got), len(want))
	}
	for c, ps := range want {
		slices.SortFunc(ps, func(a, b place) int { return int(a.height-b.height)*1<<20 + int(a.tx) - int(b.tx) })
		if !slices.Equal(got[c], ps) {
			t.Errorf("%s: index %v, Appearances %v", c, got[c], ps)
		}
	}
}

// TestSpentScriptsAsAddresses checks that the script Appearances gives
// for each kind of spend it reads is the one the spent output's address
// pays to (txscript.PayToAddrScript), P2WSH included, and that a spend
// showing no script gives none.
func TestSpentScriptsAsAddresses(t *testing.T) {
	params := &chaincfg.MainNetParams
	k := model.NewWallet(3, 7).PubKeys
	redeem, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_1).AddData(k[0]).AddData(k[1]).AddOp(txscript.OP_2).AddOp(txscript.OP_CHECKMULTISIG).Script()
	sha := sha256.Sum256(redeem)
	p2pkh, _ := btcutil.NewAddressPubKeyHash(btcutil.Hash160(k[2]), params)
	p2sh, _ := btcutil.NewAddressScriptHash(redeem, params)
	p2wpkh, _ := btcutil.NewAddressWitnessPubKeyHash(btcutil.Hash160(k[2]), params)
	p2wsh, _ := btcutil.NewAddressWitnessScriptHash(sha[:], params)
	sigScript, _ := txscript.NewScriptBuilder().AddData(make([]byte, 71)).AddData(k[2]).Script()
	p2shSig, _ := txscript.NewScriptBuilder().AddOp(txscript.OP_0).AddData(make([]byte, 71)).AddData(redeem).Script()
	for _, tc := range []struct {
		name string
		in   wire.TxIn
		addr btcutil.Address // nil: no script shown
	}{
		{"p2pkh", wire.TxIn{SignatureScript: sigScript}, p2pkh},
		{"p2sh", wire.TxIn{SignatureScript: p2shSig}, p2sh},
		{"p2wpkh", wire.TxIn{Witness: wire.TxWitness{make([]byte, 71), k[2]}}, p2wpkh},
		{"p2wsh", wire.TxIn{Witness: wire.TxWitness{nil, make([]byte, 71), make([]byte, 71), redeem}}, p2wsh},
		{"key path", wire.TxIn{Witness: wire.TxWitness{make([]byte, 64)}}, nil},
		{"not push only", wire.TxIn{SignatureScript: []byte{txscript.OP_DUP}}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cb := wire.NewMsgTx(1)
			cb.AddTxIn(&wire.TxIn{PreviousOutPoint: wire.OutPoint{Index: wire.MaxPrevOutIndex}, SignatureScript: []byte{1, 2}})
			tx := wire.NewMsgTx(2)
			in := tc.in
			tx.AddTxIn(&in)
			b := &wire.MsgBlock{Transactions: []*wire.MsgTx{cb, tx}}
			var spends [][]byte
			unattributed := universe.ScriptAppearances(b, params, func(a universe.Appearance) {
				if a.Spent {
					spends = append(spends, a.Script)
				}
			})
			if tc.addr == nil {
				if len(spends) != 0 || unattributed != 1 {
					t.Errorf("spends %x, unattributed %d: want none and 1", spends, unattributed)
				}
				return
			}
			want, err := txscript.PayToAddrScript(tc.addr)
			if err != nil {
				t.Fatal(err)
			}
			if len(spends) != 1 || !bytes.Equal(spends[0], want) || unattributed != 0 {
				t.Errorf("spends %x (unattributed %d), want %x", spends, unattributed, want)
			}
		})
	}
}
