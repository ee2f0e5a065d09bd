package chain

import (
	"fmt"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Load builds a chain from headers already verified once, as a store
// keeps them: headers[0] must be params' genesis block. Each later header
// must link to its parent, meet its own target, carry the difficulty the
// network's rules demand and match the network's checkpoints. The rules
// on timestamps and versions, which Extend checked when the header first
// arrived and which no later header can change, are not checked again.
//
// At the first header that fails, Load returns the chain of the headers
// before it together with an error wrapping ErrBadHeader; it returns a nil
// chain only when headers[0] is not the genesis block. The chain keeps
// headers as its own: the caller must not change them afterwards.
func Load(params *chaincfg.Params, headers []wire.BlockHeader) (*Chain, error) {
	if len(headers) == 0 || headers[0].BlockHash() != params.GenesisBlock.Header.BlockHash() {
		return nil, fmt.Errorf("%w: the first header is not the %s genesis block", ErrBadHeader, params.Name)
	}
	// The chain takes headers over rather than copy them: on a
	// mainnet-sized chain that saves some 90 MB.
	c := &Chain{
		params: params,
		span:   span{headers: headers[:1], hashes: make([]chainhash.Hash, 1, len(headers))},
		index:  make(map[chainhash.Hash]int32, len(headers)),
	}
	c.hashes[0] = headers[0].BlockHash()
	c.index[c.hashes[0]] = 0
	checkpoints, pc := checkpointMap(params), NewPowCheck(params)
	for i := 1; i < len(headers); i++ {
		h := &headers[i]
		height := int32(i)
		hash := h.BlockHash()
		if err := checkLoaded(params, pc, &c.span, h, &hash, height, checkpoints); err != nil {
			return c, fmt.Errorf("%w: header %v at height %d: %v", ErrBadHeader, hash, height, err)
		}
		// As push does, without copying the header onto itself.
		c.index[hash] = height
		c.headers = headers[:i+1]
		c.hashes = append(c.hashes, hash)
	}
	return c, nil
}

// checkpointMap returns params' checkpoints by height.
func checkpointMap(params *chaincfg.Params) map[int32]chainhash.Hash {
	checkpoints := make(map[int32]chainhash.Hash, len(params.Checkpoints))
	for _, cp := range params.Checkpoints {
		checkpoints[cp.Height] = *cp.Hash
	}
	return checkpoints
}

// checkLoaded makes Load's checks of h, whose hash is hash, as the header
// at height on top of s.
func checkLoaded(params *chaincfg.Params, pc *PowCheck, s *span, h *wire.BlockHeader, hash *chainhash.Hash, height int32, checkpoints map[int32]chainhash.Hash) error {
	if parent := s.hashAt(height - 1); h.PrevBlock != parent {
		return fmt.Errorf("does not link to its parent %v", parent)
	}
	if err := checkWork(params, pc, s, h, hash, height); err != nil {
		return err
	}
	if cp, ok := checkpoints[height]; ok && cp != *hash {
		return fmt.Errorf("does not match the network's checkpoint %v", cp)
	}
	return nil
}
