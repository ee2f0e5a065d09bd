package client

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// Attacks on the scan's filter feed with filters of the largest size
// (see filterFeed): what a liar serving them costs the client's download
// before it is banned.

// fatLiarBound is what one liar serving fat filters may make a scan
// download before it is banned: a segment's fat share (fatSegmentBytes),
// the segment's filter headers, and 8 filters besides for what the
// sockets buffer and the filter whose check bans it.
const fatLiarBound = fatSegmentBytes + 8*wire.MaxCFilterDataSize + 64<<10

// mib returns n bytes in MiB.
func mib(n uint64) float64 { return float64(n) / (1 << 20) }

// TestFeedAttackFatLiarBounded has the only peer serve a well-formed
// filter of nearly 256 KiB for every block, to a scan from height 0,
// whose first segment (0..1000) is fed: the scan must fail naming the
// liar's false filter and ban it, having downloaded no more than
// fatLiarBound from it. Before, the whole segment's filters were
// downloaded (about 250 MB) before the segment missed its checkpoint.
func TestFeedAttackFatLiarBounded(t *testing.T) {
	needFixture(t)
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, fatFilters(fatFilter(t, 96_000)))
	c := connect(t, time.Minute, l.Addr)
	before := peerStatus(c, l.Addr).BytesReceived
	start := time.Now()
	res, err := scan(t, c, "bip157", 0, c.Chain().Height())
	st := peerStatus(c, l.Addr)
	got := st.BytesReceived - before
	hs, cf := cfRequests(t, l, c)
	t.Logf("%v: %.1f MiB from the liar, bound %.1f MiB; getcfheaders %v, getcfilters %v; banned %v (%s)",
		time.Since(start).Round(time.Millisecond), mib(got), mib(fatLiarBound), hs, cf, st.Banned, st.Reason)
	if res != nil || err == nil {
		t.Fatal("the scan of a liar serving fat filters succeeded")
	}
	checkPeerError(t, err, l.Addr, peer.ErrBadFilter)
	if !st.Banned {
		t.Errorf("the liar is not banned: %+v", st)
	}
	if got > fatLiarBound {
		t.Errorf("the liar's fat filters cost %.1f MiB of download, bound %.1f MiB", mib(got), mib(fatLiarBound))
	}
}

// TestFeedAttackFatLiarBesideHonest has a peer serve filters of nearly
// 256 KiB beside an honest peer slow with its first filter (so that the
// liar serves the first batch, taken or stolen): the scan finds every
// watched transaction, the honest peer is not banned, and a liar that
// served fed filters is banned having cost no more than fatLiarBound.
// A client whose liar served none is replaced by another.
func TestFeedAttackFatLiarBesideHonest(t *testing.T) {
	needFixture(t)
	fat := fatFilter(t, 96_000)
	fs := scanFedBesideHonest(t, func() *peertest.Liar {
		return peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, fatFilters(fat))
	})
	st := peerStatus(fs.c, fs.liar.Addr)
	t.Logf("%v: %.1f MiB from the liar (asked %v), %.1f MiB from the honest peer; liar banned %v (%s)", fs.took.Round(time.Millisecond),
		mib(st.BytesReceived), fs.cf, mib(peerStatus(fs.c, fs.honest.Addr).BytesReceived), st.Banned, st.Reason)
	if !st.Banned {
		t.Errorf("the liar that served fat false filters is not banned: %+v", st)
	}
	if st.BytesReceived > fatLiarBound {
		t.Errorf("the liar's fat filters cost %.1f MiB of download, bound %.1f MiB", mib(st.BytesReceived), mib(fatLiarBound))
	}
}

// scanConsistentFat runs scan on c, whose only peer l serves filters of
// size bytes (but the first) consistent with its filter headers, and
// logs what c received of l during it against what the filters
// themselves are (a message header and a cfilter's fields each): the
// scan must succeed. It returns l's status and the getcfheaders ranges
// l was asked.
func scanConsistentFat(t *testing.T, c *Client, l *peertest.Liar, size int, scan func() (*ScanResult, error)) (PeerStatus, [][2]int32) {
	t.Helper()
	before := peerStatus(c, l.Addr).BytesReceived
	start := time.Now()
	res, err := scan()
	if err != nil {
		t.Fatal(err)
	}
	st := peerStatus(c, l.Addr)
	got := st.BytesReceived - before
	filters := uint64(res.FiltersReceived-1) * uint64(size+wire.MessageHeaderSize+36)
	hs, cf := cfRequests(t, l, c)
	t.Logf("%v: filters of %d bytes, %.2f MiB received, of which %.2f MiB the %d filters themselves (%.2f%% more); getcfheaders %v, getcfilters %v",
		time.Since(start).Round(time.Millisecond), size, mib(got), mib(filters), res.FiltersReceived,
		100*(float64(got)/float64(filters)-1), hs, cf)
	return st, hs
}

// TestFeedFatSegmentNotBanned has the only peer serve, from height 1 on,
// a filter of nearly 256 KiB for every block, and filter hashes, filter
// headers and checkpoints consistent with them (peertest.Forge): nothing
// proves it wrong, as for an honest chain of fat filters. The fed
// segment's filters would pass fatSegmentBytes: its filter hashes are
// asked once, after the first request's filters (fatSegmentBytes at
// the largest size: 32), and every filter after is checked against
// them; the scan succeeds and the peer is not banned. What the check
// costs (the segment's filter hashes and a round trip) is logged beside
// what the filters cost (measured: 253.33 MiB received for 253.29 MiB of
// filters at a bound of 8 MiB; 253.29 to 253.32 MiB at 4 MiB; 0.20% when
// the batch was cut at fatSegmentBytes and asked again; 253.3 MiB before
// the check).
func TestFeedFatSegmentNotBanned(t *testing.T) {
	needFixture(t)
	fat := fatFilter(t, 96_000)
	forge := peertest.Forge(t, fx.node, 1, func(int32, *wire.MsgBlock) bool { return true }, func(*wire.MsgBlock) []byte { return fat })
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, forge)
	c := connect(t, time.Minute, l.Addr)
	st, hs := scanConsistentFat(t, c, l, len(fat), func() (*ScanResult, error) { return scan(t, c, "bip157", 0, c.Chain().Height()) })
	if st.Banned {
		t.Fatalf("a peer whose fat filters agree with its filter headers was banned: %+v", st)
	}
	asked := 0
	for _, r := range hs {
		if r[0] <= wire.CFCheckptInterval {
			asked++
			if r != [2]int32{0, wire.CFCheckptInterval} {
				t.Errorf("getcfheaders %d..%d, want the fed segment's 0..%d", r[0], r[1], wire.CFCheckptInterval)
			}
		}
	}
	if asked != 1 {
		t.Errorf("the fed segment's filter hashes were asked %d times, want once", asked)
	}
}

// TestFeedFullBlockFiltersNotBanned has the only peer of a chain past
// the second checkpoint (two fed segments) serve, from height 1 on,
// filters of about 20 KiB, those of full blocks of 1 MB (a basic filter
// is about 2% of its block without witnesses, bitcoin/bitcoin#12254): 20
// MiB a segment, consistent with its filter hashes, filter headers and
// checkpoints. The first segment's filters would pass fatSegmentBytes:
// its filter hashes are asked after the first request's filters, and
// the second's before its filters; each is asked once, the scan succeeds
// and the peer is not banned (measured: 38.89 MiB received for 38.83 MiB
// of filters, 0.16% more; 0.26% when the batch was cut at
// fatSegmentBytes and asked again; 38.84 MiB before the check).
func TestFeedFullBlockFiltersNotBanned(t *testing.T) {
	r := newFedChain(t, 2003)
	filter := fatFilter(t, 7_700)
	forge := peertest.Forge(t, r.node, 1, func(int32, *wire.MsgBlock) bool { return true }, func(*wire.MsgBlock) []byte { return filter })
	l := peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, forge)
	c := connectTo(t, r.node, time.Minute, l.Addr)
	st, hs := scanConsistentFat(t, c, l, len(filter), func() (*ScanResult, error) {
		return c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(r.alice.PkScript())}, From: 0, To: -1})
	})
	if st.Banned {
		t.Fatalf("a peer whose filters agree with its filter headers was banned: %+v", st)
	}
	want := [][2]int32{{0, wire.CFCheckptInterval}, {wire.CFCheckptInterval + 1, 2 * wire.CFCheckptInterval}}
	var fed [][2]int32
	for _, q := range hs {
		if q[1] <= 2*wire.CFCheckptInterval {
			fed = append(fed, q)
		}
	}
	if !slices.Equal(fed, want) {
		t.Errorf("getcfheaders in the fed segments %v, want %v", fed, want)
	}
}

// TestFeedAttackFatLiarHangsUpOnHashes is TestFeedAttackFatLiarBesideHonest
// for a liar that hangs up when asked for filter hashes: no proof, so it
// need not be banned, but the scan finds every watched transaction and
// what it downloaded of the liar stays within fatLiarBound.
func TestFeedAttackFatLiarHangsUpOnHashes(t *testing.T) {
	needFixture(t)
	fat := fatFilters(fatFilter(t, 96_000))
	fs := scanFedBesideHonest(t, func() *peertest.Liar {
		return peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
			if _, ok := m.(*wire.MsgCFHeaders); ok {
				return nil, true
			}
			return fat(m)
		})
	})
	st := peerStatus(fs.c, fs.liar.Addr)
	t.Logf("%v: %.1f MiB from the liar (asked %v); banned %v (%s)", fs.took.Round(time.Millisecond), mib(st.BytesReceived), fs.cf, st.Banned, st.Reason)
	if st.BytesReceived > fatLiarBound {
		t.Errorf("the liar's fat filters cost %.1f MiB of download, bound %.1f MiB", mib(st.BytesReceived), mib(fatLiarBound))
	}
}
