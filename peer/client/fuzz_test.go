package client

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/wire"
)

// FuzzWatchList runs the local relevance check on untrusted transactions.
func FuzzWatchList(f *testing.F) {
	watch := [][]byte{
		append([]byte{0x76, 0xa9, 0x14}, append(bytes.Repeat([]byte{1}, 20), 0x88, 0xac)...),
		append([]byte{0x00, 0x20}, bytes.Repeat([]byte{2}, 32)...),
	}
	tx := wire.NewMsgTx(2)
	tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Index: 1}, []byte{0x01, 0x02}, [][]byte{{3}}))
	tx.AddTxOut(wire.NewTxOut(5, watch[0]))
	var buf bytes.Buffer
	tx.Serialize(&buf)
	f.Add(buf.Bytes())
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, b []byte) {
		var tx wire.MsgTx
		if err := tx.Deserialize(bytes.NewReader(b)); err != nil {
			return
		}
		w := newWatchList(items(watch))
		got := w.involve(&tx)
		for _, i := range got {
			if i < 0 || i >= len(watch) {
				t.Fatalf("watch item %d out of range", i)
			}
		}
		// An output paying to a watched script is always found.
		for _, out := range tx.TxOut {
			if bytes.Equal(out.PkScript, watch[0]) && !containsInt(got, 0) {
				t.Fatal("payment to watch item 0 not found")
			}
		}
	})
}
