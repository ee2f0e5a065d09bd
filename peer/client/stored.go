package client

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// checkStoredCheckpoints compares the stored filter headers at the agreed
// checkpoints with them; at the first that differs, the segment before it
// is stated by a peer and compared height by height (checkStored). The
// stored headers resting on an undecided filter are dropped first
// (dropUndecidedStored): checkStored compares none from there on, so a
// checkpoint above the conflict would differ without end. Each round
// bans peers or drops stored headers, or the comparison fails.
func (v *verification) checkStoredCheckpoints(ctx context.Context, agreed []chainhash.Hash) error {
	c := v.c
	if err := c.dropUndecidedStored(v.log); err != nil {
		return err
	}
	for i := 0; i < len(agreed); i++ {
		h := int32(i+1) * wire.CFCheckptInterval
		if c.st.FilterHeaderTip() < h {
			return nil
		}
		stored, err := c.st.FilterHeaders(h, h)
		if err != nil {
			return fmt.Errorf("client: reading the stored filter headers: %w", err)
		}
		if stored[0] == agreed[i] {
			continue
		}
		start, prev := segmentStart(i, agreed)
		ms := v.covering(i)
		if len(ms) == 0 {
			return nil
		}
		m := ms[rand.IntN(len(ms))]
		hashes, err := c.checkpointSegment(ctx, m, start, h, prev, agreed[i])
		if err != nil {
			return &pool.Failure{Member: m, Err: err}
		}
		tip := c.st.FilterHeaderTip()
		banned, err := c.checkStored(ctx, v.log, v.ms, start, headersFrom(prev, hashes), hashes)
		if err != nil {
			return err
		}
		if !banned && c.st.FilterHeaderTip() == tip {
			return fmt.Errorf("client: the filter header stored in %s at height %d differs from the peers' checkpoint, but no stored header of the segment below it does", c.st.Dir(), h)
		}
		v.keepLive()
		if len(v.ms) == 0 {
			return c.noPeers("getcfheaders")
		}
		// The stored headers were dropped from the difference on, or
		// the peers that differ were banned: look again.
		i--
	}
	return nil
}
