package peertest

import (
	"bytes"
	"sync"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Damager is a relay on 127.0.0.1 to a node that changes one byte of the
// payload of messages of a command it passes from the node to the
// client, leaving the checksum the node computed: bytes damaged on the
// way, which the node did not send. Every other byte passes unchanged.
type Damager struct {
	// Addr is the relay's address.
	Addr  string
	cmd   string
	at    int             // the byte's offset; negative: from the end
	block *chainhash.Hash // nil: any message of cmd
	limit int             // how many to damage; negative: all

	mu      sync.Mutex
	damaged int
}

// NewDamager starts a relay to target that flips a bit of the byte at
// offset at of the first cmd message's payload (a negative offset counts
// from the end). It stops when the test ends.
func NewDamager(t testing.TB, target, cmd string, at int) *Damager {
	t.Helper()
	return startDamager(t, target, &Damager{cmd: cmd, at: at, limit: 1})
}

// NewFilterDamager starts a relay to target that damages the last byte
// of the first n cfilter messages for block (every one if n is
// negative), whichever connection they come on.
func NewFilterDamager(t testing.TB, target string, block chainhash.Hash, n int) *Damager {
	t.Helper()
	return startDamager(t, target, &Damager{cmd: wire.CmdCFilter, at: -1, block: &block, limit: n})
}

// NewBlockDamager starts a relay to target that damages the last byte
// of the first n block messages of block (every one if n is negative),
// whichever connection they come on.
func NewBlockDamager(t testing.TB, target string, block chainhash.Hash, n int) *Damager {
	t.Helper()
	return startDamager(t, target, &Damager{cmd: wire.CmdBlock, at: -1, block: &block, limit: n})
}

func startDamager(t testing.TB, target string, d *Damager) *Damager {
	t.Helper()
	d.Addr = startFrameRelay(t, target, d.edit)
	return d
}

// Damaged returns how many messages the relay has damaged.
func (d *Damager) Damaged() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.damaged
}

// about reports whether payload, of a message of d.cmd, is about
// d.block: a cfilter's payload is the filter type, the block hash, the
// filter's length and the filter; a block's starts with its header,
// whose hash is the block's.
func (d *Damager) about(payload []byte) bool {
	switch {
	case d.block == nil:
		return true
	case d.cmd == wire.CmdCFilter:
		return len(payload) > 1+chainhash.HashSize+1 && bytes.Equal(payload[1:1+chainhash.HashSize], d.block[:])
	case d.cmd == wire.CmdBlock:
		return len(payload) > wire.MaxBlockHeaderPayload && chainhash.DoubleHashH(payload[:wire.MaxBlockHeaderPayload]) == *d.block
	}
	return false
}

// edit damages a message of d.cmd about d.block while the limit allows.
func (d *Damager) edit(cmd string, _, payload []byte) []byte {
	if cmd != d.cmd || len(payload) == 0 || !d.about(payload) {
		return payload
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.limit >= 0 && d.damaged >= d.limit {
		return payload
	}
	i := d.at
	if i < 0 {
		i += len(payload)
	}
	payload[min(max(i, 0), len(payload)-1)] ^= 0x10
	d.damaged++
	return payload
}
