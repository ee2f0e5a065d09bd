package client

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
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

// FuzzLedgerFile reads untrusted ledger files: a file is refused or read
// whole, and what is read encodes back to the same bytes. The input is
// the file without its checksum, which the target appends, so that the
// fields behind it are reached.
func FuzzLedgerFile(f *testing.F) {
	l := &ledger{}
	l.ranges("127.0.0.1:1", wire.CmdGetCFilters, 0, 999)
	l.ranges("127.0.0.1:1", wire.CmdGetCFHeaders, 0, 1200)
	l.asked("127.0.0.1:1", []chainhash.Hash{{1}, {2}})
	l.ranges("[::1]:2", wire.CmdMerkleBlock, 5, 9)
	if bf, err := bip37.NewFilterFromParams(make([]byte, 8), 3, 7, wire.BloomUpdateAll); err == nil {
		l.loaded("[::1]:2", bf, nil)
	}
	for _, file := range [][]byte{l.encode("regtest"), (&ledger{lost: true}).encode("regtest")} {
		body := file[:len(file)-4]
		f.Add(body)
		f.Add(body[:len(body)/2])
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		data := binary.LittleEndian.AppendUint32(slices.Clip(body), crc32.Checksum(body, castagnoli))
		got, err := decodeLedger(data, "regtest")
		if err != nil {
			return
		}
		if back := got.encode("regtest"); !bytes.Equal(back, data) {
			t.Fatalf("read back encodes to %d other bytes", len(back))
		}
	})
}
