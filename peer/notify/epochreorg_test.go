package notify_test

import (
	"slices"
	"testing"
	"time"
)

// TestBlockEpochsGoOnThroughReorgBelowFirstTold: block epochs registered
// from the tip (nil: the tip, 110, told first), then a reorganization of
// two blocks (109 and 110 replaced, then 111'), as the network makes now
// and then, or a peer with hash power. The client's block subscription
// remembers only the blocks it told (here 110) and ends when the first of
// them leaves the chain with its parent; the registration subscribes
// again from its fork, and the epochs go on with the new chain
// (109'..111'), the channel open: lnd reads a closed epoch channel as the
// notifier's end.
func TestBlockEpochsGoOnThroughReorgBelowFirstTold(t *testing.T) {
	node, n, ev := epochsFromTip(t)
	defer ev.Cancel()
	if e := nextEpoch(t, ev); e.Height != 110 {
		t.Fatalf("first epoch %+v, want the tip 110", e)
	}
	invalidate(t, node, 109)
	node.Generate(t, 3) // 109', 110', 111'
	want := hashAt(t, node, 111)
	var told []int32 // the heights of the new chain's blocks told
	for deadline := time.After(30 * time.Second); ; {
		select {
		case e, ok := <-ev.Epochs:
			if !ok {
				t.Fatalf("the epoch channel was closed by a reorganization of two blocks (notifier error %v)", n.Err())
			}
			t.Logf("epoch %d %v", e.Height, e.Hash)
			if e.Hash != hashAt(t, node, e.Height) {
				continue // a block of the old chain, told before the client saw the new one
			}
			told = append(told, e.Height)
			if e.Hash != want {
				continue
			}
			if !slices.Equal(told, []int32{109, 110, 111}) {
				t.Errorf("the new chain's blocks told at heights %v, want 109, 110, 111", told)
			}
			return
		case <-deadline:
			t.Fatalf("no epoch of block 111' within 30s")
		}
	}
}
