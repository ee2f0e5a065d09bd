// Package chain holds a verified chain of block headers: every header
// links to its parent, meets its proof of work and the network's
// difficulty and time rules, and the chain with the most work wins.
//
// A Chain knows nothing of peers; the peer package feeds it the headers a
// node sends, and the client package shares one Chain among its peers.
package chain

import (
	"errors"
	"fmt"
	"math/big"
	"time"

	"github.com/btcsuite/btcd/blockchain"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Errors returned by Extend; test with errors.Is.
var (
	// ErrBadHeader: a header that breaks a rule of the network. The
	// peer that sent it is lying or on another network.
	ErrBadHeader = errors.New("invalid block header")
	// ErrNotConnected: headers whose first one does not connect to any
	// block of the chain.
	ErrNotConnected = errors.New("headers do not connect to the chain")
	// ErrLessWork: a valid branch that does not have more work than the
	// chain's own from the fork point. The chain is unchanged.
	ErrLessWork = errors.New("branch has no more work than the chain")
	// ErrBelowCheckpoint: a branch that forks below the last checkpoint
	// of the network the chain has passed.
	ErrBelowCheckpoint = errors.New("branch forks below a checkpoint")
)

// MaxFutureDrift is how far ahead of the local clock a header's timestamp
// may be, as in Bitcoin Core and btcd.
const MaxFutureDrift = 2 * time.Hour

// Chain is a verified chain of block headers from the genesis block. It is
// not safe for concurrent use.
type Chain struct {
	params  *chaincfg.Params
	headers []wire.BlockHeader
	hashes  []chainhash.Hash
	index   map[chainhash.Hash]int32

	// Now is the clock the future-timestamp rule reads; nil means
	// time.Now. Tests set it.
	Now func() time.Time
}

// New returns the chain holding only params' genesis block.
func New(params *chaincfg.Params) *Chain {
	c := &Chain{params: params, index: make(map[chainhash.Hash]int32)}
	c.append(params.GenesisBlock.Header)
	return c
}

// Params returns the network parameters the chain is checked against.
func (c *Chain) Params() *chaincfg.Params { return c.params }

func (c *Chain) append(h wire.BlockHeader) {
	hash := h.BlockHash()
	c.index[hash] = int32(len(c.headers))
	c.headers = append(c.headers, h)
	c.hashes = append(c.hashes, hash)
}

// truncate drops the headers above height.
func (c *Chain) truncate(height int32) {
	for _, h := range c.hashes[height+1:] {
		delete(c.index, h)
	}
	c.headers = c.headers[:height+1]
	c.hashes = c.hashes[:height+1]
}

// Height returns the height of the tip.
func (c *Chain) Height() int32 { return int32(len(c.headers)) - 1 }

// Hash returns the hash of the block at height h, or the zero hash if h is
// outside the chain.
func (c *Chain) Hash(h int32) chainhash.Hash {
	if h < 0 || h > c.Height() {
		return chainhash.Hash{}
	}
	return c.hashes[h]
}

// Header returns the header at height h, or the zero header if h is outside
// the chain.
func (c *Chain) Header(h int32) wire.BlockHeader {
	if h < 0 || h > c.Height() {
		return wire.BlockHeader{}
	}
	return c.headers[h]
}

// HeightOf returns the height of the block with the given hash.
func (c *Chain) HeightOf(hash chainhash.Hash) (int32, bool) {
	h, ok := c.index[hash]
	return h, ok
}

// Locator returns block hashes from the tip back to the genesis block,
// dense at first, then exponentially sparser, as getheaders expects.
func (c *Chain) Locator() []*chainhash.Hash {
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

// Work returns the expected number of hashes a block of the given
// difficulty bits took: 2^256 / (target+1).
func Work(bits uint32) *big.Int { return blockchain.CalcWork(bits) }

// WorkBetween returns the work of the blocks from+1..to of the chain.
func (c *Chain) WorkBetween(from, to int32) *big.Int {
	w := new(big.Int)
	for h := from + 1; h <= to && h <= c.Height(); h++ {
		w.Add(w, Work(c.headers[h].Bits))
	}
	return w
}

// Update says how Extend changed the chain.
type Update struct {
	// Fork is the height of the last block the chain kept: the old tip
	// when nothing was disconnected.
	Fork int32
	// Disconnected lists the hashes of the blocks above Fork that left
	// the chain, in height order.
	Disconnected []chainhash.Hash
	// Connected counts the headers appended above Fork.
	Connected int
}

// Reorganized reports whether blocks left the chain.
func (u Update) Reorganized() bool { return len(u.Disconnected) > 0 }

// Extend checks headers and appends them. The first must connect to a
// block of the chain; headers the chain already holds are skipped. When
// they fork off below the tip, the branch replaces the chain's blocks
// above the fork only if it has more work, and never below the highest
// checkpoint the chain holds; otherwise the chain is unchanged and the
// error wraps ErrLessWork or ErrBelowCheckpoint.
func (c *Chain) Extend(headers []*wire.BlockHeader) (Update, error) {
	up := Update{Fork: c.Height()}
	if len(headers) == 0 {
		return up, nil
	}
	parent, ok := c.index[headers[0].PrevBlock]
	if !ok {
		return up, fmt.Errorf("%w: first header %v has unknown parent %v", ErrNotConnected, headers[0].BlockHash(), headers[0].PrevBlock)
	}
	// Skip what the chain already has.
	for len(headers) > 0 && parent < c.Height() && headers[0].BlockHash() == c.hashes[parent+1] {
		parent++
		headers = headers[1:]
	}
	up.Fork = parent
	if len(headers) == 0 {
		up.Fork = c.Height()
		return up, nil
	}
	if parent == c.Height() {
		n, err := c.appendChecked(headers)
		up.Connected = n
		return up, err
	}
	// A competing branch.
	if cp := c.lastCheckpointHeight(); parent < cp {
		return up, fmt.Errorf("%w: fork at height %d, checkpoint at %d", ErrBelowCheckpoint, parent, cp)
	}
	oldWork := c.WorkBetween(parent, c.Height())
	newWork := new(big.Int)
	for _, h := range headers {
		newWork.Add(newWork, Work(h.Bits))
	}
	if newWork.Cmp(oldWork) <= 0 {
		return Update{Fork: c.Height()}, fmt.Errorf("%w: %d headers forking at height %d against %d blocks", ErrLessWork, len(headers), parent, c.Height()-parent)
	}
	oldHeaders := append([]wire.BlockHeader(nil), c.headers[parent+1:]...)
	oldHashes := append([]chainhash.Hash(nil), c.hashes[parent+1:]...)
	c.truncate(parent)
	if _, err := c.appendChecked(headers); err != nil {
		// Restore the chain: a bad branch changes nothing.
		c.truncate(parent)
		for _, h := range oldHeaders {
			c.append(h)
		}
		return Update{Fork: c.Height()}, err
	}
	up.Disconnected = oldHashes
	up.Connected = len(headers)
	return up, nil
}

// appendChecked checks and appends headers on top of the tip, stopping at
// the first bad one; it returns how many were appended.
func (c *Chain) appendChecked(headers []*wire.BlockHeader) (int, error) {
	for i, h := range headers {
		height := c.Height() + 1
		if h.PrevBlock != c.hashes[height-1] {
			return i, fmt.Errorf("%w: header at height %d does not link to its parent", ErrBadHeader, height)
		}
		if err := c.checkHeader(h, height); err != nil {
			return i, fmt.Errorf("%w: header %v at height %d: %v", ErrBadHeader, h.BlockHash(), height, err)
		}
		c.append(*h)
	}
	return len(headers), nil
}

// lastCheckpointHeight returns the height of the highest network
// checkpoint at or below the tip, or -1.
func (c *Chain) lastCheckpointHeight() int32 {
	best := int32(-1)
	for _, cp := range c.params.Checkpoints {
		if cp.Height <= c.Height() && cp.Height > best {
			best = cp.Height
		}
	}
	return best
}

// CheckRange validates an inclusive height range against the chain.
func (c *Chain) CheckRange(from, to int32) error {
	if from < 0 || to < from || to > c.Height() {
		return fmt.Errorf("height range %d..%d outside the chain 0..%d", from, to, c.Height())
	}
	return nil
}
