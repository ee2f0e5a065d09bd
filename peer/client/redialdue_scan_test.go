package client

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestHangUpDelaysNoScan: a peer that answers filters and hangs up
// 50 ms after the first of each request, beside an honest one, scanned
// with again and again (no filter cache), the peer dialled again by the
// user before each scan (Pool.Add dials whatever its backoff, which its
// hang-ups keep doubling). Its hang-up fails a pass, and the failed
// pass's check for a reorganization (scanRun.failed) dialled it again
// first with Pool.Redial, waiting for its backoff: the scans took 0.6 s,
// 1.1 s, 4.1 s, 16 s. It waits for no backoff beyond a first failure's
// (Pool.RedialDue): the scans take about as long each time, and the
// honest peer is charged nothing.
func TestHangUpDelaysNoScan(t *testing.T) {
	needFixture(t)
	liar, served := answerThenHangUp(t, fx.node.P2PAddr, "cfilter")
	// No filter cache: each scan asks its peers for the filters.
	c := connectWith(t, Config{Peers: []string{fx.node.P2PAddr, liar}, Params: fx.node.Params, Timeout: 10 * time.Second, FilterCacheBytes: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var took []time.Duration
	var asked []int32 // the filters the peer that hangs up served, per scan
	for i := range 8 {
		before := served.Load()
		if err := c.pool.Add(ctx, liar, true); err != nil {
			t.Fatalf("dialling the peer that hangs up again: %v", err)
		}
		start := time.Now()
		_, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: fx.tip})
		took = append(took, time.Since(start).Round(time.Millisecond))
		asked = append(asked, served.Load()-before)
		if err != nil {
			t.Fatalf("scan %d, after %v: %v (each took %v)", i, took[len(took)-1], err, took)
		}
		if slices.Max(took)-slices.Min(took) > 10*time.Second {
			break // the hole is shown; the next waits would double
		}
	}
	honestUnharmed(t, c)
	t.Logf("%d scans, each took %v; the peer that hangs up served %v filters", len(took), took, asked)
	if len(asked) < 2 || slices.Max(asked[1:]) == 0 {
		t.Fatal("the peer that hangs up was not asked again after a scan: the attack did not run")
	}
	if spread := slices.Max(took) - slices.Min(took); spread > 900*time.Millisecond {
		t.Errorf("the slowest scan took %v more than the fastest, the honest peer live: it waited for the backoff of a peer that hangs up", spread)
	}
}
