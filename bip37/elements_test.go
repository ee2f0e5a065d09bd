package bip37

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// TestScriptElements: the pushes by which a node matches an output, as
// MatchTxAndUpdate reads them: non-empty, each once, up to a malformed
// push; a filter of any one of them matches a transaction paying the
// script, and one of none matches nothing.
func TestScriptElements(t *testing.T) {
	key := bytes.Repeat([]byte{2}, 33)
	hash := bytes.Repeat([]byte{7}, 20)
	for _, tt := range []struct {
		name   string
		script []byte
		want   [][]byte
	}{
		{"P2PKH", append(append([]byte{0x76, 0xa9, 20}, hash...), 0x88, 0xac), [][]byte{hash}},
		{"P2PK", append(append([]byte{33}, key...), 0xac), [][]byte{key}},
		{"twice the same key", append(append(append(append([]byte{0x52, 33}, key...), 33), key...), 0x52, 0xae), [][]byte{key}},
		{"OP_0 pushes nothing", []byte{0x00, 20}, nil},
		{"no push", []byte{0x51}, nil},
		{"a malformed push after a good one", append(append([]byte{20}, hash...), 0x4c), [][]byte{hash}},
		{"PUSHDATA1", append([]byte{0x4c, 20}, hash...), [][]byte{hash}},
	} {
		got := ScriptElements(tt.script)
		if len(got) != len(tt.want) {
			t.Errorf("%s: %x, want %x", tt.name, got, tt.want)
			continue
		}
		for i := range got {
			if !bytes.Equal(got[i], tt.want[i]) {
				t.Errorf("%s: %x, want %x", tt.name, got, tt.want)
			}
		}
		tx := wire.NewMsgTx(2)
		tx.AddTxIn(wire.NewTxIn(&wire.OutPoint{Hash: chainhash.Hash{1}}, nil, nil))
		tx.AddTxOut(wire.NewTxOut(1, tt.script))
		for _, e := range got {
			f := NewFilter(10, 0.000001, 0, wire.BloomUpdateNone)
			f.Add(e)
			if !f.MatchTxAndUpdate(tx) {
				t.Errorf("%s: a filter of %x does not match the payment", tt.name, e)
			}
		}
	}
}

// TestOutPointBytes: the serialization AddOutPoint inserts.
func TestOutPointBytes(t *testing.T) {
	op := wire.OutPoint{Hash: chainhash.Hash{9, 8, 7}, Index: 0x01020304}
	b := OutPointBytes(&op)
	if len(b) != 36 || !bytes.Equal(b[:32], op.Hash[:]) || !bytes.Equal(b[32:], []byte{4, 3, 2, 1}) {
		t.Fatalf("%x", b)
	}
	f := NewFilter(10, 0.000001, 0, wire.BloomUpdateNone)
	f.AddOutPoint(&op)
	if !f.Contains(b) {
		t.Fatal("the filter does not hold the serialized outpoint")
	}
}
