package client

import (
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// delayed returns a Liar behaviour that forwards every message honestly,
// holding those of the commands cmds for d first: an honest node on a
// slow link.
func delayed(d time.Duration, cmds ...string) peertest.LieFunc {
	slow := map[string]bool{}
	for _, c := range cmds {
		slow[c] = true
	}
	return func(m wire.Message) ([]wire.Message, bool) {
		if slow[m.Command()] {
			time.Sleep(d)
		}
		return []wire.Message{m}, false
	}
}

// TestFastLiarBuysNoTrust: a liar that hides alice's payment behind an
// empty filter with a coherent header chain answers at once; the only
// honest peer holds every filter header answer for 3 s. Being fast buys
// the liar nothing. As the only other voice, the honest peer has a
// budget over the scan of the hold at least (a quarter of the timeout,
// see pool.Each), not the second a peer beside two others has: within it
// (the default timeout) it is compared and the liar caught with the
// block's proof. Past it (a timeout of 8 s: a hold of 2 s) the honest
// peer is left out as too slow, and the result says it rests on the liar
// alone.
func TestFastLiarBuysNoTrust(t *testing.T) {
	needFixture(t)
	const delay = 3 * time.Second
	h := fx.height[fx.fundAlice.TxHash()]
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		caught  bool
	}{
		{"within the hold", 0, true},
		{"past the hold", 8 * time.Second, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, h, peertest.EmptyFilter))
			honest := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, delayed(delay, wire.CmdCFCheckpt, wire.CmdCFHeaders))
			c := connect(t, tt.timeout, liar.Addr, honest.Addr)
			start := time.Now()
			res, err := bip157(t, c)
			if err != nil {
				t.Fatal(err)
			}
			lst, hst := status(t, res, liar.Addr), status(t, res, honest.Addr)
			t.Logf("scan took %v; liar banned %v (%s); honest %q; warnings %q", time.Since(start).Round(time.Millisecond), lst.Banned, lst.Reason, hst.Reason, res.Warnings)
			if tt.caught {
				checkMatches(t, res, fx.want)
				if !lst.Banned {
					t.Errorf("liar not banned: %+v", lst)
				}
				if hst.Banned || hst.Reason != "" {
					t.Errorf("honest peer left out: %+v", hst)
				}
				return
			}
			if lst.Banned {
				return // caught after all: nothing rests on it
			}
			if !hasWarning(res.Warnings, "rest on one peer", liar.Addr) && !hasWarning(res.Warnings, "rests on one peer", liar.Addr) {
				t.Errorf("the result rests on the liar %s alone but does not say so: warnings %q", liar.Addr, res.Warnings)
			}
			if !hasWarning(res.Warnings, honest.Addr, "too slow") {
				t.Errorf("warnings %q do not name the honest peer left out as too slow", res.Warnings)
			}
		})
	}
}
