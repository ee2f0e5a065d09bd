package chain

import (
	"errors"
	"fmt"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// ErrStorage wraps a failure of a backed chain's store. After a failed
// read, Hash and Header return zero values and Err reports it; after a
// failed write, the chain is what the store holds.
var ErrStorage = errors.New("chain: store failed")

// Store holds a chain's headers by height from the genesis block, as
// peer/store's Store does. A backed chain reads from it the headers it
// does not keep in memory, and writes every change of the chain to it
// (AppendHeaders, Truncate) before Extend or Adopt returns. Nothing else
// may change the store while a backed chain uses it. Its methods must be
// safe for concurrent use.
type Store interface {
	// Height returns the height of the stored tip.
	Height() int32
	// Header returns the stored header at height.
	Header(height int32) (wire.BlockHeader, error)
	// Hash returns the hash of the stored block at height.
	Hash(height int32) (chainhash.Hash, error)
	// HeightOf returns the height of the stored block with hash.
	HeightOf(hash chainhash.Hash) (int32, bool)
	// ReadHeaders returns the stored headers from..to.
	ReadHeaders(from, to int32) ([]wire.BlockHeader, error)
	// AppendHeaders stores headers above the tip.
	AppendHeaders(headers []wire.BlockHeader) error
	// Truncate keeps the headers 0..height.
	Truncate(height int32) error
}

// WindowHeaders is how many of its last headers a backed chain keeps in
// memory at least (and twice as many at most): a difficulty period of
// 2016 blocks, which the difficulty rules read, and some more, so that
// following the tip and shallow reorganizations read nothing from the
// store.
const WindowHeaders = 2100

// storeBatch is how many headers a chain reads from its store at once.
const storeBatch = 4096

// Backed returns the chain of the headers st holds, which keeps only its
// last WindowHeaders to 2×WindowHeaders headers (and their hashes) in
// memory and reads the others from st; every change Extend or Adopt makes
// is written to st. The rules are those of a chain in memory.
//
// Backed first checks every stored header as Load does: genesis block,
// links, proof of work, the difficulty the network demands, checkpoints.
// At the first header that fails, it truncates st below it and returns the
// chain of the headers before it together with an error wrapping
// ErrBadHeader; it returns a nil chain when st cannot be read or
// truncated (ErrStorage) or its first header is not params' genesis block
// (or it holds none).
func Backed(params *chaincfg.Params, st Store) (*Chain, error) {
	return backed(params, st, WindowHeaders)
}

// backed is Backed keeping at least window headers in memory (at least a
// difficulty period and one).
func backed(params *chaincfg.Params, st Store, window int) (*Chain, error) {
	c := &Chain{params: params, store: st, window: max(window, int(contextDepth(params))+1)}
	checkpoints, pc := checkpointMap(params), NewPowCheck(params)
	tip := st.Height()
	if tip < 0 {
		return nil, fmt.Errorf("%w: the store holds no headers, not even the %s genesis block", ErrBadHeader, params.Name)
	}
	for from := int32(0); from <= tip; from += storeBatch {
		hs, err := st.ReadHeaders(from, min(from+storeBatch-1, tip))
		if err != nil {
			return nil, fmt.Errorf("%w: reading headers from %d: %w", ErrStorage, from, err)
		}
		for i := range hs {
			h, height := &hs[i], from+int32(i)
			hash := h.BlockHash()
			if height == 0 {
				if hash != params.GenesisBlock.Header.BlockHash() {
					return nil, fmt.Errorf("%w: the first header is not the %s genesis block", ErrBadHeader, params.Name)
				}
			} else if err := checkLoaded(params, pc, &c.span, h, &hash, height, checkpoints); err != nil {
				if terr := st.Truncate(height - 1); terr != nil {
					return nil, fmt.Errorf("%w: cutting the header at %d that fails (%v): %w", ErrStorage, height, err, terr)
				}
				c.setSpan(&c.span)
				return c, fmt.Errorf("%w: header %v at height %d: %v", ErrBadHeader, hash, height, err)
			}
			c.push(h, hash)
			if len(c.headers) > 2*c.window {
				c.dropBelow(c.tip() + 1 - int32(c.window))
			}
		}
	}
	c.setSpan(&c.span)
	return c, nil
}

// Err returns the first failed read of a backed chain's store, wrapping
// ErrStorage, or nil. After one, Hash, Header, MedianTime, WorkBetween and
// the locators may have answered with zero values, and Extend and Adopt
// refuse to change the chain.
func (c *Chain) Err() error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	return c.readErr
}

// fail records err as a failed read of the store, if it is the first, and
// returns it.
func (c *Chain) fail(err error) error {
	c.errMu.Lock()
	defer c.errMu.Unlock()
	if c.readErr == nil {
		c.readErr = err
	}
	return err
}

// checkStore returns why a backed chain may not change: a failed read, or
// a store no longer holding the chain's tip.
func (c *Chain) checkStore() error {
	if c.store == nil {
		return nil
	}
	if err := c.Err(); err != nil {
		return err
	}
	tip := c.tip()
	if h := c.store.Height(); h != tip {
		return fmt.Errorf("%w: the store's tip is at %d, the chain's at %d: the store was changed by something else", ErrStorage, h, tip)
	}
	if hash, err := c.store.Hash(tip); err != nil || hash != c.hashAt(tip) {
		return fmt.Errorf("%w: the store's tip is not the chain's (%v): the store was changed by something else", ErrStorage, err)
	}
	return nil
}

// readStore reads the stored headers from..to.
func (c *Chain) readStore(from, to int32) ([]wire.BlockHeader, error) {
	hs, err := c.store.ReadHeaders(from, to)
	if err != nil {
		return nil, c.fail(fmt.Errorf("%w: reading headers %d..%d: %w", ErrStorage, from, to, err))
	}
	return hs, nil
}

// visit calls fn with the chain's headers from..to in height order, a
// batch at a time: those below the window read from the store, the others
// from memory. With withHashes, fn gets their hashes too (computed for
// those read from the store); otherwise hashes may be nil.
func (c *Chain) visit(from, to int32, withHashes bool, fn func(hs []wire.BlockHeader, hashes []chainhash.Hash)) error {
	for from <= to && from < c.base {
		end := min(from+storeBatch-1, to, c.base-1)
		hs, err := c.readStore(from, end)
		if err != nil {
			return err
		}
		from = end + 1
		var hashes []chainhash.Hash
		if withHashes {
			hashes = make([]chainhash.Hash, len(hs))
			for i := range hs {
				hashes[i] = hs[i].BlockHash()
			}
		}
		fn(hs, hashes)
	}
	if from <= to {
		fn(c.headers[from-c.base:to+1-c.base], c.hashes[from-c.base:to+1-c.base])
	}
	return nil
}

// readSpan returns a copy of the chain's headers from..to, read from the
// store below the window, with room above for room more.
func (c *Chain) readSpan(from, to int32, room int) (*span, error) {
	n := int(to-from+1) + room
	s := &span{base: from, headers: make([]wire.BlockHeader, 0, n), hashes: make([]chainhash.Hash, 0, n)}
	err := c.visit(from, to, true, func(hs []wire.BlockHeader, hashes []chainhash.Hash) {
		s.headers = append(s.headers, hs...)
		s.hashes = append(s.hashes, hashes...)
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// contextBase returns the lowest height the rules read to check a header
// at height.
func (c *Chain) contextBase(height int32) int32 {
	return max(0, height-contextDepth(c.params))
}

// holdsContext reports whether the chain's memory holds what the rules
// read to check a header at height.
func (c *Chain) holdsContext(height int32) bool { return c.base <= c.contextBase(height) }

// setSpan makes s the chain's headers in memory and indexes them.
func (c *Chain) setSpan(s *span) {
	c.span = *s
	c.index = make(map[chainhash.Hash]int32, len(c.hashes))
	for i, hash := range c.hashes {
		c.index[hash] = c.base + int32(i)
	}
}

// replaceAbove makes the chain's headers above fork those of s, which
// holds the chain's headers from contextBase(fork+1) to fork and a branch
// above; the chain may keep s's arrays.
func (c *Chain) replaceAbove(fork int32, s *span) {
	if !c.holdsContext(fork + 1) {
		// The fork lies below what the chain has in memory.
		c.setSpan(s)
		c.slide()
		return
	}
	for _, hash := range c.hashes[fork+1-c.base:] {
		delete(c.index, hash)
	}
	c.span.cut(fork)
	for h := fork + 1; h <= s.tip(); h++ {
		c.push(s.at(h), s.hashAt(h))
		c.index[s.hashAt(h)] = h
	}
	c.slide()
}

// slide drops from a backed chain's memory the headers below its last
// window once it holds twice as many.
func (c *Chain) slide() {
	if c.store == nil || len(c.headers) <= 2*c.window {
		return
	}
	keep := c.tip() + 1 - int32(c.window)
	for _, hash := range c.hashes[:keep-c.base] {
		delete(c.index, hash)
	}
	c.dropBelow(keep)
}
