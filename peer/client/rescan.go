package client

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

// RescanOptions say what a rescan watches and how far it goes.
type RescanOptions struct {
	// Watch is the initial watch list; Match.WatchItems index into it
	// and the items Update adds after it.
	Watch []WatchItem
	// From is the first height scanned.
	From int32
	// StartTime, if not zero, moves From up to the first block that can
	// hold a transaction of that time or later: the first whose median
	// time past is not before StartTime less two hours (a wallet's
	// birthday).
	StartTime time.Time
	// To is the last height scanned when Follow is false; a negative To
	// means the tip at the time the rescan reaches it.
	To int32
	// Follow keeps the rescan going after the tip: it asks the peers for
	// new headers every PollInterval, scans new blocks as they come and
	// reports reorganizations, until its context ends.
	Follow bool
	// PollInterval is how often a following rescan asks for new headers;
	// zero means one second.
	PollInterval time.Duration
	// BatchBlocks is how many blocks one step scans; zero means 2,000.
	BatchBlocks int32
	// OnEvent receives every event, in order, from the goroutine that
	// runs the rescan; it must not call the rescan's methods but Update.
	OnEvent func(Event)
}

// Rescan is a BIP 157 rescan for a wallet: it scans from a height to the
// tip or follows it, with a watch list that can grow while it runs, over
// all the client's peers (see ScanBIP157 for what is verified).
type Rescan struct {
	c   *Client
	opt RescanOptions

	mu      sync.Mutex
	items   []WatchItem
	pending []WatchItem // added by Update, not yet in wl
	rewind  int32       // lowest height Update asked to rewind to, or -1
	// applied is closed when the updates pending now are applied, and
	// replaced; ended is closed when Run returns.
	applied chan struct{}
	ended   chan struct{}
	// wake holds one token when an update is queued, so that a waiting
	// rescan applies it at once instead of at its next poll.
	wake    chan struct{}
	endOnce sync.Once
	// pollAt is when the wait under way polls the peers: an update's
	// wake-up does not put it off, so updates in a row do not starve
	// the header syncs of a client without the service.
	pollAt time.Time

	wl      *watchList
	next    int32              // the next height to scan
	emitted []chainhash.Hash   // hashes of the blocks reported connected, from base
	headers []wire.BlockHeader // and their headers
	base    int32              // height of emitted[0]
	// rc is what was reported of those blocks and which rested on one
	// peer, to scan them again once another holds them.
	rc       rechecks
	warnings rescanWarnings
	// waiting is the wait for a peer under way, if any (Run's alone).
	waiting peerWait
	// atTip is the tip last reported (-1: none yet), and alone since
	// when the next block has been held by one peer only (zero: it is
	// not); Run's alone.
	atTip int32
	alone time.Time
	// forgotFrom is the lowest height reported that the rescan no
	// longer remembers (below base), or -1.
	forgotFrom int32
	// stalls counts the steps in a row that failed with a stall (see
	// stalledStep); Run's alone.
	stalls int
}

// NewRescan prepares a rescan; Run starts it.
func (c *Client) NewRescan(opt RescanOptions) *Rescan {
	if opt.PollInterval <= 0 {
		opt.PollInterval = time.Second
	}
	if opt.BatchBlocks <= 0 {
		opt.BatchBlocks = 2000
	}
	items := slices.Clone(opt.Watch)
	return &Rescan{c: c, opt: opt, items: items, wl: newWatchList(items), next: opt.From, base: opt.From, rewind: -1, forgotFrom: -1,
		applied: make(chan struct{}), ended: make(chan struct{}), wake: make(chan struct{}, 1),
		rc: rechecks{revised: c.revised.Load(), compareFrom: noRevision}}
}

// Update adds watch items to a running rescan and, if rewind is not
// negative, makes it scan again from that height (to find the history of
// the new items): the blocks from there are reported disconnected, then
// connected again. It takes effect between two steps of the scan, and a
// following rescan waiting for new blocks wakes for it at once; it
// returns at once, so an OnEvent callback may call it; UpdateWait waits.
func (r *Rescan) Update(add []WatchItem, rewind int32) {
	r.update(add, rewind)
}

// UpdateWait is Update, returning once the rescan has applied the update
// (before it reports anything scanned with the new items), or with
// ErrRescanEnded if Run has returned, or ctx's error. It must not be
// called from OnEvent.
func (r *Rescan) UpdateWait(ctx context.Context, add []WatchItem, rewind int32) error {
	applied := r.update(add, rewind)
	select {
	case <-applied:
		return nil
	case <-r.ended:
		select {
		case <-applied:
			return nil
		default:
		}
		return ErrRescanEnded
	case <-ctx.Done():
		return ctx.Err()
	}
}

// update queues an update and returns the channel closed when it is
// applied.
func (r *Rescan) update(add []WatchItem, rewind int32) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.pending = append(r.pending, add...)
	if rewind >= 0 && (r.rewind < 0 || rewind < r.rewind) {
		r.rewind = rewind
	}
	select {
	case r.wake <- struct{}{}:
	default: // a wake-up is pending already: it applies this update too
	}
	return r.applied
}

// Height returns the next height the rescan would scan: after an error,
// everything below it was reported, and a new rescan from it resumes.
func (r *Rescan) Height() int32 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.next
}

// Warnings returns the distinct warnings of the scans so far (a single
// peer, banned peers, spend-only blocks): one of each kind, the latest,
// with how many times it came (see rescanWarnings). WarningKindOf tells
// what each is about.
func (r *Rescan) Warnings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.warnings.list()
}

// Leak computes what the peers could conclude about the rescan's watch
// list (its items applied so far) from everything the client asked them,
// as ScanResult.Leak does: the blocks it needs are asked again of a live
// peer that was asked for them before, which learns nothing new. It waits
// for the client's operation in progress (a step of the rescan).
func (r *Rescan) Leak(ctx context.Context) (*leak.Leak, error) {
	r.mu.Lock()
	items := slices.Clone(r.items)
	r.mu.Unlock()
	r.c.opMu.Lock()
	defer r.c.opMu.Unlock()
	l, err := r.c.leakOf(ctx, newScanLog(), items, false)
	if err != nil {
		return nil, fmt.Errorf("client: %w: %w", errNoLeak, err)
	}
	return l, nil
}

// event returns an event about the chain's block at height h.
func (r *Rescan) event(kind EventKind, h int32) Event {
	hdr := r.c.chain.Header(h)
	return Event{Kind: kind, Height: h, BlockHash: hdr.BlockHash(), Header: hdr}
}

// addWarnings keeps the warnings (see rescanWarnings).
func (r *Rescan) addWarnings(ws []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, w := range ws {
		r.warnings.add(w)
	}
}

// addResult keeps the warnings of a step's scan and adds up what its
// block fetches asked of each peer (see rescanWarnings), in the place of
// its notes on their spread.
func (r *Rescan) addResult(res *ScanResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var f fetchLog
	if res.fetches != nil {
		f = *res.fetches
	}
	notes := slices.Clone(f.notes)
	for _, w := range res.Warnings {
		if i := slices.Index(notes, w); i >= 0 {
			notes = slices.Delete(notes, i, i+1)
			continue
		}
		r.warnings.add(w)
	}
	r.warnings.fetches.add(&f.tally)
}

func (r *Rescan) emit(e Event) {
	if r.opt.OnEvent != nil {
		r.opt.OnEvent(e)
	}
}

// Run syncs the headers of every peer, then scans until the end (To, or
// the highest height a peer holds), or until ctx ends when following; a
// following rescan ended by its context returns nil. A following rescan
// on a started client (see Start) whose every peer was banned or dropped
// during a step keeps the error as a warning and waits while a peer not
// banned may be dialled again, as it waits for its peers when they hold
// less than it reported: a wait that outlasts the client's timeout is
// warned of, naming the peers, and one its context ends returns a
// *WaitError (an ErrNoPeers), not nil, since the rescan did not follow to
// the end. Every event is delivered before Run returns; on an error,
// Height says where to resume.
func (r *Rescan) Run(ctx context.Context) error {
	defer r.endOnce.Do(func() { close(r.ended) })
	if err := r.syncFirst(ctx); err != nil {
		return err
	}
	if !r.opt.StartTime.IsZero() {
		r.mu.Lock()
		r.next = max(r.next, r.c.heightAt(r.opt.StartTime))
		r.base = r.next
		r.mu.Unlock()
	}
	r.atTip, r.alone = -1, time.Time{}
	for {
		if end, err := r.round(ctx); end {
			return err
		}
	}
}

// syncFirst is Run's first header sync. A following rescan on a started
// client whose every peer was dropped (one that stalled, as an honest
// node does on a request for a block its reorganization just took off its
// chain) keeps the error as a warning and waits for a peer to be dialled
// again, as scanTo does, rather than ending before it began.
func (r *Rescan) syncFirst(ctx context.Context) error {
	for {
		_, err := r.c.SyncHeaders(ctx)
		if err == nil {
			r.waiting = peerWait{}
			return nil
		}
		if !r.opt.Follow || ctx.Err() != nil || !r.c.mayComeBack() {
			return r.unlessFollowEnded(ctx, err)
		}
		r.addWarnings([]string{fmt.Sprintf("no peer left to sync the headers with (waiting for a peer dropped to be dialled again): %v", err)})
		if err := r.waitPeers(ctx, "a peer to sync the headers with"); err != nil {
			return err
		}
	}
}

// unlessFollowEnded is err, or nil when it came of a following
// rescan's context ending: that is how a following rescan ends.
func (r *Rescan) unlessFollowEnded(ctx context.Context, err error) error {
	if r.opt.Follow && ctx.Err() != nil {
		return nil
	}
	return err
}

// round is one turn of Run: it applies the updates queued, reports a
// reorganization, scans again the blocks that rested on one peer, then
// waits for the peers, scans the next step or reports the tip. It
// reports end when Run returns, with err.
func (r *Rescan) round(ctx context.Context) (end bool, err error) {
	if err := r.applyUpdates(); err != nil {
		return true, err
	}
	if err := r.reportReorg(); err != nil {
		return true, err
	}
	if err := r.recheck(ctx); err != nil {
		return true, r.unlessFollowEnded(ctx, err)
	}
	tip := r.c.bestHeld(wire.SFNodeCF)
	if r.opt.Follow && tip < r.next-1 {
		// The peers hold less than was reported (they are away or
		// rolled back): wait for them.
		if err := r.waitPeers(ctx, fmt.Sprintf("a peer serving compact filters up to height %d, reported already", r.next-1)); err != nil {
			return true, err
		}
		return false, nil
	}
	target := tip
	if !r.opt.Follow && r.opt.To >= 0 {
		target = min(r.opt.To, tip)
	}
	if r.next <= target && r.opt.Follow && r.c.heldByOne(r.next) {
		if waited, end := r.waitLonely(ctx); waited {
			return end, nil
		}
	}
	r.alone = time.Time{}
	if r.next <= target {
		return r.scanTo(ctx, target)
	}
	return r.atEnd(ctx, tip)
}

// waitLonely waits for the other peers to get the next block, which
// only one peer has, for up to the client's timeout since it was first
// found so, so that the block is compared before it is reported. It
// reports whether it waited (the timeout is not over), and end when the
// wait ended with ctx.
func (r *Rescan) waitLonely(ctx context.Context) (waited, end bool) {
	if r.alone.IsZero() {
		r.alone = time.Now()
	}
	if time.Since(r.alone) >= r.c.timeout() {
		return false, false
	}
	return true, r.wait(ctx) != nil
}

// scanTo scans the next step, at most BatchBlocks blocks up to target.
// When the step fails it goes on (end false) with the peers left if
// they hold less, or, following, waits for the peers' chain to settle
// when none served a step they hold, or for a peer dropped to be dialled
// again; otherwise Run ends with the step's error.
func (r *Rescan) scanTo(ctx context.Context, target int32) (end bool, _ error) {
	to := min(target, r.next+r.opt.BatchBlocks-1)
	err := r.step(ctx, to)
	if err == nil {
		r.waiting, r.stalls = peerWait{}, 0
		return false, nil
	}
	if r.opt.Follow && ctx.Err() != nil {
		return true, nil
	}
	if r.opt.Follow && errors.Is(err, peer.ErrStalled) && r.stalls < maxStalledSteps {
		return r.stalledStep(ctx, err)
	}
	if errors.Is(err, ErrNoPeers) && r.c.bestHeld(wire.SFNodeCF) < to && r.c.bestHeld(wire.SFNodeCF) >= 0 {
		// The peers that held the top of the step were banned or
		// dropped: go on up to what those left hold.
		return false, nil
	}
	if best := r.c.bestHeld(wire.SFNodeCF); r.opt.Follow && errors.Is(err, ErrNoPeers) &&
		(best >= to || best < 0 && len(r.c.pool.Serving(wire.SFNodeCF)) > 0) {
		// Peers hold the step's top by now, or are connected with tips
		// the client's chain does not hold yet, yet none served it: what
		// they held moved under the step (a reorganization between
		// its plan and its requests, the new branch not synced yet).
		// Wait for the chain to settle and scan again; a wait past the
		// client's timeout is warned of.
		r.addWarnings([]string{fmt.Sprintf("scanning from height %d: %v (scanning again once the peers' chain settles)", r.next, err)})
		if err := r.waitPeers(ctx, fmt.Sprintf("a peer serving compact filters from height %d", r.next)); err != nil {
			return true, err
		}
		return false, nil
	}
	if r.opt.Follow && !errors.Is(err, ErrReorgTooDeep) && r.c.mayComeBack() {
		// Every peer was banned or dropped on the way: the service
		// dials those dropped again; wait for them.
		r.addWarnings([]string{fmt.Sprintf("no peer left to scan from height %d (waiting for a peer dropped to be dialled again): %v", r.next, err)})
		if err := r.waitPeers(ctx, fmt.Sprintf("a peer offering compact filters to scan from height %d", r.next)); err != nil {
			return true, err
		}
		return false, nil
	}
	return true, err
}

// maxStalledSteps bounds the steps in a row of a following rescan that
// may fail with a stall before Run ends with the stall's error.
const maxStalledSteps = 3

// stalledStep is a following rescan's step that failed with a stall
// (err): the peers left had been asked for blocks that may have left
// their chain between the step's plan and its requests, which btcd does
// not answer (see peer.UnansweredError), while its new branch was not
// mined yet; the scan's check for a reorganization came too soon to see
// it. It is kept as a warning; the headers are synced again and the
// step is planned anew after a wait for the chain to move (a poll),
// at most maxStalledSteps times in a row: a stall that persists ends
// Run with its error.
func (r *Rescan) stalledStep(ctx context.Context, err error) (end bool, _ error) {
	r.stalls++
	r.addWarnings([]string{fmt.Sprintf("scanning from height %d: %v (headers synced again and the step planned anew, %d of %d)",
		r.next, err, r.stalls, maxStalledSteps)})
	if r.wait(ctx) != nil {
		return true, nil // ended by its context: the following ends
	}
	if _, err := r.c.SyncHeaders(ctx); err != nil && ctx.Err() == nil && !errors.Is(err, ErrNoPeers) {
		r.addWarnings([]string{fmt.Sprintf("syncing headers: %v", err)})
	}
	return ctx.Err() != nil, nil
}

// atEnd is a round with nothing left to scan below tip: a rescan that
// does not follow reports the tip and ends (with an error if the peers'
// chain ends below To); a following one reports a new tip and waits for
// the next block or update, ending only with ctx.
func (r *Rescan) atEnd(ctx context.Context, tip int32) (end bool, _ error) {
	if !r.opt.Follow {
		if r.opt.To > tip {
			return true, fmt.Errorf("client: rescan to height %d: the peers' chain ends at %d", r.opt.To, tip)
		}
		r.emit(r.event(EventTip, tip))
		return true, nil
	}
	r.waiting = peerWait{}
	if tip != r.atTip {
		r.atTip = tip
		r.emit(r.event(EventTip, tip))
	}
	return r.wait(ctx) != nil, nil
}

// mayComeBack reports whether no peer offering compact filters is live
// but one may be again: the service runs, which dials a peer dropped
// again after its backoff, and one of the pool is not banned.
func (c *Client) mayComeBack() bool {
	if !c.started() || c.chain.Err() != nil || len(c.pool.Serving(wire.SFNodeCF)) > 0 {
		return false
	}
	return slices.ContainsFunc(c.pool.Members(), func(m *pool.Member) bool { return !c.pool.Status(m).Banned })
}

// peerWait is a following rescan's wait for a peer to serve it again:
// since when, and whether it was warned of.
type peerWait struct {
	since  time.Time
	warned bool
}

// WaitError is the error of a following rescan stopped by its context
// while it waited for a peer to serve it again (every peer dropped or
// away, the service dialling them again): the rescan did not follow to
// the end. It is an ErrNoPeers, and the context's error (Cause):
// errors.Is(err, context.Canceled) tells a caller that ended it.
type WaitError struct {
	Height int32         // the next height to scan (see Rescan.Height)
	For    string        // what the rescan waited for
	Waited time.Duration // how long
	Peers  string        // the peers not banned, and why each is not used
	Cause  error         // the context's error that ended the wait
}

func (e *WaitError) Error() string {
	return fmt.Sprintf("client: following rescan stopped at height %d after waiting %v for %s: %s",
		e.Height, e.Waited.Round(time.Millisecond), e.For, e.Peers)
}

// Unwrap makes a WaitError an ErrNoPeers and its Cause.
func (e *WaitError) Unwrap() []error { return []error{ErrNoPeers, e.Cause} }

// waitPeers is wait, for a peer to serve the rescan again (what says
// which): a wait that outlasts the client's timeout is warned of once,
// naming the peers, and one that ctx ends returns a *WaitError.
func (r *Rescan) waitPeers(ctx context.Context, what string) error {
	if r.waiting.since.IsZero() {
		r.waiting = peerWait{since: time.Now()}
	}
	if waited := time.Since(r.waiting.since); !r.waiting.warned && waited >= r.c.timeout() {
		r.waiting.warned = true
		w := fmt.Sprintf("waiting since %s for %s: %s", r.waiting.since.Format(time.TimeOnly), what, r.c.awaited())
		r.c.logf("rescan: %s", w)
		r.addWarnings([]string{w})
	}
	if err := r.wait(ctx); err != nil {
		return &WaitError{Height: r.Height(), For: what, Waited: time.Since(r.waiting.since), Peers: r.c.awaited(), Cause: err}
	}
	return nil
}

// awaited names the peers not banned, each with why it is not used (in
// words, see notUsedWhy) or the height it holds, and how many are
// banned.
func (c *Client) awaited() string {
	var named []string
	banned := 0
	for _, m := range c.pool.Members() {
		switch st := c.pool.Status(m); {
		case st.Banned:
			banned++
		case st.Reason != "":
			named = append(named, fmt.Sprintf("%s (%s)", st.Addr, notUsedWhy(st)))
		default:
			named = append(named, fmt.Sprintf("%s (holds up to height %d)", st.Addr, c.views.tip(m)))
		}
	}
	out := "no peer but banned ones"
	if len(named) > 0 {
		out = "peers " + strings.Join(named, "; ")
	}
	if banned > 0 {
		out += fmt.Sprintf(" (%d banned)", banned)
	}
	return out
}

// wait waits for the chain or a peer's tip to move (see waitMoved), or
// for an update; a failed header sync is kept as a warning. It returns an
// error only when ctx ends.
func (r *Rescan) wait(ctx context.Context) error {
	if r.pollAt.IsZero() {
		r.pollAt = time.Now().Add(r.opt.PollInterval)
	}
	err := r.c.waitMoved(ctx, time.Until(r.pollAt), r.wake)
	if !time.Now().Before(r.pollAt) {
		r.pollAt = time.Time{}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		r.addWarnings([]string{fmt.Sprintf("syncing headers: %v", err)})
	}
	return nil
}

// applyUpdates takes in the items and rewind Update asked for, and
// reports the blocks a rewind disconnects, highest first.
func (r *Rescan) applyUpdates() error {
	r.mu.Lock()
	if len(r.pending) > 0 {
		found := r.wl.found
		r.items = append(r.items, r.pending...)
		r.pending = nil
		r.wl = newWatchList(r.items)
		for op, is := range found {
			r.wl.found[op] = add(r.wl.found[op], is)
		}
	}
	var events []Event
	if r.rewind >= 0 {
		if r.rewind < r.next {
			to := max(r.rewind, r.base)
			for h := r.base + int32(len(r.emitted)) - 1; h >= to; h-- {
				events = append(events, r.disconnected(h))
			}
			r.next = max(r.rewind, 0)
			r.trimEmitted()
		}
		r.rewind = -1
	}
	close(r.applied)
	r.applied = make(chan struct{})
	r.mu.Unlock()
	for _, e := range events {
		r.emit(e)
	}
	return nil
}

// disconnected returns the event of the reported block at height h
// leaving the chain. Called with mu held.
func (r *Rescan) disconnected(h int32) Event {
	return Event{Kind: EventDisconnected, Height: h, BlockHash: r.emitted[h-r.base], Header: r.headers[h-r.base]}
}

// trimEmitted forgets the connected blocks at and above next, which will
// be scanned and reported again. Called with mu held.
func (r *Rescan) trimEmitted() {
	r.rc.unsure = trimLonely(r.rc.unsure, r.next, math.MaxInt32)
	if r.next < r.base {
		r.base, r.emitted, r.headers, r.rc.reported = r.next, nil, nil, nil
		return
	}
	r.emitted, r.headers, r.rc.reported = r.emitted[:r.next-r.base], r.headers[:r.next-r.base], r.rc.reported[:r.next-r.base]
}

// reportReorg compares the blocks reported connected with the chain and
// reports those that left it, highest first; the scan goes on from the
// fork.
func (r *Rescan) reportReorg() error {
	events, err := r.disconnections()
	for _, e := range events {
		r.emit(e)
	}
	return err
}

// disconnections forgets the blocks reported connected that left the
// chain and returns their events, highest first.
func (r *Rescan) disconnections() ([]Event, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	// The lowest block reported that the chain no longer holds: everything
	// reported from there on is disconnected.
	fork := int32(-1)
	for i := range r.emitted {
		if h := r.base + int32(i); r.c.chain.Hash(h) != r.emitted[i] {
			fork = h
			break
		}
	}
	if fork < 0 {
		return nil, nil
	}
	if fork == r.base && r.base > r.opt.From {
		return nil, fmt.Errorf("client: %w: the chain changed below height %d", ErrReorgTooDeep, r.base)
	}
	var events []Event
	for h := r.base + int32(len(r.emitted)) - 1; h >= fork; h-- {
		events = append(events, r.disconnected(h))
	}
	r.next = fork
	r.trimEmitted()
	return events, nil
}

// step scans next..to and reports what it found, block by block.
func (r *Rescan) step(ctx context.Context, to int32) error {
	r.mu.Lock()
	req := ScanRequest{Watch: r.items, From: r.next, To: to, withHeaders: true}
	wl := r.wl
	r.mu.Unlock()
	res, err := r.scan(ctx, req, wl)
	if err != nil {
		return err
	}
	// The scan may have followed a reorganization below what was
	// reported: report it first.
	if err := r.reportReorg(); err != nil {
		return err
	}
	r.addResult(res)
	r.mu.Lock()
	from := r.next
	r.mu.Unlock()
	if from != req.From {
		return nil // scan again from the fork
	}
	alone, byOne := r.c.restedOnOne(res)
	i := 0
	for h := req.From; h <= req.To; h++ {
		// What was scanned, not what the chain holds by now: a change
		// since is found by the next reportReorg.
		hdr := res.headers[h-req.From]
		hash := hdr.BlockHash()
		first := i
		for ; i < len(res.Matches) && res.Matches[i].Height == h; i++ {
			r.emit(Event{Kind: EventMatch, Height: h, BlockHash: hash, Header: hdr, Match: &res.Matches[i]})
		}
		e := Event{Kind: EventConnected, Height: h, BlockHash: hash, Header: hdr}
		for _, o := range res.OnePeer {
			if o.From <= h && h <= o.To {
				e.OnePeer = o.Peer
			}
		}
		if byOne {
			e.OnePeer = alone
		}
		r.emit(e)
		filter := res.filterHeader(h)
		if e.OnePeer != "" || byOne {
			r.connected(e, len(req.Watch), filter, res.Matches[first:i], &OnePeer{From: h, To: h, Peer: e.OnePeer})
		} else {
			r.connected(e, len(req.Watch), filter, res.Matches[first:i], nil)
		}
	}
	return nil
}

// scan scans req's heights over the peers offering compact filters,
// matching them against wl.
func (r *Rescan) scan(ctx context.Context, req ScanRequest, wl *watchList) (*ScanResult, error) {
	return r.c.scan(ctx, req, "bip157", wire.SFNodeCF, func(ctx context.Context, log *scanLog, req ScanRequest) (*ScanResult, error) {
		res, err := r.c.scanBIP157(ctx, log, req, wl)
		if res != nil {
			res.fetches = &log.fetches
		}
		return res, err
	})
}

// recheck scans again, from the lowest unsure height another peer holds
// now, or the lowest height whose filter header was verified anew to
// another value, up to the last block reported that a peer holds, and
// reports what the first scan missed (see recheck.go). A failed scan is
// kept as a warning and tried again later; it returns an error only when
// ctx ends or the chain changed deeper than the rescan remembers.
func (r *Rescan) recheck(ctx context.Context) error {
	revised := r.revisedFrom()
	r.mu.Lock()
	// Up to what the peers hold: a liar may have been alone higher up.
	from, to := r.rc.from(r.c), min(r.next-1, r.c.bestHeld(wire.SFNodeCF))
	if revised >= 0 && (from < 0 || revised < from) {
		from = revised
	}
	req := ScanRequest{Watch: r.items, From: from, To: to, withHeaders: true}
	wl := r.wl
	r.mu.Unlock()
	if from < 0 || from > to {
		return nil
	}
	res, err := r.scan(ctx, req, wl)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		r.addWarnings([]string{fmt.Sprintf("scanning again heights %d-%d, which rested on one peer or on filter headers verified anew: %v", from, to, err)})
		return nil
	}
	if err := r.reportReorg(); err != nil {
		return err
	}
	r.addResult(res)
	for _, e := range r.rechecked(req, res) {
		r.emit(e)
	}
	return nil
}

// rechecked takes in the result of scanning again req's heights and
// returns the events of what the first scan missed; nothing if the blocks
// scanned are no longer those reported (the next reportReorg reports the
// change).
func (r *Rescan) rechecked(req ScanRequest, res *ScanResult) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	if req.From < r.base || req.To >= r.next {
		return nil
	}
	for h := req.From; h <= req.To; h++ {
		if res.headers[h-req.From].BlockHash() != r.emitted[h-r.base] {
			return nil
		}
	}
	return r.rc.take(r.c, r.base, req, res)
}

// connected records the block e reported connected, scanned with items
// watch items against the verified filter header filter, its matches,
// and the peer it rested on alone, if any.
func (r *Rescan) connected(e Event, items int, filter chainhash.Hash, ms []Match, unsure *OnePeer) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emitted, r.headers = append(r.emitted, e.BlockHash), append(r.headers, e.Header)
	r.rc.note(items, filter, ms, unsure)
	if over := len(r.emitted) - maxReorgDepth; over > 0 {
		r.emitted, r.headers, r.rc.reported = r.emitted[over:], r.headers[over:], r.rc.reported[over:]
		if r.forgotFrom < 0 {
			r.forgotFrom = r.base
		}
		r.base += int32(over)
		if slices.ContainsFunc(r.rc.unsure, func(o OnePeer) bool { return o.From < r.base }) {
			r.rc.unsure = trimLonely(r.rc.unsure, math.MinInt32, r.base-1)
			r.warnings.add(fmt.Sprintf("blocks rested on one peer and no other held them within %d blocks: they were not scanned again", maxReorgDepth))
		}
	}
	r.next = e.Height + 1
}

// forgotten warns of filter headers given up since the revision seen (up
// to now) below the blocks r remembers, down to the lowest it forgot
// (forgotFrom): those blocks were reported against filter headers since
// verified anew, maybe to other values, and cannot be scanned again.
// Called with r.mu held.
func (r *Rescan) forgotten(seen, now uint64) {
	if r.forgotFrom < 0 || seen == now {
		return
	}
	low, all := r.c.revisions.lowestSince(seen, now)
	if !all {
		low = r.forgotFrom // some revisions are no longer known: any may have reached it
	}
	if low >= r.base {
		return
	}
	from := max(low, r.forgotFrom)
	w := fmt.Sprintf("filter headers from height %d were verified anew (a peer's later word may have proved those first verified false), "+
		"below the last %d blocks this rescan remembers: the blocks it reported at heights %d-%d were not scanned again; "+
		"rescan them to find what their first filters may have hidden", from, maxReorgDepth, from, r.base-1)
	if r.warnings.add(w) {
		r.c.logf("rescan: %s", w)
	}
}

// revisedFrom returns the lowest height reported whose block was scanned
// against a filter header the client has since given up and verified
// anew to another value (a peer's late word exposed the peers the first
// verification rested on), or -1. Nothing is compared until the client
// gives up filter headers (Client.revised); then each height reported is
// compared once verified anew.
func (r *Rescan) revisedFrom() int32 {
	r.mu.Lock()
	if n := r.c.revised.Load(); n != r.rc.revised {
		r.forgotten(r.rc.revised, n)
		r.rc.revised, r.rc.compareFrom = n, r.base
	}
	seen, from := r.rc.revised, max(r.rc.compareFrom, r.base)
	unsure := slices.Clone(r.rc.unsure)
	var scanned []chainhash.Hash
	if from != noRevision {
		for _, b := range r.rc.reported[min(from-r.base, int32(len(r.rc.reported))):] {
			scanned = append(scanned, b.filter)
		}
	}
	r.mu.Unlock()
	if from == noRevision {
		return -1
	}
	differs, next := r.c.compareVerified(from, scanned, unsure)
	r.mu.Lock()
	if r.rc.revised == seen { // else given up again meanwhile: compare all anew
		r.rc.compareFrom = next
	}
	r.mu.Unlock()
	return differs
}

// compareVerified compares the filter headers blocks from, from+1, ...
// were scanned against (zero if unknown) with those verified now. It
// returns the first height whose filter header differs (-1 if none), and
// the first not compared, as not verified again yet (noRevision if all
// were). A header that rests on one peer is not kept in memory (see
// noteVerified): a block reported on several peers' word whose header
// rests on one now was verified anew, and counts as differing; one
// reported resting on one peer (unsure) is scanned again once another
// holds it (see rechecks.from), and is not compared.
func (c *Client) compareVerified(from int32, scanned []chainhash.Hash, unsure []OnePeer) (differs, next int32) {
	c.opMu.Lock()
	defer c.opMu.Unlock()
	for i, want := range scanned {
		h := from + int32(i)
		if h > c.verifiedTo {
			return -1, h
		}
		_, got, ok := c.keptFilterHeader(h)
		switch {
		case !ok && slices.ContainsFunc(unsure, func(o OnePeer) bool { return o.From <= h && h <= o.To }):
		case !ok, want != (chainhash.Hash{}) && got != want:
			return h, h
		}
	}
	return -1, noRevision
}

// heightAt returns the first height whose block may hold a transaction of
// time t or later: block times may run up to two hours behind, and the
// median time past only grows, so the first block whose median time past
// reaches t minus two hours; the tip's successor if none.
func (c *Client) heightAt(t time.Time) int32 {
	limit := t.Add(-2 * time.Hour)
	lo, hi := int32(0), c.chain.Height()+1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if c.chain.MedianTime(mid).Before(limit) {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo
}
