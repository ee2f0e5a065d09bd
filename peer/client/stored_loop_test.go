package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestStoredCheckpointAboveConflictEnds: a data directory written by a
// scan that rested on a liar alone holds the liar's filter headers from
// height 102 (alice's payment hidden) up past the first checkpoint. The
// client also remembers an undecided conflict at 102, as it does when
// that liar disputes the height with an honest peer, the block cannot
// decide, and the liar then drops its connection before the verification
// drops the stored headers resting on the conflict: the scan's next
// attempt runs with the honest peer alone, whose checkpoint at 1000
// differs from the stored one while the stored headers below the
// conflict agree. The verification must end (it used to ask the honest
// peer for the same segment again without end), and the scan must find
// the payment.
func TestStoredCheckpointAboveConflictEnds(t *testing.T) {
	needFixture(t)
	hFund := fx.height[fx.fundAlice.TxHash()]
	lie := peertest.Forge(t, fx.node, hFund, func(h int32, _ *wire.MsgBlock) bool { return h == hFund }, peertest.EmptyFilter)
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, lie).Addr
	dir := t.TempDir()
	if res, err := scanDir(t, dir, -1, liar); err != nil || hasMatch(res, fx.fundAlice.TxHash()) || res.To < 1000 {
		t.Fatalf("the liar alone: %v; it must hide the payment and the store reach the first checkpoint", err)
	}
	ctx := context.Background()
	c, err := Connect(ctx, Config{Peers: honestPeers(t, 1), Params: fx.node.Params, DataDir: dir, ConnectOnly: true, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	if tip := c.st.FilterHeaderTip(); tip < 1000 {
		t.Fatalf("the store holds filter headers to %d, want past 1000", tip)
	}
	hash := blockHashAt(t, hFund)
	honest, err := fx.node.RPC().GetCFilter(&hash, wire.GCSFilterRegular)
	if err != nil {
		t.Fatal(err)
	}
	stated := []chainhash.Hash{chainhash.DoubleHashH(peertest.EmptyFilter(nil)), chainhash.DoubleHashH(honest.Data)}
	if _, err := c.conflicts.add(hFund, hash, [][]string{{liar}, {"the honest peer"}}, stated, "undecided"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	res, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: -1})
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("the scan did not end in 60 s: the stored checkpoint above the conflict is compared again and again (%v)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !hasMatch(res, fx.fundAlice.TxHash()) {
		t.Errorf("alice's payment at %d is missing: conflicts %+v, warnings %q", hFund, res.Conflicts, res.Warnings)
	}
}
