package client

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// TestOnePeerHeightsStayApartWhenOneLeft: a height only a liar one block
// ahead held (111, its forged filter hiding alice's payment) rests on it
// alone. The honest connection is lost and the liar's node mines 112: the
// verification of 112 asks 111 again of the liar, the only peer left. It
// stays resting on one peer (not kept as verified), so once the honest
// node holds 111 too, GetCFilter(111) compares it and returns the true
// filter, and the honest node is never banned for the liar's header.
func TestOnePeerHeightsStayApartWhenOneLeft(t *testing.T) {
	node, ahead, liar := liarOneAhead(t)
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, liar.Addr)
	ctx := context.Background()

	c.opMu.Lock()
	if _, _, err := c.filterHeaders(ctx, newScanLog(), c.pool.Serving(wire.SFNodeCF), 111, 111); err != nil {
		c.opMu.Unlock()
		t.Fatal(err)
	}
	t.Logf("after both: lonely %+v verifiedTo %d", c.lonely, c.verifiedTo)
	if !c.lonelyAt(111) {
		t.Fatalf("111 not lonely after first verification: %+v", c.lonely)
	}
	c.opMu.Unlock()

	// The liar's node moves on; the honest node is not there for this
	// verification (a dropped connection, a reconnect whose tip is not
	// known yet): only the liar is asked.
	ahead.Generate(t, 1) // 112
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	var hm *pool.Member
	for _, m := range c.pool.Serving(wire.SFNodeCF) {
		if m.Addr() == node.P2PAddr {
			hm = m
		}
	}
	// The honest node's connection is lost (a timeout, a restart).
	c.pool.Drop(hm, errors.New("test: connection lost"))
	if err := c.verifyFilterHeaders(ctx, 112, 112); err != nil {
		t.Fatal(err)
	}
	if err := c.pool.Add(ctx, hm.Addr(), false); err != nil { // dialled again now
		t.Fatal(err)
	}
	c.opMu.Lock()
	t.Logf("after liar alone: lonely %+v verifiedTo %d", c.lonely, c.verifiedTo)
	laundered := !c.lonelyAt(111) && len(c.knownPrefix(111, 111)) == 1
	c.opMu.Unlock()
	if laundered {
		t.Errorf("the liar alone re-stated height 111 and it now counts as verified with several peers (not lonely, in memory)")
	}

	// Consequence: both hold 111 now; GetCFilter of 111 uses the kept header.
	node.CopyBlocks(t, ahead, 112)
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	hash, _ := ahead.RPC().GetBlockHash(111)
	want, err := ahead.RPC().GetCFilter(hash, wire.GCSFilterRegular)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.GetCFilter(ctx, *hash)
	t.Logf("GetCFilter(111): %d bytes, err %v", len(got), err)
	if err == nil && !bytes.Equal(got, want.Data) {
		t.Errorf("both hold 111, GetCFilter returned the liar's forged filter %x with no error", got)
	}
	for _, st := range c.Peers() {
		t.Logf("peer %s tip %d banned %v reason %q", st.Address, st.Tip, st.Banned, st.Reason)
	}
	// And a verification above with both: the honest node's prev disagrees.
	ahead.Generate(t, 1) // 113
	node.CopyBlocks(t, ahead, 113)
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	c.opMu.Lock()
	t.Logf("before 113: lonely %+v verifiedTo %d known 0..112: %d", c.lonely, c.verifiedTo, len(c.knownPrefix(0, 112)))
	c.opMu.Unlock()
	err = c.verifyFilterHeaders(ctx, 113, 113)
	t.Logf("verify 113 with both: %v", err)
	for _, st := range c.Peers() {
		t.Logf("peer %s (honest=%v) tip %d banned %v reason %q", st.Address, st.Address == node.P2PAddr, st.Tip, st.Banned, st.Reason)
		if st.Address == node.P2PAddr && st.Banned {
			t.Errorf("the honest node was banned for the liar's laundered header: %s", st.Reason)
		}
	}
}

// TestLonelyRanges: one-peer ranges are joined per peer when they touch,
// and trimmed to what a verification compared.
func TestLonelyRanges(t *testing.T) {
	a, b := "a:1", "b:1"
	var l []OnePeer
	for _, o := range []OnePeer{{From: 10, To: 10, Peer: a}, {From: 11, To: 12, Peer: a}, {From: 12, To: 12, Peer: b}, {From: 20, To: 20, Peer: a}} {
		l = addLonely(l, o)
	}
	want := []OnePeer{{From: 10, To: 12, Peer: a}, {From: 12, To: 12, Peer: b}, {From: 20, To: 20, Peer: a}}
	if !slices.Equal(l, want) {
		t.Fatalf("joined %+v, want %+v", l, want)
	}
	tests := []struct {
		from, to int32
		want     []OnePeer
	}{
		{11, 11, []OnePeer{{From: 10, To: 10, Peer: a}, {From: 12, To: 12, Peer: a}, {From: 12, To: 12, Peer: b}, {From: 20, To: 20, Peer: a}}},
		{0, 15, []OnePeer{{From: 20, To: 20, Peer: a}}},
		{12, 30, []OnePeer{{From: 10, To: 11, Peer: a}}},
		{13, 19, want},
		{15, 14, want},
	}
	for _, tt := range tests {
		if got := trimLonely(slices.Clone(l), tt.from, tt.to); !slices.Equal(got, tt.want) {
			t.Errorf("trim %d..%d: %+v, want %+v", tt.from, tt.to, got, tt.want)
		}
	}
}
