package client

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestPrevHeaderLiarHangingUpKeepsItsWord: two honest peers verified the
// filter headers up to two blocks below the tip; a liar joins that forged
// the filter of the block below them and every filter header after it.
// Asked for the new heights, it states its forged filter header before
// them, a dispute (the honest peers agreed on theirs without it), and
// hangs up when the heights are asked again from the last checkpoint,
// before stating the filter hashes leading to its word. That proves
// nothing: it is dropped, not banned, and the failure says why no proof
// exists and counts it. Its word is kept: once back, it states the
// honest filter hashes, which do not lead to its word, and that
// contradiction bans it, with its two answers as the proof.
func TestPrevHeaderLiarHangingUpKeepsItsWord(t *testing.T) {
	needFixture(t)
	tip := fx.tip
	h := tip - 3
	honest := honestPeers(t, 2)
	c := connect(t, 5*time.Second, honest...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.verifyFilterHeaders(ctx, 0, tip-2); err != nil {
		t.Fatal(err)
	}
	forge := peertest.Forge(t, fx.node, h, func(height int32, _ *wire.MsgBlock) bool { return height == h }, peertest.EmptyFilter)
	var hungUp atomic.Bool
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if hungUp.Load() {
			return []wire.Message{m}, false // back, and honest now
		}
		if cfh, ok := m.(*wire.MsgCFHeaders); ok && len(cfh.FilterHashes) > 2 {
			// Asked again from the last checkpoint.
			hungUp.Store(true)
			return nil, true
		}
		return forge(m)
	}).Addr
	if err := c.AddPeer(ctx, liar, true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	verify := func() error {
		c.opMu.Lock()
		defer c.opMu.Unlock()
		return c.verifyRange(ctx, tip-1, tip)
	}
	err := verify()
	if !hungUp.Load() {
		t.Fatalf("the liar was not asked again from the last checkpoint (verification: %v)", err)
	}
	st := peerStatus(c, liar)
	t.Logf("first verification: %v; the liar: banned %v, %q", err, st.Banned, st.Reason)
	if st.Banned {
		t.Fatalf("the liar was banned for hanging up, without proof: %s", st.Reason)
	}
	if !strings.Contains(st.Reason, "no proof") || !strings.Contains(st.Reason, "once in a row") {
		t.Errorf("the liar's reason %q does not say why no proof exists, nor count it", st.Reason)
	}
	if err := c.AddPeer(ctx, liar, true); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	err = verify()
	st = peerStatus(c, liar)
	t.Logf("second verification: %v; the liar: banned %v, %q", err, st.Banned, st.Reason)
	if !st.Banned || !strings.Contains(st.Reason, "where it stated") {
		t.Errorf("the liar, back and stating hashes that do not lead to its word, is not banned on that proof: banned %v, %q", st.Banned, st.Reason)
	}
	for _, a := range honest {
		if s := peerStatus(c, a); s.Banned {
			t.Errorf("honest peer %s banned: %s", a, s.Reason)
		}
	}
}
