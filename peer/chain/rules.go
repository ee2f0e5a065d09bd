package chain

import (
	"fmt"
	"time"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// checkHeader checks h, whose hash is hash, as the header at height on
// top of s, which must hold its ancestors back to height-contextDepth (or
// the genesis block): it
// must meet its own target, have a target no easier than the network's
// limit, carry the difficulty the network's rules demand (requiredBits),
// carry a timestamp after the median of the previous eleven, at most
// MaxFutureDrift ahead of the clock and, on a BIP 94 network, at most
// MaxTimeWarp before its parent's at a retarget, have a version the
// network's BIP 34, 66 and 65 heights allow, and match the network's
// checkpoints. These are the checks btcd's blockchain package makes of a
// header (checkBlockHeaderSanity and CheckBlockHeaderContext).
func checkHeader(params *chaincfg.Params, pc *PowCheck, s *span, h *wire.BlockHeader, hash *chainhash.Hash, height int32, now time.Time) error {
	if err := checkWork(params, pc, s, h, hash, height); err != nil {
		return err
	}
	if mtp := medianTime(s, height-1); !h.Timestamp.After(mtp) {
		return fmt.Errorf("timestamp %v not after the median time past %v", h.Timestamp, mtp)
	}
	if BIP94(params) && height%retargetInterval(params) == 0 {
		prev := s.at(height - 1).Timestamp
		if h.Timestamp.Before(prev.Add(-MaxTimeWarp)) {
			return fmt.Errorf("timestamp %v more than %v before its parent's at a retarget (BIP 94 time-warp rule)", h.Timestamp.UTC(), MaxTimeWarp)
		}
	}
	if (h.Version < 2 && height >= params.BIP0034Height) ||
		(h.Version < 3 && height >= params.BIP0066Height) ||
		(h.Version < 4 && height >= params.BIP0065Height) {
		return fmt.Errorf("block version %d no longer valid at height %d (BIP 34, 66, 65)", h.Version, height)
	}
	if limit := now.Add(MaxFutureDrift); h.Timestamp.After(limit) {
		return fmt.Errorf("timestamp %v more than %v in the future", h.Timestamp.UTC(), MaxFutureDrift)
	}
	for _, cp := range params.Checkpoints {
		if cp.Height == height && *cp.Hash != *hash {
			return fmt.Errorf("does not match the network's checkpoint %v", cp.Hash)
		}
	}
	return nil
}

// medianTimeBlocks is how many blocks the median time past spans.
const medianTimeBlocks = 11

// medianTime returns the median timestamp of the eleven blocks of s ending
// at height (fewer near the genesis block).
//
// Every header's check computes one, so it allocates nothing: the
// timestamps are sorted as they are read, by insertion into an array.
func medianTime(s *span, height int32) time.Time {
	var ts [medianTimeBlocks]int64
	n := 0
	for h := height; h >= 0 && n < medianTimeBlocks; h-- {
		t := s.at(h).Timestamp.Unix()
		i := n
		for ; i > 0 && ts[i-1] > t; i-- {
			ts[i] = ts[i-1]
		}
		ts[i] = t
		n++
	}
	return time.Unix(ts[n/2], 0)
}

// contextDepth is how far below a new header the rules read its
// ancestors: a difficulty period (the retarget's first block, the walk of
// lastNormalBits) or the median-time window, whichever is longer; only the
// latter without retargeting (regtest).
func contextDepth(params *chaincfg.Params) int32 {
	if params.PoWNoRetargeting {
		return medianTimeBlocks
	}
	return max(retargetInterval(params), medianTimeBlocks)
}

// The rules as methods of the chain, on the headers it holds in memory.

func (c *Chain) checkHeader(h *wire.BlockHeader, height int32) error {
	hash := h.BlockHash()
	return checkHeader(c.params, NewPowCheck(c.params), &c.span, h, &hash, height, c.now())
}

func (c *Chain) medianTime(height int32) time.Time { return medianTime(&c.span, height) }

func (c *Chain) requiredBits(height int32, ts time.Time) uint32 {
	return requiredBits(c.params, &c.span, height, ts)
}

func (c *Chain) lastNormalBits(height int32) uint32 {
	return lastNormalBits(c.params, &c.span, height)
}

// now reads the chain's clock.
func (c *Chain) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}
