package client

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestUpdateWaitWakesIdleRescan: a following rescan idle at the tip, with
// the default PollInterval (one second), applies each UpdateWait at once
// instead of at its next poll, with the service running and without; a
// new block is still scanned with the items added.
func TestUpdateWaitWakesIdleRescan(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	for _, started := range []bool{true, false} {
		t.Run(map[bool]string{true: "service", false: "no service"}[started], func(t *testing.T) {
			c := connectTo(t, node, 5*time.Second)
			if started {
				startService(t, c)
			}
			log := newEventLog()
			r := c.NewRescan(RescanOptions{From: 105, Follow: true, OnEvent: log.add})
			following(t, r)
			_, tip, err := node.RPC().GetBestBlock()
			if err != nil {
				t.Fatal(err)
			}
			log.waitFor(t, "the tip", func(es []Event) bool {
				return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventTip && e.Height == tip })
			})
			time.Sleep(300 * time.Millisecond) // idle in its wait
			const updates = 10
			keys := make([]*peertest.Key, updates)
			var slowest time.Duration
			begin := time.Now()
			for i := range updates {
				keys[i] = peertest.NewKey(string(rune('a' + i)))
				one := time.Now()
				if err := r.UpdateWait(context.Background(), []WatchItem{ScriptItem(keys[i].PkScript())}, -1); err != nil {
					t.Fatal(err)
				}
				slowest = max(slowest, time.Since(one))
			}
			took := time.Since(begin)
			t.Logf("%d updates of an idle following rescan (PollInterval 1s): %v in all, slowest %v", updates, took, slowest)
			if slowest > 250*time.Millisecond {
				t.Errorf("an UpdateWait took %v with a poll interval of 1s: it waited for the poll", slowest)
			}
			// The last item added is watched.
			pay := node.SpendCoinbase(t, wire.NewTxOut(10_000_000, keys[updates-1].PkScript()))
			node.Confirm(t, pay)
			log.waitFor(t, "the payment to the last item", func(es []Event) bool {
				m := matched(es, pay.TxHash())
				return len(m) == 1 && slices.Equal(m[0].Match.WatchItems, []int{updates - 1})
			})
		})
	}
}

// TestUpdatesInARowKeepPolling: updates every 50 ms to a following rescan
// of a client without the service (which syncs the headers itself every
// PollInterval) do not put its header syncs off: a new block is still
// reported within a few poll intervals.
func TestUpdatesInARowKeepPolling(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	c := connectTo(t, node, 5*time.Second)
	log := newEventLog()
	r := c.NewRescan(RescanOptions{From: 105, Follow: true, OnEvent: log.add})
	following(t, r)
	log.waitFor(t, "the tip", func(es []Event) bool {
		return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventTip && e.Height == 110 })
	})
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				r.Update([]WatchItem{ScriptItem(peertest.NewKey(string(rune('a' + i%26))).PkScript())}, -1)
			}
		}
	}()
	node.Generate(t, 1)
	begin := time.Now()
	deadline := time.After(5 * time.Second)
	for !slices.ContainsFunc(log.snapshot(), func(e Event) bool { return e.Kind == EventConnected && e.Height == 111 }) {
		select {
		case <-deadline:
			t.Fatalf("block 111 not reported %v after it was mined, with updates every 50 ms (PollInterval 1s)", time.Since(begin))
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Logf("block 111 reported %v after it was mined, with updates every 50 ms", time.Since(begin))
}

// following runs r until the test ends, when it must end without an
// error.
func following(t *testing.T, r *Rescan) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run after cancel: %v", err)
		}
	})
}
