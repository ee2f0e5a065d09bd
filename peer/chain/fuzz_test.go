package chain

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
	for !New(params).tryHeader(&h) {
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
		c := New(params)
		if err := extend(c, m.Headers); err != nil {
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
func (c *Chain) tryHeader(h *wire.BlockHeader) bool {
	return c.checkHeader(h, c.Height()+1) == nil
}
