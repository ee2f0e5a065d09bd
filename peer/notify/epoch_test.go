package notify_test

import (
	"strings"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/notify"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// nextEpoch returns the next epoch of ev, failing after a minute.
func nextEpoch(t *testing.T, ev *notify.BlockEpochEvent) notify.BlockEpoch {
	t.Helper()
	select {
	case e, ok := <-ev.Epochs:
		if !ok {
			t.Fatal("epochs closed")
		}
		return e
	case <-time.After(time.Minute):
		t.Fatal("no epoch within a minute")
	}
	return notify.BlockEpoch{}
}

// epochsFromTip starts a node of 110 blocks and a notifier over it, and
// registers block epochs from the tip.
func epochsFromTip(t *testing.T) (*peertest.Node, *notify.Notifier, *notify.BlockEpochEvent) {
	t.Helper()
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	_, n := start(t, node)
	ev, err := n.RegisterBlockEpochs(nil)
	if err != nil {
		t.Fatal(err)
	}
	return node, n, ev
}

// TestNotifierBlockEpochs: from the tip (nil), the tip at once, then each
// new block in order; from a best block that left the chain, the new
// blocks from the fork; Cancel closes the channel.
func TestNotifierBlockEpochs(t *testing.T) {
	node, n, ev := epochsFromTip(t)
	if e := nextEpoch(t, ev); e.Height != 110 || e.Hash != hashAt(t, node, 110) || e.Header.BlockHash() != e.Hash {
		t.Fatalf("first epoch %+v, want the tip 110", e)
	}
	node.Generate(t, 2)
	for h := int32(111); h <= 112; h++ {
		if e := nextEpoch(t, ev); e.Height != h || e.Hash != hashAt(t, node, h) {
			t.Fatalf("epoch %+v, want height %d", e, h)
		}
	}
	stale := notify.BlockEpoch{Height: 112, Hash: hashAt(t, node, 112)}
	invalidate(t, node, 112)
	node.Generate(t, 2) // 112', 113'
	for h := int32(112); h <= 113; h++ {
		if e := nextEpoch(t, ev); e.Height != h || e.Hash != hashAt(t, node, h) {
			t.Fatalf("after the reorganization, epoch %+v, want height %d of the new chain", e, h)
		}
	}
	from, err := n.RegisterBlockEpochs(&stale)
	if err != nil {
		t.Fatal(err)
	}
	for h := int32(112); h <= 113; h++ {
		if e := nextEpoch(t, from); e.Height != h || e.Hash != hashAt(t, node, h) {
			t.Fatalf("from a stale best block, epoch %+v, want height %d of the new chain", e, h)
		}
	}
	ev.Cancel()
	select {
	case _, ok := <-ev.Epochs:
		if ok {
			t.Error("an epoch after Cancel")
		}
	case <-time.After(10 * time.Second):
		t.Error("Cancel did not close the channel")
	}
}

// TestEpochReaderStallVisible: a reader that does not take its block
// epochs is listed by Stalls, a *StallError naming the block epochs and
// since when the epoch waits, and no longer once it has taken it.
func TestEpochReaderStallVisible(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	_, n := start(t, node)
	before := time.Now()
	ev, err := n.RegisterBlockEpochs(nil)
	if err != nil {
		t.Fatal(err)
	}
	const held = 300 * time.Millisecond
	epochStall := func() *notify.StallError {
		for _, s := range n.Stalls(held) {
			if s.Kind == notify.StallReader && s.Registration == "block epochs" {
				return s
			}
		}
		return nil
	}
	deadline := time.Now().Add(time.Minute)
	for epochStall() == nil && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	s := epochStall()
	if s == nil {
		t.Fatalf("no stall of the block epochs listed a minute after the tip's epoch waited; stalls %v", n.Stalls(0))
	}
	if s.Since.Before(before) || s.At.Sub(s.Since) <= held || s.Pending != 1 || !strings.Contains(s.Error(), "block epochs") {
		t.Errorf("stall %+v (%v): want since the registration, held over %v, one epoch waiting", s, s, held)
	}
	if e := nextEpoch(t, ev); e.Height != 110 {
		t.Fatalf("epoch %+v, want the tip 110", e)
	}
	// The registration notes the epoch taken once its send returns.
	for deadline := time.Now().Add(5 * time.Second); epochStall() != nil && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	if s := epochStall(); s != nil {
		t.Errorf("5 s after the epoch was taken, still listed: %v", s)
	}
}
