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

// Errors returned by Extend, NewBranch, Branch.Add and Adopt; test with
// errors.Is.
var (
	// ErrBadHeader: a header that breaks a rule of the network. The
	// peer that sent it is lying or on another network.
	ErrBadHeader = errors.New("invalid block header")
	// ErrNotConnected: headers whose first one does not connect to any
	// block of the chain (or does not continue a branch's tip).
	ErrNotConnected = errors.New("headers do not connect to the chain")
	// ErrLessWork: the headers of a valid branch received so far do not
	// have more work than the chain above the fork. The chain is
	// unchanged; the branch may yet win when more of it arrives.
	ErrLessWork = errors.New("headers with no more work than the chain")
	// ErrBelowCheckpoint: a branch that forks below the last checkpoint
	// of the network the chain has passed.
	ErrBelowCheckpoint = errors.New("branch forks below a checkpoint")
	// ErrBranchTooLong: a branch that would hold more than
	// MaxBranchHeaders headers.
	ErrBranchTooLong = errors.New("branch too long")
)

// MaxFutureDrift is how far ahead of the local clock a header's timestamp
// may be, as in Bitcoin Core and btcd.
const MaxFutureDrift = 2 * time.Hour

// Chain is a verified chain of block headers from the genesis block.
// A chain made by New or Load holds every header in memory; one made by
// Backed holds its last headers and reads the others from its Store.
// It is safe for concurrent use.
type Chain struct {
	params *chaincfg.Params

	// mu guards span, index and the store's contents: Extend and
	// Adopt hold it to change them, the readers share it.
	mu sync.RWMutex
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
	// time.Now. Tests set it, before the chain is shared.
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
func (c *Chain) Height() int32 {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.tip()
}

// Tip returns the height and hash of the tip, read together.
func (c *Chain) Tip() (height int32, hash chainhash.Hash) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.tip(), c.hashAt(c.tip())
}

// Hash returns the hash of the block at height h, or the zero hash if h is
// outside the chain (or, for a backed chain, if the store cannot be read:
// see Err).
func (c *Chain) Hash(h int32) chainhash.Hash {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.hash(h)
}

func (c *Chain) hash(h int32) chainhash.Hash {
	if h < 0 || h > c.tip() {
		return chainhash.Hash{}
	}
	hash, _ := c.hashAtHeight(h)
	return hash
}

// Hashes returns the hashes of the blocks from..to, all read from the
// chain as it is at one moment. It fails when the range is outside the
// chain or, for a backed chain, when the store cannot be read (the error
// wraps ErrStorage).
func (c *Chain) Hashes(from, to int32) ([]chainhash.Hash, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if err := c.checkRange(from, to); err != nil {
		return nil, err
	}
	return c.hashRange(from, to)
}

// Headers returns the headers of the blocks from..to, read under one
// lock: a range of one chain state, however the chain changes meanwhile.
func (c *Chain) Headers(from, to int32) ([]wire.BlockHeader, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if err := c.checkRange(from, to); err != nil {
		return nil, err
	}
	out := make([]wire.BlockHeader, 0, to-from+1)
	err := c.visit(from, to, false, func(hs []wire.BlockHeader, _ []chainhash.Hash) {
		out = append(out, hs...)
	})
	return out, err
}

// hashRange returns the hashes of the blocks from..to of the chain, a
// range inside it.
func (c *Chain) hashRange(from, to int32) ([]chainhash.Hash, error) {
	out := make([]chainhash.Hash, 0, to-from+1)
	err := c.visit(from, to, true, func(_ []wire.BlockHeader, hashes []chainhash.Hash) {
		out = append(out, hashes...)
	})
	return out, err
}

// Header returns the header at height h, or the zero header if h is outside
// the chain (or, for a backed chain, if the store cannot be read: see Err).
func (c *Chain) Header(h int32) wire.BlockHeader {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if h < 0 || h > c.tip() {
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
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.heightOf(hash)
}

func (c *Chain) heightOf(hash chainhash.Hash) (int32, bool) {
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
// dense at first, then exponentially sparser, as getheaders expects: it
// is LocatorAt the tip.
func (c *Chain) Locator() []*chainhash.Hash {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return locator(c.tip(), c.hash)
}

// LocatorAt returns a locator as Locator does, but starting at the block
// at height (at most the tip; below 0, the locator holds only the genesis
// block). A node answers getheaders with the headers after the highest
// block of the locator on its own chain: asked with LocatorAt(tip-1), a
// node whose chain holds the tip sends the tip first.
func (c *Chain) LocatorAt(height int32) []*chainhash.Hash {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return locator(min(height, c.tip()), c.hash)
}

// locator returns the hashes, by hashAt, of the blocks at top and below:
// ten in a row, then each step twice as long as the one before, and the
// genesis block last.
func locator(top int32, hashAt func(int32) chainhash.Hash) []*chainhash.Hash {
	var loc []*chainhash.Hash
	step := int32(1)
	for h := top; h > 0; h -= step {
		hash := hashAt(h)
		loc = append(loc, &hash)
		if len(loc) >= 10 {
			step *= 2
		}
	}
	genesis := hashAt(0)
	return append(loc, &genesis)
}

// Work returns the expected number of hashes a block of the given
// difficulty bits took: 2^256 / (target+1).
func Work(bits uint32) *big.Int { return blockchain.CalcWork(bits) }

// WorkBetween returns the work of the blocks from+1..to of the chain (for
// a backed chain, of those the store can read: see Err).
func (c *Chain) WorkBetween(from, to int32) *big.Int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	w, _ := c.workBetween(from, to)
	return w
}

func (c *Chain) workBetween(from, to int32) (*big.Int, error) {
	w := new(big.Int)
	err := c.visit(max(from+1, 0), min(to, c.tip()), false, func(hs []wire.BlockHeader, _ []chainhash.Hash) {
		for i := range hs {
			w.Add(w, Work(hs[i].Bits))
		}
	})
	return w, err
}

// Update says how Extend or Adopt changed the chain.
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
// block of the chain; headers the chain already holds are skipped. Those
// that continue the tip are appended up to the first that breaks a rule.
// Those that fork off below the tip are a branch (see NewBranch): it
// replaces the chain's blocks above the fork only if the headers given
// have more work, and never below the highest checkpoint the chain
// holds; otherwise the chain is unchanged and the error wraps
// ErrLessWork, ErrBelowCheckpoint, ErrBadHeader or ErrBranchTooLong. A
// branch that ErrLessWork turns away may win with more of its headers:
// NewBranch and Branch.Add receive it a message at a time.
//
// A backed chain writes every change to its store before Extend returns:
// the headers appended, or the truncation to the fork and the branch. If
// the store fails, the error wraps ErrStorage and the chain is what the
// store holds: unchanged, or, when only the branch could not be written,
// cut to the fork (the Update says so).
func (c *Chain) Extend(headers []*wire.BlockHeader) (Update, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	up := Update{Fork: c.tip()}
	if len(headers) == 0 {
		return up, nil
	}
	if err := c.checkStore(); err != nil {
		return up, err
	}
	fork, headers, err := c.connect(headers)
	switch {
	case err != nil || len(headers) == 0:
		return up, err
	case fork == c.tip():
		up.Connected, err = c.appendChecked(headers)
		return up, err
	}
	// Weigh a branch before checking it, so that one with no more work
	// is turned away at once.
	if err := c.checkFork(fork); err != nil {
		return up, err
	}
	old, err := c.workBetween(fork, c.tip())
	if err != nil {
		return up, err
	}
	if err := c.weigh(fork, len(headers), workOf(headers), old); err != nil {
		return up, err
	}
	b, err := c.newBranch(fork, headers)
	if err != nil {
		return up, err
	}
	b.seenTip, b.seenWork = c.hashAt(c.tip()), old
	return c.adopt(b)
}

// connect returns the height of the block the first of headers, which
// must not be empty, connects to, and the headers that follow those the
// chain already holds above it.
func (c *Chain) connect(headers []*wire.BlockHeader) (int32, []*wire.BlockHeader, error) {
	parent, ok := c.heightOf(headers[0].PrevBlock)
	if !ok {
		return 0, nil, fmt.Errorf("%w: first header %v has unknown parent %v", ErrNotConnected, headers[0].BlockHash(), headers[0].PrevBlock)
	}
	for len(headers) > 0 && parent < c.tip() {
		next, err := c.hashAtHeight(parent + 1)
		if err != nil {
			return 0, nil, err
		}
		if headerHash(headers[0]) != next {
			break
		}
		parent++
		headers = headers[1:]
	}
	return parent, headers, nil
}

// appendChecked checks and appends headers on top of the tip, stopping at
// the first bad one, and writes those appended to the store; it returns
// how many were appended.
func (c *Chain) appendChecked(headers []*wire.BlockHeader) (int, error) {
	tip := c.tip()
	if !c.holdsContext(tip + 1) {
		s, err := c.readSpan(c.contextBase(tip+1), tip, len(headers))
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
	for h := tip + 1; h <= c.tip(); h++ {
		c.index[c.hashAt(h)] = h
	}
	c.slide()
	return n, checkErr
}

// checkOnto checks headers one by one as the next headers on top of s and
// pushes each that passes onto s, stopping at the first that fails; it
// returns how many passed.
func checkOnto(params *chaincfg.Params, s *span, headers []*wire.BlockHeader, now func() time.Time) (int, error) {
	pc := NewPowCheck(params)
	for i, h := range headers {
		height := s.tip() + 1
		if h.PrevBlock != s.hashAt(height-1) {
			return i, fmt.Errorf("%w: header at height %d does not link to its parent", ErrBadHeader, height)
		}
		hash := headerHash(h)
		if err := checkHeader(params, pc, s, h, &hash, height, now()); err != nil {
			return i, fmt.Errorf("%w: header %v at height %d: %v", ErrBadHeader, hash, height, err)
		}
		s.push(h, hash)
	}
	return len(headers), nil
}

// workOf returns the work headers claim by their bits.
func workOf(headers []*wire.BlockHeader) *big.Int {
	w := new(big.Int)
	for _, h := range headers {
		w.Add(w, Work(h.Bits))
	}
	return w
}

// weigh returns an error wrapping ErrLessWork unless work, that of n
// headers of a branch forking at fork, is more than old, that of the
// chain above the fork.
func (c *Chain) weigh(fork int32, n int, work, old *big.Int) error {
	if work.Cmp(old) <= 0 {
		return fmt.Errorf("%w: %d headers received so far, forking at height %d, against the chain's %d blocks above it",
			ErrLessWork, n, fork, c.tip()-fork)
	}
	return nil
}

// checkFork returns an error wrapping ErrBelowCheckpoint if a branch
// forking at fork would replace a checkpoint the chain holds.
func (c *Chain) checkFork(fork int32) error {
	if cp := c.lastCheckpointHeight(); fork < cp {
		return fmt.Errorf("%w: fork at height %d, checkpoint at %d", ErrBelowCheckpoint, fork, cp)
	}
	return nil
}

// lastCheckpointHeight returns the height of the highest network
// checkpoint at or below the tip, or -1.
func (c *Chain) lastCheckpointHeight() int32 {
	best := int32(-1)
	for _, cp := range c.params.Checkpoints {
		if cp.Height <= c.tip() && cp.Height > best {
			best = cp.Height
		}
	}
	return best
}

// CheckRange validates an inclusive height range against the chain.
func (c *Chain) CheckRange(from, to int32) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.checkRange(from, to)
}

func (c *Chain) checkRange(from, to int32) error {
	if from < 0 || to < from || to > c.tip() {
		return fmt.Errorf("height range %d..%d outside the chain 0..%d", from, to, c.tip())
	}
	return nil
}
