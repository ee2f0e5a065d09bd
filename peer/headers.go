package peer

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"sort"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// HeaderChain is a verified chain of block headers from the genesis block.
type HeaderChain struct {
	params  *chaincfg.Params
	headers []wire.BlockHeader
	hashes  []chainhash.Hash
	index   map[chainhash.Hash]int32
}

// NewHeaderChain returns the chain holding only params' genesis block.
func NewHeaderChain(params *chaincfg.Params) *HeaderChain {
	c := &HeaderChain{params: params, index: make(map[chainhash.Hash]int32)}
	c.append(params.GenesisBlock.Header)
	return c
}

func (c *HeaderChain) append(h wire.BlockHeader) {
	hash := h.BlockHash()
	c.index[hash] = int32(len(c.headers))
	c.headers = append(c.headers, h)
	c.hashes = append(c.hashes, hash)
}

// truncate drops the headers above height.
func (c *HeaderChain) truncate(height int32) {
	for _, h := range c.hashes[height+1:] {
		delete(c.index, h)
	}
	c.headers = c.headers[:height+1]
	c.hashes = c.hashes[:height+1]
}

// Height returns the height of the tip.
func (c *HeaderChain) Height() int32 { return int32(len(c.headers)) - 1 }

// Hash returns the hash of the block at height h, or the zero hash if h is
// outside the chain.
func (c *HeaderChain) Hash(h int32) chainhash.Hash {
	if h < 0 || h > c.Height() {
		return chainhash.Hash{}
	}
	return c.hashes[h]
}

// Header returns the header at height h, or the zero header if h is outside
// the chain.
func (c *HeaderChain) Header(h int32) wire.BlockHeader {
	if h < 0 || h > c.Height() {
		return wire.BlockHeader{}
	}
	return c.headers[h]
}

// HeightOf returns the height of the block with the given hash.
func (c *HeaderChain) HeightOf(hash chainhash.Hash) (int32, bool) {
	h, ok := c.index[hash]
	return h, ok
}

// locator returns block hashes from the tip back to the genesis block,
// dense at first, then exponentially sparser, as getheaders expects.
func (c *HeaderChain) locator() []*chainhash.Hash {
	var loc []*chainhash.Hash
	step := int32(1)
	for h := c.Height(); h > 0; h -= step {
		hash := c.hashes[h]
		loc = append(loc, &hash)
		if len(loc) >= 10 {
			step *= 2
		}
	}
	genesis := c.hashes[0]
	return append(loc, &genesis)
}

// SyncHeaders downloads the node's header chain with getheaders and checks
// every header: it must link to its parent, meet its own target, have a
// target no easier than the network's limit, keep the difficulty the
// network's rules allow, carry a timestamp after the median of the previous
// eleven, and match the network's checkpoints.
//
// The difficulty check is exact on networks without retargeting (regtest,
// simnet) and on networks without minimum-difficulty blocks (mainnet,
// signet); on testnet3, whose rules allow minimum-difficulty blocks after
// a 20-minute gap, only the limit is checked.
//
// btcd does not answer getheaders until its tip is less than 24 hours old.
func (p *Peer) SyncHeaders(ctx context.Context) (*HeaderChain, error) {
	const op = "getheaders"
	end, err := p.begin(op)
	if err != nil {
		return nil, err
	}
	defer end()
	chain := NewHeaderChain(p.cfg.Params)
	for {
		msg := wire.NewMsgGetHeaders()
		for _, h := range chain.locator() {
			msg.AddBlockLocatorHash(h)
		}
		if err := p.send(ctx, op, msg); err != nil {
			return nil, err
		}
		m, err := p.recv(ctx, op, is[*wire.MsgHeaders])
		if errors.Is(err, ErrStalled) {
			return nil, p.errorf(op, "%w: no headers within %v (btcd does not answer getheaders while its tip is more than 24 hours old)",
				ErrStalled, p.cfg.Timeout)
		}
		if err != nil {
			return nil, err
		}
		headers := m.(*wire.MsgHeaders)
		if len(headers.Headers) == 0 {
			break
		}
		if err := chain.extend(headers.Headers); err != nil {
			return nil, p.fail(op, "%w: %v", ErrBadHeaders, err)
		}
		p.logf("headers: tip %d", chain.Height())
		if len(headers.Headers) < wire.MaxBlockHeadersPerMsg {
			break
		}
	}
	return chain, nil
}

// extend checks headers and appends them. The first must connect to a
// block of the chain; if that is not the tip, the peer has switched to
// another branch and the chain is cut back first.
func (c *HeaderChain) extend(headers []*wire.BlockHeader) error {
	parent, ok := c.index[headers[0].PrevBlock]
	if !ok {
		return fmt.Errorf("first header %v does not connect to the chain", headers[0].BlockHash())
	}
	if parent < c.Height() {
		c.truncate(parent)
	}
	for _, h := range headers {
		height := c.Height() + 1
		if h.PrevBlock != c.hashes[height-1] {
			return fmt.Errorf("header at height %d does not link to its parent", height)
		}
		if err := c.checkHeader(h, height); err != nil {
			return fmt.Errorf("header %v at height %d: %v", h.BlockHash(), height, err)
		}
		c.append(*h)
	}
	return nil
}

func (c *HeaderChain) checkHeader(h *wire.BlockHeader, height int32) error {
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
	for _, cp := range params.Checkpoints {
		if cp.Height == height && *cp.Hash != hash {
			return fmt.Errorf("does not match the network's checkpoint %v", cp.Hash)
		}
	}
	return nil
}

// requiredBits returns the bits the network's rules demand at height, when
// they can be computed from the headers alone.
func (c *HeaderChain) requiredBits(h *wire.BlockHeader, height int32) (uint32, bool) {
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
func (c *HeaderChain) medianTime(height int32) time.Time {
	var ts []int64
	for h := height; h >= 0 && h > height-11; h-- {
		ts = append(ts, c.headers[h].Timestamp.Unix())
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] < ts[j] })
	return time.Unix(ts[len(ts)/2], 0)
}

// checkRange validates an inclusive height range against chain.
func checkRange(chain *HeaderChain, from, to int32) error {
	if chain == nil {
		return fmt.Errorf("peer: nil header chain")
	}
	if from < 0 || to < from || to > chain.Height() {
		return fmt.Errorf("peer: height range %d..%d outside the chain 0..%d", from, to, chain.Height())
	}
	return nil
}
