package chain

import (
	"fmt"
	"math/big"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// PowCheck checks headers' proof of work: the target a header's bits
// encode must be positive and within the network's limit, and its hash at
// most that target. It remembers the last target (bits change once per
// difficulty period), so a check allocates almost never. It is not safe
// for concurrent use.
type PowCheck struct {
	limit  *big.Int
	bits   uint32
	target [32]byte // big endian
	valid  bool     // target holds bits' target
}

// NewPowCheck returns a PowCheck of params' network.
func NewPowCheck(params *chaincfg.Params) *PowCheck { return &PowCheck{limit: params.PowLimit} }

// Check returns nil when hash (in chainhash's little-endian order) is at
// most the target of bits, and that target is positive and within the
// network's limit.
func (p *PowCheck) Check(hash *chainhash.Hash, bits uint32) error {
	if !p.valid || p.bits != bits {
		t := blockchain.CompactToBig(bits)
		if t.Sign() <= 0 || t.Cmp(p.limit) > 0 {
			return fmt.Errorf("target %08x outside the network's range", bits)
		}
		p.bits, p.valid = bits, true
		t.FillBytes(p.target[:])
	}
	for i := 0; i < 32; i++ {
		hb, tb := hash[31-i], p.target[i]
		if hb != tb {
			if hb > tb {
				return fmt.Errorf("hash above its target %08x (no proof of work)", bits)
			}
			return nil
		}
	}
	return nil
}

// checkWork checks h, whose hash is hash, as the header at height on top
// of s: its proof of work (pc) and the difficulty the network's rules
// demand (requiredBits).
func checkWork(params *chaincfg.Params, pc *PowCheck, s *span, h *wire.BlockHeader, hash *chainhash.Hash, height int32) error {
	if err := pc.Check(hash, h.Bits); err != nil {
		return err
	}
	if want := requiredBits(params, s, height, h.Timestamp); h.Bits != want {
		return fmt.Errorf("difficulty bits %08x, network rules require %08x", h.Bits, want)
	}
	return nil
}
