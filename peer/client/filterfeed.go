package client

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// filterFeed downloads, for a scan, the filters of the segments whose
// end is an agreed checkpoint, while the verification runs: such a
// segment is verified by its filters rather than by its filter headers
// (no getcfheaders, which costs a node as much as the filters do). The
// filter hashes a peer served, chained from the agreed filter header
// before the segment, must reach the agreed checkpoint at its end; the
// checkpoint commits to one chain of filter hashes, so they are then the
// agreed filter hashes, as the hashes of a getcfheaders answer that
// reaches it would be (see fedSegment). The filters are matched as they
// are read; their matches count only once their segment is verified.
//
// A segment is fed only when the scan needs its filters (all but that of
// the height before the scan's first, at most) and asking getcfheaders
// would add no cross-check (see fedEligible): every peer taking part stated the checkpoint at its
// end (a peer whose chain ends inside the segment states its part of it
// height by height, see segment), the checkpoints are compared there (no
// undecided conflict), nothing of it was verified before, the store holds
// none of it, and no peer's word is held against it. Only peers that
// stated the checkpoint serve its filters. Filters that miss the
// checkpoint their server sent itself prove it wrong: the segment's
// filter hashes are then asked as ever (segment), and the first peer that
// served a filter whose hash is not the agreed one is banned.
//
// A peer brings in at most fatSegmentBytes of filters unchecked, over
// the fed segments not verified yet: a segment whose filters would take
// it past has its filter hashes asked before them (see part and ask:
// they must lead to its agreed checkpoint, so any peer's do), and every
// filter of it read after is checked against its own as it is read (see
// arrived), so that a peer serving false filters of the largest size is
// banned at the first one read after, not a whole segment (250 MiB)
// later. Each batch is asked in requests sized from the peer's last
// filters, one after another on its connection (a peer's first, before
// their size is known, of 32: what fits the bound at the largest size),
// so that an honest segment that large costs its filter hashes (32 bytes
// a height) and a round trip, and its node nothing more. A batch whose
// filters pass the bound after all (a peer whose filters grew far past
// its last ones) ends at the filter that passes it, dropping the
// connection, and its rest is asked again (see filterDownload.resume).
// A peer of honest small filters is not slowed but by its first
// request's round trip: its filters fit the bound unchecked.
type filterFeed struct {
	c    *Client
	base *gcs.Matcher

	cancel context.CancelFunc
	wg     sync.WaitGroup
	d      *filterDownload
	// redial is what stop redials a peer within whose request the
	// download abandoned, budget the operation's (see pool.Each), and
	// ms the peers it asked.
	redial context.Context
	budget *pool.Budget
	ms     []*pool.Member

	mu       sync.Mutex
	segs     map[int]*fedSegment // the segments fed, by index
	next     int                 // the lowest segment the verification has not taken
	wake     chan struct{}       // closed when next moves
	ended    chan struct{}       // closed when the download ended
	err      error               // the download's failure
	heldData int64               // bytes of filters held for the cache
	stopped  bool                // stop ended the download

	// heldLimit is the bound the feed holds filters within (the
	// function heldLimit), set when the feed is made and never changed.
	heldLimit int64
	// agreed holds the agreed checkpoints (set by start), which the
	// filter hashes asked for a segment must lead to (see ask).
	agreed []chainhash.Hash
	// unchecked is, by peer, the bytes of the filters it served
	// unchecked (before their segment's filter hashes were asked) of
	// the fed segments not verified or discarded yet (see arrived), and
	// sizes the mean bytes of the filters of its last fed request, 0
	// before its first (see part).
	unchecked map[*pool.Member]int64
	sizes     map[*pool.Member]int64
}

// fedSegment is a segment a filterFeed downloads: its heights, and what
// each of its batches gave.
type fedSegment struct {
	j          int
	start, end int32
	left       int // batches not in yet
	done       chan struct{}
	verified   bool
	hashes     []chainhash.Hash  // by height from start
	sums       []peer.PayloadSum // by height from start
	servers    []*pool.Member    // by height from start
	hits       []int32
	datas      [][]byte // by height from start, while held for the cache
	// checked holds, by height from start, whether the filter's payload
	// checksum was found right before its bytes were dropped (a filter
	// not held): it arrived as its server sent it.
	checked []bool
	// unchecked is the bytes of its filters each peer served before
	// want, and want, once asked (see ask), its agreed filter hashes,
	// by height from start: each filter read after is checked against
	// its own (see arrived). asking is closed when the peer asking
	// them (nil if none) has its answer.
	unchecked map[*pool.Member]int64
	want      []chainhash.Hash
	asking    chan struct{}
}

// feedAhead bounds how many segments past the one the verification waits
// for the feed downloads; feedHeldBytes bounds the filters it holds for
// the cache meanwhile (those beyond are not cached).
const (
	feedAhead     = 16
	feedHeldBytes = 8 << 20
)

// fatSegmentBytes bounds the bytes of filters a peer brings in
// unchecked over the fed segments not verified yet: a segment whose
// filters would pass it has its filter hashes asked first (one
// getcfheaders, 32 bytes a height) and every filter of it is checked
// against its own as it is read, so that a peer serving false filters of
// the largest size (250 MiB a segment) is proved wrong and banned within
// about 8 MiB of them. It is what the feed holds (feedHeldBytes), and
// twice what a 2,000-filter batch of filters of 1.4 KB brings in beside
// the segment before it: at 4 MiB such a chain (neutrinobench's) had
// most segments' hashes asked too, and its node spent a quarter more CPU
// a scan. A segment of full blocks passes it: a basic
// filter is about 2% of its block without witnesses
// (bitcoin/bitcoin#12254), some 20 KiB for a block of 1 MB, 20 MiB a
// segment, which then costs its filter hashes (32 KiB, 0.16%,
// TestFeedFullBlockFiltersNotBanned) and its node their lookups: 3% to
// 7% more CPU for a scan of full blocks served by btcd, whose filters it
// reads and sends at far more cost (TestFeedFullBlockCost).
const fatSegmentBytes = 8 << 20

// fatBound is the bound arrived and part hold a peer's unchecked filters
// within: fatSegmentBytes; a variable only so that a measurement can
// take the check away (TestFeedFullBlockCost).
var fatBound int64 = fatSegmentBytes

// errFatSegment ends a fed batch at a filter that takes what its server
// brought in unchecked past fatSegmentBytes (see arrived): no proof of
// anything, the rest of the batch is asked again, its segments' filter
// hashes first (see filterDownload.resume).
var errFatSegment = errors.New("client: the fed filters a peer served unchecked passed their bound")

// heldLimit is the bound a feed of a client of cfg holds filters
// within: feedHeldBytes, unless cfg lowers it (Config.feedHeld).
func heldLimit(cfg Config) int64 {
	switch {
	case cfg.feedHeld < 0:
		return 0
	case cfg.feedHeld > 0:
		return min(cfg.feedHeld, feedHeldBytes)
	}
	return feedHeldBytes
}

// newFilterFeed returns a feed whose filters are matched against scripts.
func (c *Client) newFilterFeed(scripts [][]byte) *filterFeed {
	return &filterFeed{c: c, base: gcs.NewMatcher(scripts), segs: map[int]*fedSegment{}, wake: make(chan struct{}),
		ended: make(chan struct{}), heldLimit: heldLimit(c.cfg), unchecked: map[*pool.Member]int64{},
		sizes: map[*pool.Member]int64{}}
}

// start starts downloading the segments of plan p that fedEligible
// admits, from the peers of v that stated their checkpoints.
func (f *filterFeed) start(ctx context.Context, v *verification, p segmentPlan) {
	f.redial, f.budget, f.ms, f.agreed = ctx, v.log.budget, slices.Clone(v.ms), p.agreed
	ctx, f.cancel = context.WithCancel(ctx)
	d := &filterDownload{c: f.c, base: f.base, cancel: f.cancel, slow: f.c.pool.Slow(v.ms), reach: map[*pool.Member]int32{},
		disputed: -1, feed: f}
	first := segmentOf(p.first)
	f.next = first
	for j := first; j <= segmentOf(v.to); j++ {
		if !v.fedEligible(j, p.agreed) {
			continue
		}
		f.segs[j] = newFedSegment(j)
	}
	d.pending = f.batches(first, segmentOf(v.to), len(v.ms))
	for _, m := range v.ms {
		d.reach[m] = min(v.reach[m], int32(len(v.cps[m]))*wire.CFCheckptInterval)
	}
	f.d = d
	if len(f.segs) == 0 {
		close(f.ended)
		return
	}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		d.run(ctx, f.ms)
		f.mu.Lock()
		defer f.mu.Unlock()
		if !f.stopped {
			f.err = d.err
		}
		close(f.ended)
	}()
}

// newFedSegment returns segment j, to be fed, with nothing in yet.
func newFedSegment(j int) *fedSegment {
	s := &fedSegment{j: j, start: segmentFirst(j), end: int32(j+1) * wire.CFCheckptInterval, done: make(chan struct{})}
	n := int(s.end-s.start) + 1
	s.hashes, s.sums, s.servers, s.datas = make([]chainhash.Hash, n), make([]peer.PayloadSum, n), make([]*pool.Member, n), make([][]byte, n)
	s.checked, s.unchecked = make([]bool, n), map[*pool.Member]int64{}
	return s
}

// batches returns the batches of the segments fed among first..last:
// each run of consecutive ones cut into requests of
// peer.MaxCFiltersPerRequest filters where that leaves two for each of
// the peers at least (so that each has one to start with and one to
// steal, see filterDownload), else of 1,000; and counts each segment's
// batches.
func (f *filterFeed) batches(first, last, peers int) []filterBatch {
	size, total := int32(peer.MaxCFiltersPerRequest), int32(0)
	for _, s := range f.segs {
		total += s.end - s.start + 1
	}
	if total < 2*size*int32(peers) {
		size = wire.MaxGetCFiltersReqRange
	}
	var out []filterBatch
	for j := first; j <= last; j++ {
		if f.segs[j] == nil {
			continue
		}
		k := j
		for f.segs[k+1] != nil && k+1 <= last {
			k++
		}
		end := f.segs[k].end
		for b := f.segs[j].start; b <= end; b += size {
			batch := filterBatch{b, min(end, b+size-1)}
			out = append(out, batch)
			for i := segmentOf(batch.start); i <= segmentOf(batch.stop); i++ {
				f.segs[i].left++
			}
		}
		j = k
	}
	return out
}

// stop ends the download and waits for it: the segments not in yet are
// asked as ever (see wait). A request the download abandoned (a batch
// another peer served first, or one in flight at the end) dropped its
// connection. The verification stops it before it asks a peer anything
// itself, with redial: such a peer is dialled again, since the
// verification asks every peer, all at once and as slow ones are in a
// verification (see pool.Each: one that stalls its handshake is left
// out, with a warning). A peer whose connection its node ended itself is
// dialled again only if that is due soon (see pool.Pool.RedialDue): one
// that answers and hangs up each time would hold the verification for
// its budget.
func (f *filterFeed) stop(redial bool) {
	if f.cancel == nil {
		return
	}
	f.mu.Lock()
	f.stopped = true
	f.mu.Unlock()
	f.cancel()
	f.wg.Wait()
	if !redial {
		return
	}
	ms := slices.DeleteFunc(slices.Clone(f.ms), func(m *pool.Member) bool { return !f.c.pool.Status(m).Live })
	if !slices.ContainsFunc(ms, f.c.needsRedial) {
		return
	}
	err := f.c.pool.Each(f.redial, f.budget, ms, func(ctx context.Context, m *pool.Member) error { return f.c.pool.RedialDue(ctx, m) })
	if err != nil {
		f.c.logf("dialling again after a filter request the scan abandoned: %v", err)
	} else {
		f.c.logf("dialled again after a filter request the scan abandoned")
	}
}

// due reports whether batch b is within the feed's window (feedAhead).
func (f *filterFeed) due(b filterBatch) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return segmentOf(b.start) <= f.next+feedAhead
}

// advanced returns a channel closed when the verification next takes a
// segment.
func (f *filterFeed) advanced() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.wake
}

// batchRoom is the bytes of filters one batch may hold until its segment
// is verified: what heldLimit leaves, shared among the feed's peers,
// each of which holds one batch at a time, less checkRoom.
func (f *filterFeed) batchRoom() int64 {
	f.mu.Lock()
	defer f.mu.Unlock()
	return (f.heldLimit-f.heldData)/int64(max(len(f.ms), 1)) - checkRoom
}

// checkRoom is what a batch leaves of its share for checking the filters
// it does not hold (see filterDownload.batch): each check copies its
// filter, and the copies are collected only as fast as the collector
// runs.
const checkRoom = 8 * wire.MaxCFilterDataSize

// put takes in batch b as m served it: its matches, its filters' hashes
// and payload checksums (fed), and the filters, held for the cache within
// heldLimit. A filter not held is noted checked if its checksum was
// found right (by batch, or here before its bytes are dropped).
func (f *filterFeed) put(b filterBatch, m *pool.Member, hits []int32, fed *fedFilters, datas [][]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := int(b.stop-b.start) + 1
	if fed == nil || len(fed.hashes) != n || len(datas) != n || len(fed.sums) != n || len(fed.checked) != n {
		return
	}
	for j := segmentOf(b.start); j <= segmentOf(b.stop); j++ {
		s := f.segs[j]
		if s == nil {
			continue
		}
		lo, hi := max(b.start, s.start), min(b.stop, s.end)
		part, data := fed.hashes[lo-b.start:hi-b.start+1], datas[lo-b.start:hi-b.start+1]
		sums := fed.sums[lo-b.start : hi-b.start+1]
		copy(s.hashes[lo-s.start:], part)
		copy(s.sums[lo-s.start:], sums)
		copy(s.checked[lo-s.start:], fed.checked[lo-b.start:hi-b.start+1])
		size := int64(0)
		for k := range part {
			s.servers[int(lo-s.start)+k] = m
			size += int64(len(data[k]))
		}
		if f.heldData+size <= f.heldLimit {
			copy(s.datas[lo-s.start:], data)
			f.heldData += size
		} else {
			for k, d := range data {
				if d != nil {
					s.checked[int(lo-s.start)+k] = sums[k].Intact(f.c.chain.Hash(lo+int32(k)), d)
				}
			}
		}
		for _, h := range hits {
			if lo <= h && h <= hi {
				s.hits = append(s.hits, h)
			}
		}
		if s.left--; s.left == 0 {
			close(s.done)
		}
	}
}

// fedFilters is what a feed's batch gave of its filters besides their
// matches, by position in the batch: each filter's hash and payload
// checksum, and whether that checksum was checked as the filter was read
// (for a filter not held, see add). room is what the batch may still
// hold of the filters themselves (see filterFeed.batchRoom).
type fedFilters struct {
	f       *filterFeed
	m       *pool.Member
	room    int64
	hashes  []chainhash.Hash
	sums    []peer.PayloadSum
	checked []bool
	// read and n are the bytes and the number of the filters of the
	// request being read (see sized).
	read int64
	n    int64
}

// open returns the fedFilters of batch b, which m serves.
func (f *filterFeed) open(m *pool.Member, b filterBatch) *fedFilters {
	n := int(b.stop-b.start) + 1
	return &fedFilters{f: f, m: m, room: f.batchRoom(),
		hashes: make([]chainhash.Hash, 0, n), sums: make([]peer.PayloadSum, 0, n), checked: make([]bool, 0, n)}
}

// sized notes, after a request of the batch, the mean size of its
// filters as its server's (see part).
func (ff *fedFilters) sized() {
	if ff.n == 0 {
		return
	}
	ff.f.mu.Lock()
	ff.f.sizes[ff.m] = (ff.read + ff.n - 1) / ff.n
	ff.f.mu.Unlock()
	ff.read, ff.n = 0, 0
}

// add takes in, on the read loop, the filter data of the block at height
// h, whose hash is fh and payload checksum sum (see arrived), and
// returns what the batch holds of it: data, or nil past the batch's share
// of the feed's bound, so that a peer serving filters of the largest
// size holds no more memory unchecked. The checksum of a filter not held
// is checked now: its bytes are gone when its segment's check may need to
// tell a lie from damage on the way, and a filter damaged on the way
// ends the batch here (peer.ErrDamaged), so that a peer whose filters
// arrive damaged costs no more than what the feed holds.
func (ff *fedFilters) add(h int32, block, fh chainhash.Hash, data []byte, sum peer.PayloadSum) ([]byte, error) {
	ff.read, ff.n = ff.read+int64(len(data)), ff.n+1
	if err := ff.f.arrived(ff.m, h, block, fh, len(data)); err != nil {
		return nil, err
	}
	kept, checked := data, false
	if ff.room -= int64(len(data)); ff.room < 0 {
		if !sum.Intact(block, data) {
			// Reported as damage by GetCFiltersSummed.
			return nil, fmt.Errorf("filter for block %v (height %d) not held: checked as read", block, h)
		}
		kept, checked = nil, true
	}
	ff.hashes, ff.sums, ff.checked = append(ff.hashes, fh), append(ff.sums, sum), append(ff.checked, checked)
	return kept, nil
}

// arrived checks the filter of height h, of n bytes and hash fh, that m
// serves, as it is read. Once its segment's filter hashes are in (see
// ask), it must be the one they state: one that is not, read as m's node
// sent it (GetCFiltersSummed reports it as damage otherwise), is m's word
// against the checkpoint m sent itself, which they lead to: a lie.
// Before, it counts to the bytes m served unchecked, and ends the batch
// (errFatSegment) past fatSegmentBytes.
func (f *filterFeed) arrived(m *pool.Member, h int32, block, fh chainhash.Hash, n int) error {
	f.mu.Lock()
	s := f.segs[segmentOf(h)]
	if s == nil || s.verified {
		// A verified segment's filters are all in: this is a
		// request another peer answered first.
		f.mu.Unlock()
		return nil
	}
	if s.want != nil {
		want := s.want[h-s.start]
		f.mu.Unlock()
		if fh != want {
			return peerErr(m, "getcfilters", fmt.Errorf(
				"%w: filter for block %v (height %d), as it sent it, hashes to %v, where the filter headers to the checkpoint at height %d it sent itself state %v",
				peer.ErrBadFilter, block, h, fh, s.end, want))
		}
		return nil
	}
	s.unchecked[m] += int64(n)
	f.unchecked[m] += int64(n)
	over := f.unchecked[m] > fatBound
	f.mu.Unlock()
	if !over {
		return nil
	}
	f.c.logf("%s: the fed filters it served unchecked passed %d MiB at height %d: the batch ends there, and is asked again with its segments' filter hashes first",
		m.Addr(), fatSegmentBytes>>20, h)
	return fmt.Errorf("%w: height %d", errFatSegment, h)
}

// release drops what s counts to its servers' unchecked bytes (s is
// verified or discarded). Called with mu held.
func (f *filterFeed) release(s *fedSegment) {
	for m, n := range s.unchecked {
		f.unchecked[m] -= n
	}
	s.unchecked = nil
}

// fatGrowth is the size part takes a peer's next filters to be, in
// quarters of the mean size of its last request's: a quarter larger,
// since filters grow along the chain, and a request whose filters pass
// fatSegmentBytes after all is cut (see arrived), which drops the
// connection while the node still sends.
const fatGrowth = 5

// part returns the last height of m's next request of batch b (from
// b.start), having asked m for the filter hashes (see ask) of each
// segment of b whose filters would take what m may still serve unchecked
// past fatSegmentBytes, at the size of the filters of m's last request
// (sizes) and a quarter more (fatGrowth): so that an honest segment's
// filters, however large, are checked as they are read without a cut.
// m's first request, before any size is known, is of as many filters as
// fit that room at the largest size (wire.MaxCFilterDataSize, 16
// filters), where it has some unchecked.
func (f *filterFeed) part(ctx context.Context, m *pool.Member, b filterBatch) (int32, error) {
	f.mu.Lock()
	room, size := fatBound-f.unchecked[m], f.sizes[m]
	var open int64 // the heights of b read unchecked
	var ask []*fedSegment
	for j := segmentOf(b.start); j <= segmentOf(b.stop); j++ {
		s := f.segs[j]
		if s == nil || s.verified || s.want != nil {
			continue
		}
		n := int64(min(b.stop, s.end)-max(b.start, s.start)) + 1
		if size > 0 && fatGrowth*(open+n)*size > 4*room {
			ask = append(ask, s)
			continue
		}
		open += n
	}
	f.mu.Unlock()
	if size == 0 && open > 0 {
		n := max(room/wire.MaxCFilterDataSize, 1)
		return b.start + int32(min(n-1, int64(b.stop-b.start))), nil
	}
	for _, s := range ask {
		if err := f.ask(ctx, m, s); err != nil {
			return 0, err
		}
	}
	return b.stop, nil
}

// ask asks m for the filter hashes of s, unless they are in: they must
// lead from the agreed checkpoint before s to the one at its end, both of
// which m sent itself, else m is proved wrong (checkpointSegment). A peer
// that finds another asking them waits for its answer, and asks them
// itself if that failed: a segment's hashes are asked once of honest
// peers.
func (f *filterFeed) ask(ctx context.Context, m *pool.Member, s *fedSegment) error {
	for {
		f.mu.Lock()
		if s.want != nil || s.verified || f.segs[s.j] != s {
			f.mu.Unlock()
			return nil
		}
		wait := s.asking
		if wait == nil {
			s.asking = make(chan struct{})
		}
		f.mu.Unlock()
		if wait == nil {
			break
		}
		select {
		case <-wait:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	start, prev := segmentStart(s.j, f.agreed)
	hashes, err := f.c.checkpointSegment(ctx, m, start, s.end, prev, f.agreed[s.j])
	f.mu.Lock()
	if err == nil && !s.verified && f.segs[s.j] == s {
		s.want = hashes
	}
	close(s.asking)
	s.asking = nil
	f.mu.Unlock()
	return err
}

// cut cuts batch b after its first n filters: what it gave (done, empty
// if n is 0) is put, the rest asked again. A segment both parts hold
// waits for one batch more.
func (f *filterFeed) cut(b filterBatch, n int) (done, rest filterBatch) {
	done, rest = filterBatch{b.start, b.start + int32(n) - 1}, filterBatch{b.start + int32(n), b.stop}
	if n == 0 {
		return done, rest
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if j := segmentOf(rest.start); segmentOf(done.stop) == j && f.segs[j] != nil {
		f.segs[j].left++
	}
	return done, rest
}

// resume takes in what batch b, which m served, gave before m's unchecked
// filters passed fatSegmentBytes (hits, fed and datas, see put), has the
// rest of it asked again, first, and dials m again (the batch's end
// dropped its connection; a connection the node ended itself is dialled
// again only if that is due soon, see pool.Pool.RedialDue: the rest goes
// to another peer). It reports whether m is live for more.
func (d *filterDownload) resume(ctx context.Context, b filterBatch, m *pool.Member, hits []int32, fed *fedFilters, datas [][]byte) bool {
	done, rest := d.feed.cut(b, len(fed.hashes))
	if done.stop >= done.start {
		d.feed.put(done, m, hits, fed, datas)
	}
	d.mu.Lock()
	d.pending = slices.Insert(d.pending, 0, rest)
	d.mu.Unlock()
	if err := d.c.pool.RedialDue(ctx, m); err != nil {
		d.c.logf("%s: dialling again after a fed batch ended for its segment's filter hashes: %v", m.Addr(), err)
		return false
	}
	return true
}

// abandon ends the download from within, after a message damaged on
// the way (why) that m served: the segments not in are verified by their
// filter headers (see wait), and nobody is blamed for the damage; a
// failure the download met before stands. The damage ends m's
// connection, but its request may return before the connection is seen
// to have ended (the read loop records the damage, then closes the
// socket, which fails a write still under way, and only then marks the
// connection done): abandon waits for that end, so that stop dials m
// again rather than finding its connection open and the verification
// ask on it, failing with the same damage, unsent.
func (f *filterFeed) abandon(ctx context.Context, m *pool.Member, why error) {
	f.c.logf("%v: the scan's segments whose filters are not in are verified by their filter headers", why)
	f.c.awaitConnEnd(ctx, m)
	f.cancel()
}

// wait returns segment j once its filters are in; nil if j is not fed or
// the download ended without it (stopped, or no peer left to serve it),
// and the download's failure if it failed.
func (f *filterFeed) wait(ctx context.Context, j int) (*fedSegment, error) {
	f.mu.Lock()
	s := f.segs[j]
	if j+1 > f.next {
		f.next = j + 1
		close(f.wake)
		f.wake = make(chan struct{})
	}
	f.mu.Unlock()
	if s == nil {
		return nil, nil
	}
	select {
	case <-s.done:
		return s, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-f.ended:
	}
	select {
	case <-s.done:
		return s, nil
	default:
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	return nil, f.err
}

// verify marks s verified, caches the filters held of it and drops the
// filter hashes asked for it (want): its filters are all in.
func (f *filterFeed) verify(s *fedSegment) {
	var blocks []chainhash.Hash
	var datas [][]byte
	f.mu.Lock()
	s.verified, s.want = true, nil
	f.release(s)
	for i, data := range s.datas {
		if data != nil {
			blocks = append(blocks, f.c.chain.Hash(s.start+int32(i)))
			datas = append(datas, data)
			f.heldData -= int64(len(data))
		}
	}
	s.datas = nil
	f.mu.Unlock()
	f.c.cacheFilters(blocks, datas)
}

// discard drops what s holds, and returns the filters it held (by height
// from s.start, nil where none was held): its filters are downloaded
// again by the scan's filter download.
func (f *filterFeed) discard(s *fedSegment) [][]byte {
	f.mu.Lock()
	defer f.mu.Unlock()
	held := s.datas
	for _, data := range held {
		f.heldData -= int64(len(data))
	}
	s.datas, s.want = nil, nil
	f.release(s)
	delete(f.segs, s.j)
	return held
}

// verifiedAt returns the verified segment holding height h, or nil.
func (f *filterFeed) verifiedAt(h int32) *fedSegment {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s := f.segs[segmentOf(h)]; s != nil && s.verified {
		return s
	}
	return nil
}

// hitsIn returns the matches of s at heights from..to.
func (s *fedSegment) hitsIn(from, to int32) []int32 {
	var out []int32
	for _, h := range s.hits {
		if from <= h && h <= to {
			out = append(out, h)
		}
	}
	return out
}

// liar returns the failure of a peer that served a filter of s whose
// hash is not the agreed one (hashes, from s.start), or nil. The first
// such filter that arrived as its node sent it (its payload checksum,
// which a held filter's first read left unchecked, checked against the
// filter held, from s.start, see discard; or found right before a filter
// not held was dropped, see checked) is its server's word: a lie. When
// none did, the first of them is asked of its server again (see again),
// so that damage on the way is told from a lie. Every such filter is
// looked at, so that one damaged on the way cannot hide a lie after it.
func (s *fedSegment) liar(ctx context.Context, c *Client, hashes []chainhash.Hash, held [][]byte) error {
	damaged := -1
	for i, fh := range s.hashes {
		if i >= len(hashes) || fh == hashes[i] {
			continue
		}
		m, h, block := s.servers[i], s.start+int32(i), c.chain.Hash(s.start+int32(i))
		if s.checked[i] || i < len(held) && held[i] != nil && s.sums[i].Intact(block, held[i]) {
			return &pool.Failure{Member: m, Err: peerErr(m, "getcfilters", fmt.Errorf(
				"%w: filter for block %v (height %d), as it sent it, hashes to %v, where the checkpoint at height %d it sent itself commits to %v",
				peer.ErrBadFilter, block, h, fh, s.end, hashes[i]))}
		}
		if damaged < 0 {
			damaged = i
		}
	}
	if damaged < 0 {
		return nil
	}
	return s.again(ctx, c, damaged, hashes[damaged])
}

// again asks the server of the filter at position i of s, which did not
// arrive as its node sent it, for it again, and checks it as it is read
// against want, its agreed hash: a peer that serves the agreed filter
// then, or whose answer was damaged, is not banned (the segment's filters
// are downloaded again, checked against the agreed filter headers).
func (s *fedSegment) again(ctx context.Context, c *Client, i int, want chainhash.Hash) error {
	m, h, block := s.servers[i], s.start+int32(i), c.chain.Hash(s.start+int32(i))
	err := c.conn(m).GetCFilters(ctx, h, []chainhash.Hash{block}, func(_ int, data []byte) error {
		if got := chainhash.DoubleHashH(data); got != want {
			return peerErr(m, "getcfilters", fmt.Errorf(
				"%w: filter for block %v (height %d) hashes to %v, where the checkpoint at height %d it sent itself commits to %v",
				peer.ErrBadFilter, block, h, got, s.end, want))
		}
		return nil
	})
	if err != nil {
		return &pool.Failure{Member: m, Err: err}
	}
	c.logf("%s served the filter of height %d off its own checkpoint, and the agreed one when asked again: damaged on the way", m.Addr(), h)
	return nil
}

// fedEligible reports whether segment j may be verified by its filters
// (see filterFeed).
func (v *verification) fedEligible(j int, agreed []chainhash.Hash) bool {
	c := v.c
	start, end := segmentFirst(j), int32(j+1)*wire.CFCheckptInterval
	if v.feed == nil || end > v.to || j >= len(agreed) || j >= v.cpLimit || len(v.words) > 0 || len(v.own) > 0 {
		return false
	}
	if start < v.from-1 {
		// The scan needs few of its filters: their hashes cost less.
		return false
	}
	if c.st != nil && c.st.FilterHeaderTip() >= start {
		return false
	}
	if u := c.conflicts.first(start); u >= 0 && u <= end {
		return false
	}
	if len(c.knownPrefix(start, end)) > 0 {
		return false
	}
	stated := false
	for _, m := range v.ms {
		switch {
		case len(v.cps[m]) > j:
			stated = true
		case v.reach[m] >= start:
			return false
		}
	}
	return stated
}

// fedSegment returns the agreed filter hashes of segment j, from its
// first height start with prev the agreed filter header before it: the
// hashes of the filters the feed got, if they reach the agreed checkpoint
// at its end, or those the peers state (segment) if the segment is not
// fed. Fed filters that miss the checkpoint prove their server wrong.
func (v *verification) fedSegment(ctx context.Context, j int, agreed []chainhash.Hash, start int32, prev chainhash.Hash) ([]chainhash.Hash, error) {
	s, err := v.feed.wait(ctx, j)
	if err != nil {
		return nil, err
	}
	if s == nil || !v.fedEligible(j, agreed) {
		if s != nil {
			v.feed.discard(s)
		}
		v.feed.stop(true)
		return v.segmentAgain(ctx, j, agreed, start, prev)
	}
	if chainHeaders(prev, s.hashes) == agreed[j] {
		v.feed.verify(s)
		var stated []*pool.Member
		for _, m := range v.ms {
			if len(v.cps[m]) > j {
				stated = append(stated, m)
			}
		}
		v.noteOwn(start, prev, false, []claim{{members: stated, hashes: s.hashes}})
		return s.hashes, nil
	}
	held := v.feed.discard(s)
	v.feed.stop(true)
	hashes, err := v.segmentAgain(ctx, j, agreed, start, prev)
	if err != nil {
		return nil, err
	}
	if err := s.liar(ctx, v.c, hashes, held); err != nil {
		return nil, err
	}
	return hashes, nil
}
