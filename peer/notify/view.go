package notify

import (
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/client"
)

// view is the chain as the rescan reported it: the hashes of its last
// blocks, from base (the blocks below are the client's chain's).
type view struct {
	base   int32
	hashes []chainhash.Hash
}

// tip returns the height of the last block reported connected.
func (v *view) tip() int32 { return v.base + int32(len(v.hashes)) - 1 }

// connect records the block hash at height h, keeping at most keep+1
// blocks.
func (v *view) connect(h int32, hash chainhash.Hash, keep int32) {
	if h != v.tip()+1 {
		v.base, v.hashes = h, nil
	}
	v.hashes = append(v.hashes, hash)
	if over := int32(len(v.hashes)) - keep - 1; over > 0 {
		v.hashes = v.hashes[over:]
		v.base += over
	}
}

// disconnect forgets the blocks from height h up.
func (v *view) disconnect(h int32) {
	if i := h - v.base; i >= 0 && int(i) < len(v.hashes) {
		v.hashes = v.hashes[:i]
	}
}

// holds reports whether the block hash is at height h of the chain: of
// the blocks reported, or below them of c's chain.
func (v *view) holds(c *client.Client, h int32, hash chainhash.Hash) bool {
	if h < v.base {
		return c.Chain().Hash(h) == hash
	}
	i := h - v.base
	return int(i) < len(v.hashes) && v.hashes[i] == hash
}
