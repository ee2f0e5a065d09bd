package client

import (
	"slices"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
)

// memCache keeps, for a client without a store, the filter headers and
// filters it verified lately, so that rescans over the same blocks share
// one download and lookups of one block's filter do not ask the peers
// again. Both are bounded (first in, first out).
type memCache struct {
	mu         sync.Mutex
	headers    map[int32]chainhash.Hash // verified filter headers by height
	heights    []int32                  // in the order they came
	filters    map[chainhash.Hash][]byte
	blocks     []chainhash.Hash // in the order they came
	bytes      int64
	maxHeaders int
	maxBytes   int64
}

// Bounds of a client's memCache: about 12 MB of filter headers, and by
// default 4 MiB of filters (on mainnet, of the last couple of hundred
// blocks: enough for rescans running side by side near the tip, which is
// where they meet).
const (
	memCacheHeaders = 200_000
	memCacheBytes   = 4 << 20
)

// newMemCache returns a memCache keeping up to filterBytes of filters:
// zero means memCacheBytes, negative none (Config.FilterCacheBytes).
func newMemCache(filterBytes int64) *memCache {
	switch {
	case filterBytes == 0:
		filterBytes = memCacheBytes
	case filterBytes < 0:
		filterBytes = 0
	}
	return &memCache{headers: map[int32]chainhash.Hash{}, filters: map[chainhash.Hash][]byte{},
		maxHeaders: memCacheHeaders, maxBytes: filterBytes}
}

// putHeaders keeps the verified filter headers of start, start+1, ...
func (mc *memCache) putHeaders(start int32, headers []chainhash.Hash) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	for i, h := range headers {
		height := start + int32(i)
		if _, ok := mc.headers[height]; !ok {
			mc.heights = append(mc.heights, height)
		}
		mc.headers[height] = h
	}
	for len(mc.heights) > mc.maxHeaders {
		delete(mc.headers, mc.heights[0])
		mc.heights = mc.heights[1:]
	}
}

// header returns the verified filter header of height, if kept.
func (mc *memCache) header(height int32) (chainhash.Hash, bool) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	h, ok := mc.headers[height]
	return h, ok
}

// putFilter keeps a verified filter.
func (mc *memCache) putFilter(block chainhash.Hash, data []byte) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	if _, ok := mc.filters[block]; ok || filterCost(data) > mc.maxBytes {
		return
	}
	mc.filters[block] = data
	mc.blocks = append(mc.blocks, block)
	mc.bytes += filterCost(data)
	for mc.bytes > mc.maxBytes {
		old := mc.blocks[0]
		mc.blocks = mc.blocks[1:]
		mc.bytes -= filterCost(mc.filters[old])
		delete(mc.filters, old)
	}
}

// filterEntryBytes is what a kept filter costs besides its bytes: its map
// entry, key and slice header, and its place in the eviction order.
const filterEntryBytes = 256

// filterCost is the memory a kept filter of data counts for.
func filterCost(data []byte) int64 { return int64(len(data)) + filterEntryBytes }

// filter returns a kept filter.
func (mc *memCache) filter(block chainhash.Hash) ([]byte, bool) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	data, ok := mc.filters[block]
	return data, ok
}

// dropFilter forgets a kept filter.
func (mc *memCache) dropFilter(block chainhash.Hash) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	data, ok := mc.filters[block]
	if !ok {
		return
	}
	delete(mc.filters, block)
	mc.bytes -= filterCost(data)
	mc.blocks = slices.DeleteFunc(mc.blocks, func(b chainhash.Hash) bool { return b == block })
}

// dropAbove forgets the filter headers above height (a reorganization);
// filters are kept by block hash and stay true.
func (mc *memCache) dropAbove(height int32) {
	mc.mu.Lock()
	defer mc.mu.Unlock()
	kept := mc.heights[:0]
	for _, h := range mc.heights {
		if h > height {
			delete(mc.headers, h)
			continue
		}
		kept = append(kept, h)
	}
	mc.heights = kept
}
