package notify_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/notify"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestHistoryStallVisible: the only peer stops serving filters while a
// registration's history is to be scanned: Stalls names the registration,
// says since when its history has waited and why (the scan's failure);
// a new block, whose filter does not come either, stalls the rescan
// following the chain, listed as such. Once the peer serves again the
// history completes, the confirmation is told and nothing is listed any
// more.
func TestHistoryStallVisible(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice := peertest.NewKey("alice")
	pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 111
	node.Generate(t, 2)  // 112, 113
	var stall atomic.Bool
	proxy := filterStaller(t, node, &stall)
	_, n := start(t, node, proxy.Addr)
	for notify.RescanHeight(n) <= 113 {
		time.Sleep(50 * time.Millisecond) // the rescan catches up from 113-reorgSafety
	}
	stall.Store(true)
	registered := time.Now()
	id := pay.TxHash()
	ev, err := n.RegisterConfirmations(&id, alice.PkScript(), 1, 95) // below what the rescan scanned
	if err != nil {
		t.Fatal(err)
	}
	rec := followConf(ev)
	var seen *notify.StallError
	deadline := time.Now().Add(45 * time.Second)
	for seen == nil && time.Now().Before(deadline) {
		for _, s := range n.Stalls(time.Second) {
			if s.Kind == notify.StallHistory && s.Err != nil && !strings.Contains(s.Err.Error(), "waiting for") && s.Err.Error() != "scanning" {
				seen = s
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if seen == nil {
		t.Fatalf("the history scan of a registration failed for 45s with its only peer stalling, and Stalls never listed its failure (last: %v)", n.Stalls(0))
	}
	t.Logf("while the peer stalls: %v", seen)
	if !strings.Contains(seen.Registration, id.String()) || seen.Since.Before(registered) || time.Since(seen.Since) < time.Second {
		t.Errorf("stall %+v: want the confirmation of %v, held up since it was registered", seen, id)
	}
	if !strings.Contains(seen.Error(), "history") || !errors.Is(seen, seen.Err) {
		t.Errorf("the stall's message %q does not say its history is held up, or does not wrap the failure", seen.Error())
	}
	if rec.count("conf ") != 0 {
		t.Fatalf("premise: the confirmation was told while the only peer stalled its filters: %q", rec.snapshot())
	}
	mined := time.Now()
	node.Generate(t, 1) // 114, whose filter does not come
	var chain *notify.StallError
	for chain == nil && time.Now().Before(deadline) {
		for _, s := range n.Stalls(3 * time.Second) { // longer than a rescan takes to report a block
			if s.Kind == notify.StallChain {
				chain = s
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if chain == nil || chain.Since.Before(mined) || chain.Err == nil || !strings.Contains(chain.Error(), "following the chain") {
		t.Fatalf("the rescan following the chain fails on block 114, and Stalls says %v", chain)
	}
	t.Logf("while the peer stalls a new block: %v", chain)
	stall.Store(false)
	rec.waitCount(t, "conf ", 1)
	for time.Now().Before(deadline) && len(n.Stalls(0)) > 0 {
		time.Sleep(100 * time.Millisecond)
	}
	if s := n.Stalls(0); len(s) != 0 {
		t.Errorf("after the history completed, Stalls lists %v", s)
	}
}
