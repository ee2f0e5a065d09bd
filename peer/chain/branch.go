package chain

import (
	"errors"
	"fmt"
	"math/big"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// MaxBranchHeaders is how many headers a Branch (or a branch given to
// Extend at once) may hold above its fork: fifty full headers messages.
// A branch keeps each header with its hash, 136 bytes, so it holds at
// most some 14 MB, and a copy of up to a difficulty period of the chain's
// headers below the fork. A branch that would need more headers to
// outweigh the chain above its fork is refused with ErrBranchTooLong,
// whatever its work.
const MaxBranchHeaders = 100_000

// errSpent is returned for a branch used after Adopt took it.
var errSpent = errors.New("chain: the branch was given to Adopt")

// Branch is a competing branch of a Chain received over several headers
// messages: see the package documentation. NewBranch starts one, Add
// appends each next message, and the chain's Adopt replaces the chain's
// blocks above the fork with it once it has more work. A Branch is for one
// goroutine at a time (and Adopt of it must not run beside its methods);
// the Chain may change meanwhile.
type Branch struct {
	c        *Chain
	fork     int32
	forkHash chainhash.Hash
	// s holds the chain's headers from contextBase(fork+1) to fork, for
	// the rules to read, and the branch's headers above.
	s     *span
	work  *big.Int // of the branch's headers
	spent bool     // given to Adopt

	// The work of the chain above the fork when its tip was seenTip.
	seenTip  chainhash.Hash
	seenWork *big.Int
}

// NewBranch starts a branch with the first headers message of it. The
// first header must connect to a block of the chain (ErrNotConnected);
// headers the chain already holds are skipped, and the branch forks at
// the last of them, or else at the first header's parent. The headers
// are checked by the chain's rules (ErrBadHeader), must not fork below
// the highest checkpoint the chain holds (ErrBelowCheckpoint) and may not
// be more than MaxBranchHeaders (ErrBranchTooLong). The chain is not
// changed.
func (c *Chain) NewBranch(headers []*wire.BlockHeader) (*Branch, error) {
	if len(headers) == 0 {
		return nil, fmt.Errorf("%w: no headers", ErrNotConnected)
	}
	c.mu.RLock()
	defer c.mu.RUnlock()
	fork, headers, err := c.connect(headers)
	if err != nil {
		return nil, err
	}
	return c.newBranch(fork, headers)
}

// newBranch returns the branch of headers above the chain's block at
// fork.
func (c *Chain) newBranch(fork int32, headers []*wire.BlockHeader) (*Branch, error) {
	if err := c.checkFork(fork); err != nil {
		return nil, err
	}
	if err := checkLength(fork, 0, len(headers)); err != nil {
		return nil, err
	}
	s, err := c.readSpan(c.contextBase(fork+1), fork, len(headers))
	if err != nil {
		return nil, err
	}
	b := &Branch{c: c, fork: fork, forkHash: s.hashAt(fork), s: s, work: new(big.Int)}
	if err := b.add(headers); err != nil {
		return nil, err
	}
	return b, nil
}

// Add checks headers, the next headers message of the branch, and
// appends them. The first must continue the branch's tip
// (ErrNotConnected); each must meet the chain's rules (ErrBadHeader); the
// branch may not grow beyond MaxBranchHeaders (ErrBranchTooLong). On an
// error the branch is unchanged.
func (b *Branch) Add(headers []*wire.BlockHeader) error {
	if b.spent {
		return errSpent
	}
	if len(headers) > 0 && headers[0].PrevBlock != b.s.hashAt(b.s.tip()) {
		return fmt.Errorf("%w: header %v does not continue the branch's tip %v at %d",
			ErrNotConnected, headers[0].BlockHash(), b.s.hashAt(b.s.tip()), b.s.tip())
	}
	return b.add(headers)
}

// add checks headers on top of the branch and appends them, all or none.
func (b *Branch) add(headers []*wire.BlockHeader) error {
	if err := checkLength(b.fork, b.len(), len(headers)); err != nil {
		return err
	}
	tip := b.s.tip()
	if _, err := checkOnto(b.c.params, b.s, headers, b.c.now); err != nil {
		b.s.cut(tip)
		return err
	}
	b.work.Add(b.work, workOf(headers))
	return nil
}

// checkLength refuses a branch forking at fork that would grow from have
// headers by more.
func checkLength(fork int32, have, more int) error {
	if have+more > MaxBranchHeaders {
		return fmt.Errorf("%w: %d headers above the fork at %d with %d more, at most %d",
			ErrBranchTooLong, have, fork, more, MaxBranchHeaders)
	}
	return nil
}

// len returns how many headers the branch holds above its fork.
func (b *Branch) len() int { return int(b.s.tip() - b.fork) }

// Fork returns the height of the branch's last block in common with the
// chain, when it was started.
func (b *Branch) Fork() int32 { return b.fork }

// Tip returns the height and hash of the branch's last header (the fork
// block while it holds none).
func (b *Branch) Tip() (height int32, hash chainhash.Hash) {
	return b.s.tip(), b.s.hashAt(b.s.tip())
}

// Locator returns a locator, as Chain.Locator does, for the getheaders
// that asks for the next headers of the branch: from the branch's tip
// back to its fork, then through the chain's blocks below.
func (b *Branch) Locator() []*chainhash.Hash {
	b.c.mu.RLock()
	defer b.c.mu.RUnlock()
	return locator(b.s.tip(), func(h int32) chainhash.Hash {
		if b.s.holds(h) {
			return b.s.hashAt(h)
		}
		return b.c.hash(h)
	})
}

// MoreWork reports whether the branch, as received so far, has more work
// than the chain above the fork as the chain is now: whether Adopt would
// take it. It is false once the fork has left the chain, or after Adopt.
func (b *Branch) MoreWork() bool {
	b.c.mu.RLock()
	defer b.c.mu.RUnlock()
	if b.spent {
		return false
	}
	w, err := b.chainWork()
	return err == nil && b.work.Cmp(w) > 0
}

// chainWork returns the work of the chain's blocks above the branch's
// fork, or an error wrapping ErrNotConnected if the fork has left the
// chain. The caller holds the chain's lock.
func (b *Branch) chainWork() (*big.Int, error) {
	c := b.c
	if b.fork > c.tip() {
		return nil, fmt.Errorf("%w: the branch's fork at %d is above the chain's tip %d", ErrNotConnected, b.fork, c.tip())
	}
	hash, err := c.hashAtHeight(b.fork)
	if err != nil {
		return nil, err
	}
	if hash != b.forkHash {
		return nil, fmt.Errorf("%w: the branch's fork %v at %d has left the chain", ErrNotConnected, b.forkHash, b.fork)
	}
	// The tip's hash names the whole chain, and so its work above the
	// fork.
	if tip := c.hashAt(c.tip()); b.seenWork == nil || tip != b.seenTip {
		w, err := c.workBetween(b.fork, c.tip())
		if err != nil {
			return nil, err
		}
		b.seenTip, b.seenWork = tip, w
	}
	return b.seenWork, nil
}

// Adopt replaces the chain's blocks above the branch's fork with the
// branch if, checked again against the chain as it is now, the branch has
// more work than they have; otherwise the chain is unchanged and the error
// wraps ErrLessWork (the branch may then grow and be offered again),
// ErrBelowCheckpoint, or ErrNotConnected when the fork has left the chain.
// A branch adopted is the chain's: Add then fails.
//
// A backed chain writes the change to its store as Extend does, with the
// same errors.
func (c *Chain) Adopt(b *Branch) (Update, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.adopt(b)
}

// adopt is Adopt with the chain locked.
func (c *Chain) adopt(b *Branch) (Update, error) {
	unchanged := Update{Fork: c.tip()}
	switch {
	case b.c != c:
		return unchanged, errors.New("chain: the branch is of another chain")
	case b.spent:
		return unchanged, errSpent
	}
	if err := c.checkStore(); err != nil {
		return unchanged, err
	}
	old, err := b.chainWork()
	if err != nil {
		return unchanged, err
	}
	fork := b.fork
	if err := c.checkFork(fork); err != nil {
		return unchanged, err
	}
	if err := c.weigh(fork, b.len(), b.work, old); err != nil {
		return unchanged, err
	}
	up := Update{Fork: fork, Connected: b.len()}
	if fork < c.tip() {
		if up.Disconnected, err = c.hashRange(fork+1, c.tip()); err != nil {
			return unchanged, err
		}
	}
	if c.store != nil {
		if err := c.store.Truncate(fork); err != nil {
			return unchanged, fmt.Errorf("%w: truncating to the fork at %d: %w", ErrStorage, fork, err)
		}
	}
	s := b.spend()
	if c.store != nil {
		if err := c.store.AppendHeaders(s.headers[fork+1-s.base:]); err != nil {
			// The store holds the chain up to the fork: so does the chain.
			s.cut(fork)
			c.replaceAbove(fork, s)
			return Update{Fork: fork, Disconnected: up.Disconnected}, fmt.Errorf("%w: writing the branch above %d: %w", ErrStorage, fork, err)
		}
	}
	c.replaceAbove(fork, s)
	return up, nil
}

// spend marks the branch given to Adopt and returns its headers for the
// chain to take over; the branch keeps a copy of its tip, for Tip and
// Locator.
func (b *Branch) spend() *span {
	s := b.s
	b.s = &span{base: s.tip()}
	b.s.push(s.at(s.tip()), s.hashAt(s.tip()))
	b.spent = true
	return s
}
