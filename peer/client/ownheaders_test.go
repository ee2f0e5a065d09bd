package client

import (
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// hashesFrom returns n distinct hashes, the first of tag.
func hashesFrom(tag byte, n int) []chainhash.Hash {
	out := make([]chainhash.Hash, n)
	for i := range out {
		out[i][0], out[i][1], out[i][2] = tag, byte(i), byte(i>>8)
	}
	return out
}

// TestOwnHeadersFollow: the verified filter headers kept above a
// conflict join those a verification returns where they meet on the same
// header, and are replaced where they do not (another side's chain).
func TestOwnHeadersFollow(t *testing.T) {
	a, b := hashesFrom(1, 50), hashesFrom(2, 50)
	for _, tt := range []struct {
		name       string
		start      int32
		headers    []chainhash.Hash
		base       int32
		n          int
		at         int32
		want       chainhash.Hash
		wantAbsent int32
	}{
		{"the next block", 129, a[29:31], 100, 31, 130, a[30], 131},
		{"inside, the same", 110, a[10:20], 100, 30, 129, a[29], 130},
		{"inside, another side's", 110, b[10:20], 110, 10, 119, b[19], 120},
		{"below, joining", 90, append(hashesFrom(3, 10), a[0:5]...), 90, 40, 129, a[29], 130},
		{"below, apart", 90, hashesFrom(3, 5), 90, 5, 94, hashesFrom(3, 5)[4], 95},
		{"from the genesis block", -1, append([]chainhash.Hash{{}}, a[:3]...), 0, 3, 2, a[2], 3},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var o ownHeaders
			o.follow(5, 100, a[:30])
			o.follow(5, tt.start, tt.headers)
			if o.base != tt.base || len(o.chain) != tt.n {
				t.Errorf("kept %d..%d, want %d..%d", o.base, o.base+int32(len(o.chain))-1, tt.base, tt.base+int32(tt.n)-1)
			}
			if got, ok := o.followed(tt.at, tt.at); !ok || got[0] != tt.want {
				t.Errorf("at %d: %v %v, want %v", tt.at, got, ok, tt.want)
			}
			if _, ok := o.followed(tt.wantAbsent, tt.wantAbsent); ok {
				t.Errorf("%d kept", tt.wantAbsent)
			}
		})
	}
	var o ownHeaders
	o.follow(5, 0, a)
	o.follow(-1, 50, b[:1])
	if len(o.chain) != 0 {
		t.Errorf("kept %d filter headers without a conflict", len(o.chain))
	}
}

// TestOwnHeadersBounded: a peer's own filter headers are kept within
// ownWindow of the highest verified, those of blocks that left the chain
// and those above a height given up are forgotten, as are peers no longer
// in the pool; the verified ones at most maxFollowed.
func TestOwnHeadersBounded(t *testing.T) {
	chain := map[int32]chainhash.Hash{}
	hashAt := func(h int32) chainhash.Hash {
		if hash, ok := chain[h]; ok {
			return hash
		}
		return chainhash.Hash{byte(h), byte(h >> 8), byte(h >> 16), 9}
	}
	m, other := &pool.Member{}, &pool.Member{}
	var o ownHeaders
	hs := hashesFrom(1, 3*ownWindow)
	o.note(m, 1, hs, hashAt)
	o.note(other, 1, hs, hashAt)
	o.note(m, 1, hs[:ownWindow], hashAt) // an older range
	o.note(m, ownWindow+1, hs[ownWindow:2*ownWindow], hashAt)
	if n := len(o.peers[m]); n != ownWindow {
		t.Errorf("%d own filter headers kept, want %d", n, ownWindow)
	}
	if top := o.top(m, hashAt); top != 3*ownWindow {
		t.Errorf("top %d, want %d", top, 3*ownWindow)
	}
	if got, ok := o.at(m, 3*ownWindow-1, hashAt); !ok || got != hs[3*ownWindow-2] {
		t.Errorf("at %d: %v %v", 3*ownWindow-1, got, ok)
	}
	chain[3*ownWindow] = chainhash.Hash{7} // a reorganization
	if _, ok := o.at(m, 3*ownWindow, hashAt); ok {
		t.Errorf("own filter header of a block that left the chain kept")
	}
	if top := o.top(m, hashAt); top != 3*ownWindow-1 {
		t.Errorf("top %d after the reorganization, want %d", top, 3*ownWindow-1)
	}
	o.dropAbove(3*ownWindow - 10)
	if top := o.top(m, hashAt); top != 3*ownWindow-10 {
		t.Errorf("top %d after giving up above %d", top, 3*ownWindow-10)
	}
	o.keepOnly([]*pool.Member{m})
	if _, ok := o.peers[other]; ok || len(o.peers) != 1 {
		t.Errorf("the own filter headers of a peer gone are kept")
	}
	o.follow(5, 0, make([]chainhash.Hash, maxFollowed+10))
	if len(o.chain) != maxFollowed || o.base != 10 {
		t.Errorf("kept %d verified filter headers from %d, want %d from 10", len(o.chain), o.base, maxFollowed)
	}
}
