package peertest

import (
	"sync"
	"testing"
)

// Damager is a relay on 127.0.0.1 to a node that changes one byte of the
// payload of the first message of a command it passes from the node to
// the client, leaving the checksum the node computed: bytes damaged on
// the way, which the node did not send.
type Damager struct {
	// Addr is the relay's address.
	Addr string
	cmd  string
	at   int

	mu   sync.Mutex
	done bool
}

// NewDamager starts a relay to target that flips a bit of the byte at
// offset at of the first cmd message's payload (a negative offset counts
// from the end); every other byte passes unchanged. It stops when the
// test ends.
func NewDamager(t testing.TB, target, cmd string, at int) *Damager {
	t.Helper()
	d := &Damager{cmd: cmd, at: at}
	d.Addr = startFrameRelay(t, target, d.edit)
	return d
}

// Damaged reports whether the relay has changed its byte.
func (d *Damager) Damaged() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.done
}

// edit damages the first message of d.cmd.
func (d *Damager) edit(cmd string, _, payload []byte) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	if cmd == d.cmd && !d.done && len(payload) > 0 {
		i := d.at
		if i < 0 {
			i += len(payload)
		}
		payload[min(max(i, 0), len(payload)-1)] ^= 0x10
		d.done = true
	}
	return payload
}
