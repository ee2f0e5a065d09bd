package client

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestBIP37OmittedMatchIsWarned: the peer a BIP 37 scan filters at
// answers for the block paying alice a valid merkle block proving no
// transaction (and holds back the payment), while an honest peer serving
// compact filters is connected too. BIP 37 cannot tell: the payment is
// missing from the result (and so is its spend, whose outpoint the
// filter never learnt), nobody is banned, and the result says it rests
// on that one peer, naming it, as ScanBIP37 documents. (It holds by that
// contract: the client does not check a BIP 37 result against the
// compact filters it could get from the other peer.)
func TestBIP37OmittedMatchIsWarned(t *testing.T) {
	needFixture(t)
	h := fx.height[fx.fundAlice.TxHash()]
	hash, err := fx.node.RPC().GetBlockHash(int64(h))
	if err != nil {
		t.Fatal(err)
	}
	block, err := fx.node.RPC().GetBlock(hash)
	if err != nil {
		t.Fatal(err)
	}
	omitted, _ := bip37.NewMerkleBlockFromTxids(block, nil)
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		switch m := m.(type) {
		case *wire.MsgMerkleBlock:
			if m.Header.BlockHash() == *hash {
				return []wire.Message{omitted}, false
			}
		case *wire.MsgTx:
			if m.TxHash() == fx.fundAlice.TxHash() {
				return nil, false
			}
		}
		return []wire.Message{m}, false
	})
	honest := honestPeers(t, 1)[0]
	c := connect(t, 10*time.Second, liar.Addr, honest)
	for try := 0; ; try++ {
		res, err := c.ScanBIP37(context.Background(), ScanRequest{Watch: items(fx.watch), From: 0, To: h + 5},
			BIP37Options{FPRate: 0.0001, Flags: wire.BloomUpdateAll, Tweak: &testTweak})
		if err != nil {
			t.Fatal(err)
		}
		if res.FilteringPeer != liar.Addr {
			if try == 20 {
				t.Fatalf("the scan filtered at %s 20 times, never at the liar", res.FilteringPeer)
			}
			continue
		}
		for _, m := range res.Matches {
			if m.Txid == fx.fundAlice.TxHash() {
				t.Fatalf("the omitted payment was found: the test proves nothing")
			}
		}
		warned := false
		for _, w := range res.Warnings {
			warned = warned || strings.Contains(w, "rests on one peer, "+liar.Addr)
		}
		if !warned {
			t.Errorf("the result misses alice's payment, left out by %s, and does not say it rests on that peer: warnings %q", liar.Addr, res.Warnings)
		}
		t.Logf("filtered at the liar after %d scans at the honest peer; warnings %q", try, res.Warnings)
		break
	}
	for _, st := range c.Peers() {
		if st.Banned {
			t.Errorf("peer %s banned: %s", st.Address, st.Reason)
		}
	}
}
