package peertest

import (
	"bytes"
	"encoding/binary"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/wire"
)

// StaleSums is a relay on 127.0.0.1 to a node that replaces the filter of
// each of the first cfilter messages it passes with other bytes, leaving
// the checksum the node computed for its own: a liar whose lies look like
// damage on the way (the payload does not match its checksum), and that
// serves the node's filters unchanged after.
type StaleSums struct {
	// Addr is the relay's address.
	Addr string
	data []byte

	mu       sync.Mutex
	left     int   // cfilter messages still to replace
	replaced int   // cfilter messages replaced
	passed   int64 // cfilter bytes passed to the client, headers included
}

// NewStaleSums starts a relay to target that serves data, under the
// node's checksum, as the filter of the first n cfilter messages; every
// other message passes unchanged. It stops when the test ends.
func NewStaleSums(t testing.TB, target string, data []byte, n int) *StaleSums {
	t.Helper()
	r := &StaleSums{data: data, left: n}
	r.Addr = startFrameRelay(t, target, r.edit)
	return r
}

// Arm has the relay replace the filters of the next n cfilter messages.
func (r *StaleSums) Arm(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.left = n
}

// Replaced returns how many filters the relay replaced.
func (r *StaleSums) Replaced() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.replaced
}

// CFilterBytes returns the bytes of cfilter messages the relay passed to
// the client, replaced or not.
func (r *StaleSums) CFilterBytes() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.passed
}

// edit replaces the filters of cfilter messages.
func (r *StaleSums) edit(cmd string, hdr, payload []byte) []byte {
	if cmd == wire.CmdCFilter {
		return r.replace(hdr, payload)
	}
	return payload
}

// replace returns the cfilter payload with the relay's filter in place of
// the node's while it has some to replace, hdr's length updated and its
// checksum left as the node gave it.
func (r *StaleSums) replace(hdr, payload []byte) []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.left > 0 && len(payload) >= 33 {
		var b bytes.Buffer
		b.Write(payload[:33]) // filter type and block hash
		if err := wire.WriteVarBytes(&b, wire.ProtocolVersion, r.data); err == nil {
			payload = b.Bytes()
			binary.LittleEndian.PutUint32(hdr[16:20], uint32(len(payload)))
			r.left--
			r.replaced++
		}
	}
	r.passed += int64(len(hdr) + len(payload))
	return payload
}
