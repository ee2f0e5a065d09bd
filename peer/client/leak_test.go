package client

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestScanLeak: a BIP 157 scan through one relay reports what that peer
// saw: the blocks the relay was asked for, every one of the scan's, the
// same view colluding, and the wallet's scripts of two blocks each
// attributed by the attack (one peer saw every block of them). Opened
// again on its data directory, the client reports what the peer saw in
// both runs, the first run's blocks asked again of the peer that saw them.
func TestScanLeak(t *testing.T) {
	needFixture(t)
	relay := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
	dir := t.TempDir()
	run := func(from, to int32) *ScanResult {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		c, err := Connect(ctx, Config{Peers: []string{relay.Addr}, Params: fx.node.Params, DataDir: dir, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.SyncHeaders(ctx); err != nil {
			t.Fatal(err)
		}
		res, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), From: from, To: to, Leak: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.Leak == nil {
			t.Fatalf("no leak report: %q", res.Warnings)
		}
		return res
	}
	first := run(100, 900)
	l := first.Leak
	if len(l.Peers) != 1 || l.Peers[0].Address == nil || *l.Peers[0].Address != relay.Addr {
		t.Fatalf("peers %+v, want the relay alone", l.Peers)
	}
	p := l.Peers[0]
	t.Logf("first run: %d blocks fetched of %d scanned, %d scripts at >= 0.95, %d at >= 0.5, conservative %v",
		p.BlocksFetched, p.BlocksScanned, p.Confident, p.Likely, p.Conservative)
	if int(p.BlocksFetched) != first.BlocksFetched || l.Collusion.BlocksFetched != p.BlocksFetched || l.WatchedScripts != len(fx.watch) {
		t.Errorf("fetched %d (collusion %d), the scan fetched %d; %d watched scripts", p.BlocksFetched, l.Collusion.BlocksFetched, first.BlocksFetched, l.WatchedScripts)
	}
	if p.Likely == 0 || p.Highest == nil {
		t.Errorf("alice's two blocks, both seen by the one peer, are attributed at nothing: %+v", p)
	}
	asked := len(blocksAsked(relay))
	second := run(901, fx.tip)
	q := second.Leak.Peers[0]
	want := slices.Concat(p.FetchedHeights, nil)
	for _, m := range second.Matches {
		if !slices.Contains(want, m.Height) {
			want = append(want, m.Height)
		}
	}
	slices.Sort(want)
	if !slices.Equal(q.FetchedHeights, want) {
		t.Errorf("the second run reports the peer saw %v, want both runs' %v", q.FetchedHeights, want)
	}
	if again := len(blocksAsked(relay)) - asked - second.BlocksFetched; again != len(p.FetchedHeights) {
		t.Errorf("%d blocks of the first run asked again, want %d", again, len(p.FetchedHeights))
	}
}

// TestRescanLeak: after a rescan, Leak reports the blocks its peer was
// asked for, each asked once more of that peer to name what it holds.
func TestRescanLeak(t *testing.T) {
	needFixture(t)
	relay := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
	c := connectTo(t, fx.node, 10*time.Second, relay.Addr)
	r := c.NewRescan(RescanOptions{Watch: items(fx.watch), From: 100, To: fx.tip})
	ctx := context.Background()
	start := time.Now()
	if err := r.Run(ctx); err != nil {
		t.Fatal(err)
	}
	scanned := time.Since(start)
	asked := blocksAsked(relay)
	start = time.Now()
	l, err := r.Leak(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the rescan of %d blocks took %v, its leak report %v (%d blocks asked again)", fx.tip-99, scanned.Round(time.Millisecond),
		time.Since(start).Round(time.Millisecond), len(asked))
	if len(l.Peers) != 1 || int(l.Peers[0].BlocksFetched) != len(asked) || len(asked) == 0 || l.Peers[0].Likely == 0 {
		t.Fatalf("leak peers %+v; the relay was asked for %d blocks", l.Peers, len(asked))
	}
	if again := len(blocksAsked(relay)) - len(asked); again != len(asked) {
		t.Errorf("%d blocks asked again for the report, want %d", again, len(asked))
	}
}
