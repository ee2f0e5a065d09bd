package peer

import (
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// TestPayloadSumIntact checks PayloadSum.Intact against the checksum of a
// cfilter message's payload: the filter as sent is intact, one changed
// on the way (or told of another block) is not, and one whose checksum
// was checked as it was read is intact without a look.
func TestPayloadSumIntact(t *testing.T) {
	block := chainhash.Hash{1, 2, 3}
	data := []byte{0x05, 0xaa, 0xbb, 0xcc}
	var b bytes.Buffer
	msg := wire.MsgCFilter{FilterType: wire.GCSFilterRegular, BlockHash: block, Data: data}
	if err := msg.BtcEncode(&b, wire.ProtocolVersion, wire.WitnessEncoding); err != nil {
		t.Fatal(err)
	}
	h := chainhash.DoubleHashH(b.Bytes())
	sent := PayloadSum{sum: [4]byte(h[:4])}
	tests := []struct {
		name  string
		sum   PayloadSum
		block chainhash.Hash
		data  []byte
		want  bool
	}{
		{"as sent", sent, block, data, true},
		{"a byte changed", sent, block, []byte{0x05, 0xaa, 0xbb, 0xcd}, false},
		{"a byte lost", sent, block, data[:3], false},
		{"another block", sent, chainhash.Hash{9}, data, false},
		{"checked as read", PayloadSum{checked: true}, block, []byte{0}, true},
	}
	for _, tt := range tests {
		if got := tt.sum.Intact(tt.block, tt.data); got != tt.want {
			t.Errorf("%s: Intact = %v, want %v", tt.name, got, tt.want)
		}
	}
}
