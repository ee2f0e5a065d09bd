package btcwallet

import (
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// hashLookups is how many of its last GetBlockHash answers the backend
// remembers.
const hashLookups = 16

// lookups remembers the heights of the last block hashes GetBlockHash
// returned: btcwallet asks for a block's header by hash right after its
// hash by height (for every block of a recovery, and in the search for
// the birthday block), and finding a hash's height otherwise searches the
// chain down from the tip, a cost that grows with the chain for every
// block. It is safe for concurrent use.
type lookups struct {
	mu      sync.Mutex
	hashes  [hashLookups]chainhash.Hash
	heights [hashLookups]int32
	n       int // answers recorded
}

// add records that hash is the block at height.
func (l *lookups) add(hash chainhash.Hash, height int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	i := l.n % hashLookups
	l.hashes[i], l.heights[i] = hash, height
	l.n++
}

// height returns the height GetBlockHash gave hash lately, if it did:
// the chain may have changed since, so the caller checks it.
func (l *lookups) height(hash chainhash.Hash) (int32, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range min(l.n, hashLookups) {
		if l.hashes[i] == hash {
			return l.heights[i], true
		}
	}
	return 0, false
}
