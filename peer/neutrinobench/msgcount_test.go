package neutrinobench

import (
	"bytes"
	"net"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// TestMsgCounter writes messages into a connection and reads them through
// the counter in chunks of several sizes, which split frame headers and
// payloads anywhere: each message's bytes go to its command, and the
// total is every byte.
func TestMsgCounter(t *testing.T) {
	var stream bytes.Buffer
	want := map[string]uint64{}
	inv := wire.NewMsgInv()
	inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &chainhash.Hash{1}))
	for _, m := range []wire.Message{wire.NewMsgPing(7), inv, &wire.MsgVerAck{}, wire.NewMsgPong(7), inv} {
		before := stream.Len()
		if err := wire.WriteMessage(&stream, m, wire.ProtocolVersion, wire.SimNet); err != nil {
			t.Fatal(err)
		}
		want[m.Command()] += uint64(stream.Len() - before)
	}
	for _, chunk := range []int{1, 3, 23, 24, 25, 100, 4096} {
		client, server := net.Pipe()
		go func() {
			server.Write(stream.Bytes())
			server.Close()
		}()
		m := newMsgCounter()
		c := m.conn(client)
		buf := make([]byte, chunk)
		for {
			if _, err := c.Read(buf); err != nil {
				break
			}
		}
		client.Close()
		if got := m.Total(); got != uint64(stream.Len()) {
			t.Errorf("chunks of %d: %d bytes counted, %d read", chunk, got, stream.Len())
		}
		got := m.ByCommand()
		for cmd, n := range want {
			if got[cmd] != n {
				t.Errorf("chunks of %d: %s %d bytes, want %d", chunk, cmd, got[cmd], n)
			}
		}
		if len(got) != len(want) {
			t.Errorf("chunks of %d: commands %v, want %v", chunk, got, want)
		}
	}
}
