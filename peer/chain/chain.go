// Package chain holds a verified chain of block headers: every header
// links to its parent, meets its proof of work and the network's
// difficulty and time rules, and the chain with the most work wins.
//
// A Chain knows nothing of peers; the peer package feeds it the headers a
// node sends, and the client package shares one Chain among its peers.
//
// New and Load make a chain that holds every header in memory (about 195
// bytes a header). Backed makes one over a Store, such as peer/store's,
// that holds only its last WindowHeaders to 2×WindowHeaders headers in
// memory, reads older ones from the store, and writes every header it
// accepts to the store; both check headers by exactly the same rules.
package chain

import (
	"errors"
	"fmt"
	"math/big"
	"sync"
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

// Chain is a verified chain of block headers from the genesis block.
// A chain made by New or Load holds every header in memory; one made by
// Backed holds its last headers and reads the others from its Store.
// Extend is not safe for concurrent use; the other methods may run
// concurrently with each other.
type Chain struct {
	params *chaincfg.Params
	// span holds the headers in memory: all of them for a chain in
	// memory, the last ones (at least window) for a backed chain.
	span
	// index maps the hash of each header in span to its height.
	index map[chainhash.Hash]int32

	store  Store // nil for a chain in memory
	window int   // how many of the last headers a backed chain keeps

	errMu   sync.Mutex
	readErr error // the first failed read of store

	// Now is the clock the future-timestamp rule reads; nil means
	// time.Now. Tests set it.
	Now func() time.Time
}

// New returns the chain holding only params' genesis block, in memory.
func New(params *chaincfg.Params) *Chain {
	c := &Chain{params: params, index: make(map[chainhash.Hash]int32)}
	genesis := params.GenesisBlock.Header
	c.push(&genesis, genesis.BlockHash())
	c.index[c.hashAt(0)] = 0
	return c
}

// Params returns the network parameters the chain is checked against.
func (c *Chain) Params() *chaincfg.Params { return c.params }

// Height returns the height of the tip.
func (c *Chain) Height() int32 { return c.tip() }

// Hash returns the hash of the block at height h, or the zero hash if h is
// outside the chain (or, for a backed chain, if the store cannot be read:
// see Err).
func (c *Chain) Hash(h int32) chainhash.Hash {
	if h < 0 || h > c.Height() {
		return chainhash.Hash{}
	}
	hash, _ := c.hashAtHeight(h)
	return hash
}

// Header returns the header at height h, or the zero header if h is outside
// the chain (or, for a backed chain, if the store cannot be read: see Err).
func (c *Chain) Header(h int32) wire.BlockHeader {
	if h < 0 || h > c.Height() {
		return wire.BlockHeader{}
	}
	if c.holds(h) {
		return *c.at(h)
	}
	hdr, err := c.store.Header(h)
	if err != nil {
		c.fail(fmt.Errorf("%w: header at height %d: %w", ErrStorage, h, err))
		return wire.BlockHeader{}
	}
	return hdr
}

// hashAtHeight returns the hash of the block at height h of the chain.
func (c *Chain) hashAtHeight(h int32) (chainhash.Hash, error) {
	if c.holds(h) {
		return c.hashAt(h), nil
	}
	hash, err := c.store.Hash(h)
	if err != nil {
		return chainhash.Hash{}, c.fail(fmt.Errorf("%w: hash at height %d: %w", ErrStorage, h, err))
	}
	return hash, nil
}

// HeightOf returns the height of the block with the given hash.
func (c *Chain) HeightOf(hash chainhash.Hash) (int32, bool) {
	if h, ok := c.index[hash]; ok {
		return h, true
	}
	if c.store == nil {
		return 0, false
	}
	// The store holds the chain: what it finds below the window is in it.
	if h, ok := c.store.HeightOf(hash); ok && h < c.base {
		return h, true
	}
	return 0, false
}

// Locator returns block hashes from the tip back to the genesis block,
// dense at first, then exponentially sparser, as getheaders expects.
func (c *Chain) Locator() []*chainhash.Hash {
	var loc []*chainhash.Hash
	step := int32(1)
	for h := c.Height(); h > 0; h -= step {
		hash := c.Hash(h)
		loc = append(loc, &hash)
		if len(loc) >= 10 {
			step *= 2
		}
	}
	genesis := c.Hash(0)
	return append(loc, &genesis)
}

// Work returns the expected number of hashes a block of the given
// difficulty bits took: 2^256 / (target+1).
func Work(bits uint32) *big.Int { return blockchain.CalcWork(bits) }

// WorkBetween returns the work of the blocks from+1..to of the chain (for
// a backed chain, of those the store can read: see Err).
func (c *Chain) WorkBetween(from, to int32) *big.Int {
	w, _ := c.workBetween(from, to)
	return w
}

func (c *Chain) workBetween(from, to int32) (*big.Int, error) {
	w := new(big.Int)
	from, to = max(from+1, 0), min(to, c.Height())
	// Below the window, read the store a batch at a time.
	for from <= to && from < c.base {
		end := min(from+storeBatch-1, to, c.base-1)
		hs, err := c.readStore(from, end)
		if err != nil {
			return w, err
		}
		for i := range hs {
			w.Add(w, Work(hs[i].Bits))
		}
		from = end + 1
	}
	for h := from; h <= to; h++ {
		w.Add(w, Work(c.at(h).Bits))
	}
	return w, nil
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
//
// A backed chain writes every change to its store before Extend returns:
// the headers appended, or the truncation to the fork and the branch. If
// the store fails, the error wraps ErrStorage and the chain is what the
// store holds: unchanged, or, when only the branch could not be written,
// cut to the fork (the Update says so).
func (c *Chain) Extend(headers []*wire.BlockHeader) (Update, error) {
	up := Update{Fork: c.Height()}
	if len(headers) == 0 {
		return up, nil
	}
	if err := c.checkStore(); err != nil {
		return up, err
	}
	parent, ok := c.HeightOf(headers[0].PrevBlock)
	if !ok {
		return up, fmt.Errorf("%w: first header %v has unknown parent %v", ErrNotConnected, headers[0].BlockHash(), headers[0].PrevBlock)
	}
	// Skip what the chain already has.
	for len(headers) > 0 && parent < c.Height() {
		next, err := c.hashAtHeight(parent + 1)
		if err != nil {
			return up, err
		}
		if headers[0].BlockHash() != next {
			break
		}
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
	unchanged := Update{Fork: c.Height()}
	if cp := c.lastCheckpointHeight(); parent < cp {
		return up, fmt.Errorf("%w: fork at height %d, checkpoint at %d", ErrBelowCheckpoint, parent, cp)
	}
	oldWork, err := c.workBetween(parent, c.Height())
	if err != nil {
		return unchanged, err
	}
	newWork := new(big.Int)
	for _, h := range headers {
		newWork.Add(newWork, Work(h.Bits))
	}
	if newWork.Cmp(oldWork) <= 0 {
		return unchanged, fmt.Errorf("%w: %d headers forking at height %d against %d blocks", ErrLessWork, len(headers), parent, c.Height()-parent)
	}
	// Check the whole branch on a copy of the fork's ancestors: a bad
	// branch changes nothing.
	branch, err := c.readSpan(c.contextBase(parent+1), parent)
	if err != nil {
		return unchanged, err
	}
	if _, err := checkOnto(c.params, branch, headers, c.now); err != nil {
		return unchanged, err
	}
	disconnected := make([]chainhash.Hash, 0, c.Height()-parent)
	for h := parent + 1; h <= c.Height(); h++ {
		hash, err := c.hashAtHeight(h)
		if err != nil {
			return unchanged, err
		}
		disconnected = append(disconnected, hash)
	}
	if c.store != nil {
		if err := c.store.Truncate(parent); err != nil {
			return unchanged, fmt.Errorf("%w: truncating to the fork at %d: %w", ErrStorage, parent, err)
		}
		if err := c.store.AppendHeaders(branch.headers[parent+1-branch.base:]); err != nil {
			// The store holds the chain up to the fork: so does the chain.
			branch.cut(parent)
			c.adopt(parent, branch)
			return Update{Fork: parent, Disconnected: disconnected}, fmt.Errorf("%w: writing the branch above %d: %w", ErrStorage, parent, err)
		}
	}
	c.adopt(parent, branch)
	up.Disconnected = disconnected
	up.Connected = len(headers)
	return up, nil
}

// appendChecked checks and appends headers on top of the tip, stopping at
// the first bad one, and writes those appended to the store; it returns
// how many were appended.
func (c *Chain) appendChecked(headers []*wire.BlockHeader) (int, error) {
	tip := c.Height()
	if !c.holdsContext(tip + 1) {
		s, err := c.readSpan(c.contextBase(tip+1), tip)
		if err != nil {
			return 0, err
		}
		c.setSpan(s)
	}
	n, checkErr := checkOnto(c.params, &c.span, headers, c.now)
	if n > 0 && c.store != nil {
		if err := c.store.AppendHeaders(c.headers[len(c.headers)-n:]); err != nil {
			c.span.cut(tip)
			return 0, fmt.Errorf("%w: appending %d headers: %w", ErrStorage, n, err)
		}
	}
	for h := tip + 1; h <= c.Height(); h++ {
		c.index[c.hashAt(h)] = h
	}
	c.slide()
	return n, checkErr
}

// checkOnto checks headers one by one as the next headers on top of s and
// pushes each that passes onto s, stopping at the first that fails; it
// returns how many passed.
func checkOnto(params *chaincfg.Params, s *span, headers []*wire.BlockHeader, now func() time.Time) (int, error) {
	for i, h := range headers {
		height := s.tip() + 1
		if h.PrevBlock != s.hashAt(height-1) {
			return i, fmt.Errorf("%w: header at height %d does not link to its parent", ErrBadHeader, height)
		}
		hash := h.BlockHash()
		if err := checkHeader(params, s, h, &hash, height, now()); err != nil {
			return i, fmt.Errorf("%w: header %v at height %d: %v", ErrBadHeader, hash, height, err)
		}
		s.push(h, hash)
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
