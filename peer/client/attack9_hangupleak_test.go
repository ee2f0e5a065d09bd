package client

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestAttack9HangUpsLeakNothing: two peers that hang up mid-answer (the
// first block of each request passed on) on every connection, beside an
// honest one, over rounds of FetchBlocks with the service running (which
// dials them again after their backoff). Each round's download is to end
// whole, every block right, in a bounded time, the liars neither dropped
// nor banned, and the goroutines not to grow from round to round: the
// re-plans after a hang-up hold nothing past the download.
func TestAttack9HangUpsLeakNothing(t *testing.T) {
	from, to := attack9Range(t, 3)
	var ends atomic.Int32
	liars := []string{hangUpOnFirstBlock(t, &ends), hangUpOnFirstBlock(t, &ends)}
	honest := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
	log := &linesLog{t: t, start: time.Now()}
	c := connectWith(t, Config{Peers: append(liars[:2:2], honest.Addr), Params: fx.node.Params, Timeout: 10 * time.Second, Log: log})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	const rounds = 6
	var first int
	for round := range rounds {
		waitServing(ctx, t, c, to, liars[0], liars[1], honest.Addr)
		rankedAlike(ctx, t, c) // a liar ranked slow is asked nothing
		runtime.GC()
		g := runtime.NumGoroutine()
		if round == 0 {
			first = g
		}
		before := ends.Load()
		start := time.Now()
		got := int32(from)
		err := c.FetchBlocks(ctx, from, to, func(h int32, b *wire.MsgBlock) error {
			if h != got || b.BlockHash() != c.chain.Hash(h) {
				t.Errorf("round %d: height %d: block %v, want height %d's %v", round, h, b.BlockHash(), got, c.chain.Hash(got))
			}
			got++
			return nil
		})
		took := time.Since(start)
		t.Logf("round %d: %d goroutines before; liars hung up %d times; %d blocks in %v: %v", round, g, ends.Load()-before, got-from, took, err)
		if err != nil || got != to+1 {
			t.Errorf("round %d: %d of %d blocks: %v", round, got-from, to-from+1, err)
		}
		if ends.Load()-before < 2 {
			t.Errorf("round %d: the liars hung up %d times, want 2: the attack did not run", round, ends.Load()-before)
		}
		if took > 5*time.Second {
			t.Errorf("round %d: the download took %v", round, took)
		}
		if round == rounds-1 && g > first+10 {
			t.Errorf("goroutines grew from %d to %d over %d rounds", first, g, rounds)
		}
	}
	for _, addr := range liars {
		if st := c.pool.Status(clientMember(t, c, addr)); st.Banned || log.count("dropped "+addr) > 0 {
			t.Errorf("%s charged for hanging up (dropped %d times): %+v", addr, log.count("dropped "+addr), st)
		}
	}
	unharmedAt(t, c, honest.Addr)
}
