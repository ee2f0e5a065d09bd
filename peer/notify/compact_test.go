package notify_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/notify"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestWatchListBoundedByLiveRegistrations: the items of cancelled
// registrations leave the rescan's watch list, so that it is bounded by
// the live registrations (twice them, plus 64); a live spend registration by script alone,
// whose item moves in the list, still reads its spend.
func TestWatchListBoundedByLiveRegistrations(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice, carol := peertest.NewKey("alice"), peertest.NewKey("carol")
	payAlice := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, payAlice) // 111
	_, n := start(t, node)
	var dummies []func()
	register := func(count int) {
		for i := range count {
			k := peertest.NewKey(fmt.Sprintf("dummy %d", len(dummies)+i))
			ev, err := n.RegisterSpend(&wire.OutPoint{Index: uint32(len(dummies) + i + 1)}, k.PkScript(), 1000)
			if err != nil {
				t.Fatal(err)
			}
			dummies = append(dummies, ev.Cancel)
		}
	}
	register(100)
	ev, err := n.RegisterSpend(nil, alice.PkScript(), 112)
	if err != nil {
		t.Fatal(err)
	}
	rec := followSpend(ev)
	register(100)
	if got := notify.WatchedItems(n); got != 201 {
		t.Fatalf("premise: %d items watched, want 201", got)
	}
	for _, cancel := range dummies {
		cancel()
	}
	deadline := time.After(30 * time.Second)
	// Items of registrations over stay until they are more than 64 and
	// than the live ones: at most 65 here.
	for notify.WatchedItems(n) > 65 {
		select {
		case <-deadline:
			t.Fatalf("200 registrations of 201 cancelled, and the watch list holds %d items", notify.WatchedItems(n))
		case <-time.After(50 * time.Millisecond):
		}
	}
	spend := node.Spend(t, []peertest.Output{peertest.OutputOf(payAlice, 0, alice)}, wire.NewTxOut(30_000_000-peertest.Fee, carol.PkScript()))
	node.Confirm(t, spend) // 112
	rec.waitCount(t, "spend ", 1)
	if s := rec.spends[0]; s.SpenderTxid != spend.TxHash() || s.Height != 112 {
		t.Errorf("spend %+v, want %v at 112", s, spend.TxHash())
	}
}
