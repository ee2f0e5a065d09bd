package client

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestDisputeHonestHangsUpNotStruck: a liar whose filters hide alice's
// payment at height 102 (its filter headers consistent with them), and
// the honest node behind a relay an attacker controls, which hangs up
// 50 ms after each of the node's answers of a kind: the filter headers
// the liar's disagree with (cfheaders), or the filters (cfilter). With
// failures in a row before (the attacker's earlier hang-ups), its next
// dial is then far off and the pool no longer lists it, mid-scan. The
// honest peer must never be banned or carry a lie for it; the scan must
// either find alice's payment (the liar caught) or say its result rests
// on the liar alone.
func TestDisputeHonestHangsUpNotStruck(t *testing.T) {
	needFixture(t)
	for _, tt := range []struct {
		name   string
		cmd    string // the honest node's answer the relay hangs up after
		before int    // ends pushed before the scan (see pushBackoff)
	}{
		{"cfheaders, no failure before", "cfheaders", 0},
		{"cfheaders, five failures before", "cfheaders", 5},
		{"cfilter, five failures before", "cfilter", 5},
		// Its end found by the filter-header verification's readying
		// (see verify.go), which leaves it out of the cross-check.
		{"cfcheckpt, five failures before", "cfcheckpt", 5},
		{"headers, five failures before", "headers", 5},
	} {
		t.Run(tt.name, func(t *testing.T) {
			honest, r := startModeRelay(t, fx.node.P2PAddr, "block")
			lie := peertest.ForgeFilter(t, fx.node, 102, peertest.EmptyFilter)
			liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, lie).Addr
			c := connectWith(t, Config{Peers: []string{honest, liar}, Params: fx.node.Params, Timeout: 10 * time.Second, FilterCacheBytes: -1, Log: testLog{t, time.Now()}})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if tt.before > 0 {
				next := int32(1)
				pushBackoff(ctx, t, c, honest, r, tt.before, &next)
			}
			served := r.served.Load()
			r.cmd.Store(tt.cmd)
			r.mode.Store(relayHangUp)
			res, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: fx.tip})
			r.mode.Store(relayPlain)
			m, lm := clientMember(t, c, honest), clientMember(t, c, liar)
			st, lst := c.pool.Status(m), c.pool.Status(lm)
			hung := r.served.Load() - served
			if err != nil {
				t.Logf("the scan failed: %v", err)
			}
			found := false
			var warnings []string
			if res != nil {
				found = slices.ContainsFunc(res.Matches, func(x Match) bool { return x.Txid == fx.fundAlice.TxHash() })
				warnings = res.Warnings
			}
			t.Logf("%d of the honest node's answers passed before a hang-up (counted until each close); alice's payment found %v; honest live %v banned %v reason %q; liar banned %v reason %q; warnings %q",
				hung, found, st.Live, st.Banned, st.Reason, lst.Banned, lst.Reason, warnings)
			if hung == 0 { // no hang-up
				t.Fatal("the honest node never hung up: the attack did not run")
			}
			if st.Banned || isLie(st.Err) {
				t.Errorf("the honest peer, its connections ended by an attacker, was charged with a lie: %+v", st)
			}
			if err == nil && !found && !hasKind(warnings, WarningOnePeer, liar) && !hasKind(warnings, WarningNotCrossChecked, liar) {
				t.Errorf("alice's payment missing and no warning says the result rests on %s alone: %q", liar, warnings)
			}
		})
	}
}
