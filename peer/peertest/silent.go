package peertest

import (
	"net"
	"testing"
)

// NewSilent starts n listeners on 127.0.0.1 that accept every connection
// and never send a byte, as nodes that hang: a dial succeeds, the
// handshake never ends. They stop when the test ends; it returns their
// addresses.
func NewSilent(t testing.TB, n int) []string {
	t.Helper()
	addrs := make([]string, n)
	for i := range addrs {
		var s server
		addrs[i] = s.start(t, func(c net.Conn) {
			// Read and drop what the client sends until it hangs up.
			buf := make([]byte, 512)
			for {
				if _, err := c.Read(buf); err != nil {
					return
				}
			}
		})
	}
	return addrs
}
