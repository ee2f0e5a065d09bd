package main

import (
	"bytes"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// streamed is the messages a msgStream handed over.
type streamed struct{ cmds, payloads []string }

func (s *streamed) take(cmd string, payload []byte) {
	s.cmds = append(s.cmds, cmd)
	s.payloads = append(s.payloads, string(payload))
}

// feedChunks feeds b to a fresh msgStream in chunks of size n.
func feedChunks(b []byte, n int) streamed {
	s := msgStream{magic: wire.TestNet, txMax: 300}
	var got streamed
	for len(b) > 0 {
		k := min(n, len(b))
		s.feed(b[:k], got.take)
		b = b[k:]
	}
	return got
}

// TestMsgStreamChunks: the messages a stream hands over do not depend on
// how the bytes were cut; those it does not follow, and a transaction
// longer than the one watched, are skipped.
func TestMsgStreamChunks(t *testing.T) {
	var buf bytes.Buffer
	h := chainhash.Hash{1}
	nf := wire.NewMsgNotFound()
	nf.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &h))
	big := wire.NewMsgTx(2)
	big.AddTxOut(wire.NewTxOut(1, make([]byte, 400)))
	for _, m := range []wire.Message{wire.NewMsgPing(7), nf, big, wire.NewMsgReject(wire.CmdTx, wire.RejectDuplicate, "x"), nf} {
		if err := wire.WriteMessage(&buf, m, wire.ProtocolVersion, wire.TestNet); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{wire.CmdNotFound, wire.CmdReject, wire.CmdNotFound}
	for _, n := range []int{1, 7, 24, 25, 1 << 20} {
		if got := feedChunks(buf.Bytes(), n); !slices.Equal(got.cmds, want) {
			t.Errorf("chunks of %d: got %q, want %q", n, got.cmds, want)
		}
	}
	// Another network's magic stops the stream.
	var other bytes.Buffer
	wire.WriteMessage(&other, nf, wire.ProtocolVersion, chaincfg.MainNetParams.Net)
	if got := feedChunks(append(other.Bytes(), buf.Bytes()...), 5); len(got.cmds) != 0 {
		t.Errorf("after a foreign magic: got %q, want nothing", got.cmds)
	}
}

// FuzzMsgStream: any bytes, cut anywhere, neither crash a stream nor
// change what it hands over.
func FuzzMsgStream(f *testing.F) {
	var buf bytes.Buffer
	h := chainhash.Hash{1}
	nf := wire.NewMsgNotFound()
	nf.AddInvVect(wire.NewInvVect(wire.InvTypeTx, &h))
	wire.WriteMessage(&buf, nf, wire.ProtocolVersion, wire.TestNet)
	f.Add(buf.Bytes(), uint8(3))
	f.Add([]byte{}, uint8(1))
	f.Fuzz(func(t *testing.T, b []byte, n uint8) {
		whole := feedChunks(b, len(b)+1)
		cut := feedChunks(b, int(n)+1)
		if !slices.Equal(whole.cmds, cut.cmds) || !slices.Equal(whole.payloads, cut.payloads) {
			t.Fatalf("whole %q, in chunks of %d %q", whole.cmds, int(n)+1, cut.cmds)
		}
	})
}
