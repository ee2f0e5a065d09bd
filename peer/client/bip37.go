package client

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// WatchFilterHeadroom is how many matched outpoints per watch item
// NewWatchFilter leaves room for.
const WatchFilterHeadroom = 50

// ReloadFactor is how far above its target false-positive rate a BIP 37
// filter may match before the scan replaces it with a fresh one (a new
// tweak, sized for what it must hold now), as bitcoinj does.
const ReloadFactor = 10

// minReloadSample is how many transactions must have been filtered before
// the observed false-positive rate is trusted, and minReloadFPs how many
// false positives: a transaction tests several elements against the
// filter, so one or two in a few hundred transactions are what a filter
// at its rate gives by chance, and a fresh filter would tell the node more
// of the watch list for nothing.
const (
	minReloadSample = 200
	minReloadFPs    = 3
)

// overRate reports whether fps false positives in txs filtered
// transactions are far enough above rate to replace the filter.
func overRate(fps, txs int, rate float64) bool {
	return txs >= minReloadSample && fps >= minReloadFPs && float64(fps) > ReloadFactor*rate*float64(txs)
}

// A node that sends as matches transactions the filter it was given does
// not match (the client's copy, with the node's update rule mirrored) is
// dropped once it sent minUnmatched of them, more than a quarter of what
// it sent: such transactions are not counted as the filter's false
// positives, or the node would force fresh filters and learn the watch
// list from their intersection. It is not banned: with BloomUpdateAll the
// node's filter also grows from mempool transactions the copy never saw.
const minUnmatched = 16

// ErrUnmatchedTxs is a node dropped for sending transactions its filter
// does not match.
var ErrUnmatchedTxs = errors.New("transactions sent as matches that the filter loaded does not match")

// NewWatchFilter returns a BIP 37 filter for a watch list: it holds every
// data push of every script (a node matches an output when one of its
// pushes is in the filter) and every watched outpoint. sizing is the rule
// that turns the element count and fpRate, the target false-positive
// rate, into bytes and hash functions (the zero value is Core's); flags
// is the update rule the node applies (wire.BloomUpdateAll adds the
// outpoints of matched outputs, so the node sends their spends). A script
// without data pushes cannot be watched with BIP 37 and is an error.
//
// The filter is sized for its elements plus WatchFilterHeadroom outpoints
// per watch item, so that the outpoints the update rules add fit: a filter
// sized for the scripts alone would fill with them, and a full filter
// matches every transaction. The room the elements leave is then filled
// with random elements (fillTo), drawn from crypto/rand and never from the
// wallet, until the filter matches an element outside it, from its bits,
// with probability fpRate: a filter holding its few elements in room for
// many would match almost nothing else (1e-25 for one script at 0.0001)
// and so name the wallet's scripts to the node.
func NewWatchFilter(watch []WatchItem, sizing bip37.Sizing, fpRate float64, tweak uint32, flags wire.BloomUpdateType) (*bip37.Filter, error) {
	return newWatchFilter(watch, nil, sizing, fpRate, fpRate, tweak, flags)
}

// newWatchFilter is NewWatchFilter holding also the outpoints found so
// far, which take the place of headroom: the filter keeps the size and
// hash functions of the watch list's own until they outgrow its headroom,
// so that a reload, holding more elements in the same bits, tells a node
// no more than the first filter did. It is filled to fillRate.
func newWatchFilter(watch []WatchItem, found []wire.OutPoint, sizing bip37.Sizing, fpRate, fillRate float64, tweak uint32, flags wire.BloomUpdateType) (*bip37.Filter, error) {
	var elems [][]byte
	for i, it := range watch {
		if it.IsOutPoint {
			elems = append(elems, bip37.OutPointBytes(&it.OutPoint))
			continue
		}
		e := bip37.ScriptElements(it.Script)
		if len(e) == 0 {
			return nil, fmt.Errorf("client: watch item %d (script %x) has no data push a BIP 37 filter can match", i, it.Script)
		}
		elems = append(elems, e...)
	}
	n := max(len(elems)+WatchFilterHeadroom*len(watch), len(elems)+len(found))
	for i := range found {
		elems = append(elems, bip37.OutPointBytes(&found[i]))
	}
	f := sizing.NewFilter(uint32(n), fpRate, tweak, flags)
	for _, e := range elems {
		f.Add(e)
	}
	if err := fillTo(f, fillRate); err != nil {
		return nil, err
	}
	return f, nil
}

// fillElementSize is the length of the random elements fillTo adds, that
// of a hash.
const fillElementSize = 32

// fillTo adds random elements to f until an element outside it matches,
// from its bits ((set/bits)^k, as bip37.Stats gives it), with probability
// rate or more: it sets the fewest bits that reach rate, or within a bit or
// two of them. A filter already at rate is left as it is. Far from the
// bits wanted, elements come in batches of half the count expected to
// reach them, so the bits are counted a few times, not once per element;
// near them, each element added is the one of fillCandidates random ones
// that comes nearest without passing them, or, if all pass them, passes
// them least.
func fillTo(f *bip37.Filter, rate float64) error {
	m, k := float64(f.Size()*8), float64(f.HashFuncs())
	if m == 0 || k == 0 || !(rate > 0) {
		return nil
	}
	want := uint32(math.Min(m, math.Ceil(m*math.Pow(min(rate, 1), 1/k))))
	for {
		set := f.Stats().BitsSet
		if set >= want {
			return nil
		}
		// An element sets about k·(1-set/m) bits not yet set.
		n := int(float64(want-set) / (k * (1 - float64(set)/m)) / 2)
		if n < 2 {
			e, err := nearestFill(f, want-set)
			if err != nil {
				return err
			}
			f.Add(e)
			continue
		}
		for range n {
			e, err := fillElement()
			if err != nil {
				return err
			}
			f.Add(e)
		}
	}
}

// fillCandidates is how many random elements nearestFill weighs.
const fillCandidates = 32

// nearestFill returns, of fillCandidates random elements, the one that
// sets the most bits of f not yet set, up to need, or if each sets more,
// the fewest.
func nearestFill(f *bip37.Filter, need uint32) ([]byte, error) {
	before := f.Stats().BitsSet
	var best []byte
	bestNew := uint32(0)
	for range fillCandidates {
		e, err := fillElement()
		if err != nil {
			return nil, err
		}
		g := f.Clone()
		g.Add(e)
		n := g.Stats().BitsSet - before
		under, bestUnder := n <= need, bestNew <= need
		if best == nil || under && (!bestUnder || n > bestNew) || !under && !bestUnder && n < bestNew {
			best, bestNew = e, n
		}
		if n == need {
			break
		}
	}
	return best, nil
}

// fillElement is a random element of fillElementSize bytes.
func fillElement() ([]byte, error) {
	e := make([]byte, fillElementSize)
	if _, err := crand.Read(e); err != nil {
		return nil, fmt.Errorf("client: filling the filter with random elements: %w", err)
	}
	return e, nil
}

// BIP37Options are the filter settings of a BIP 37 scan.
type BIP37Options struct {
	// FPRate is the filter's target false-positive rate.
	FPRate float64
	// Flags is the update rule the node applies to the filter.
	Flags wire.BloomUpdateType
	// Sizing is the rule that sizes the filter for its elements and
	// FPRate: Bitcoin Core's (the zero value) or bitcoinj's (see
	// bip37.Sizing).
	Sizing bip37.Sizing
	// Tweak, if not nil, fixes the filter's tweak (for tests); by default
	// every filter gets a random one, so that filters of different
	// sessions cannot be linked by their tweak.
	Tweak *uint32
	// MinFilterRate, if above 0, is the least chance an element outside
	// a filter may match it, from its bits ((set/bits)^k, as
	// bip37.Stats gives it): the filter, sized for FPRate, is filled
	// with random elements to the larger of the two, so that every
	// filter loaded, whatever its tweak, reaches it.
	MinFilterRate float64
	// MaxReloads bounds the filters replaced because they matched far
	// beyond their rate, or because the outpoints found made them hold
	// an element nearly every block carries (the null outpoint of a
	// coinbase, or the empty push btcd tests OP_0 with), the latter
	// only below a rate of 1/ReloadFactor (a filter at that rate or
	// above is never replaced): zero means DefaultMaxReloads, negative
	// none.
	// Every fresh filter tells the node more about the watch list, and a
	// node can force reloads by marking everything matched.
	MaxReloads int
}

// DefaultMaxReloads is how many fresh filters a BIP 37 scan loads, by
// default, in place of one that matched far beyond its rate.
const DefaultMaxReloads = 2

// ScanBIP37 scans the blocks req.From..req.To with a BIP 37 filter of the
// watch list loaded into one peer that offers NODE_BLOOM: it asks for
// filtered blocks, verifies every merkle proof against the chain and
// checks each transaction locally, marking Bloom false positives as such.
// Outputs paying to watch items are added to the filter (by the node's
// update rule, or by filteradd when the rule did not add them) and the
// block is asked for again, so a spend in the same block or later is
// found with any update rule. When the filter matches more than
// ReloadFactor times its target rate (its own false positives fill it), a
// fresh filter with a new tweak replaces it; ScanResult.FilterReloads
// counts them. ScanResult.BIP37Peers lists every peer that received a
// filter, passes abandoned for a failure or a reorganization included,
// with what it received.
//
// BIP 37 cannot see the spend of an output funded before req.From unless
// its outpoint is watched or the spend reveals the watched key or script;
// the result warns when that may be the case. A node can leave a match out
// of a valid proof: BIP 37 results rest on the one peer that filters.
func (c *Client) ScanBIP37(ctx context.Context, req ScanRequest, opt BIP37Options) (*ScanResult, error) {
	if _, err := NewWatchFilter(req.Watch, opt.Sizing, opt.FPRate, 0, opt.Flags); err != nil {
		return nil, err
	}
	rec := &bip37Peers{}
	res, err := c.scan(ctx, req, "bip37", wire.SFNodeBloom, func(ctx context.Context, log *scanLog, req ScanRequest) (*ScanResult, error) {
		return c.scanBIP37(ctx, log, req, opt, rec)
	})
	if err != nil {
		return nil, rec.failed(err)
	}
	res.BIP37Peers = rec.peers()
	return res, nil
}

// filteredBatch is the answer to one filtered-block request.
type filteredBatch struct {
	blocks []peer.FilteredBlock
	err    error
}

// bip37Scan is the state of one BIP 37 pass.
type bip37Scan struct {
	c      *Client
	m      *pool.Member
	peer   *BIP37Peer // what m received
	opt    BIP37Options
	wl     *watchList
	local  *bip37.Filter // our copy of the node's filter
	res    *ScanResult
	txs    int // transactions the current filter was tested against
	fps    int // of which false positives
	reload bool
	// allTxs and allFPs count every filtered transaction and false
	// positive of the scan, for the warning when reloads run out; sent
	// and unmatched every transaction the node sent, and those the
	// filter does not match.
	allTxs, allFPs  int
	sent, unmatched int
	warned          bool
	// loadedEveryBlock is true when the filter loaded held an element
	// of every block already (draw gave up: a filter near a rate of 1),
	// so that the outpoints added are not what made it.
	loadedEveryBlock bool
	log              *scanLog
	// req is the pass's request, its range resolved; inflight the answer
	// to the filtered-block request in flight.
	req      ScanRequest
	inflight <-chan filteredBatch
}

// scanBIP37 is one BIP 37 pass over req's range: it loads a filter into
// one peer offering NODE_BLOOM that holds the range, chosen at random,
// and scans the filtered blocks it sends in batches (see ScanBIP37).
// rec keeps what each peer received.
func (c *Client) scanBIP37(ctx context.Context, log *scanLog, req ScanRequest, opt BIP37Options, rec *bip37Peers) (*ScanResult, error) {
	ms := c.reaching(wire.SFNodeBloom, req.To)
	if len(ms) == 0 {
		return nil, fmt.Errorf("client: %w: no peer offers BIP 37 filtering (NODE_BLOOM) up to height %d", ErrNoPeers, req.To)
	}
	s := &bip37Scan{c: c, m: ms[rand.IntN(len(ms))], opt: opt, wl: newWatchList(req.Watch), log: log, req: req,
		res: &ScanResult{From: req.From, To: req.To, Matches: []Match{}, BlocksScanned: int(req.To-req.From) + 1}}
	s.peer = rec.start(s.m.Addr())
	if err := s.load(ctx, req.Watch); err != nil {
		return nil, err
	}
	// The next request is always in flight while a batch is processed,
	// so the node filters while we check; a batch asked for before the
	// filter changed is dropped and asked for again.
	s.inflight = s.fetch(ctx, req.From)
	for start := req.From; start <= req.To; {
		next, err := s.batch(ctx, start)
		if err != nil {
			return nil, err
		}
		if req.Progress != nil {
			req.Progress(int(next-req.From), s.res.BlocksScanned)
		}
		start = next
	}
	s.warnOnePeer()
	return s.res, nil
}

// fetch asks the node, in the background, for the filtered blocks from
// height start, as many as one request may ask for up to the end of the
// range, and returns the channel their answer comes on (closed at once
// past the end).
func (s *bip37Scan) fetch(ctx context.Context, start int32) <-chan filteredBatch {
	ch := make(chan filteredBatch, 1)
	if start > s.req.To {
		close(ch)
		return ch
	}
	stop := min(s.req.To, start+peer.MaxFilteredBlocksPerRequest-1)
	hashes := make([]chainhash.Hash, 0, stop-start+1)
	for h := start; h <= stop; h++ {
		hashes = append(hashes, s.c.chain.Hash(h))
	}
	go func() {
		blocks, err := s.c.conn(s.m).GetFilteredBlocks(ctx, hashes)
		ch <- filteredBatch{blocks: blocks, err: err}
	}()
	return ch
}

// batch takes the answer in flight, for the blocks from height start,
// asks for the next batch and processes the blocks (blocks). It returns
// the height to go on from: past the batch, or, when the filter changed
// on the way, the block to ask for again, the batch in flight then
// dropped and asked for anew from there.
func (s *bip37Scan) batch(ctx context.Context, start int32) (next int32, err error) {
	b := <-s.inflight
	s.peer.received(b.blocks)
	if b.err != nil {
		return 0, &pool.Failure{Member: s.m, Err: b.err}
	}
	stop := start + int32(len(b.blocks)) - 1
	s.inflight = s.fetch(ctx, stop+1)
	s.res.MerkleBlocksReceived += len(b.blocks)
	next, err = s.blocks(ctx, start, b.blocks)
	if err != nil {
		return 0, err
	}
	if next != stop+1 {
		// What is in flight was filtered with the old filter.
		d := <-s.inflight
		s.peer.received(d.blocks)
		if d.err != nil {
			return 0, &pool.Failure{Member: s.m, Err: d.err}
		}
		s.inflight = s.fetch(ctx, next)
	}
	return next, nil
}

// blocks processes the filtered blocks of a batch, the first at height
// start, in order. It stops at a block that must be asked for again
// (outpoints were added with filteradd) and returns its height, or after
// one that called for a fresh filter, loaded then; otherwise it returns
// the height past the batch. A filter the outpoints added made hold an
// element of every block (matchesEveryBlock) calls for a fresh one, which
// holds them, loaded before the node filters another block (the one
// asked for again included), unless its rate is 1/ReloadFactor or more
// (see reloadable).
func (s *bip37Scan) blocks(ctx context.Context, start int32, fbs []peer.FilteredBlock) (next int32, err error) {
	for i, fb := range fbs {
		h := start + int32(i)
		again, err := s.block(ctx, h, fb)
		if err != nil {
			return 0, err
		}
		if !s.reload && !s.loadedEveryBlock && s.reloadable() && matchesEveryBlock(s.local) {
			// The outpoints found, added here and at the node (by
			// filteradd or its update rule), made the filter hold an
			// element of every block: a fresh one is drawn without it,
			// before the node filters another block with it.
			s.reload = s.mayReload()
		}
		if again {
			// The node filtered this block and the rest without the
			// outpoints just added: ask again from it.
			if s.reload {
				if err := s.load(ctx, s.req.Watch); err != nil {
					return 0, err
				}
			}
			return h, nil
		}
		if s.reload {
			if err := s.load(ctx, s.req.Watch); err != nil {
				return 0, err
			}
			return h + 1, nil
		}
	}
	return start + int32(len(fbs)), nil
}

// warnOnePeer warns, on a pass that scanned the whole range, that its
// result rests on the one peer that filtered, and, for a range that does
// not start at the genesis block, that spends of outputs funded before
// it are seen only if they reveal a watched key or script.
func (s *bip37Scan) warnOnePeer() {
	s.res.FilteringPeer = s.m.Addr()
	s.res.Warnings = append(s.res.Warnings, fmt.Sprintf(
		"the bip37 result rests on one peer, %s, which filtered every block: it could leave a match out of a valid proof undetectably, and nothing it sent was cross-checked with another peer", s.m.Addr()))
	if s.req.From > 0 {
		for i, it := range s.req.Watch {
			if !it.IsOutPoint {
				s.res.Warnings = append(s.res.Warnings, fmt.Sprintf(
					"BIP 37 cannot see spends of outputs paying watch item %d funded before height %d unless the spend reveals its key or script; watch such outputs as outpoints (TXID:VOUT)", i, s.req.From))
				break
			}
		}
	}
}

// load sends a fresh filter for the watch list and every outpoint found so
// far, with a new tweak unless one is fixed.
func (s *bip37Scan) load(ctx context.Context, watch []WatchItem) error {
	found := make([]wire.OutPoint, 0, len(s.wl.found))
	for op, is := range s.wl.found {
		if !watch[is[0]].IsOutPoint { // watched outpoints are in watch
			found = append(found, op)
		}
	}
	f, err := s.draw(watch, found)
	if err != nil {
		return err
	}
	switch {
	case s.local != nil && !s.loadedEveryBlock && matchesEveryBlock(s.local):
		s.res.FilterReloads++
		s.c.logf("filter of %s came to hold an element of every block with the outpoints added: loading a fresh one", s.m.Addr())
	case s.local != nil:
		s.res.FilterReloads++
		s.c.logf("filter of %s matched %d false positives in %d transactions (target rate %g): loading a fresh one",
			s.m.Addr(), s.fps, s.txs, s.opt.FPRate)
	}
	// A filter that may have reached the peer counts as received.
	s.peer.loaded(f)
	if err := s.c.conn(s.m).LoadFilter(ctx, f); err != nil {
		return &pool.Failure{Member: s.m, Err: err}
	}
	s.local, s.txs, s.fps, s.reload = f, 0, 0, false
	s.loadedEveryBlock = matchesEveryBlock(f)
	return nil
}

// draw builds the filter of the watch list and found, with a fresh tweak
// (the fixed one if set), filled to the larger of FPRate and
// MinFilterRate. A filter that would match a transaction in every block
// (matchesEveryBlock) is drawn again, up to floodDraws times in all; it
// happens to a filter with about twice the probability of its false
// positives. The outpoints found later may make one such (see blocks).
func (s *bip37Scan) draw(watch []WatchItem, found []wire.OutPoint) (*bip37.Filter, error) {
	for i := 1; ; i++ {
		tweak := rand.Uint32()
		if s.opt.Tweak != nil {
			tweak = *s.opt.Tweak
		}
		f, err := newWatchFilter(watch, found, s.opt.Sizing, s.opt.FPRate, s.fillRate(), tweak, s.opt.Flags)
		if err != nil || !matchesEveryBlock(f) || i == floodDraws {
			return f, err
		}
	}
}

// floodDraws bounds the filters draw builds for one: only a filter near a
// false-positive rate of 1, which matches nearly everything anyway, holds
// the elements of matchesEveryBlock that often.
const floodDraws = 32

// nullOutPoint is the outpoint every coinbase input spends.
var nullOutPoint = wire.OutPoint{Index: wire.MaxPrevOutIndex}

// matchesEveryBlock reports whether f holds an element on every chain
// nearly every block carries: the null outpoint of each coinbase, which
// makes the node send every coinbase as a false positive and the scan
// load a fresh filter for them, telling the node more; or the empty
// element, which btcd tests against OP_0's empty push (Core skips empty
// data), so that a btcd node sends every transaction with a version 0
// witness output, which the client, matching by Core's rule, counts as
// unmatched and drops the node for.
func matchesEveryBlock(f *bip37.Filter) bool {
	return f.Contains(nil) || f.ContainsOutPoint(&nullOutPoint)
}

// block processes one filtered block. It reports again when outpoints
// were added with filteradd, so the block must be asked for again; its
// results are then not kept.
func (s *bip37Scan) block(ctx context.Context, h int32, fb peer.FilteredBlock) (again bool, err error) {
	var matches []Match
	relevant, fps, added := 0, 0, false
	for i, tx := range fb.Txs {
		// Mirror the node's update rules on our copy.
		matched := s.local.MatchTxAndUpdate(tx)
		m := Match{Txid: tx.TxHash(), Tx: tx, Height: h, BlockHash: fb.Header.BlockHash(), TxIndex: int(fb.Indexes[i])}
		m.WatchItems, m.Spends = s.wl.match(tx)
		m.FalsePositive = len(m.WatchItems) == 0
		a, err := s.addFound(ctx, tx)
		if err != nil {
			return false, err
		}
		added = added || a
		switch {
		case !m.FalsePositive:
			relevant++
		case matched:
			fps++
		}
		matches = append(matches, m)
	}
	if added {
		return true, nil
	}
	if err := s.checkUnmatched(len(fb.Txs), len(fb.Txs)-relevant-fps); err != nil {
		return false, err
	}
	s.res.Matches = append(s.res.Matches, matches...)
	if len(fb.Txs) > 0 && relevant == 0 {
		s.res.FalsePositiveBlocks++
	}
	s.peer.FalsePositiveTxs += len(fb.Txs) - relevant
	s.txs += int(fb.Total)
	s.fps += fps
	s.allTxs += int(fb.Total)
	s.allFPs += fps
	if overRate(s.fps, s.txs, s.fillRate()) {
		s.reload = s.mayReload()
	}
	return false, nil
}

// checkUnmatched counts sent transactions of a block, unmatched of them
// not matched by the filter, and returns the failure that drops the node
// once they are too many (see minUnmatched), with a warning naming it.
func (s *bip37Scan) checkUnmatched(sent, unmatched int) error {
	s.sent, s.unmatched = s.sent+sent, s.unmatched+unmatched
	if s.unmatched < minUnmatched || 4*s.unmatched <= s.sent {
		return nil
	}
	err := peerErr(s.m, "merkleblock", fmt.Errorf("%w: %d of the %d transactions it sent", ErrUnmatchedTxs, s.unmatched, s.sent))
	s.log.note(fmt.Sprintf("node %s sent as matches %d of %d transactions that the filter loaded into it does not match: dropped; they are not the filter's false positives, so no fresh filter was loaded for them",
		s.m.Addr(), s.unmatched, s.sent))
	return &pool.Failure{Member: s.m, Err: err}
}

// mayReload reports whether another fresh filter may be loaded; when the
// reloads have run out it warns, once, naming the node.
func (s *bip37Scan) mayReload() bool {
	max := s.opt.MaxReloads
	if max == 0 {
		max = DefaultMaxReloads
	}
	if s.res.FilterReloads < max {
		return true
	}
	if !s.warned {
		s.warned = true
		filters := "fresh filters"
		if s.res.FilterReloads == 1 {
			filters = "fresh filter"
		}
		s.res.Warnings = append(s.res.Warnings, fmt.Sprintf(
			"node %s matched %d of %d transactions against a target rate of %g after %d %s: a node that forces reloads learns more with every filter, so no more were loaded (the matches are checked locally and the false positives marked)",
			s.m.Addr(), s.allFPs+s.relevantSoFar(), s.allTxs, s.opt.FPRate, s.res.FilterReloads, filters))
	}
	return false
}

// reloadable reports whether the filter's rate is below 1/ReloadFactor:
// a filter at that rate or above is never replaced, for matching beyond
// its rate (it cannot) nor for anything else, so that a privacy target
// sized for one filter holds.
func (s *bip37Scan) reloadable() bool {
	return s.fillRate()*ReloadFactor < 1
}

// fillRate is the rate every filter the scan loads is filled to: the
// larger of FPRate and MinFilterRate.
func (s *bip37Scan) fillRate() float64 {
	return max(s.opt.FPRate, s.opt.MinFilterRate)
}

// relevantSoFar counts the matches of the scan that involve a watch item.
func (s *bip37Scan) relevantSoFar() int {
	n := 0
	for _, m := range s.res.Matches {
		if !m.FalsePositive {
			n++
		}
	}
	return n
}

// addFound makes sure the filter, here and at the node, holds the
// outpoints of tx's outputs paying to watch items. With BloomUpdateAll
// both sides already added them; otherwise filteradd sends them.
func (s *bip37Scan) addFound(ctx context.Context, tx *wire.MsgTx) (added bool, err error) {
	txid := tx.TxHash()
	for i, out := range tx.TxOut {
		items, ok := s.wl.byScript[string(out.PkScript)]
		if !ok {
			continue
		}
		op := wire.OutPoint{Hash: txid, Index: uint32(i)}
		if s.local.ContainsOutPoint(&op) {
			continue
		}
		s.local.AddOutPoint(&op)
		s.peer.added(op, items)
		if err := s.c.conn(s.m).AddToFilter(ctx, bip37.OutPointBytes(&op)); err != nil {
			return false, &pool.Failure{Member: s.m, Err: err}
		}
		added = true
	}
	return added, nil
}
