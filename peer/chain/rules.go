package chain

import (
	"fmt"
	"math/big"
	"sort"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/wire"
)

// checkHeader checks h as the header at height on top of the chain: it
// must meet its own target, have a target no easier than the network's
// limit, keep the difficulty the network's rules allow, carry a timestamp
// after the median of the previous eleven and at most MaxFutureDrift ahead
// of the clock, and match the network's checkpoints.
func (c *Chain) checkHeader(h *wire.BlockHeader, height int32) error {
	params := c.params
	target := blockchain.CompactToBig(h.Bits)
	if target.Sign() <= 0 || target.Cmp(params.PowLimit) > 0 {
		return fmt.Errorf("target %08x outside the network's range", h.Bits)
	}
	hash := h.BlockHash()
	if blockchain.HashToBig(&hash).Cmp(target) > 0 {
		return fmt.Errorf("hash above its target %08x (no proof of work)", h.Bits)
	}
	if want, ok := c.requiredBits(h, height); ok && h.Bits != want {
		return fmt.Errorf("difficulty bits %08x, network rules require %08x", h.Bits, want)
	}
	if mtp := c.medianTime(height - 1); !h.Timestamp.After(mtp) {
		return fmt.Errorf("timestamp %v not after the median time past %v", h.Timestamp, mtp)
	}
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	if limit := now().Add(MaxFutureDrift); h.Timestamp.After(limit) {
		return fmt.Errorf("timestamp %v more than %v in the future", h.Timestamp.UTC(), MaxFutureDrift)
	}
	for _, cp := range params.Checkpoints {
		if cp.Height == height && *cp.Hash != hash {
			return fmt.Errorf("does not match the network's checkpoint %v", cp.Hash)
		}
	}
	return nil
}

// requiredBits returns the bits the network's rules demand at height, when
// they can be computed from the headers alone.
func (c *Chain) requiredBits(h *wire.BlockHeader, height int32) (uint32, bool) {
	params := c.params
	prev := c.headers[height-1]
	if params.PoWNoRetargeting {
		return prev.Bits, true
	}
	if params.ReduceMinDifficulty {
		return 0, false
	}
	interval := int32(params.TargetTimespan / params.TargetTimePerBlock)
	if height%interval != 0 {
		return prev.Bits, true
	}
	first := c.headers[height-interval]
	actual := prev.Timestamp.Unix() - first.Timestamp.Unix()
	span := int64(params.TargetTimespan / time.Second)
	factor := params.RetargetAdjustmentFactor
	actual = max(span/factor, min(actual, span*factor))
	next := new(big.Int).Mul(blockchain.CompactToBig(prev.Bits), big.NewInt(actual))
	next.Div(next, big.NewInt(span))
	if next.Cmp(params.PowLimit) > 0 {
		next.Set(params.PowLimit)
	}
	return blockchain.BigToCompact(next), true
}

// medianTime returns the median timestamp of the eleven blocks ending at
// height (fewer near the genesis block).
func (c *Chain) medianTime(height int32) time.Time {
	var ts []int64
	for h := height; h >= 0 && h > height-11; h-- {
		ts = append(ts, c.headers[h].Timestamp.Unix())
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return time.Unix(ts[len(ts)/2], 0)
}
