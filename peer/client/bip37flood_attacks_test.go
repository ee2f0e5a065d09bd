package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestBIP37UnrequestedTxFloodIsCaught: the peer a BIP 37 scan filters at
// follows every merkle block with three copies of a transaction of no
// block asked for (valid, but unrequested). They are not taken for
// matches; past the peer's budget of unrequested data the flood is named
// (peer.ErrFlooding), the peer banned for it, and the scan does not
// return a result resting on it.
func TestBIP37UnrequestedTxFloodIsCaught(t *testing.T) {
	needFixture(t)
	extra := fx.late // mined above the heights scanned
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgMerkleBlock); ok {
			return []wire.Message{m, extra, extra, extra}, false
		}
		return []wire.Message{m}, false
	})
	c := connect(t, 10*time.Second, liar.Addr)
	start := time.Now()
	res, err := c.ScanBIP37(context.Background(), ScanRequest{Watch: items(fx.watch), From: 0, To: 600},
		BIP37Options{FPRate: 0.0001, Flags: wire.BloomUpdateAll, Tweak: &testTweak})
	took := time.Since(start)
	if err == nil {
		for _, m := range res.Matches {
			if m.Txid == extra.TxHash() {
				t.Errorf("the unrequested transaction was taken for a match at height %d", m.Height)
			}
		}
		t.Fatalf("the scan returned a result resting on the flooding peer (%d merkle blocks) after %v", res.MerkleBlocksReceived, took)
	}
	if !errors.Is(err, peer.ErrFlooding) {
		t.Errorf("the scan failed with %v, want the flood named (peer.ErrFlooding)", err)
	}
	st := peerStatus(c, liar.Addr)
	if !st.Banned {
		t.Errorf("the flooding peer is not banned: %+v", st)
	}
	t.Logf("failed after %v, %d bytes received: %v", took.Round(time.Millisecond), st.BytesReceived, err)
}
