package chain

import "time"

// MedianTime returns the median timestamp of the eleven blocks ending at
// height (fewer near the genesis block): the time a block at height+1
// must be later than. It never decreases along the chain.
func (c *Chain) MedianTime(height int32) time.Time {
	return c.medianTime(min(max(height, 0), c.Height()))
}
