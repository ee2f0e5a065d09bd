package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// filterDownload gets a scan's filters from..to: batches the cache holds
// whole are matched from it, the others go to whichever peer is free and
// holds them, and every filter is checked against its agreed filter
// header before it is matched.
type filterDownload struct {
	c        *Client
	log      *scanLog // the operation's: written with mu held
	from, to int32
	headers  []chainhash.Hash // the agreed filter headers of from-1..to
	base     *gcs.Matcher
	progress func(done, total int)
	cancel   context.CancelFunc

	// slow holds the peers whose answers take far longer than the
	// fastest peer's (see pool.Slow): they get only the batches no
	// other peer can serve.
	slow map[*pool.Member]bool
	// reach holds each peer's reach in the range.
	reach map[*pool.Member]int32
	// undecided holds, by height, the filter hashes the blocks of
	// conflicts in the range could not decide between (see Conflict):
	// any of them is taken, and none is kept in the cache.
	undecided map[int32][]chainhash.Hash

	mu       sync.Mutex
	pending  []filterBatch // not taken by a peer yet
	flights  []*flight     // batches being downloaded
	matched  []int32
	done     int
	received int
	err      error
	// disputed is the lowest height whose agreed filter header a peer
	// disputed with its own word (see ownWord), or -1.
	disputed int32
	// feed, when set, is the filterFeed this download serves: its
	// filters are not checked against filter headers (there are none
	// yet) but hashed and handed to it, whose checkpoints verify them.
	feed *filterFeed
}

// flight is one peer's request for a batch. A batch held too long by a
// peer is asked of a free one too (see steal); the first answer counts and
// the other request is cancelled.
type flight struct {
	b       filterBatch
	m       *pool.Member
	start   time.Time
	cancel  context.CancelFunc
	settled bool // the batch is done, by this flight or another
}

// stealAfter is how long at least a batch must have been in flight at a
// peer before a free peer asks for it too; stealFactor is how many times
// the free peer's own batch time it must be, at least.
const (
	stealAfter  = 500 * time.Millisecond
	stealFactor = 4
)

// matchFilters downloads the filters from..to as filterDownload describes
// and returns the heights whose filter matches a script, sorted, and how
// many filters were downloaded.
//
// With feed, the filters of the segments feed verified (see filterFeed)
// are not downloaded again: their matches are feed's; the batches of the
// others end at the segments' ends.
func (c *Client) matchFilters(ctx context.Context, log *scanLog, ms []*pool.Member, scripts [][]byte, headers []chainhash.Hash,
	from, to int32, progress func(done, total int), feed *filterFeed) ([]int32, int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	d := &filterDownload{c: c, log: log, from: from, to: to, headers: headers, base: gcs.NewMatcher(scripts), progress: progress, cancel: cancel,
		slow: c.pool.Slow(ms), reach: map[*pool.Member]int32{}, disputed: -1}
	for _, m := range ms {
		d.reach[m] = c.reachOf(m, to)
	}
	d.undecided = c.conflicts.undecided(from, to, c.chain.Hash)
	for start := from; start <= to; {
		stop := min(to, start+wire.MaxGetCFiltersReqRange-1)
		if feed != nil {
			if seg := feed.verifiedAt(start); seg != nil {
				b := filterBatch{start, min(to, seg.end)}
				d.received += int(b.stop-b.start) + 1
				d.finish(b, seg.hitsIn(b.start, b.stop))
				start = b.stop + 1
				continue
			}
			stop = min(stop, segmentFirst(segmentOf(start)+1)-1)
		}
		b := filterBatch{start, stop}
		start = stop + 1
		if hits, ok := c.cachedBatch(b, d.base, d.check); ok {
			d.finish(b, hits)
			continue
		}
		d.pending = append(d.pending, b)
	}
	d.run(ctx, ms)
	if d.disputed >= 0 {
		c.giveUpVerified(d.disputed - 1)
	}
	if d.err != nil {
		return nil, 0, d.err
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if len(d.pending) > 0 {
		return nil, 0, fmt.Errorf("client: %w: no peer left to serve the filters of heights %d..%d", ErrNoPeers, d.pending[0].start, d.pending[0].stop)
	}
	slices.Sort(d.matched)
	return d.matched, d.received, nil
}

// run has each peer of ms get batches (see work) until none is left.
func (d *filterDownload) run(ctx context.Context, ms []*pool.Member) {
	var wg sync.WaitGroup
	for _, m := range ms {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.work(ctx, m)
		}()
	}
	wg.Wait()
}

// check checks the filter of height h against its agreed filter header
// or, where peers disagree and the block cannot decide, against the filter
// hashes of every side.
func (d *filterDownload) check(h int32, data []byte) error {
	return d.checkHash(h, chainhash.DoubleHashH(data), data)
}

// checkHash is check of the filter data whose hash is fh.
func (d *filterDownload) checkHash(h int32, fh chainhash.Hash, data []byte) error {
	if alts, ok := d.undecided[h]; ok {
		if !slices.Contains(alts, fh) {
			return fmt.Errorf("%w: filter for block %v (height %d) hashes to %v, which none of the peers that disagree on it stated",
				peer.ErrBadFilter, d.c.chain.Hash(h), h, fh)
		}
		return nil
	}
	if got, want := gcs.MakeHeader(&fh, &d.headers[h-d.from]), d.headers[h-d.from+1]; got != want {
		return &offHeaderError{height: h, hash: fh, data: data, msg: fmt.Sprintf("%v: filter for block %v (height %d) leads to filter header %v, the agreed one is %v",
			peer.ErrBadFilter, d.c.chain.Hash(h), h, got, want)}
	}
	return nil
}

// ownWord asks m's own word on the height whose filter it served off the
// agreed header (see Client.ownWord), and notes the lowest height a
// disagreement gives up; the notes of its block's download go to the
// operation's log.
func (d *filterDownload) ownWord(ctx context.Context, m *pool.Member, off *offHeaderError, lie error) error {
	i := off.height - d.from
	notes := &scanLog{}
	from, err := d.c.ownWord(ctx, notes, m, off, [2]chainhash.Hash{d.headers[i], d.headers[i+1]}, lie)
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, n := range notes.notes {
		d.log.note(n)
	}
	if from >= 0 && (d.disputed < 0 || from < d.disputed) {
		d.disputed = from
	}
	return err
}

// keep caches the verified filters of batch b, but those of the heights
// where peers disagree and the block cannot decide.
func (d *filterDownload) keep(b filterBatch, blocks []chainhash.Hash, datas [][]byte) {
	if len(d.undecided) > 0 && len(blocks) == len(datas) {
		blocks, datas = slices.Clone(blocks), slices.Clone(datas)
		for h := b.stop; h >= b.start; h-- {
			if _, ok := d.undecided[h]; ok {
				blocks = slices.Delete(blocks, int(h-b.start), int(h-b.start)+1)
				datas = slices.Delete(datas, int(h-b.start), int(h-b.start)+1)
			}
		}
	}
	d.c.cacheFilters(blocks, datas)
}

// take hands out the first pending batch m can serve; a slow peer gets
// only those no other peer of the download can.
func (d *filterDownload) take(m *pool.Member) (filterBatch, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil {
		return filterBatch{}, false
	}
	i := slices.IndexFunc(d.pending, func(b filterBatch) bool {
		if b.stop > d.reach[m] || d.feed != nil && !d.feed.due(b) {
			return false
		}
		if !d.slow[m] {
			return true
		}
		for o, r := range d.reach {
			if o != m && !d.slow[o] && r >= b.stop {
				return false
			}
		}
		return true
	})
	if i < 0 {
		return filterBatch{}, false
	}
	b := d.pending[i]
	d.pending = slices.Delete(d.pending, i, i+1)
	return b, true
}

// onlyFor reports whether a pending batch is one only m, of the peers
// still live, can serve.
func (d *filterDownload) onlyFor(m *pool.Member) bool {
	d.mu.Lock()
	pending := slices.Clone(d.pending)
	d.mu.Unlock()
	live := d.c.pool.Serving(0)
	return slices.ContainsFunc(pending, func(b filterBatch) bool {
		if b.stop > d.reach[m] {
			return false
		}
		for o, r := range d.reach {
			if o != m && r >= b.stop && slices.Contains(live, o) {
				return false
			}
		}
		return true
	})
}

// finish records a batch done.
func (d *filterDownload) finish(b filterBatch, hits []int32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.matched = append(d.matched, hits...)
	d.done += int(b.stop-b.start) + 1
	if d.progress != nil {
		d.progress(d.done, int(d.to-d.from)+1)
	}
}

// fail records the first failure and stops the other peers.
func (d *filterDownload) fail(m *pool.Member, err error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err == nil {
		d.err = &pool.Failure{Member: m, Err: err}
	}
	d.cancel()
}

// work gets batches from m until none is left that m can serve: pending
// ones first, then those another peer has held too long.
func (d *filterDownload) work(ctx context.Context, m *pool.Member) {
	if d.c.needsRedial(m) {
		// A feed's request another peer answered first dropped the
		// connection (see filterFeed.stop): dialled again only for a
		// batch only m can serve, as after a batch lost here.
		if !d.onlyFor(m) {
			return
		}
		if err := d.c.pool.Redial(ctx, m); err != nil {
			d.c.logf("%s: dialling again before the filter download: %v", m.Addr(), err)
			return
		}
	}
	matcher := d.base.Clone()
	blocks := make([]chainhash.Hash, 0, wire.MaxGetCFiltersReqRange)
	if d.feed != nil {
		blocks = make([]chainhash.Hash, 0, peer.MaxCFiltersPerRequest)
	}
	var own time.Duration // m's last batch time
	damaged := 0          // m's answers damaged on the way in a row
	for {
		f := d.next(ctx, m, own)
		if f == nil {
			return
		}
		blocks = blocks[:0]
		for h := f.b.start; h <= f.b.stop; h++ {
			blocks = append(blocks, d.c.chain.Hash(h))
		}
		fctx, cancel := context.WithCancel(ctx)
		d.mu.Lock()
		f.cancel = cancel
		d.mu.Unlock()
		hits, datas, fed, err := d.batch(fctx, m, matcher, f.b, blocks)
		cancel()
		own = time.Since(f.start)
		if !d.settle(f) {
			// Another peer answered first; this request was cancelled
			// and its connection dropped with it. m dials again when a
			// batch only it can serve is left (unless it was banned or
			// dropped meanwhile).
			if !d.c.pool.Status(m).Live || !d.onlyFor(m) {
				return
			}
			if err := d.c.pool.Redial(ctx, m); err != nil {
				d.c.logf("%s: dialling again after a batch another peer served first: %v", m.Addr(), err)
				return
			}
			continue
		}
		if d.feed != nil {
			if !d.fed(ctx, f.b, m, hits, fed, datas, err) {
				return
			}
			continue
		}
		if off := (*offHeaderError)(nil); errors.As(err, &off) {
			err = d.ownWord(ctx, m, off, err)
		}
		if err != nil {
			if damaged < maxDamagedAsks && d.askAgain(ctx, f.b, m, err) {
				damaged++
				continue
			}
			d.fail(m, err)
			return
		}
		damaged = 0
		d.keep(f.b, blocks, datas)
		d.mu.Lock()
		d.received += len(blocks)
		d.mu.Unlock()
		d.finish(f.b, hits)
	}
}

// askAgain takes in m's answer to batch b that failed with err, and
// reports whether b is to be asked again: when the answer was damaged on
// the way (peer.ErrDamaged, and no lie: a payload failing the checksum
// its node gave it proves nothing about the node), b goes back to the
// pending batches, first, for whichever peer is free, and m's
// connection, which the damage ends, is waited for to end and dialled
// again (after m's backoff, see pool.Pool.Redial). The worker bounds the
// damaged answers in a row it asks again (maxDamagedAsks, as the filter
// headers' segmentAgain does): a peer whose answers stay damaged, or
// that cannot be dialled again, fails the download as ever, and is
// dropped, not banned.
func (d *filterDownload) askAgain(ctx context.Context, b filterBatch, m *pool.Member, err error) bool {
	if !errors.Is(err, peer.ErrDamaged) || isLie(err) || ctx.Err() != nil {
		return false
	}
	// Back first: another peer may take it while m is dialled again.
	d.mu.Lock()
	d.pending = slices.Insert(d.pending, 0, b)
	d.mu.Unlock()
	d.c.awaitConnEnd(ctx, m)
	if rerr := d.c.pool.Redial(ctx, m); rerr != nil {
		d.c.logf("%v; dialling it again: %v", err, rerr)
		return false
	}
	d.c.logf("%v: dialled again, the filters of heights %d..%d asked again", err, b.start, b.stop)
	return true
}

// awaitConnEnd waits, within ctx and the client's timeout, for m's
// connection to end: a request that found damage may return before its
// connection is seen to have ended (the read loop records the damage,
// then closes the socket, and only then marks the connection done),
// and pool.Pool.Redial keeps a connection still open, on which a request
// would fail with the same damage, unsent. Bounded: should m have been
// dialled again meanwhile, its new connection does not end.
func (c *Client) awaitConnEnd(ctx context.Context, m *pool.Member) {
	p := c.pool.Conn(m)
	if p == nil {
		return
	}
	t := time.NewTimer(c.timeout())
	defer t.Stop()
	select {
	case <-p.Done():
	case <-ctx.Done():
	case <-t.C:
	}
}

// fed takes in the end of a feed's batch b that m served (see batch):
// what it gave, or its failure err. It reports whether m goes on.
func (d *filterDownload) fed(ctx context.Context, b filterBatch, m *pool.Member, hits []int32, fed *fedFilters, datas [][]byte, err error) bool {
	switch {
	case err == nil:
		d.feed.put(b, m, hits, fed, datas)
		return true
	case errors.Is(err, peer.ErrDamaged):
		// No proof, and the rest of the batch is not worth its bytes:
		// the segments not in are verified by their filter headers, as
		// ever.
		d.feed.abandon(ctx, m, err)
		return false
	case ctx.Err() != nil:
		// The feed was stopped, abandoned or failed: not m's failure.
		return false
	case errors.Is(err, errFatSegment):
		// No proof: the rest is asked again, its segments' filter
		// hashes first (see filterFeed.part).
		return d.resume(ctx, b, m, hits, fed, datas)
	}
	d.fail(m, err)
	return false
}

// next returns m's next flight: a pending batch it can serve, or one
// another peer has held too long (see stealAfter), waiting while such a
// batch may still come; nil when m has nothing left to do.
func (d *filterDownload) next(ctx context.Context, m *pool.Member, own time.Duration) *flight {
	for {
		if b, ok := d.take(m); ok {
			return d.fly(b, m)
		}
		f, wait := d.steal(m, own)
		if f != nil {
			return f
		}
		var advanced <-chan struct{}
		if d.feed != nil && d.pendingFor(m) {
			// Batches beyond the feed's window: wait till the
			// verification takes a segment.
			advanced, wait = d.feed.advanced(), true
		}
		if !wait {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-advanced:
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// pendingFor reports whether a pending batch is one m may serve.
func (d *filterDownload) pendingFor(m *pool.Member) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.err == nil && slices.ContainsFunc(d.pending, func(b filterBatch) bool { return b.stop <= d.reach[m] })
}

// fly records m's flight of b.
func (d *filterDownload) fly(b filterBatch, m *pool.Member) *flight {
	d.mu.Lock()
	defer d.mu.Unlock()
	f := &flight{b: b, m: m, start: time.Now()}
	d.flights = append(d.flights, f)
	return f
}

// steal returns a flight of a batch m can serve that another peer has
// held longer than stealAfter and stealFactor times m's own batch time,
// and reports whether one may still qualify (so m should wait).
func (d *filterDownload) steal(m *pool.Member, own time.Duration) (*flight, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.err != nil || d.slow[m] {
		return nil, false
	}
	limit := max(stealAfter, stealFactor*own)
	wait := false
	for _, f := range d.flights {
		if f.settled || f.m == m || f.b.stop > d.reach[m] || d.flying(f.b, m) {
			continue
		}
		if time.Since(f.start) < limit {
			wait = true
			continue
		}
		g := &flight{b: f.b, m: m, start: time.Now()}
		d.flights = append(d.flights, g)
		d.c.logf("%s has held filters %d..%d for %v: asking %s too", f.m.Addr(), f.b.start, f.b.stop, time.Since(f.start).Round(time.Millisecond), m.Addr())
		return g, false
	}
	return nil, wait
}

// flying reports whether m already has a flight of b. Called with mu held.
func (d *filterDownload) flying(b filterBatch, m *pool.Member) bool {
	return slices.ContainsFunc(d.flights, func(f *flight) bool { return f.b == b && f.m == m })
}

// settle marks f's batch done and cancels its other flights; it reports
// whether f was first.
func (d *filterDownload) settle(f *flight) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if f.settled {
		return false
	}
	for _, g := range d.flights {
		if g.b == f.b {
			g.settled = true
			if g != f && g.cancel != nil {
				g.cancel()
			}
		}
	}
	return true
}

// batch gets the filters of one batch from m, checks and matches them
// (on m's read loop, as each is read: see peer.Peer.GetCFilters). For a
// feed, each filter is taken in by the feed's fedFilters (see
// fedFilters.add), which return what the batch holds of it, and the
// batch returns them with its matches and the filters it held; it is
// asked in the requests filterFeed.part makes of it, one after another
// on m's connection.
func (d *filterDownload) batch(ctx context.Context, m *pool.Member, matcher *gcs.Matcher, b filterBatch, blocks []chainhash.Hash) (hits []int32, datas [][]byte, fed *fedFilters, err error) {
	r := &batchRead{d: d, m: m, matcher: matcher, b: b, blocks: blocks, datas: make([][]byte, 0, len(blocks))}
	if d.feed == nil {
		err = d.c.conn(m).GetCFiltersSummed(ctx, b.start, blocks, r.from(b.start))
		return r.hits, r.datas, nil, err
	}
	r.fed = d.feed.open(m, b)
	for start := b.start; start <= b.stop && err == nil; {
		var stop int32
		if stop, err = d.feed.part(ctx, m, filterBatch{start, b.stop}); err != nil {
			break
		}
		err = d.c.conn(m).GetCFiltersSummed(ctx, start, blocks[start-b.start:stop-b.start+1], r.from(start))
		r.fed.sized()
		start = stop + 1
	}
	return r.hits, r.datas, r.fed, err
}

// batchRead is what a batch read so far (see filterDownload.batch).
type batchRead struct {
	d       *filterDownload
	m       *pool.Member
	matcher *gcs.Matcher
	b       filterBatch
	blocks  []chainhash.Hash
	fed     *fedFilters
	hits    []int32
	datas   [][]byte
}

// from returns the function that takes the filters of a request of the
// batch from height start.
func (r *batchRead) from(start int32) func(i int, data []byte, sum peer.PayloadSum) error {
	return func(i int, data []byte, sum peer.PayloadSum) error {
		return r.take(start+int32(i), data, sum)
	}
}

// take checks (or, for a feed, hands to fed) and matches the filter of
// height h.
func (r *batchRead) take(h int32, data []byte, sum peer.PayloadSum) error {
	i := h - r.b.start
	block := r.blocks[i]
	fh := chainhash.DoubleHashH(data)
	kept := data
	if r.fed != nil {
		var err error
		if kept, err = r.fed.add(h, block, fh, data, sum); err != nil {
			return err
		}
	} else if err := r.d.checkHash(h, fh, data); err != nil {
		return peerErr(r.m, "getcfilters", err)
	}
	r.datas = append(r.datas, kept)
	if r.matcher.Len() == 0 {
		return nil
	}
	// The filter is the one its agreed header commits to (or, for a
	// feed, its hash is checked before its match counts): one pass that
	// may stop at the first match.
	hit, err := r.matcher.MatchVerifiedBytes(data, gcs.BasicKey(&r.blocks[i]))
	if err != nil {
		return peerErr(r.m, "getcfilters", fmt.Errorf("%w: filter for block %v (height %d): %v", peer.ErrBadFilter, block, h, err))
	}
	if hit {
		r.hits = append(r.hits, h)
	}
	return nil
}
