package client

import (
	"crypto/rand"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// Attacks on the scan's filter feed (see filterFeed): filters downloaded
// before their segment is verified, whose hashes must reach the agreed
// checkpoint.

// fatFilter returns a well-formed basic filter of n random elements,
// about 2.6 bytes an element: the largest lie a cfilter message carries
// (256 KiB) that a match reads without an error.
func fatFilter(t *testing.T, n int) []byte {
	t.Helper()
	elems := make([][]byte, n)
	for i := range elems {
		elems[i] = make([]byte, 20)
		if _, err := rand.Read(elems[i]); err != nil {
			t.Fatal(err)
		}
	}
	f, err := gcs.Build([16]byte{1}, gcs.BasicP, gcs.BasicM, elems)
	if err != nil {
		t.Fatal(err)
	}
	b := f.NBytes()
	if len(b) > wire.MaxCFilterDataSize {
		t.Fatalf("fat filter of %d bytes, a cfilter holds %d at most", len(b), wire.MaxCFilterDataSize)
	}
	return b
}

// liveHeapPeak samples the live heap (after a collection) until stop is
// called, and returns the highest sample above the one it started with.
func liveHeapPeak() (stop func() uint64) {
	live := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	base := live()
	var peak atomic.Uint64
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			if v := live(); v > base && v-base > peak.Load() {
				peak.Store(v - base)
			}
			select {
			case <-done:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	}()
	return func() uint64 {
		close(done)
		wg.Wait()
		return peak.Load()
	}
}

// fatFilters is a liar serving, for every block, one well-formed filter
// of nearly 256 KiB (the same bytes each time).
func fatFilters(data []byte) peertest.LieFunc {
	return func(m wire.Message) ([]wire.Message, bool) {
		if cf, ok := m.(*wire.MsgCFilter); ok {
			cf.Data = data
		}
		return []wire.Message{m}, false
	}
}

// feedHeldBound is what the live heap may grow by while a scan downloads
// one liar's fat filters: the feed's cache budget, and 16 filters
// besides, for what is not the scan's yet shares the test's heap: the
// filter the peer's read loop reads (its frame buffer), the liar's copies
// of the one it relays (the frame, the decoded message, its encoding),
// and what the process's other goroutines hold meanwhile (the node's
// log, connections of earlier tests closing). Measured: 9.7 MiB alone
// (5 runs), 11.2 MiB once beside other packages' tests; 241 MiB before a
// batch held its filters only within its share.
const feedHeldBound = feedHeldBytes + 16*wire.MaxCFilterDataSize

// fatScan scans, with the only peer serving fat filters, from height
// from, and returns the live heap's peak above what it was before; the
// scan must fail naming the liar's bad filter and ban it.
func fatScan(t *testing.T, from int32) uint64 {
	t.Helper()
	fat := fatFilter(t, 96_000)
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, fatFilters(fat))
	c := connect(t, time.Minute, l.Addr)
	stop := liveHeapPeak()
	start := time.Now()
	res, err := scan(t, c, "bip157", from, c.Chain().Height())
	peak := stop()
	t.Logf("filters of %d bytes from height %d: live heap peak +%.1f MiB, %v, error: %v", len(fat), from, float64(peak)/(1<<20), time.Since(start).Round(time.Millisecond), err)
	if res != nil || err == nil {
		t.Fatalf("the scan of a liar serving fat filters succeeded")
	}
	checkPeerError(t, err, l.Addr, peer.ErrBadFilter)
	if st := peerStatus(c, l.Addr); !st.Banned {
		t.Errorf("the liar is not banned: %+v", st)
	}
	return peak
}

// TestFeedAttackFatFiltersFed is TestFeedAttackFatFiltersChecked for a
// scan from height 0, whose first segment is fed: a fed filter is hashed
// and is unchecked until its whole segment is in, so a batch holds the
// filters themselves only within its share of the feed's bound. Before,
// it held every filter of the batch, and one liar serving filters of
// nearly 256 KiB made the scan hold 241 MiB more (1,000 filters a batch;
// twice that for 2,000); then 7.7 to 9.5 MiB, and 3.8 to 7.1 MiB since
// the segment's filters are checked as read past fatSegmentBytes (the
// liar banned there, see TestFeedAttackFatLiarBounded). The live heap
// must stay within feedHeldBound, as for a checked scan.
func TestFeedAttackFatFiltersFed(t *testing.T) {
	needFixture(t)
	checkFatPeak(t, 0)
}

// TestFeedAttackFatFiltersChecked has the only peer serve a well-formed
// filter of nearly 256 KiB for every block, to a scan from inside the
// first segment (not fed: each filter is checked against its agreed
// filter header as it is read): the first one is caught, the liar banned,
// and the scan holds no more than feedHeldBound meanwhile.
func TestFeedAttackFatFiltersChecked(t *testing.T) {
	needFixture(t)
	checkFatPeak(t, wire.CFCheckptInterval/2)
}

// fatScanTries is how many fat scans checkFatPeak runs at most.
const fatScanTries = 3

// checkFatPeak runs fatScan from height from until its peak is within
// feedHeldBound, fatScanTries times at most, and fails with the lowest
// peak: the heap is the process's, so another goroutine's allocation can
// lift one sample, but not every scan's, while a scan that holds what it
// should not (241 MiB before the bound) is over it every time.
func checkFatPeak(t *testing.T, from int32) {
	t.Helper()
	lowest := uint64(math.MaxUint64)
	for range fatScanTries {
		lowest = min(lowest, fatScan(t, from))
		if lowest <= feedHeldBound {
			return
		}
	}
	t.Errorf("the scan held %.1f MiB of one liar's filters at once at least, over %d scans, bound %.1f MiB",
		float64(lowest)/(1<<20), fatScanTries, float64(feedHeldBound)/(1<<20))
}

// onceWrong is a liar that serves an empty filter (hiding every match)
// the first time it is asked for the filter of block target, and the
// node's filter every time after: it counts the times it lied.
type onceWrong struct {
	target chainhash.Hash
	mu     sync.Mutex
	served int
}

func (o *onceWrong) lie(m wire.Message) ([]wire.Message, bool) {
	if cf, ok := m.(*wire.MsgCFilter); ok && cf.BlockHash == o.target {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.served++; o.served == 1 {
			cf.Data = []byte{0}
		}
	}
	return []wire.Message{m}, false
}

// TestFeedAttackLieThenTruthBanned has the only peer hide alice's
// payment (height 102, in the fed segment) in the fed batch, with its
// own valid checksum, and serve the true filter if asked again: the fed
// segment misses the checkpoint, and the false filter, which arrived as
// the liar sent it, is its word against its own checkpoint. It is banned
// for it without being asked again, and the scan, left with no peer,
// fails naming it. Before, the filter's checksum was never checked, the
// filter was asked again, and the true one taken for proof of damage on
// the way: the liar was never banned and could make every scan download
// the segment twice.
func TestFeedAttackLieThenTruthBanned(t *testing.T) {
	needFixture(t)
	o := &onceWrong{target: blockHashAt(t, fx.height[fx.fundAlice.TxHash()])}
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, o.lie)
	c := connect(t, 0, l.Addr)
	_, err := scan(t, c, "bip157", 0, c.Chain().Height())
	checkPeerError(t, err, l.Addr, peer.ErrBadFilter)
	if st := peerStatus(c, l.Addr); !st.Banned || !strings.Contains(st.Reason, "as it sent it") {
		t.Errorf("the liar that served an intact false filter is not banned for it: %+v", st)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.served != 1 {
		t.Errorf("the liar served the filter of height %d %d times, want once: the intact lie is proof enough", fx.height[fx.fundAlice.TxHash()], o.served)
	}
}

// lateLiar serves the node's filters for the first n it is asked, and
// empty ones after.
func lateLiar(n int64) peertest.LieFunc {
	var served atomic.Int64
	return func(m wire.Message) ([]wire.Message, bool) {
		if cf, ok := m.(*wire.MsgCFilter); ok && served.Add(1) > n {
			cf.Data = []byte{0}
		}
		return []wire.Message{m}, false
	}
}

// TestFeedAttackTruthThenLie has a peer serve the true filters for the
// first scan (its fed segment reaches the checkpoint and is cached) and
// empty ones after: a second scan of the same client, and a third scan
// beside an honest peer, find every watched transaction; the filters
// that reach the client after the first scan are checked against
// verified filter headers, so the liar is banned if it served any, and
// the honest peer never.
func TestFeedAttackTruthThenLie(t *testing.T) {
	needFixture(t)
	tip := fx.tip
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, lateLiar(int64(tip)+1))
	c := connect(t, 0, l.Addr)
	for i := 0; i < 2; i++ {
		res, err := scan(t, c, "bip157", 0, c.Chain().Height())
		if err != nil {
			checkPeerError(t, err, l.Addr, peer.ErrBadFilter)
			if i == 0 {
				t.Fatalf("first scan, all filters true: %v", err)
			}
			if st := peerStatus(c, l.Addr); !st.Banned {
				t.Errorf("scan %d failed on the liar, not banned: %+v", i+1, st)
			}
			break
		}
		checkMatches(t, res, fx.want)
	}
	// A new client, the liar now lying from its first filter, beside an
	// honest peer.
	honest := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
	l2 := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, lateLiar(0))
	c2 := connect(t, 0, l2.Addr, honest.Addr)
	res, err := scan(t, c2, "bip157", 0, c2.Chain().Height())
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	if st := peerStatus(c2, honest.Addr); st.Banned {
		t.Errorf("the honest peer was banned: %+v", st)
	}
	if _, cf := cfRequests(t, l2, c2); len(cf) > 0 {
		if st := peerStatus(c2, l2.Addr); !st.Banned {
			t.Errorf("the liar served filters and is not banned: %+v", st)
		}
	}
}

// hangUpOnRecheck is a liar that serves each block's filter empty
// (hiding every match) the first time, and hangs up when asked for it
// again: the fed filter off the checkpoint is asked again of it, and it
// never answers that.
func hangUpOnRecheck(t *testing.T) *peertest.Liar {
	var mu sync.Mutex
	served := map[chainhash.Hash]bool{}
	return peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		cf, ok := m.(*wire.MsgCFilter)
		if !ok {
			return []wire.Message{m}, false
		}
		mu.Lock()
		defer mu.Unlock()
		if served[cf.BlockHash] {
			return nil, true
		}
		served[cf.BlockHash] = true
		cf.Data = []byte{0}
		return []wire.Message{m}, false
	})
}

// slowFirstFilter is an honest peer slow with its first filter (twice
// stealAfter), so that a liar beside it takes or steals the first batch.
func slowFirstFilter(t *testing.T) *peertest.Liar {
	var once sync.Once
	return peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgCFilter); ok {
			once.Do(func() { time.Sleep(2 * stealAfter) })
		}
		return []wire.Message{m}, false
	})
}

// servedFed reports whether the getcfilters requests cf asked for a
// filter of the first segment (fed in a scan from 0).
func servedFed(cf [][2]int32) bool {
	return slices.ContainsFunc(cf, func(r [2]int32) bool { return r[0] <= wire.CFCheckptInterval })
}

// fedScan is a scan from 0 beside an honest peer in which a liar served
// filters of the first segment (see scanFedBesideHonest): the client,
// the liar and the honest peer, what the liar was asked by getcfilters
// (cf) and how long the scan took.
type fedScan struct {
	c      *Client
	liar   *peertest.Liar
	honest *peertest.Liar
	cf     [][2]int32
	took   time.Duration
}

// scanFedBesideHonest scans the fixture's chain from 0 with a liar made
// by newLiar beside an honest peer slow with its first filter
// (slowFirstFilter), checked as scanBesideHonest checks it, until the
// liar served filters of the first segment, which a scan from 0 feeds:
// each batch goes to whichever peer is free, so a liar may serve none.
// It fails the test after eight clients whose liar served none.
func scanFedBesideHonest(t *testing.T, newLiar func() *peertest.Liar) fedScan {
	t.Helper()
	for attempt := 0; attempt < 8; attempt++ {
		liar := newLiar()
		honest := slowFirstFilter(t)
		start := time.Now()
		c := scanBesideHonest(t, honest, liar.Addr)
		took := time.Since(start)
		if _, cf := cfRequests(t, liar, c); servedFed(cf) {
			return fedScan{c: c, liar: liar, honest: honest, cf: cf, took: took}
		}
	}
	t.Fatal("the liar served no filter to eight clients")
	return fedScan{}
}

// TestFeedAttackHangUpOnRecheck has a liar serve empty filters beside an
// honest peer slow with its first filter (so that the liar serves the
// first batch, taken or stolen) and hang up if the filter it served off
// the checkpoint is asked again: the scan still finds every watched
// transaction, the honest peer is not banned, and the liar is, for the
// filter that arrived as it sent it, without being asked again. Before,
// it was asked again, hung up, and was only dropped: free to do it again
// each time it was dialled.
func TestFeedAttackHangUpOnRecheck(t *testing.T) {
	needFixture(t)
	fs := scanFedBesideHonest(t, func() *peertest.Liar { return hangUpOnRecheck(t) })
	st := peerStatus(fs.c, fs.liar.Addr)
	t.Logf("liar asked %v, %v: banned %v (%s)", fs.cf, fs.took.Round(time.Millisecond), st.Banned, st.Reason)
	if !st.Banned {
		t.Errorf("the liar that served intact false filters is not banned: %+v", st)
	}
}

// TestFeedAttackColludersForgeFedSegment has two colluders serve, beside
// an honest peer, a filter forged consistently (filter hashes, filter
// headers, checkpoints and filters) in the first segment, which a scan
// from height 0 would feed: the checkpoints at its end disagree, so it is
// not fed; a forgery the block proves false (the funding of alice left
// out) bans both colluders, one it cannot decide (the script alice's
// spend spends left out) is a conflict whose block is scanned whole. The
// scan finds every watched transaction and the honest peer is never
// banned.
func TestFeedAttackColludersForgeFedSegment(t *testing.T) {
	needFixture(t)
	for _, tt := range []struct {
		name     string
		tx       *wire.MsgTx
		forge    func(*wire.MsgBlock) []byte
		provable bool
	}{
		{"empty filter for alice's funding", fx.fundAlice, peertest.EmptyFilter, true},
		{"outputs only for alice's spend", fx.spendAlice, peertest.OutputsOnly, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := fx.height[tt.tx.TxHash()]
			if h <= 0 || h > wire.CFCheckptInterval {
				t.Fatalf("the forged block at height %d is not in the first segment", h)
			}
			l1 := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, h, tt.forge))
			l2 := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, h, tt.forge))
			honest := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
			c := connect(t, 0, l1.Addr, l2.Addr, honest.Addr)
			res, err := scan(t, c, "bip157", 0, c.Chain().Height())
			if err != nil {
				t.Fatal(err)
			}
			checkMatches(t, res, fx.want)
			checkForgers(t, c, res, honest, []*peertest.Liar{l1, l2}, h, tt.provable)
		})
	}
}

// TestFeedAttackSegmentEndingAtScanEnd scans exactly the first segment
// (0..1000, its checkpoint the scan's last height) with a liar serving
// empty filters beside an honest peer slow with its first filter, so
// that the liar serves fed filters: the scan finds every watched
// transaction of those heights, and the liar is banned.
func TestFeedAttackSegmentEndingAtScanEnd(t *testing.T) {
	needFixture(t)
	want := map[chainhash.Hash][]int{}
	for tx, items := range fx.want {
		if fx.height[tx] <= wire.CFCheckptInterval {
			want[tx] = items
		}
	}
	if len(want) == 0 {
		t.Fatal("no watched transaction in the first segment")
	}
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, emptyFilters)
	honest := slowFirstFilter(t)
	c := connect(t, 0, liar.Addr, honest.Addr)
	res, err := scan(t, c, "bip157", 0, wire.CFCheckptInterval)
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, want)
	if st := peerStatus(c, honest.Addr); st.Banned {
		t.Fatalf("the honest peer was banned: %+v", st)
	}
	if _, cf := cfRequests(t, liar, c); len(cf) == 0 {
		t.Fatal("the liar served no filter")
	}
	if st := peerStatus(c, liar.Addr); !st.Banned {
		t.Errorf("the liar served empty filters and is not banned: %+v", st)
	}
}

// TestFeedAttackDamageOnTheWayNotBanned has the only peer reached through
// a link that changes the last byte of the first filter it passes (height
// 0, in the fed segment), the node's checksum left as it was: the fed
// segment misses its checkpoint, but that filter did not arrive as the
// node sent it, so it is asked again, found right, and nobody is banned;
// the scan finds every watched transaction.
func TestFeedAttackDamageOnTheWayNotBanned(t *testing.T) {
	needFixture(t)
	d := peertest.NewDamager(t, fx.node.P2PAddr, wire.CmdCFilter, -1)
	c := connect(t, 0, d.Addr)
	res, err := scan(t, c, "bip157", 0, c.Chain().Height())
	if err != nil {
		t.Fatal(err)
	}
	if d.Damaged() == 0 {
		t.Fatal("no filter passed the damaging link")
	}
	checkMatches(t, res, fx.want)
	if st := peerStatus(c, d.Addr); st.Banned {
		t.Errorf("the peer behind the damaging link was banned: %+v", st)
	}
}

// checkForgers checks the verdict on colluders that forged the filter of
// the block at height h beside an honest peer: the honest one is not
// banned, the colluders are banned when the block proves the forgery
// (provable), and otherwise the scan reports a conflict.
func checkForgers(t *testing.T, c *Client, res *ScanResult, honest *peertest.Liar, colluders []*peertest.Liar, h int32, provable bool) {
	t.Helper()
	if st := peerStatus(c, honest.Addr); st.Banned {
		t.Fatalf("the honest peer was banned: %+v", st)
	}
	for _, l := range colluders {
		if st := peerStatus(c, l.Addr); st.Banned != provable {
			t.Errorf("colluder %s banned %v, want %v: %+v", l.Addr, st.Banned, provable, st)
		}
	}
	if !provable && len(res.Conflicts) == 0 {
		t.Errorf("no conflict reported for the undecidable forgery at height %d", h)
	}
}
