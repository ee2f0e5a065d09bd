package peertest

import (
	"net"
	"testing"
)

// NewAnswering starts a listener on 127.0.0.1 that writes answer on every
// connection, whatever it is sent, then reads until the client hangs up:
// a service that is no node of the network (an HTTP server, a node of
// another network). It stops when the test ends; it returns its address.
func NewAnswering(t testing.TB, answer []byte) string {
	t.Helper()
	var s server
	return s.start(t, func(c net.Conn) {
		if _, err := c.Write(answer); err != nil {
			return
		}
		buf := make([]byte, 512)
		for {
			if _, err := c.Read(buf); err != nil {
				return
			}
		}
	})
}
