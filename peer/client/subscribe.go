package client

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// waitMoved waits for the chain or a peer's tip to move: with the
// service running (Start), for its notification; otherwise for poll, then
// it syncs the headers of every peer itself. A receive on wake (nil for
// none) ends the wait at once, without a sync. It returns ctx's error
// when ctx ends, and a failed header sync's.
func (c *Client) waitMoved(ctx context.Context, poll time.Duration, wake <-chan struct{}) error {
	moved := c.tip.changed()
	timer := time.NewTimer(poll)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-moved:
		return nil
	case <-wake:
		return nil
	case <-timer.C:
	}
	if c.started() {
		return nil
	}
	_, err := c.SyncHeaders(ctx)
	return err
}

// BlockSubscription reports the blocks connected to the chain and those
// that leave it, headers only: no filter is asked for, nothing is
// scanned. See SubscribeBlocks.
type BlockSubscription struct {
	c      *Client
	events chan Event
	cancel context.CancelFunc
	done   chan struct{}
	// reported holds the blocks reported connected, the last
	// maxReorgDepth: hashes from base, and their headers.
	base    int32
	hashes  []chainhash.Hash
	headers []wire.BlockHeader

	mu  sync.Mutex
	err error
}

// subscribePoll is how often a subscription of a client without the
// service (Start) syncs the headers itself.
const subscribePoll = time.Second

// SubscribeBlocks reports, on the subscription's Events, every block the
// chain connects from the block after from (the current tip when from is
// nil) up to the highest block a live peer holds, as EventConnected with
// its header, and, on a reorganization, the blocks it reported that left
// the chain, as EventDisconnected, highest first, before the new ones. If
// from has left the chain already, the subscription starts from the
// block after the fork (ErrUnknownBlock if the client never had from in
// its chain this life). A from the chain no longer holds and whose fork
// is not known waits for the operation in progress, if any, to end (see
// nextAfter). It asks no filter: see NewRescan to scan them. It runs
// until ctx ends, Cancel or an error (Err): a reorganization deeper than
// it remembers (ErrReorgTooDeep). Without the service it syncs the
// headers itself every second. A reader that lags only delays it:
// nothing queues.
func (c *Client) SubscribeBlocks(ctx context.Context, from *Stamp) (*BlockSubscription, error) {
	next := c.chain.Height() + 1
	if from != nil {
		var err error
		if next, err = c.nextAfter(ctx, from); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &BlockSubscription{c: c, events: make(chan Event), cancel: cancel, done: make(chan struct{}), base: next}
	go s.run(ctx)
	return s, nil
}

// nextAfter returns the height of the first block to report after from:
// the next one while from is on the chain, or the one after the fork
// where it left the chain. A header sync changes the chain as each
// peer's headers come, but records where the blocks that left it forked
// only once every peer of its round has answered, holding the operation
// lock (opMu) until then: a block just taken out of the chain (the one a
// subscription ended by ErrReorgTooDeep told last, say) may not be
// recorded yet. Such a block is looked up again with the lock held, once
// that sync has ended, so that its caller starts from the fork rather
// than getting ErrUnknownBlock.
func (c *Client) nextAfter(ctx context.Context, from *Stamp) (int32, error) {
	if next, ok := c.blockAfter(from); ok {
		return next, nil
	}
	next, ok, err := c.blockAfterOperation(ctx, from)
	switch {
	case err != nil:
		return 0, fmt.Errorf("client: subscribing from block %v (height %d): %w", from.Hash, from.Height, err)
	case !ok:
		return 0, fmt.Errorf("client: subscribing from block %v (height %d): %w", from.Hash, from.Height, ErrUnknownBlock)
	}
	return next, nil
}

// blockAfter returns the height of the first block after from, or after
// its fork if it left the chain; false if the client does not know from.
func (c *Client) blockAfter(from *Stamp) (int32, bool) {
	if from.Height <= c.chain.Height() && c.chain.Hash(from.Height) == from.Hash {
		return from.Height + 1, true
	}
	fork, ok := c.departed.forkOf(from.Hash)
	return fork + 1, ok
}

// blockAfterOperation is blockAfter once the operation in progress, if
// any, has ended: with opMu held. It stops waiting when ctx ends; the
// look-up it left is then done once the lock is free, and dropped.
func (c *Client) blockAfterOperation(ctx context.Context, from *Stamp) (int32, bool, error) {
	type found struct {
		next int32
		ok   bool
	}
	res := make(chan found, 1)
	go func() {
		c.opMu.Lock()
		defer c.opMu.Unlock()
		next, ok := c.blockAfter(from)
		res <- found{next, ok}
	}()
	select {
	case f := <-res:
		return f.next, f.ok, nil
	case <-ctx.Done():
		return 0, false, ctx.Err()
	}
}

// Events returns the subscription's events; it is closed when the
// subscription ends.
func (s *BlockSubscription) Events() <-chan Event { return s.events }

// Cancel ends the subscription and waits for it.
func (s *BlockSubscription) Cancel() {
	s.cancel()
	<-s.done
}

// Err says why the subscription ended, once Events is closed: nil when
// its context ended or Cancel.
func (s *BlockSubscription) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// run reports until ctx ends or an error.
func (s *BlockSubscription) run(ctx context.Context) {
	defer close(s.done)
	defer close(s.events)
	err := s.follow(ctx)
	if ctx.Err() == nil {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
	}
}

// follow reports the chain's changes as they come.
func (s *BlockSubscription) follow(ctx context.Context) error {
	for {
		moved := s.c.tip.changed()
		if err := s.disconnections(ctx); err != nil {
			return err
		}
		for tip := s.c.bestHeld(0); s.next() <= tip && s.next() <= s.c.chain.Height(); {
			h := s.next()
			hdr := s.c.chain.Header(h)
			if len(s.hashes) > 0 && hdr.PrevBlock != s.last() {
				break // the chain changed under us: look again
			}
			if !s.emit(ctx, Event{Kind: EventConnected, Height: h, BlockHash: hdr.BlockHash(), Header: hdr}) {
				return ctx.Err()
			}
			s.hashes, s.headers = append(s.hashes, hdr.BlockHash()), append(s.headers, hdr)
			if over := len(s.hashes) - maxReorgDepth; over > 0 {
				s.hashes, s.headers, s.base = s.hashes[over:], s.headers[over:], s.base+int32(over)
			}
		}
		if s.c.started() {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-moved:
			}
			continue
		}
		if err := s.c.waitMoved(ctx, subscribePoll, nil); ctx.Err() != nil {
			return ctx.Err()
		} else if err != nil && !errors.Is(err, ErrNoPeers) {
			s.c.logf("block subscription: syncing headers: %v", err)
		}
	}
}

// next returns the height of the next block to report.
func (s *BlockSubscription) next() int32 { return s.base + int32(len(s.hashes)) }

// last returns the hash of the last block reported (zero if none).
func (s *BlockSubscription) last() chainhash.Hash {
	if len(s.hashes) == 0 {
		return chainhash.Hash{}
	}
	return s.hashes[len(s.hashes)-1]
}

// disconnections reports, highest first, the blocks reported that left
// the chain.
func (s *BlockSubscription) disconnections(ctx context.Context) error {
	fork := -1
	for i := range s.hashes {
		h := s.base + int32(i)
		if h > s.c.chain.Height() || s.c.chain.Hash(h) != s.hashes[i] {
			fork = i
			break
		}
	}
	if fork < 0 {
		return nil
	}
	if fork == 0 && s.base > 0 {
		// The first remembered block left: what is below may have too.
		if parent := s.headers[0].PrevBlock; s.c.chain.Hash(s.base-1) != parent {
			return fmt.Errorf("client: %w: the chain changed below height %d", ErrReorgTooDeep, s.base)
		}
	}
	for i := len(s.hashes) - 1; i >= fork; i-- {
		if !s.emit(ctx, Event{Kind: EventDisconnected, Height: s.base + int32(i), BlockHash: s.hashes[i], Header: s.headers[i]}) {
			return ctx.Err()
		}
		s.hashes, s.headers = s.hashes[:i], s.headers[:i]
	}
	return nil
}

// emit hands e to the reader, or reports false when ctx ends first.
func (s *BlockSubscription) emit(ctx context.Context, e Event) bool {
	select {
	case s.events <- e:
		return true
	case <-ctx.Done():
		return false
	}
}
