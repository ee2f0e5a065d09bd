package peertest

import (
	"sync"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// BlockDamager is a relay on 127.0.0.1 to a node that damages the block
// messages of one block that it passes from the node to the client, a
// bit of the block's last byte flipped and the checksum the node
// computed left as it was: bytes damaged on the way, which the node did
// not send. Every other message passes unchanged.
type BlockDamager struct {
	// Addr is the relay's address.
	Addr  string
	block chainhash.Hash
	limit int // how many to damage; negative: all

	mu      sync.Mutex
	damaged int
}

// NewBlockDamager starts a BlockDamager to target that damages the first
// n block messages of block (every one if n is negative), whichever
// connection they come on. It stops when the test ends.
func NewBlockDamager(t testing.TB, target string, block chainhash.Hash, n int) *BlockDamager {
	t.Helper()
	d := &BlockDamager{block: block, limit: n}
	d.Addr = startFrameRelay(t, target, d.edit)
	return d
}

// Damaged returns how many block messages the relay has damaged.
func (d *BlockDamager) Damaged() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.damaged
}

// edit damages a block message of d.block while the limit allows. The
// payload starts with the block's header, whose hash is the block's;
// its last byte is the last transaction's lock time.
func (d *BlockDamager) edit(cmd string, _, payload []byte) []byte {
	if cmd != wire.CmdBlock || len(payload) <= wire.MaxBlockHeaderPayload || chainhash.DoubleHashH(payload[:wire.MaxBlockHeaderPayload]) != d.block {
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
