package peer

import (
	"bufio"
	"bytes"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// BenchmarkFrameReader reads a stream of blocks of about 1 MB, and one of
// cfilters of a mainnet block's typical size, with the frame reader and,
// side by side, with btcd's wire.ReadMessageWithEncodingN (the anchor),
// both from the read loop's buffer size. Each reads and decodes every
// message; the frame reader leaves a block's and a filter's checksum to
// the check against its commitment (see frame.go).
func BenchmarkFrameReader(b *testing.B) {
	streams := []struct {
		name string
		msgs []wire.Message
	}{
		{"block-1MB", repeat(4, benchBlock(2200))},
		{"cfilter-20kB", repeat(64, wire.NewMsgCFilter(wire.GCSFilterRegular, &chainhash.Hash{1}, bytes.Repeat([]byte{0x5a}, 20<<10)))},
		{"cfilter-300B", repeat(1000, wire.NewMsgCFilter(wire.GCSFilterRegular, &chainhash.Hash{1}, bytes.Repeat([]byte{0x5a}, 300)))},
	}
	for _, s := range streams {
		stream := frame(b, s.msgs...)
		net := chaincfg.RegressionNetParams.Net
		b.Run(s.name+"/frame", func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				fr := frameReader{br: bufio.NewReaderSize(bytes.NewReader(stream), readBufferSize), net: net}
				for range s.msgs {
					f, err := fr.next(wire.ProtocolVersion)
					if err != nil {
						b.Fatal(err)
					}
					if _, err := f.decode(wire.ProtocolVersion); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
		b.Run(s.name+"/wire", func(b *testing.B) {
			b.SetBytes(int64(len(stream)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				br := bufio.NewReaderSize(bytes.NewReader(stream), readBufferSize)
				for range s.msgs {
					if _, _, _, err := wire.ReadMessageWithEncodingN(br, wire.ProtocolVersion, net, wire.WitnessEncoding); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// benchBlock returns a block of n transactions of one input and two
// outputs, about 450 bytes each.
func benchBlock(n int) *wire.MsgBlock {
	blk := wire.NewMsgBlock(&chaincfg.RegressionNetParams.GenesisBlock.Header)
	for i := 0; i < n; i++ {
		tx := wire.NewMsgTx(2)
		sig := bytes.Repeat([]byte{byte(i)}, 107)
		tx.AddTxIn(wire.NewTxIn(wire.NewOutPoint(&chainhash.Hash{byte(i), byte(i >> 8)}, 0), nil, wire.TxWitness{sig[:72], sig[:33]}))
		tx.TxIn[0].SignatureScript = sig
		tx.AddTxOut(wire.NewTxOut(int64(i), bytes.Repeat([]byte{0x51}, 100)))
		tx.AddTxOut(wire.NewTxOut(int64(i), bytes.Repeat([]byte{0x52}, 100)))
		blk.AddTransaction(tx)
	}
	return blk
}
