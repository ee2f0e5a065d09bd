package client

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// TestHonestHungUpScanSaysOnePeer: an attacker who can end the honest
// node's connections (a relay in its path hangs up after block answers)
// pushes its next dial far off: six ends that did not last, the user
// dialling it again between them, the last end counted by a request
// (Pool.RedialDue refuses it: its next dial 16 s off). The pool no longer
// lists it (see pool's Member.serves), so a scan runs with a liar alone,
// whose filters hide alice's payment at height 102. The result must say
// it rests on that peer (a one-peer or not-cross-checked warning naming
// it), and the honest peer, never asked, must not be banned for it.
func TestHonestHungUpScanSaysOnePeer(t *testing.T) {
	needFixture(t)
	honest, r := startModeRelay(t, fx.node.P2PAddr, "block")
	lie := peertest.ForgeFilter(t, fx.node, 102, peertest.EmptyFilter)
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, lie).Addr
	c := connectWith(t, Config{Peers: []string{honest, liar}, Params: fx.node.Params, Timeout: 10 * time.Second, FilterCacheBytes: -1, Log: testLog{t, time.Now()}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	m, rerr := pushOut(ctx, t, c, honest, r)
	res, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: fx.tip})
	if err != nil {
		t.Fatalf("the scan: %v", err)
	}
	found := slices.ContainsFunc(res.Matches, func(x Match) bool { return x.Txid == fx.fundAlice.TxHash() })
	st := c.pool.Status(m)
	t.Logf("refused: %v; alice's payment found %v; %d matches; honest live %v banned %v; one-peer ranges %v; warnings %q",
		rerr, found, len(res.Matches), st.Live, st.Banned, res.OnePeer, res.Warnings)
	if st.Banned {
		t.Errorf("the honest peer, left out, was banned: %+v", st)
	}
	if !hasKind(res.Warnings, WarningOnePeer, liar) && !hasKind(res.Warnings, WarningNotCrossChecked, liar) {
		t.Errorf("warnings %q: none says the result rests on %s alone, the honest peer left out by its attacker-made ends", res.Warnings, liar)
	}
}

// pushOut has the relay r in front of c's peer at addr hang up after
// block answers until that peer's next dial is 16 s off (six ends that
// did not last, the user dialling it again between them), the last end
// counted by a request, which RedialDue refuses: the pool no longer lists
// the peer. It returns the peer's member and the refusal, and fails the
// test if the peer was dialled again or is still listed.
func pushOut(ctx context.Context, t *testing.T, c *Client, addr string, r *modeRelay) (*pool.Member, error) {
	t.Helper()
	next := int32(1)
	pushBackoff(ctx, t, c, addr, r, 5, &next)
	m := clientMember(t, c, addr)
	r.mode.Store(relayHangUp)
	hangUpOnce(ctx, t, c, addr, &r.served, &next)
	rerr := c.pool.RedialDue(ctx, m)
	r.mode.Store(relayPlain)
	if rerr == nil || slices.Contains(c.pool.Serving(0), m) || slices.Contains(c.pool.Serving(wire.SFNodeCF), m) {
		t.Fatalf("%s was dialled again or is still listed (%v): the attack did not run", addr, rerr)
	}
	return m, rerr
}
