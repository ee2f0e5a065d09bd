package client

import (
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/spvfilter/spvfilter/gcs"
)

// cachedFilter returns a verified filter kept by the store's cache or,
// without a store, in memory.
func (c *Client) cachedFilter(block chainhash.Hash) ([]byte, bool) {
	if c.st == nil {
		return c.mem.filter(block)
	}
	data, ok, err := c.st.Filter(block)
	return data, ok && err == nil
}

// dropCached forgets a kept filter that failed its check.
func (c *Client) dropCached(block chainhash.Hash) {
	if c.st == nil {
		c.mem.dropFilter(block)
		return
	}
	if err := c.st.DropFilter(block); err != nil {
		c.logf("dropping a cached filter: %v", err)
	}
}

// cachedBatch matches batch b from the filter cache, if it holds every
// filter of it, each checked against its header.
func (c *Client) cachedBatch(b filterBatch, base *gcs.Matcher, check func(int32, []byte) error) ([]int32, bool) {
	datas := make([][]byte, 0, b.stop-b.start+1)
	for h := b.start; h <= b.stop; h++ {
		hash := c.chain.Hash(h)
		data, ok := c.cachedFilter(hash)
		if !ok {
			return nil, false
		}
		if check(h, data) != nil {
			// Kept when its header rested on a liar: make room for the
			// true one.
			c.dropCached(hash)
			return nil, false
		}
		datas = append(datas, data)
	}
	var hits []int32
	if base.Len() == 0 {
		return hits, true
	}
	m := base.Clone()
	for i, data := range datas {
		h := b.start + int32(i)
		hash := c.chain.Hash(h)
		hit, err := m.MatchVerifiedBytes(data, gcs.BasicKey(&hash))
		if err != nil {
			return nil, false
		}
		if hit {
			hits = append(hits, h)
		}
	}
	return hits, true
}

// cacheFilters keeps verified filters in the store's cache or, without a
// store, in memory.
func (c *Client) cacheFilters(blocks []chainhash.Hash, datas [][]byte) {
	if len(blocks) != len(datas) {
		return
	}
	if c.st == nil {
		for i := range blocks {
			c.mem.putFilter(blocks[i], datas[i])
		}
		return
	}
	if err := c.st.PutFilters(blocks, datas); err != nil {
		c.logf("caching filters: %v", err)
	}
}

// filterBatch is one getcfilters request of the scan.
type filterBatch struct {
	start, stop int32
}
