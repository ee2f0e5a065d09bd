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
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() { done <- r.Run(ctx) }()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Run after cancel: %v", err)
				}
			}()
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
				if err := r.UpdateWait(ctx, []WatchItem{ScriptItem(keys[i].PkScript())}, -1); err != nil {
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
