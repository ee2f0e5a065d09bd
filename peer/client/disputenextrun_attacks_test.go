package client

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestAttackUnsettledDisputeNextRun: two colluders, the only peers
// while the filter headers are verified into a data directory, forge
// block 500's filter and every filter header after it. An honest peer
// joins; the new heights at the tip are disputed (unboundPrev) and
// verified again from the checkpoints, where the colluders hang up
// instead of sending theirs: the dispute is left unsettled, the
// colluders dropped, not banned, and the forged filter headers stay on
// disk. The next run over the data directory, given the honest peer
// alone, must not take them: the filter headers it verifies are the
// honest node's.
func TestAttackUnsettledDisputeNextRun(t *testing.T) {
	needFixture(t)
	const h = 500
	tip := fx.tip
	var hangup atomic.Bool
	hangUp := func(forge peertest.LieFunc) peertest.LieFunc {
		return func(m wire.Message) ([]wire.Message, bool) {
			if _, ok := m.(*wire.MsgCFCheckpt); ok && hangup.Load() {
				return nil, true
			}
			return forge(m)
		}
	}
	dir := t.TempDir()
	s := colludersThenHonest(t, fx.node, Config{DataDir: dir}, h, tip-5, 0, hangUp)
	c, honest := s.c, s.honest
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	hangup.Store(true)
	c.opMu.Lock()
	err := c.verifyRange(ctx, tip-4, tip)
	storedTip := c.st.FilterHeaderTip()
	c.opMu.Unlock()
	t.Logf("verifying %d..%d with the colluders hanging up: %v; the store ends at %d", tip-4, tip, err, storedTip)
	for _, p := range c.Peers() {
		t.Logf("%s: banned %v %q", p.Address, p.Banned, p.Reason)
	}
	c.Close()

	// ConnectOnly: the address book holds the colluders too.
	next := connectWith(t, Config{Peers: []string{honest}, ConnectOnly: true, Params: fx.node.Params, Timeout: 5 * time.Second, DataDir: dir})
	if err := next.verifyFilterHeaders(ctx, 0, tip); err != nil {
		t.Fatalf("the next run, with the honest peer alone: %v", err)
	}
	for _, height := range []int32{h, h + 100, tip} {
		got, err := next.st.FilterHeaders(height, height)
		if err != nil {
			t.Fatal(err)
		}
		hash, err := fx.node.RPC().GetBlockHash(int64(height))
		if err != nil {
			t.Fatal(err)
		}
		want, err := fx.node.RPC().GetCFilterHeader(hash, wire.GCSFilterRegular)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != want.PrevFilterHeader {
			t.Errorf("the next run's stored filter header at %d is %v, the honest node's %v", height, got[0], want.PrevFilterHeader)
		}
	}
}
