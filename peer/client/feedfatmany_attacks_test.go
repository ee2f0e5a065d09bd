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
// together cost k times it, no less (measured: 4 liars 33.4 to 33.6
// MiB, 8.0 to 8.9 MiB each, all banned); a bound on their total is not
// kept.
func TestFeedAttackFatLiarsTogether(t *testing.T) {
	needFixture(t)
	const k = 4
	fat := fatFilters(fatFilter(t, 96_000))
	addrs := make([]string, k)
	for i := range addrs {
		addrs[i] = peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, fat).Addr
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
	for _, a := range addrs {
		st := peerStatus(c, a)
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
