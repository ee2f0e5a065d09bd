package chain

import (
	"fmt"
	"sort"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/wire"
)

// checkHeader checks h as the header at height on top of the chain: it
// must meet its own target, have a target no easier than the network's
// limit, carry the difficulty the network's rules demand (requiredBits),
// carry a timestamp after the median of the previous eleven, at most
// MaxFutureDrift ahead of the clock and, on a BIP 94 network, at most
// MaxTimeWarp before its parent's at a retarget, have a version the
// network's BIP 34, 66 and 65 heights allow, and match the network's
// checkpoints. These are the checks btcd's blockchain package makes of a
// header (checkBlockHeaderSanity and CheckBlockHeaderContext).
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
	if want := c.requiredBits(height, h.Timestamp); h.Bits != want {
		return fmt.Errorf("difficulty bits %08x, network rules require %08x", h.Bits, want)
	}
	if mtp := c.medianTime(height - 1); !h.Timestamp.After(mtp) {
		return fmt.Errorf("timestamp %v not after the median time past %v", h.Timestamp, mtp)
	}
	if BIP94(params) && height%retargetInterval(params) == 0 {
		prev := c.headers[height-1].Timestamp
		if h.Timestamp.Before(prev.Add(-MaxTimeWarp)) {
			return fmt.Errorf("timestamp %v more than %v before its parent's at a retarget (BIP 94 time-warp rule)", h.Timestamp.UTC(), MaxTimeWarp)
		}
	}
	if (h.Version < 2 && height >= params.BIP0034Height) ||
		(h.Version < 3 && height >= params.BIP0066Height) ||
		(h.Version < 4 && height >= params.BIP0065Height) {
		return fmt.Errorf("block version %d no longer valid at height %d (BIP 34, 66, 65)", h.Version, height)
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
