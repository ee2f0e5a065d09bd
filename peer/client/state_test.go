package client

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestResumeFromDataDir: a second client on the same data directory
// resumes the chain, asks for no headers, filter headers or filters it
// already has, and finds the same transactions.
func TestResumeFromDataDir(t *testing.T) {
	needFixture(t)
	dir := t.TempDir()
	run := func() *ScanResult {
		t.Helper()
		ctx := context.Background()
		c, err := Connect(ctx, Config{Peers: []string{fx.node.P2PAddr}, Params: fx.node.Params, DataDir: dir, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.SyncHeaders(ctx); err != nil {
			t.Fatal(err)
		}
		res, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: c.Chain().Height()})
		if err != nil {
			t.Fatal(err)
		}
		checkMatches(t, res, fx.want)
		return res
	}
	start := time.Now()
	first := run()
	cold := time.Since(start)
	start = time.Now()
	second := run()
	resumed := time.Since(start)
	t.Logf("first scan %d bytes (%d filters) in %v, second %d bytes (%d filters) in %v",
		first.BytesReceived, first.FiltersReceived, cold, second.BytesReceived, second.FiltersReceived, resumed)
	if first.FiltersReceived != first.BlocksScanned || second.FiltersReceived != 0 {
		t.Fatalf("filters received: %d then %d", first.FiltersReceived, second.FiltersReceived)
	}
	if second.BytesReceived*10 > first.BytesReceived {
		t.Errorf("the second scan received %d bytes, over 10%% of the first's %d", second.BytesReceived, first.BytesReceived)
	}
}

// TestStoredFilterHeadersCheckNewPeers: after a restart, a peer whose
// filter headers differ from the verified ones on disk is banned before
// anything it says is used, and an honest one is kept.
func TestStoredFilterHeadersCheckNewPeers(t *testing.T) {
	needFixture(t)
	dir := t.TempDir()
	ctx := context.Background()
	scan := func(peers ...string) (*ScanResult, error) {
		c, err := Connect(ctx, Config{Peers: peers, Params: fx.node.Params, DataDir: dir, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.SyncHeaders(ctx); err != nil {
			t.Fatal(err)
		}
		return c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: c.Chain().Height()})
	}
	if _, err := scan(fx.node.P2PAddr); err != nil {
		t.Fatal(err)
	}
	// A liar whose filter chain differs in the last hundred blocks.
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, fx.tip-10, peertest.EmptyFilter))
	honest := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
	res, err := scan(liar.Addr, honest.Addr)
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	if st := status(t, res, liar.Addr); !st.Banned || !strings.Contains(st.Reason, "differ from the verified ones") {
		t.Errorf("liar: %+v", st)
	}
	if st := status(t, res, honest.Addr); st.Banned || st.Reason != "" {
		t.Errorf("honest peer: %+v", st)
	}
	// Alone, the liar is refused: the stored state is not given up for it.
	if _, err := scan(liar.Addr); err == nil || !strings.Contains(err.Error(), "differ from those in") {
		t.Fatalf("the liar alone: %v", err)
	}
}
