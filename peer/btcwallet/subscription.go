package btcwallet

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/chain"
	"github.com/btcsuite/btcwallet/wtxmgr"
	"github.com/spvfilter/spvfilter/peer/client"
)

// Rescan replaces the running rescan with one from the block startHash
// (the wallet's tip, which is not reported again) for addrs and the
// spends of outPoints, which follows the chain once it has caught up. It
// returns at once; RescanFinished reports the catch-up done.
func (b *Backend) Rescan(startHash *chainhash.Hash, addrs []btcutil.Address, outPoints map[wire.OutPoint]btcutil.Address) error {
	items, err := watchItems(addrs, outPoints)
	if err != nil {
		return err
	}
	b.subMu.Lock()
	defer b.subMu.Unlock()
	height, ok := b.c.Chain().HeightOf(*startHash)
	if !ok {
		return fmt.Errorf("btcwallet: rescan from block %v: %w", startHash, client.ErrUnknownBlock)
	}
	return b.subscribe(items, height, *startHash, true)
}

// NotifyReceived adds addrs to the running rescan and returns once the
// rescan watches them: every block it has not scanned yet is scanned
// with them (a step under way when it is called ends first). Without a
// rescan, it starts one following the chain from the best block. It
// never waits for the wallet: btcwallet calls it inside a database
// transaction (SendOutputs, for the change address) while its own
// notification handler may be waiting for that database, so a rescan
// that waits for the wallet to take a notification (a full queue) has
// the addresses before its next step, which is enough. It waits at most
// Config.Timeout.
func (b *Backend) NotifyReceived(addrs []btcutil.Address) error {
	items, err := watchItems(addrs, nil)
	if err != nil {
		return err
	}
	b.subMu.Lock()
	defer b.subMu.Unlock()
	if s := b.current(); s != nil {
		ctx, cancel := b.callContext()
		defer cancel()
		if err := s.addWait(ctx, items); err != nil {
			return fmt.Errorf("btcwallet: watching %d address(es): %w", len(addrs), err)
		}
		return nil
	}
	best, err := b.bestBlock()
	if err != nil {
		return err
	}
	return b.subscribe(items, best.Height, best.Hash, false)
}

// NotifyBlocks makes sure new blocks are reported: without a running
// rescan, it starts one following the chain from the best block.
func (b *Backend) NotifyBlocks() error {
	b.subMu.Lock()
	defer b.subMu.Unlock()
	if b.current() != nil {
		return nil
	}
	best, err := b.bestBlock()
	if err != nil {
		return err
	}
	return b.subscribe(nil, best.Height, best.Hash, false)
}

// current returns the running subscription, or nil.
func (b *Backend) current() *subscription {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sub
}

// subscribe stops the running subscription and starts one from the block
// at height, hash. Called with subMu held.
func (b *Backend) subscribe(items []client.WatchItem, height int32, hash chainhash.Hash, finish bool) error {
	s := newSubscription(b, items, height, hash, finish)
	b.mu.Lock()
	if !b.started || b.stopped {
		b.mu.Unlock()
		s.cancel()
		return ErrStopped
	}
	old := b.sub
	b.sub = s
	b.mu.Unlock()
	if old != nil {
		old.stop()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.stopped {
		s.cancel()
		return ErrStopped
	}
	b.wg.Add(1)
	go s.run()
	return nil
}

// watchItems returns the watch list of addresses and outpoints: the
// script of each address, each outpoint with the script its address pays
// (compact filters hold scripts).
func watchItems(addrs []btcutil.Address, outPoints map[wire.OutPoint]btcutil.Address) ([]client.WatchItem, error) {
	items := make([]client.WatchItem, 0, len(addrs)+len(outPoints))
	for _, a := range addrs {
		script, err := txscript.PayToAddrScript(a)
		if err != nil {
			return nil, fmt.Errorf("btcwallet: address %v: %w", a, err)
		}
		items = append(items, client.ScriptItem(script))
	}
	ops := make([]wire.OutPoint, 0, len(outPoints))
	for op := range outPoints {
		ops = append(ops, op)
	}
	slices.SortFunc(ops, compareOutPoints)
	for _, op := range ops {
		script, err := txscript.PayToAddrScript(outPoints[op])
		if err != nil {
			return nil, fmt.Errorf("btcwallet: outpoint %v: address %v: %w", op, outPoints[op], err)
		}
		items = append(items, client.OutPointItem(op, script))
	}
	return items, nil
}

func compareOutPoints(a, b wire.OutPoint) int {
	if c := slices.Compare(a.Hash[:], b.Hash[:]); c != 0 {
		return c
	}
	return int(a.Index) - int(b.Index)
}

// disconnectionOrder is the order in which the blocks a reorganization
// disconnects are announced to the wallet.
type disconnectionOrder int

const (
	// lowestFirst: the lowest block first, then the block below it
	// connected again, as btcwallet v0.16.10 needs (see the package
	// documentation).
	lowestFirst disconnectionOrder = iota
	// tipFirst: from the old tip down, as the client reports them and
	// btcwallet's neutrino backend delivers them, and nothing else; kept
	// for the test that shows what this order does to the wallet.
	tipFirst
)

const (
	// progressEvery is how many blocks apart a rescan that catches up
	// reports its progress (RescanProgress), after its first block.
	progressEvery = 2000
	// Backoff of a rescan that failed, before it resumes.
	resumeMin = time.Second
	resumeMax = time.Minute
)

// subscription is one rescan of the backend, for Rescan, NotifyReceived
// or NotifyBlocks: the client's following rescan, resumed where it stopped
// when it fails, and the translation of its events into the wallet's
// notifications.
type subscription struct {
	b      *Backend
	ctx    context.Context
	cancel context.CancelFunc
	done   chan struct{}
	// finish is set for a wallet's Rescan, which ends its catch-up with
	// RescanFinished and reports its progress on the way.
	finish bool
	from   int32 // the block the wallet has, where the rescan starts

	mu    sync.Mutex
	items []client.WatchItem
	r     *client.Rescan
	// blocked is closed while the rescan waits for the wallet to take a
	// notification (the queue is full), and replaced by an open one when
	// it goes on; the rescan applies updates before its next step.
	blocked chan struct{}

	// Owned by the goroutine that runs the rescan.
	matches  []*wtxmgr.TxRecord // relevant transactions of the block about to be connected
	late     []*wtxmgr.TxRecord // those of a block the wallet has, found when it was scanned again
	gone     []client.Event     // disconnections not yet passed on
	reported []chainhash.Hash   // the blocks the wallet has from this rescan, from base
	base     int32
	finished bool  // RescanFinished sent
	progress int32 // height of the last RescanProgress, -1 before the first
}

func newSubscription(b *Backend, items []client.WatchItem, height int32, hash chainhash.Hash, finish bool) *subscription {
	ctx, cancel := context.WithCancel(b.ctx)
	return &subscription{b: b, ctx: ctx, cancel: cancel, done: make(chan struct{}), finish: finish, from: height,
		items: items, blocked: make(chan struct{}), reported: []chainhash.Hash{hash}, base: height, progress: -1}
}

// stop ends the subscription and waits for its goroutine.
func (s *subscription) stop() {
	s.cancel()
	<-s.done
}

// addWait watches items from the rescan's next step on, and returns once
// the rescan has them, or waits for the wallet (see NotifyReceived), or
// has ended (the next one, resumed, starts with them).
func (s *subscription) addWait(ctx context.Context, items []client.WatchItem) error {
	s.mu.Lock()
	s.items = append(s.items, items...)
	r, blocked := s.r, s.blocked
	s.mu.Unlock()
	if r == nil {
		return nil // not started yet: it starts with them
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-ctx.Done():
		case <-blocked:
			cancel()
		}
	}()
	err := r.UpdateWait(ctx, items, -1)
	switch {
	case err == nil, errors.Is(err, client.ErrRescanEnded), isClosed(blocked):
		return nil
	case s.ctx.Err() != nil:
		return ErrStopped
	}
	return err
}

// run runs the client's rescan until the subscription ends, and resumes
// it after a failure, from the last block reported that is still in the
// chain.
func (s *subscription) run() {
	defer s.b.wg.Done()
	defer close(s.done)
	from, wait := s.from, resumeMin
	for {
		r := s.newRescan(from)
		err := r.Run(s.ctx)
		if s.ctx.Err() != nil {
			return
		}
		if err == nil {
			err = errors.New("the rescan ended")
		}
		if r.Height() > from+1 {
			wait = resumeMin
		}
		s.b.logf("the rescan stopped at height %d: %v (warnings: %q); resuming in %v", r.Height(), err, r.Warnings(), wait)
		if errors.Is(err, client.ErrReorgTooDeep) {
			s.resync()
			return
		}
		select {
		case <-time.After(wait):
		case <-s.ctx.Done():
			return
		}
		wait = min(2*wait, resumeMax)
		var ok bool
		if from, ok = s.resumeFrom(); !ok {
			if s.ctx.Err() == nil {
				s.resync()
			}
			return
		}
	}
}

// newRescan starts the client's rescan from height, with the watch list
// as it is now.
func (s *subscription) newRescan(from int32) *client.Rescan {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.r = s.b.c.NewRescan(client.RescanOptions{Watch: slices.Clone(s.items), From: from, Follow: true, OnEvent: s.onEvent})
	return s.r
}

// resumeFrom returns the height a failed rescan resumes from: the last
// block reported that is still in the chain, after reporting the blocks
// above it disconnected. It fails when no block reported is left (the
// wallet is then asked to sync again).
func (s *subscription) resumeFrom() (int32, bool) {
	s.matches, s.late = nil, nil // of a block not reported, or not rechecked: scanned again
	ch := s.b.c.Chain()
	i := len(s.reported) - 1
	for ; i >= 0 && ch.Hash(s.base+int32(i)) != s.reported[i]; i-- {
		s.gone = append(s.gone, client.Event{Kind: client.EventDisconnected, Height: s.base + int32(i), BlockHash: s.reported[i]})
	}
	s.passDisconnections()
	if i < 0 || s.ctx.Err() != nil {
		return 0, false
	}
	return s.base + int32(i), true
}

// resync ends the subscription and asks the wallet to sync again, from
// the block hashes it recorded (it walks down from its tip to the first
// block still in the chain and rolls back what is above), when the
// wallet cannot follow a reorganization block by block: one that reaches
// below every block the rescan remembers, or comes before the rescan's
// RescanFinished.
func (s *subscription) resync() {
	s.b.logf("the chain reorganized where the wallet cannot follow it block by block: asking it to sync again")
	s.b.mu.Lock()
	if s.b.sub == s {
		s.b.sub = nil
	}
	s.b.mu.Unlock()
	s.send(chain.ClientConnected{})
	s.cancel()
}

// send queues n for the wallet; it waits while the queue is full, and
// drops n when the subscription ends.
func (s *subscription) send(n interface{}) {
	if s.ctx.Err() != nil {
		return
	}
	select {
	case s.b.queue <- n:
		return
	default:
	}
	s.mu.Lock()
	close(s.blocked)
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.blocked = make(chan struct{})
		s.mu.Unlock()
	}()
	select {
	case s.b.queue <- n:
	case <-s.ctx.Done():
	}
}

// onEvent translates one event of the client's rescan: a block's matches
// and its connection into FilteredBlockConnected and BlockConnected (then
// RescanProgress while catching up), the matches a block the wallet has
// was found to hold when scanned again (EventRechecked: its first filter
// hid them) into RelevantTx with the block, the tip into RescanFinished
// once, and a reorganization's disconnections, gathered until the next
// event, into BlockDisconnected in the order the wallet needs.
func (s *subscription) onEvent(e client.Event) {
	if e.Kind == client.EventDisconnected {
		s.gone = append(s.gone, e)
		return
	}
	s.passDisconnections()
	if s.ctx.Err() != nil {
		return
	}
	switch e.Kind {
	case client.EventMatch:
		s.b.mined(e.Match.Tx, e.Match.Txid, e.Height)
		rec, err := wtxmgr.NewTxRecordFromMsgTx(e.Match.Tx, e.Header.Timestamp)
		if err != nil {
			s.b.logf("transaction %v of block %d: %v", e.Match.Txid, e.Height, err)
			return
		}
		if s.known(e) {
			// Either the block this rescan starts from, connected again
			// next (the wallet has its transactions), or one rechecked.
			s.late = append(s.late, rec)
			return
		}
		s.matches = append(s.matches, rec)
	case client.EventRechecked:
		meta := blockMeta(e.Height, e.BlockHash, e.Header.Timestamp)
		for _, rec := range s.late {
			s.send(chain.RelevantTx{TxRecord: rec, Block: &meta})
		}
		s.late = nil
	case client.EventConnected:
		if s.known(e) {
			s.late = nil
			return
		}
		meta := blockMeta(e.Height, e.BlockHash, e.Header.Timestamp)
		s.send(chain.FilteredBlockConnected{Block: &meta, RelevantTxs: s.matches})
		s.matches = nil
		s.send(chain.BlockConnected(meta))
		s.remember(e)
		s.b.unmined.newBlock()
		if s.finish && !s.finished && (s.progress < 0 || e.Height-s.progress >= progressEvery) {
			s.progress = e.Height
			s.send(&chain.RescanProgress{Hash: e.BlockHash, Height: e.Height, Time: e.Header.Timestamp})
		}
	case client.EventTip:
		if s.finish && !s.finished {
			s.finished = true
			hash := e.BlockHash
			s.send(&chain.RescanFinished{Hash: &hash, Height: e.Height, Time: e.Header.Timestamp})
		}
	}
}

// known reports whether the event is about a block the wallet has from
// this subscription already: the block it started from, or the block a
// resumed rescan starts from.
func (s *subscription) known(e client.Event) bool {
	i := e.Height - s.base
	return i >= 0 && int(i) < len(s.reported) && s.reported[i] == e.BlockHash
}

// remember records a block reported connected, for at most recentDepth
// blocks.
func (s *subscription) remember(e client.Event) {
	if len(s.reported) == 0 || s.base+int32(len(s.reported)) != e.Height {
		s.base, s.reported = e.Height, s.reported[:0]
	}
	s.reported = append(s.reported, e.BlockHash)
	if over := len(s.reported) - recentDepth; over > 0 {
		s.reported = slices.Delete(s.reported, 0, over)
		s.base += int32(over)
	}
	s.b.recent.add(e.BlockHash, e.Header)
}

// passDisconnections passes on the disconnections gathered. btcwallet
// v0.16.10 needs the lowest block first: on it, the wallet rolls back
// everything from that height and moves its tip below, and it ignores the
// blocks above, which are beyond its new tip. The wallet then holds a zero
// hash for the block below (disconnectBlock records its new tip without
// the hash it looked up): the block is connected again, which records it
// properly. See the package documentation.
func (s *subscription) passDisconnections() {
	if len(s.gone) == 0 {
		return
	}
	gone := s.gone
	s.gone = nil
	slices.SortFunc(gone, func(a, b client.Event) int { return int(a.Height - b.Height) })
	if s.b.order == tipFirst {
		slices.Reverse(gone)
	}
	low := gone[0].Height
	for _, e := range gone {
		low = min(low, e.Height)
		var t time.Time
		if hdr, ok := s.b.recent.header(e.BlockHash); ok {
			t = hdr.Timestamp
		}
		s.send(chain.BlockDisconnected(blockMeta(e.Height, e.BlockHash, t)))
	}
	switch {
	case low <= s.base:
		// The oldest block remembered left the chain: the fork may be
		// lower still, where only the wallet can tell.
		s.resync()
		return
	case s.finish && !s.finished:
		// The wallet ignores disconnections until its rescan has
		// finished: its own sync rolls the blocks back.
		s.resync()
		return
	}
	if i := low - s.base; int(i) < len(s.reported) {
		s.reported = s.reported[:i]
	}
	fork := low - 1
	if s.b.order != lowestFirst || s.base+int32(len(s.reported))-1 != fork {
		return
	}
	ch := s.b.c.Chain()
	if hdr := ch.Header(fork); hdr.BlockHash() == s.reported[len(s.reported)-1] {
		s.send(chain.BlockConnected(blockMeta(fork, hdr.BlockHash(), hdr.Timestamp)))
	}
}

// recentDepth is how many blocks reported connected the backend
// remembers: their headers, for GetBlockHeader once a reorganization has
// disconnected them, and, per rescan, their hashes, to find where the
// chain changed when a rescan resumes. It is as deep as the client's
// rescans remember.
const recentDepth = 2016

// recentHeaders keeps the headers of the last blocks reported connected,
// by hash. It is safe for concurrent use.
type recentHeaders struct {
	mu     sync.Mutex
	max    int
	byHash map[chainhash.Hash]wire.BlockHeader
	order  []chainhash.Hash
}

func newRecentHeaders(n int) *recentHeaders {
	return &recentHeaders{max: n, byHash: make(map[chainhash.Hash]wire.BlockHeader)}
}

func (r *recentHeaders) add(hash chainhash.Hash, hdr wire.BlockHeader) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.byHash[hash]; ok {
		return
	}
	r.byHash[hash] = hdr
	r.order = append(r.order, hash)
	if len(r.order) > r.max {
		delete(r.byHash, r.order[0])
		r.order = slices.Delete(r.order, 0, 1)
	}
}

func (r *recentHeaders) header(hash chainhash.Hash) (wire.BlockHeader, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	hdr, ok := r.byHash[hash]
	return hdr, ok
}

// isClosed reports whether ch is closed.
func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
