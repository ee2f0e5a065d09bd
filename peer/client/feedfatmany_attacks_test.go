package client

import (
	"errors"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestFeedAttackFatLiarsTogether has k liars, the scan's only peers,
// serve a well-formed filter of nearly 256 KiB for every block (as
// TestFeedAttackFatLiarBounded's one), each a part of the fed segment's
// filters: the scan must fail naming a false filter, having downloaded
// from each no more than fatLiarBound. The bound is a peer's: k liars
// together cost k times what one does (measured: 4 liars 33.4 to 33.6
// MiB, 8.0 to 8.9 MiB each, all banned). Each liar was asked the same
// batch (0..999): 32 filters unchecked (2.9 MiB of these), then the
// segment's filter hashes, then the rest, checked, the first false;
// about 5 MiB more was read from its connection before the ban closed
// it. A bound on the bytes all peers together bring in unchecked
// (twice fatSegmentBytes, tried in arrived and part) changed nothing
// (33.1 to 33.6 MiB): the liars' unchecked bytes come to 12 MiB
// together, and the rest is neither unchecked nor the feed's to bound.
func TestFeedAttackFatLiarsTogether(t *testing.T) {
	needFixture(t)
	const k = 4
	fat := fatFilters(fatFilter(t, 96_000))
	addrs := make([]string, k)
	liars := make([]*peertest.Liar, k)
	for i := range addrs {
		liars[i] = peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, fat)
		addrs[i] = liars[i].Addr
	}
	c := connect(t, time.Minute, addrs...)
	before := map[string]uint64{}
	for _, a := range addrs {
		before[a] = peerStatus(c, a).BytesReceived
	}
	start := time.Now()
	res, err := scan(t, c, "bip157", 0, c.Chain().Height())
	took := time.Since(start)
	var got uint64
	banned := 0
	for i, a := range addrs {
		st := peerStatus(c, a)
		hs, cf := cfRequests(t, liars[i], c)
		t.Logf("%s: getcfheaders %v, getcfilters %v", a, hs, cf)
		got += st.BytesReceived - before[a]
		if st.BytesReceived-before[a] > fatLiarBound {
			t.Errorf("liar %s cost %.1f MiB, bound %.1f MiB", a, mib(st.BytesReceived-before[a]), mib(fatLiarBound))
		}
		if st.Banned {
			banned++
		}
		t.Logf("%s: %.1f MiB, banned %v", a, mib(st.BytesReceived-before[a]), st.Banned)
	}
	t.Logf("%v: %.1f MiB from %d liars together, %.1f MiB each at most; %d banned", took.Round(time.Millisecond), mib(got), k, mib(fatLiarBound), banned)
	if res != nil || err == nil {
		t.Fatal("the scan of liars serving fat filters succeeded")
	}
	if !errors.Is(err, peer.ErrBadFilter) {
		t.Fatalf("error %v, want %v", err, peer.ErrBadFilter)
	}
	if got > k*fatLiarBound {
		t.Errorf("%d liars' fat filters cost %.1f MiB of download together, bound %d x %.1f MiB", k, mib(got), k, mib(fatLiarBound))
	}
}
