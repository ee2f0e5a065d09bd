package client

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestFollowSpreadNoteCountsEveryStep: a following rescan over one real
// node behind a relay fetches the blocks paying a watched key in its
// first scan (106, 107) and then in later steps (108, 109); its warnings
// hold one note on the spread, counting every block the relay was asked
// for, not the latest step's.
func TestFollowSpreadNoteCountsEveryStep(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 105)
	alice := peertest.NewKey("alice")
	pay := func() { node.Confirm(t, node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))) }
	pay() // 106
	pay() // 107
	relay := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c := connectWith(t, Config{Peers: []string{relay.Addr}, Params: node.Params, Timeout: 5 * time.Second})
	log := newEventLog()
	r := c.NewRescan(RescanOptions{Watch: []WatchItem{ScriptItem(alice.PkScript())}, From: 100, Follow: true,
		PollInterval: 100 * time.Millisecond, OnEvent: log.add})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	atTip := func(h int32) {
		t.Helper()
		log.waitFor(t, fmt.Sprintf("tip at %d", h), func(es []Event) bool {
			return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventTip && e.Height == h })
		})
	}
	atTip(107)
	first := len(blocksAsked(relay))
	pay() // 108
	atTip(108)
	pay() // 109
	atTip(109)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run after cancel: %v", err)
	}
	asked := len(blocksAsked(relay))
	ws := r.Warnings()
	var notes []string
	for _, w := range ws {
		if WarningKindOf(w) == WarningFetchSpread {
			notes = append(notes, w)
		}
	}
	t.Logf("blocks asked: %d in the first scan, %d in all; notes %q", first, asked, notes)
	if first < 2 || asked < first+2 {
		t.Fatalf("the relay was asked for %d blocks in the first scan and %d in all: want 2 and then 2 more", first, asked)
	}
	want := fmt.Sprintf("one peer (%s) was asked for all %d blocks fetched", relay.Addr, asked)
	if len(notes) != 1 || !hasWarning(notes, want) {
		t.Errorf("notes on the spread %q: want one, %q", notes, want)
	}
}
