package client

import (
	"crypto/sha256"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
)

func TestWatchList(t *testing.T) {
	pubkey := append([]byte{0x02}, make([]byte, 32)...)
	pubkey[5] = 7
	pkh := btcutil.Hash160(pubkey)
	redeem := []byte{0x51, 0x52, 0x93}
	witnessScript := []byte{0x53, 0x87}
	wsh := sha256.Sum256(witnessScript)
	p2pkh := append(append([]byte{0x76, 0xa9, 0x14}, pkh...), 0x88, 0xac)
	p2wpkh := append([]byte{0x00, 0x14}, pkh...)
	p2sh := append(append([]byte{0xa9, 0x14}, btcutil.Hash160(redeem)...), 0x87)
	p2wsh := append([]byte{0x00, 0x20}, wsh[:]...)
	opReturn := []byte{0x6a, 0x01, 0x01}
	nested := append([]byte{0x00, 0x14}, pkh...) // P2SH-P2WPKH redeem script
	p2shP2wpkh := append(append([]byte{0xa9, 0x14}, btcutil.Hash160(nested)...), 0x87)
	taprootOut := wire.OutPoint{Hash: [32]byte{0xee}, Index: 1}
	watch := items([][]byte{p2pkh, p2wpkh, p2sh, p2wsh, opReturn, p2shP2wpkh})
	watch = append(watch, OutPointItem(taprootOut, nil))

	spend := func(sigScript []byte, witness ...[]byte) *wire.MsgTx {
		tx := wire.NewMsgTx(2)
		tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 3}, sigScript, witness))
		tx.AddTxOut(wire.NewTxOut(1, []byte{0x51}))
		return tx
	}
	push := func(b ...[]byte) []byte {
		var s []byte
		for _, x := range b {
			s = append(append(s, byte(len(x))), x...)
		}
		return s
	}
	sig := make([]byte, 71)
	derSig := append([]byte{0x30, 68}, make([]byte, 69)...)
	tests := []struct {
		name string
		tx   *wire.MsgTx
		want []int
	}{
		// The P2PKH, P2WPKH and P2SH-P2WPKH outputs of one key: a spend
		// is attributed to the type it spends only.
		{"P2PKH spend reveals the key", spend(push(sig, pubkey)), []int{0}},
		{"P2WPKH spend reveals the key", spend(nil, sig, pubkey), []int{1}},
		{"P2SH-P2WPKH spend reveals the redeem script", spend(push(nested), sig, pubkey), []int{5}},
		{"P2SH spend reveals the script", spend(push([]byte{1}, redeem)), []int{2}},
		{"P2WSH spend reveals the script", spend(nil, []byte{1}, witnessScript), []int{3}},
		{"unrelated spend", spend(push(sig, append([]byte{0x03}, make([]byte, 32)...))), nil},
		// A lone signature (P2PK) or a taproot spend reveals no script:
		// nothing is attributed, not even by a chance hash.
		{"P2PK spend reveals nothing", spend(push(derSig)), nil},
		{"P2TR script-path spend reveals nothing", spend(nil, make([]byte, 64), witnessScript, append([]byte{0xc0}, make([]byte, 32)...)), nil},
		{"spend of a watched outpoint that reveals nothing (P2TR key path)", func() *wire.MsgTx {
			tx := wire.NewMsgTx(2)
			tx.AddTxIn(wire.NewTxIn(&taprootOut, nil, [][]byte{make([]byte, 64)}))
			return tx
		}(), []int{6}},
		{"payment to an OP_RETURN item", func() *wire.MsgTx {
			tx := spend(nil)
			tx.AddTxOut(wire.NewTxOut(0, opReturn))
			return tx
		}(), []int{4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := newWatchList(watch).involve(tt.tx)
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Fatalf("items %v, want %v", got, tt.want)
			}
		})
	}

	// An output found is recognized when spent, whatever the input
	// reveals.
	w := newWatchList(watch)
	pay := wire.NewMsgTx(2)
	pay.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 9}, nil, nil))
	pay.AddTxOut(wire.NewTxOut(5, []byte{0x51}))
	pay.AddTxOut(wire.NewTxOut(5, p2sh))
	if got := w.involve(pay); !slices.Equal(got, []int{2}) {
		t.Fatalf("payment: items %v", got)
	}
	later := wire.NewMsgTx(2)
	later.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: pay.TxHash(), Index: 1}, nil, nil))
	later.AddTxOut(wire.NewTxOut(4, []byte{0x51}))
	if got := w.involve(later); !slices.Equal(got, []int{2}) {
		t.Fatalf("spend of a found output: items %v", got)
	}
	other := wire.NewMsgTx(2)
	other.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: pay.TxHash(), Index: 0}, nil, nil))
	if got := w.involve(other); len(got) != 0 {
		t.Fatalf("spend of an unwatched output: items %v", got)
	}
}

func TestNewWatchFilter(t *testing.T) {
	pkh := make([]byte, 20)
	pkh[0] = 9
	p2pkh := append(append([]byte{0x76, 0xa9, 0x14}, pkh...), 0x88, 0xac)
	op := wire.OutPoint{Hash: [32]byte{1, 2, 3}, Index: 258}
	f, err := NewWatchFilter([]WatchItem{ScriptItem(p2pkh), OutPointItem(op, nil)}, bip37.SizingCore, 0.001, 5, wire.BloomUpdateP2PubkeyOnly)
	if err != nil {
		t.Fatal(err)
	}
	if !f.Contains(pkh) || !f.ContainsOutPoint(&op) || f.Flags() != wire.BloomUpdateP2PubkeyOnly || f.Tweak() != 5 {
		t.Fatalf("filter lacks the key hash or the outpoint, or has flags %v, tweak %d", f.Flags(), f.Tweak())
	}
	if _, err := NewWatchFilter(items([][]byte{p2pkh, {0x51}}), bip37.SizingCore, 0.001, 0, wire.BloomUpdateAll); err == nil {
		t.Fatal("a script without data pushes was accepted")
	}
}
