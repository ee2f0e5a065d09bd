package client

import (
	"context"
	"testing"
	"time"
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
	first := run()
	second := run()
	t.Logf("first scan %d bytes (%d filters), second %d bytes (%d filters)",
		first.BytesReceived, first.FiltersReceived, second.BytesReceived, second.FiltersReceived)
	if first.FiltersReceived != first.BlocksScanned || second.FiltersReceived != 0 {
		t.Fatalf("filters received: %d then %d", first.FiltersReceived, second.FiltersReceived)
	}
	if second.BytesReceived*10 > first.BytesReceived {
		t.Errorf("the second scan received %d bytes, over 10%% of the first's %d", second.BytesReceived, first.BytesReceived)
	}
}
