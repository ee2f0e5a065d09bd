package peertest

import (
	"net"
	"time"
)

// Drips has the Liar write what the node sends, from its first message of
// the command cmd on, one byte at a time, pause apart: a node answering
// slowly byte by byte. When hold is not negative, the bytes after the
// first hold of those are swallowed and the connection kept open: a node
// that stalls in the middle of a message (hold 24 and more: after its
// header) and for ever.
func Drips(cmd string, pause time.Duration, hold int) LiarOption {
	return func(l *Liar) { l.drip = &dripSpec{cmd: cmd, pause: pause, hold: hold} }
}

// dripSpec is what Drips asked for.
type dripSpec struct {
	cmd   string
	pause time.Duration
	hold  int
}

// dripWriter writes to a client as a dripSpec says, once started.
type dripWriter struct {
	net.Conn
	spec    *dripSpec
	started bool
	written int
}

// start starts dripping when cmd is the command that starts it.
func (w *dripWriter) start(cmd string) {
	if w.spec != nil && cmd == w.spec.cmd {
		w.started = true
	}
}

func (w *dripWriter) Write(b []byte) (int, error) {
	if !w.started {
		return w.Conn.Write(b)
	}
	for i := range b {
		if w.spec.hold >= 0 && w.written >= w.spec.hold {
			return len(b), nil
		}
		if _, err := w.Conn.Write(b[i : i+1]); err != nil {
			return i, err
		}
		w.written++
		time.Sleep(w.spec.pause)
	}
	return len(b), nil
}
