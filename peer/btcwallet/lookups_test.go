package btcwallet

import (
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// TestLookups: the last hashLookups answers are remembered, each with its
// own height, and older ones are forgotten.
func TestLookups(t *testing.T) {
	var l lookups
	hash := func(i int) chainhash.Hash { return chainhash.DoubleHashH([]byte{byte(i), byte(i >> 8)}) }
	const n = 3 * hashLookups / 2
	for i := range n {
		l.add(hash(i), int32(1000+i))
	}
	for i := range n {
		h, ok := l.height(hash(i))
		if want := i >= n-hashLookups; ok != want || ok && h != int32(1000+i) {
			t.Errorf("hash %d: height %d, found %v; want found %v at %d", i, h, ok, want, 1000+i)
		}
	}
}
