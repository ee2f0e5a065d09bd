package client

import (
	"context"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSettleWaitsForQuiet: the service's wait after a wake-up lasts
// announceQuiet without another, is extended by each other wake-up, and
// ends at announceSettle however many come.
func TestSettleWaitsForQuiet(t *testing.T) {
	for _, tc := range []struct {
		name     string
		every    time.Duration // wake-ups this often while it waits; 0: none
		min, max time.Duration
	}{
		{"quiet", 0, announceQuiet, announceSettle},
		{"a stream", announceQuiet / 3, announceSettle, announceSettle + 2*time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s service
			s.init()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if tc.every > 0 {
				go func() {
					tick := time.NewTicker(tc.every)
					defer tick.Stop()
					for {
						select {
						case <-ctx.Done():
							return
						case <-tick.C:
							s.wakeUp()
						}
					}
				}()
			}
			start := time.Now()
			s.settle(ctx)
			if took := time.Since(start); took < tc.min || took > tc.max {
				t.Errorf("settle took %v, want %v to %v", took, tc.min, tc.max)
			}
		})
	}
}

// TestBurstOfBlocksCostsOneWordAPeer: a service following the tip through
// three peers (one node behind three proxies, which announce each block
// at once) sees ten blocks mined in a row, 50 ms apart. Every peer is still compared
// on them (each sends filter headers, and each is compared), but the
// blocks are verified together once the announcements settle: each peer
// sends a few filter-header answers for the ten blocks, not one or more
// a block.
func TestBurstOfBlocksCostsOneWordAPeer(t *testing.T) {
	needFixture(t)
	node := peertest.CopyChain(t, fx.node, peertest.WithArgs("--nobanning"))
	var counts [3]headerBytes
	addrs := make([]string, len(counts))
	for i := range counts {
		addrs[i] = peertest.NewLiar(t, node.P2PAddr, node.Params.Net, counts[i].lie).Addr
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Connect(ctx, Config{Peers: addrs, Params: node.Params, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	startService(t, c)
	tip := fx.tip
	log, stop := follow(t, c, tip-5, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip", tipAt(tip))
	time.Sleep(2 * announceSettle) // what the tip cost is counted apart
	for i := range counts {
		counts[i].reset()
	}
	const blocks = 10
	start := time.Now()
	for range blocks {
		node.Generate(t, 1)
		time.Sleep(50 * time.Millisecond)
	}
	mined := time.Since(start)
	log.waitFor(t, "the new blocks", tipAt(tip+blocks))
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// One verification a settled burst: mining the ten blocks may take
	// longer than announceSettle on a loaded machine, a verification
	// then for each announceSettle it took, and one more for the
	// blocks a peer announced after the others (its word, once).
	want := 2 + int(mined/announceSettle)
	for i := range counts {
		n, hashes, headers, checkpoints := counts[i].reset()
		t.Logf("peer %d: %d cfheaders of %d hashes, %d bytes, %d cfcheckpt for %d blocks mined in %v",
			i, headers, hashes, n, checkpoints, blocks, mined.Round(time.Millisecond))
		switch {
		case headers == 0:
			t.Errorf("peer %d sent no filter headers: the new blocks were not compared with it", i)
		case headers > want:
			t.Errorf("peer %d sent %d filter-header answers for %d blocks mined in %v, want %d at most", i, headers, blocks, mined.Round(time.Millisecond), want)
		}
	}
	for _, p := range c.Peers() {
		if !p.Compared || p.Banned {
			t.Errorf("peer %s: compared %v, banned %v: every honest peer is compared", p.Address, p.Compared, p.Banned)
		}
	}
}
