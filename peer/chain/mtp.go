package chain

import "time"

// MedianTime returns the median timestamp of the eleven blocks ending at
// height (fewer near the genesis block): the time a block at height+1
// must be later than. It never decreases along the chain. For a backed
// chain whose store cannot be read it returns the zero time (see Err).
func (c *Chain) MedianTime(height int32) time.Time {
	c.mu.RLock()
	defer c.mu.RUnlock()
	height = min(max(height, 0), c.tip())
	from := max(0, height-medianTimeBlocks+1)
	if c.holds(from) {
		return medianTime(&c.span, height)
	}
	s, err := c.readSpan(from, height, 0)
	if err != nil {
		return time.Time{}
	}
	return medianTime(s, height)
}
