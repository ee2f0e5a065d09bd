package chain

import (
	"math/big"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
)

// MaxTimeWarp is how far before its parent the first block of a difficulty
// period may be dated on a BIP 94 network (testnet4).
const MaxTimeWarp = 600 * time.Second

// retargetInterval returns the number of blocks between difficulty
// retargets: 2016 on the public networks.
func retargetInterval(params *chaincfg.Params) int32 {
	return int32(params.TargetTimespan / params.TargetTimePerBlock)
}

// requiredBits returns the difficulty bits the network's rules demand of a
// header dated ts at height, on top of s's block at height-1. The
// rules are btcd's (blockchain.calcNextRequiredDifficulty) with BIP 94's
// retarget base on testnet4:
//
//   - without retargeting (regtest) every block carries the limit;
//   - between retargets a block keeps its parent's bits, except on networks
//     with ReduceMinDifficulty (testnet3, testnet4, simnet): a block dated
//     more than MinDiffReductionTime after its parent may (and then must)
//     use the limit, and any other block carries the bits of the last
//     block that is a retarget boundary or not at the limit;
//   - at a retarget the bits scale with the time the last interval took
//     (clamped to a factor of RetargetAdjustmentFactor) from the bits of
//     the period's last block, or its first block under BIP 94.
func requiredBits(params *chaincfg.Params, s *span, height int32, ts time.Time) uint32 {
	if params.PoWNoRetargeting {
		// btcd's choice; Bitcoin Core keeps the parent's bits, which
		// is the same on regtest, where the genesis block is at the
		// limit.
		return params.PowLimitBits
	}
	prev := s.at(height - 1)
	interval := retargetInterval(params)
	if height%interval != 0 {
		if !params.ReduceMinDifficulty {
			return prev.Bits
		}
		allowMin := prev.Timestamp.Unix() + int64(params.MinDiffReductionTime/time.Second)
		if ts.Unix() > allowMin {
			return params.PowLimitBits
		}
		return lastNormalBits(params, s, height-1)
	}
	first := s.at(height - interval)
	base := prev.Bits
	if BIP94(params) {
		base = first.Bits
	}
	span := int64(params.TargetTimespan / time.Second)
	factor := params.RetargetAdjustmentFactor
	actual := prev.Timestamp.Unix() - first.Timestamp.Unix()
	actual = max(span/factor, min(actual, span*factor))
	// Integer division rounds down, as in btcd and Bitcoin Core.
	next := new(big.Int).Mul(blockchain.CompactToBig(base), big.NewInt(actual))
	next.Div(next, big.NewInt(span))
	if next.Cmp(params.PowLimit) > 0 {
		next.Set(params.PowLimit)
	}
	return blockchain.BigToCompact(next)
}

// lastNormalBits returns the bits of the block at height or the nearest
// one below it that did not use the minimum-difficulty exception: a
// retarget boundary, or a block whose bits are not the limit (btcd's
// findPrevTestNetDifficulty). The walk never crosses a retarget boundary,
// so it is at most one interval long.
func lastNormalBits(params *chaincfg.Params, s *span, height int32) uint32 {
	interval := retargetInterval(params)
	h := height
	for h > 0 && h%interval != 0 && s.at(h).Bits == params.PowLimitBits {
		h--
	}
	return s.at(h).Bits
}
