package peertest

import (
	"encoding/binary"
	"io"
	"net"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"
)

// startFrameRelay starts a relay on 127.0.0.1 to target that passes the
// client's bytes unchanged and the node's messages through edit (see
// relayFrames), and returns its address; it stops when the test ends.
func startFrameRelay(t testing.TB, target string, edit func(cmd string, hdr, payload []byte) []byte) string {
	t.Helper()
	var s server
	return s.start(t, func(client net.Conn) {
		s.pipe(client, target, func(client, node net.Conn) { relayFrames(client, node, edit) })
	})
}

// relayFrames copies the node's messages to the client frame by frame,
// as the node framed them, until either side closes: edit may change a
// message's payload (and its header: the length, never the checksum,
// which the client then finds stale) before it is passed on.
func relayFrames(client, node net.Conn, edit func(cmd string, hdr, payload []byte) []byte) {
	hdr := make([]byte, wire.MessageHeaderSize)
	for {
		if _, err := io.ReadFull(node, hdr); err != nil {
			return
		}
		n := binary.LittleEndian.Uint32(hdr[16:20])
		if n > wire.MaxMessagePayload {
			return
		}
		payload := make([]byte, n)
		if _, err := io.ReadFull(node, payload); err != nil {
			return
		}
		payload = edit(strings.TrimRight(string(hdr[4:16]), "\x00"), hdr, payload)
		if _, err := client.Write(append(hdr, payload...)); err != nil {
			return
		}
	}
}
