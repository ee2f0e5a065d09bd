package peer

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/wire"
)

// FuzzHeaders feeds untrusted headers messages to the header-chain checks:
// they must be rejected or accepted without a panic, and an accepted chain
// must link up.
func FuzzHeaders(f *testing.F) {
	params := &chaincfg.RegressionNetParams
	// Seed: one valid regtest block on top of the genesis block, found
	// by grinding the nonce (the regtest target passes half of all
	// hashes).
	h := params.GenesisBlock.Header
	h.PrevBlock = params.GenesisBlock.BlockHash()
	h.Timestamp = h.Timestamp.Add(600e9)
	for !NewHeaderChain(params).tryHeader(&h) {
		h.Nonce++
	}
	msg := wire.NewMsgHeaders()
	msg.AddBlockHeader(&h)
	var buf bytes.Buffer
	if err := msg.BtcEncode(&buf, wire.ProtocolVersion, wire.BaseEncoding); err != nil {
		f.Fatal(err)
	}
	f.Add(buf.Bytes())
	f.Add([]byte{0x01})
	f.Add([]byte{0xfd, 0xd1, 0x07})
	f.Fuzz(func(t *testing.T, b []byte) {
		var m wire.MsgHeaders
		if err := m.BtcDecode(bytes.NewReader(b), wire.ProtocolVersion, wire.BaseEncoding); err != nil || len(m.Headers) == 0 {
			return
		}
		c := NewHeaderChain(params)
		if err := c.extend(m.Headers); err != nil {
			return
		}
		for i := int32(1); i <= c.Height(); i++ {
			hdr := c.Header(i)
			if hdr.PrevBlock != c.Hash(i-1) {
				t.Fatalf("accepted chain does not link at height %d", i)
			}
		}
	})
}

// tryHeader reports whether h would be accepted on top of the chain.
func (c *HeaderChain) tryHeader(h *wire.BlockHeader) bool {
	return c.checkHeader(h, c.Height()+1) == nil
}

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
		w := newWatchList(watch)
		items := w.involve(&tx)
		for _, i := range items {
			if i < 0 || i >= len(watch) {
				t.Fatalf("watch item %d out of range", i)
			}
		}
		// An output paying to a watched script is always found.
		for _, out := range tx.TxOut {
			if bytes.Equal(out.PkScript, watch[0]) && !containsInt(items, 0) {
				t.Fatal("payment to watch item 0 not found")
			}
		}
	})
}
