package client

import (
	"context"
	"crypto/rand"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// Attacks on the check of a fed segment's filters as they are read once
// they pass fatSegmentBytes (see filterFeed.arrived): the cut of the
// batch, the filter hashes asked then, and what a liar costs that keeps
// under the bound.

// blockHashes returns the hashes of node's blocks at heights.
func blockHashes(t *testing.T, node *peertest.Node, heights ...int32) []chainhash.Hash {
	t.Helper()
	out := make([]chainhash.Hash, len(heights))
	for i, h := range heights {
		hash, err := node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		out[i] = *hash
	}
	return out
}

// TestFeedFatUnderShareLiarBounded has the only peer of a chain of
// fed segments serve, in some of them, as many false filters of nearly
// 256 KiB as keep each segment under fatSegmentBytes (its other filters
// true): no segment passes the bound, so none is checked as it is read,
// and a segment is verified only once the batch holding its last filter
// is in, which holds the next segments' lies too (batches of 1,000
// filters from height 0 for two fed segments, of 2,000 for five). The
// scan must fail naming the liar's false filter and ban it, having
// downloaded no more than fatLiarBound from it, the bound the fat check
// is said to keep a liar of filters of the largest size within.
func TestFeedFatUnderShareLiarBounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		tip  int32
		lies []int32 // the segments with false filters
	}{
		{"two fed segments, both lying", 2003, []int32{0, 1}},
		{"five fed segments, 1 to 3 lying", 5003, []int32{1, 2, 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newFedChain(t, tc.tip)
			fat := fatFilter(t, 96_000)
			k := int32((fatSegmentBytes - 64<<10) / len(fat)) // false filters a segment
			var heights []int32
			for _, j := range tc.lies {
				for h := j*wire.CFCheckptInterval + 1; h <= j*wire.CFCheckptInterval+k; h++ {
					heights = append(heights, h)
				}
			}
			lies := map[chainhash.Hash]bool{}
			for _, hash := range blockHashes(t, r.node, heights...) {
				lies[hash] = true
			}
			l := peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
				if cf, ok := m.(*wire.MsgCFilter); ok && lies[cf.BlockHash] {
					cf.Data = fat
				}
				return []wire.Message{m}, false
			})
			c := connectTo(t, r.node, time.Minute, l.Addr)
			before := peerStatus(c, l.Addr).BytesReceived
			start := time.Now()
			res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(r.alice.PkScript())}, From: 0, To: -1})
			st := peerStatus(c, l.Addr)
			got := st.BytesReceived - before
			hs, cf := cfRequests(t, l, c)
			t.Logf("%v: %d false filters of %d bytes a segment (%.2f MiB); %.1f MiB from the liar, bound %.1f MiB; getcfheaders %v, getcfilters %v; banned %v (%s)",
				time.Since(start).Round(time.Millisecond), k, len(fat), mib(uint64(k)*uint64(len(fat))), mib(got), mib(fatLiarBound), hs, cf, st.Banned, st.Reason)
			if res != nil || err == nil {
				t.Fatal("the scan of a liar serving false filters succeeded")
			}
			checkPeerError(t, err, l.Addr, peer.ErrBadFilter)
			if !st.Banned {
				t.Errorf("the liar is not banned: %+v", st)
			}
			if got > fatLiarBound {
				t.Errorf("the liar's false filters, under fatSegmentBytes in each segment, cost %.1f MiB of download, bound %.1f MiB", mib(got), mib(fatLiarBound))
			}
		})
	}
}

// paddedFilter returns a basic filter for the block hash of n random
// elements and the scripts.
func paddedFilter(t *testing.T, block chainhash.Hash, n int, scripts ...[]byte) []byte {
	t.Helper()
	elems := make([][]byte, n, n+len(scripts))
	for i := range elems {
		elems[i] = make([]byte, 20)
		if _, err := rand.Read(elems[i]); err != nil {
			t.Fatal(err)
		}
	}
	f, err := gcs.Build(gcs.BasicKey(&block), gcs.BasicP, gcs.BasicM, append(elems, scripts...))
	if err != nil {
		t.Fatal(err)
	}
	return f.NBytes()
}

// TestFeedFatCutAtMatchFound has the only peer of a chain of two
// fed segments serve filters consistent with its filter headers and
// checkpoints (peertest.Forge) whose sizes make the first segment pass
// fatSegmentBytes exactly at alice's first payment (height 102): the
// node's own small filters up to the first request's end (probe, see
// filterFeed.part), so that the rest of the batch is asked in one
// request, then filters sized to leave about 150 KiB of the bound up to
// height 101, and at height 102 one that holds alice's script. The batch is cut at the filter that
// matches, the rest asked again with the segment's filter hashes, and
// the second segment has its hashes asked first: the scan must find every
// payment to alice, ban no one, and have asked a batch from height 102
// (the cut fell there).
func TestFeedFatCutAtMatchFound(t *testing.T) {
	r := newFedChain(t, 2003)
	const cutAt = 102
	const probe = fatSegmentBytes / wire.MaxCFilterDataSize // the first request's filters
	// Filters that leave about 150 KiB of fatSegmentBytes for the one
	// at cutAt: their elements from the bytes an element takes.
	per := float64(len(fatFilter(t, 10_000))) / 10_000
	pad := fatFilter(t, int(float64(fatSegmentBytes-150<<10)/float64(cutAt-probe)/per))
	const small = 16 << 10 // the real filters up to probe are smaller
	if int64(small+(cutAt-probe)*len(pad)) > fatSegmentBytes {
		t.Fatalf("filters of %d bytes pass fatSegmentBytes before height %d", len(pad), cutAt)
	}
	need := fatSegmentBytes - int64((cutAt-probe)*len(pad))
	block := blockHashes(t, r.node, cutAt)[0]
	match := paddedFilter(t, block, int(need/2), r.alice.PkScript())
	if int64(len(match)) <= need || len(match) > wire.MaxCFilterDataSize {
		t.Fatalf("the filter of height %d is %d bytes, want more than %d and at most %d", cutAt, len(match), need, wire.MaxCFilterDataSize)
	}
	forge := peertest.Forge(t, r.node, 1, func(h int32, _ *wire.MsgBlock) bool { return probe <= h && h <= cutAt }, func(b *wire.MsgBlock) []byte {
		if b.BlockHash() == block {
			return match
		}
		return pad
	})
	l := peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, forge)
	c := connectTo(t, r.node, time.Minute, l.Addr)
	start := time.Now()
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(r.alice.PkScript())}, From: 0, To: -1})
	hs, cf := cfRequests(t, l, c)
	t.Logf("%v: filters of %d bytes, %d at height %d; getcfheaders %v, getcfilters %v", time.Since(start).Round(time.Millisecond),
		len(pad), len(match), cutAt, hs, cf)
	if err != nil {
		t.Fatal(err)
	}
	if st := peerStatus(c, l.Addr); st.Banned {
		t.Fatalf("a peer whose filters agree with its filter headers was banned: %+v", st)
	}
	checkFound(t, res, alicePaid(t, r.node, r.alice, res.To))
	if !slices.ContainsFunc(cf, func(q [2]int32) bool { return q[0] == cutAt }) {
		t.Errorf("no getcfilters from height %d: the batch was not cut at the match", cutAt)
	}
}

// TestFeedFatFalseHashesBesideHonest has a liar serve filters of
// nearly 256 KiB, and filter hashes one of which is false, beside an
// honest peer slow with its first filter: once the fed segment passes
// fatSegmentBytes, the peer that takes a batch of it next is asked for
// its filter hashes. The liar's must not be taken (they miss its own
// checkpoint): the honest peer must not be banned, the scan must find
// every watched transaction, and the liar, asked, must be banned. A
// client whose liar was not asked the fed segment's hashes is replaced
// by another.
func TestFeedFatFalseHashesBesideHonest(t *testing.T) {
	needFixture(t)
	fat := fatFilters(fatFilter(t, 96_000))
	for attempt := 0; attempt < 8; attempt++ {
		liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
			if ch, ok := m.(*wire.MsgCFHeaders); ok && len(ch.FilterHashes) > 1 {
				h := *ch.FilterHashes[1]
				h[0] ^= 1
				ch.FilterHashes[1] = &h
			}
			return fat(m)
		})
		honest := slowFirstFilter(t)
		start := time.Now()
		c := scanBesideHonest(t, honest, liar.Addr)
		hs, cf := cfRequests(t, liar, c)
		if !slices.ContainsFunc(hs, func(r [2]int32) bool { return r[0] == 0 && r[1] == wire.CFCheckptInterval }) {
			continue
		}
		st := peerStatus(c, liar.Addr)
		hh, hf := cfRequests(t, honest, c)
		t.Logf("%v: liar asked getcfheaders %v, getcfilters %v: banned %v (%s); honest asked getcfheaders %v, getcfilters %v",
			time.Since(start).Round(time.Millisecond), hs, cf, st.Banned, st.Reason, hh, hf)
		if !st.Banned {
			t.Errorf("the liar whose fed segment's filter hashes miss its checkpoint is not banned: %+v", st)
		}
		return
	}
	t.Fatal("the liar was not asked the fed segment's filter hashes by eight clients")
}

// TestFeedFatNodeCostOfCut has the only peer of a chain of two fed
// segments serve, from height 1 on, filters of about 20 KiB (those of
// full blocks of 1 MB), consistent with its filter hashes, filter headers
// and checkpoints, and counts the filters the node's answers held that
// its proxy read (what the node spent at least: what it wrote past the
// proxy's read when the client dropped the connection is not counted).
// A batch cut once the first segment passes fatSegmentBytes would cost
// the client one filter more, but the node the rest of the batch it had
// already read and written (229 to 385 filters, 4.4 to 7.4 MiB, when
// the cut was the check's only way in): the node must not have served
// more than a few filters (8, what the sockets buffer) beyond those the
// scan needs.
func TestFeedFatNodeCostOfCut(t *testing.T) {
	r := newFedChain(t, 2003)
	filter := fatFilter(t, 7_700)
	forge := peertest.Forge(t, r.node, 1, func(int32, *wire.MsgBlock) bool { return true }, func(*wire.MsgBlock) []byte { return filter })
	var mu sync.Mutex
	served := 0
	var last time.Time
	var gap time.Duration // the longest pause between two filters
	l := peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgCFilter); ok {
			mu.Lock()
			served++
			if now := time.Now(); !last.IsZero() && now.Sub(last) > gap {
				gap = now.Sub(last)
			}
			last = time.Now()
			mu.Unlock()
		}
		return forge(m)
	})
	c := connectTo(t, r.node, time.Minute, l.Addr)
	start := time.Now()
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(r.alice.PkScript())}, From: 0, To: -1})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	n, longest := served, gap
	mu.Unlock()
	hs, cf := cfRequests(t, l, c)
	t.Logf("%v: filters of %d bytes: %d received by the scan, %d read from the node by its proxy (%d more, %.2f MiB); longest pause between two filters %v; getcfheaders %v, getcfilters %v",
		time.Since(start).Round(time.Millisecond), len(filter), res.FiltersReceived, n, n-res.FiltersReceived,
		mib(uint64(n-res.FiltersReceived)*uint64(len(filter))), longest.Round(time.Millisecond), hs, cf)
	if n > res.FiltersReceived+8 {
		t.Errorf("the node served %d filters for a scan that received %d: the cut batch's rest, %.2f MiB, was read and written by the node for nothing",
			n, res.FiltersReceived, mib(uint64(n-res.FiltersReceived)*uint64(len(filter))))
	}
}

// fatDamagedCFHeaders is the setting of the damaged-hashes tests: a
// chain of two fed segments whose only peer (l, forging the node's
// filters) serves filters of about 20 KiB consistent with its filter
// headers (the first segment's but alice's height 102, whose filter is
// the node's), through a link (d) that damages one byte of the first
// cfheaders answer, the node's checksum left as it was.
func fatDamagedCFHeaders(t *testing.T) (*fedChain, *peertest.Liar, *peertest.Damager) {
	t.Helper()
	r := newFedChain(t, 2003)
	filter := fatFilter(t, 7_700)
	forge := peertest.Forge(t, r.node, 1, func(h int32, _ *wire.MsgBlock) bool { return h <= wire.CFCheckptInterval && h != 102 },
		func(*wire.MsgBlock) []byte { return filter })
	l := peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, forge)
	return r, l, peertest.NewDamager(t, l.Addr, wire.CmdCFHeaders, 200)
}

// TestFeedFatHashesDamagedNotBanned has the only peer of a chain of
// two fed segments serve filters of about 20 KiB consistent with its
// filter headers, through a link that damages one byte of the first
// cfheaders answer, the first segment's filter hashes asked once it
// passed fatSegmentBytes (the node's checksum left as it was): that
// proves nothing about the peer, which must not be banned, and the scan
// must find every payment to alice (the forged filters are those of the
// first segment but alice's height 102, whose filter is the node's).
func TestFeedFatHashesDamagedNotBanned(t *testing.T) {
	r, l, d := fatDamagedCFHeaders(t)
	c := connectTo(t, r.node, time.Minute, d.Addr)
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(r.alice.PkScript())}, From: 0, To: -1})
	hs, cf := cfRequests(t, l, c)
	st := peerStatus(c, d.Addr)
	t.Logf("getcfheaders %v, getcfilters %v; banned %v (%s); error %v", hs, cf, st.Banned, st.Reason, err)
	if d.Damaged() == 0 {
		t.Fatal("no cfheaders passed the damaging link")
	}
	if len(hs) == 0 || hs[0] != [2]int32{0, wire.CFCheckptInterval} {
		t.Fatalf("the first getcfheaders was %v, not the fed segment's 0..%d", hs, wire.CFCheckptInterval)
	}
	if st.Banned {
		t.Fatalf("the peer behind the damaging link was banned: %s", st.Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	checkFound(t, res, alicePaid(t, r.node, r.alice, res.To))
}

// TestFeedFatHonestPeersFatSegments has three honest peers of a
// chain of two fed segments serve filters of about 20 KiB (the same
// forged chain, consistent with its filter headers and checkpoints):
// each peer's batches may pass fatSegmentBytes, be cut and be asked
// again of another, and the filter hashes be asked by whichever peer
// takes a batch of a segment first. The scan must succeed and ban no
// one, and each fed segment's filter hashes be asked once of all the
// peers (32 KiB each: a duplicate is what the check costs beyond its
// claim).
func TestFeedFatHonestPeersFatSegments(t *testing.T) {
	r := newFedChain(t, 2003)
	filter := fatFilter(t, 7_700)
	var ls []*peertest.Liar
	var addrs []string
	for range 3 {
		forge := peertest.Forge(t, r.node, 1, func(int32, *wire.MsgBlock) bool { return true }, func(*wire.MsgBlock) []byte { return filter })
		l := peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, forge)
		ls, addrs = append(ls, l), append(addrs, l.Addr)
	}
	c := connectTo(t, r.node, time.Minute, addrs...)
	start := time.Now()
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(r.alice.PkScript())}, From: 0, To: -1})
	asked := map[[2]int32]int{}
	for i, l := range ls {
		hs, cf := cfRequests(t, l, c)
		st := peerStatus(c, l.Addr)
		t.Logf("peer %d: getcfheaders %v, getcfilters %v; %.2f MiB; banned %v (%s)", i, hs, cf, mib(st.BytesReceived), st.Banned, st.Reason)
		if st.Banned {
			t.Errorf("an honest peer was banned: %s", st.Reason)
		}
		for _, q := range hs {
			asked[q]++
		}
	}
	if err != nil {
		t.Fatalf("after %v: %v", time.Since(start).Round(time.Millisecond), err)
	}
	t.Logf("%v: %d filters received, %.2f MiB", time.Since(start).Round(time.Millisecond), res.FiltersReceived, mib(res.BytesReceived))
	for _, q := range [][2]int32{{0, wire.CFCheckptInterval}, {wire.CFCheckptInterval + 1, 2 * wire.CFCheckptInterval}} {
		if asked[q] != 1 {
			t.Errorf("the filter hashes of the fed segment %d..%d were asked %d times, want once", q[0], q[1], asked[q])
		}
	}
}

// TestFeedFatHashFirstLieBanned has the only peer of a chain of two
// fed segments serve filters of about 20 KiB in the first (consistent
// with its filter headers and checkpoints, so that the segment passes
// fatSegmentBytes honestly) and hide alice's payment at height 1500, in
// the second, behind an empty filter, its filter headers left true: the
// second segment's filter hashes are asked before its filters, so the
// lie must be caught as it is read, the scan fail naming the liar's false
// filter of height 1500 against the filter headers, and the liar be
// banned.
func TestFeedFatHashFirstLieBanned(t *testing.T) {
	r := newFedChain(t, 2003)
	filter := fatFilter(t, 7_700)
	forge := peertest.Forge(t, r.node, 1, func(h int32, _ *wire.MsgBlock) bool { return h <= wire.CFCheckptInterval },
		func(*wire.MsgBlock) []byte { return filter })
	hidden := blockHashes(t, r.node, 1500)[0]
	l := peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		out, hangup := forge(m)
		for _, o := range out {
			if cf, ok := o.(*wire.MsgCFilter); ok && cf.BlockHash == hidden {
				cf.Data = []byte{0}
			}
		}
		return out, hangup
	})
	c := connectTo(t, r.node, time.Minute, l.Addr)
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(r.alice.PkScript())}, From: 0, To: -1})
	hs, cf := cfRequests(t, l, c)
	st := peerStatus(c, l.Addr)
	t.Logf("getcfheaders %v, getcfilters %v; banned %v (%s)", hs, cf, st.Banned, st.Reason)
	if res != nil || err == nil {
		t.Fatal("the scan of a liar hiding a payment succeeded")
	}
	checkPeerError(t, err, l.Addr, peer.ErrBadFilter)
	if !strings.Contains(err.Error(), "(height 1500)") || !strings.Contains(err.Error(), "filter headers") {
		t.Errorf("the error does not name the filter of height 1500 against the filter headers asked first: %v", err)
	}
	if !st.Banned {
		t.Errorf("the liar is not banned: %+v", st)
	}
}
