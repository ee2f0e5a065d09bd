package peertest

import (
	"bytes"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// FilterDamager is a relay on 127.0.0.1 to a node that damages the
// cfilter messages for one block that it passes from the node to the
// client, a bit of the filter's last byte flipped and the checksum the
// node computed left as it was: bytes damaged on the way, which the node
// did not send. Every other message passes unchanged.
type FilterDamager struct {
	// Addr is the relay's address.
	Addr  string
	block chainhash.Hash
	limit int // how many to damage; negative: all

	mu      sync.Mutex
	damaged int
}

// NewFilterDamager starts a FilterDamager to target that damages the
// first n cfilter messages for block (every one if n is negative),
// whichever connection they come on. It stops when the test ends.
func NewFilterDamager(t testing.TB, target string, block chainhash.Hash, n int) *FilterDamager {
	t.Helper()
	d := &FilterDamager{block: block, limit: n}
	d.Addr = startFrameRelay(t, target, d.edit)
	return d
}

// Damaged returns how many cfilter messages the relay has damaged.
func (d *FilterDamager) Damaged() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.damaged
}

// edit damages a cfilter message for d.block while the limit allows.
// The payload is the filter type, the block hash, the filter's length
// and the filter.
func (d *FilterDamager) edit(cmd string, _, payload []byte) []byte {
	if cmd != wire.CmdCFilter || len(payload) <= 1+chainhash.HashSize+1 || !bytes.Equal(payload[1:1+chainhash.HashSize], d.block[:]) {
		return payload
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.limit >= 0 && d.damaged >= d.limit {
		return payload
	}
	payload[len(payload)-1] ^= 0x10
	d.damaged++
	return payload
}
