package client

import (
	"context"
	"fmt"
	"slices"
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

// TestStoredFilterHeadersCheckNewPeers: after a restart every peer's last
// 100 filter headers are compared with the stored ones. A difference bans
// nobody by itself (what is stored may have rested on one lying peer):
// the stored headers are verified again with every peer, which settles
// who lies.
func TestStoredFilterHeadersCheckNewPeers(t *testing.T) {
	needFixture(t)
	ctx := context.Background()
	scan := func(dir string, peers ...string) (*ScanResult, error) {
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
	lateBlock := fx.height[fx.late.TxHash()]
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, lateBlock, peertest.EmptyFilter)).Addr
	for _, tt := range []struct {
		name     string
		first    string // who wrote the stored state
		replaced bool   // the stored filter headers are found false and replaced
	}{
		{"an honest store meets a liar", fx.node.P2PAddr, false},
		{"a store written from the liar alone meets an honest peer", liar, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := scan(dir, tt.first); err != nil {
				t.Fatal(err)
			}
			honest := honestPeers(t, 1)[0]
			res, err := scan(dir, liar, honest)
			if err != nil {
				t.Fatal(err)
			}
			checkMatches(t, res, fx.want)
			if st := status(t, res, liar); !st.Banned || !strings.Contains(st.Reason, "proves it false") {
				t.Errorf("liar: %+v", st)
			}
			if st := status(t, res, honest); st.Banned || st.Reason != "" {
				t.Errorf("honest peer blamed: %+v", st)
			}
			replaced := slices.ContainsFunc(res.Warnings, func(w string) bool {
				return strings.Contains(w, fmt.Sprintf("from height %d", lateBlock)) && strings.Contains(w, "the block proves the stored filter false") &&
					strings.Contains(w, "verified again with the peers")
			})
			if replaced != tt.replaced {
				t.Errorf("warnings %q: the stored headers replaced: %v, want %v", res.Warnings, replaced, tt.replaced)
			}
		})
	}
}
