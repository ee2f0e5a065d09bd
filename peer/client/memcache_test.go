package client

import (
	"runtime"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// TestMemCacheCountsEntries: a million filters of 8 bytes (near-empty
// blocks) put into the in-memory cache: each entry counts for more than
// its bytes, so the heap stays within a few times the cap.
func TestMemCacheCountsEntries(t *testing.T) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	mc := newMemCache(0)
	n := 0
	for i := 0; i < 1_000_000; i++ {
		var h chainhash.Hash
		h[0], h[1], h[2], h[3] = byte(i), byte(i>>8), byte(i>>16), byte(i>>24)
		mc.putFilter(h, make([]byte, 8)) // a near-empty block's filter
		n++
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("cap %d bytes of filters; kept %d filters of 8 bytes; heap grew by %.1f MB", mc.maxBytes, len(mc.filters), float64(grew)/1e6)
	if grew > 4*mc.maxBytes {
		t.Errorf("a cache capped at %d bytes took %d bytes of heap", mc.maxBytes, grew)
	}
	runtime.KeepAlive(mc)
}
