package client

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// The tests of this file run the client's calls at once with each other,
// with Close, and with a reorganization (run them with -race).

// TestCloseDuringStart: a client is closed while its service starts,
// while a following rescan and a GetCFilter run, six times at growing
// delays. Close returns promptly, the rescan and GetCFilter return, and
// every goroutine ends.
func TestCloseDuringStart(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	hashes := node.Generate(t, 110)
	second := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	runtime.GC()
	base := runtime.NumGoroutine()
	for i := 0; i < 6; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		c, err := Connect(ctx, Config{Peers: []string{node.P2PAddr, second.Addr}, Params: node.Params, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			r := c.NewRescan(RescanOptions{From: 100, Follow: true, Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}})
			r.Run(ctx)
		}()
		go func() {
			defer wg.Done()
			c.GetCFilter(ctx, *hashes[50])
		}()
		time.Sleep(time.Duration(i) * 40 * time.Millisecond)
		closed := make(chan error, 1)
		go func() { closed <- c.Close() }()
		select {
		case <-closed:
		case <-time.After(15 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("Close still running after 15 s (round %d):\n%s", i, buf[:runtime.Stack(buf, true)])
		}
		cancel()
		waited := make(chan struct{})
		go func() { wg.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(15 * time.Second):
			t.Fatalf("round %d: the rescan or GetCFilter still runs 15 s after Close", i)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base+2 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after six clients were closed, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// TestUpdateWaitConcurrent: UpdateWait from several goroutines at once,
// each with a rewind, while a following rescan runs and blocks are mined
// (run with -race). Every call returns, the events keep their order, and
// each payment to an added key is reported.
func TestUpdateWaitConcurrent(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr)
	startService(t, c)
	log := newEventLog()
	r := c.NewRescan(RescanOptions{From: 100, Follow: true, OnEvent: log.add})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	log.waitFor(t, "the tip at 110", tipAt(110))
	keys := make([]*peertest.Key, 6)
	var pays []*wire.MsgTx
	for i := range keys {
		keys[i] = peertest.NewKey("update-wait-" + string(rune('a'+i)))
		pay := node.SpendCoinbase(t, wire.NewTxOut(1_000_000, keys[i].PkScript()))
		node.Confirm(t, pay) // 111..116
		pays = append(pays, pay)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
			defer wcancel()
			errs <- r.UpdateWait(wctx, []WatchItem{ScriptItem(k.PkScript())}, int32(105+i))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	log.waitFor(t, "every payment", func(es []Event) bool {
		for _, p := range pays {
			if len(matched(es, p.TxHash())) == 0 {
				return false
			}
		}
		return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventTip && e.Height == 116 })
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	events := log.snapshot()
	checkOrder(t, events)
	var buf bytes.Buffer
	for _, e := range events {
		if e.Kind != EventConnected {
			buf.WriteString(e.Kind.String()[:1])
		}
	}
	t.Logf("%d events; non-connected kinds in order: %s", len(events), buf.String())
}

// TestReorgWhileRescanReports: two following rescans on one client (as a
// wallet with two accounts runs them). The first scans blocks 111 to 113
// in one step; its callback is slow on block 111 (it blocks until the
// test lets it go). Meanwhile the node reorganizes (111 to 113 replaced
// by a heavier branch) and the second rescan's poll, which needs no lock
// the first holds, syncs the headers and the chain adopts the branch.
// The first rescan reports the rest of its step with the headers it
// scanned, not the chain's by then, then disconnects the blocks the chain
// no longer holds, from the lowest one on: replayed, its events leave
// connected exactly the node's chain from 100 to 114.
func TestReorgWhileRescanReports(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr)
	alice := peertest.NewKey("alice")
	log := newEventLog()
	hold, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	onEvent := func(e Event) {
		log.add(e)
		if e.Kind == EventConnected && e.Height == 111 {
			once.Do(func() {
				close(hold)
				<-release
			})
		}
	}
	// Polling every two seconds: the three blocks mined at once come in
	// one step.
	r := c.NewRescan(RescanOptions{From: 100, Follow: true, PollInterval: 2 * time.Second, Watch: []WatchItem{ScriptItem(alice.PkScript())}, OnEvent: onEvent})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		// A rescan that ended before the test cancelled it says why
		// (after a failed wait, this is the cause).
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
			t.Errorf("the rescan ended: %v", err)
		}
	}()
	log.waitFor(t, "the tip at 110", tipAt(110))
	other, stopOther := follow(t, c, 110, peertest.NewKey("bob").PkScript()) // polls every 100 ms
	defer stopOther()
	other.waitFor(t, "the other rescan at 110", tipAt(110))
	pay := node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 111
	node.Generate(t, 2)  // 112, 113: the service wakes once or twice
	select {
	case <-hold:
	case <-time.After(30 * time.Second):
		t.Fatalf("block 111 not reported: %v", log.summary())
	}
	old111, _ := node.RPC().GetBlockHash(111)
	if err := node.RPC().InvalidateBlock(old111); err != nil {
		t.Fatal(err)
	}
	node.Generate(t, 4) // 111'..114', the payment mined again in 111'
	newTip, _ := node.RPC().GetBlockHash(114)
	deadline := time.Now().Add(20 * time.Second)
	for c.Chain().Hash(114) != *newTip {
		if time.Now().After(deadline) {
			t.Fatal("the service did not adopt the heavier branch")
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(release)
	log.waitFor(t, "the tip at 114", tipAt(114))
	time.Sleep(300 * time.Millisecond)
	events := log.snapshot()
	// The blocks the events leave connected, by height.
	connected := map[int32]chainhash.Hash{}
	var problems []string
	for _, e := range events {
		switch e.Kind {
		case EventConnected:
			connected[e.Height] = e.BlockHash
		case EventDisconnected:
			delete(connected, e.Height)
		}
	}
	for h := int32(100); h <= 114; h++ {
		want, err := node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := connected[h]; !ok || got != *want {
			problems = append(problems, fmt.Sprintf("height %d: the events leave %v connected, the chain holds %v", h, got, want))
		}
	}
	var kinds []string
	for _, e := range events {
		if e.Height >= 110 {
			kinds = append(kinds, fmt.Sprintf("%v@%d:%.8s", e.Kind, e.Height, e.BlockHash))
		}
	}
	t.Logf("events from 110: %v", kinds)
	if len(problems) > 0 {
		t.Errorf("after a reorganization during the report of a step:\n%s\nevents from 110: %v", strings.Join(problems, "\n"), kinds)
	}
}
