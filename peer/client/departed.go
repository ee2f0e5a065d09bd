package client

import (
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// departed remembers the blocks that left the chain lately, the last
// maxReorgDepth, and the height they left it above, so that a caller
// whose best block left the chain learns where it forked.
type departed struct {
	mu    sync.Mutex
	fork  map[chainhash.Hash]int32
	order []chainhash.Hash
}

// add remembers that hashes left the chain above fork.
func (d *departed) add(hashes []chainhash.Hash, fork int32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fork == nil {
		d.fork = map[chainhash.Hash]int32{}
	}
	for _, h := range hashes {
		if _, ok := d.fork[h]; !ok {
			d.order = append(d.order, h)
		}
		d.fork[h] = fork
	}
	for len(d.order) > maxReorgDepth {
		delete(d.fork, d.order[0])
		d.order = d.order[1:]
	}
}

// forkOf returns the height above which the block hash left the chain,
// if it is remembered.
func (d *departed) forkOf(hash chainhash.Hash) (int32, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	f, ok := d.fork[hash]
	return f, ok
}
