package peertest

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
)

// Refuser relays connections to a node unchanged, but closes the nth it
// accepts (counted from 1) at once: a dial of it fails in its handshake,
// as one to a loaded node slow to take a connection may.
type Refuser struct {
	Addr string

	nth      int32
	accepted atomic.Int32
	refused  atomic.Bool
}

// NewRefuser starts a Refuser on 127.0.0.1 to target that refuses its
// nth connection; it stops when the test ends.
func NewRefuser(t testing.TB, target string, nth int) *Refuser {
	t.Helper()
	r := &Refuser{nth: int32(nth)}
	var s server
	r.Addr = s.start(t, func(client net.Conn) {
		if r.accepted.Add(1) == r.nth {
			r.refused.Store(true)
			client.Close()
			return
		}
		s.pipe(client, target, func(client, node net.Conn) { io.Copy(client, node) })
	})
	return r
}

// Refused reports whether the Refuser has refused its connection.
func (r *Refuser) Refused() bool { return r.refused.Load() }
