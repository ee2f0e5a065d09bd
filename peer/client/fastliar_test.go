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

// TestFastLiarBuysNoTrust: liars that hide alice's payment behind an
// empty filter with a coherent header chain answer at once; the only
// honest peer holds every filter header answer for 3 s. Being fast, or
// many, buys the liars nothing: the honest peer has a budget over the
// scan of the hold at least (a quarter of the timeout, see pool.Each),
// however fast and many the others; within it (the default timeout) it
// is compared, and each liar is caught with the block's proof. Past it (a
// timeout of 8 s: a hold of 2 s) the honest peer is left out as too slow,
// named so, and the result says it was not cross-checked with it: it
// rests on the one liar alone, or on the two colluders left, named.
func TestFastLiarBuysNoTrust(t *testing.T) {
	needFixture(t)
	const delay = 3 * time.Second
	h := fx.height[fx.fundAlice.TxHash()]
	for _, tt := range []struct {
		name    string
		liars   int
		timeout time.Duration
		caught  bool
	}{
		{"within the hold", 1, 0, true},
		{"two colluders, within the hold", 2, 0, true},
		{"past the hold", 1, 8 * time.Second, false},
		{"two colluders, past the hold", 2, 8 * time.Second, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var liars []string
			for range tt.liars {
				liars = append(liars, peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, h, peertest.EmptyFilter)).Addr)
			}
			honest := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, delayed(delay, wire.CmdCFCheckpt, wire.CmdCFHeaders)).Addr
			c := connect(t, tt.timeout, append(liars, honest)...)
			start := time.Now()
			res, err := bip157(t, c)
			if err != nil {
				t.Fatal(err)
			}
			hst := status(t, res, honest)
			t.Logf("scan took %v; honest %q; warnings %q", time.Since(start).Round(time.Millisecond), hst.Reason, res.Warnings)
			if tt.caught {
				checkMatches(t, res, fx.want)
				for _, l := range liars {
					if st := status(t, res, l); !st.Banned {
						t.Errorf("liar %s not banned: %+v", l, st)
					}
				}
				if hst.Banned || hst.Reason != "" {
					t.Errorf("honest peer left out: %+v", hst)
				}
				return
			}
			for _, l := range liars {
				if status(t, res, l).Banned {
					return // caught after all: nothing rests on them
				}
			}
			if len(liars) == 1 && !hasKind(res.Warnings, WarningOnePeer, liars[0]) {
				t.Errorf("the result rests on the liar %s alone but does not say so: warnings %q", liars[0], res.Warnings)
			}
			if !hasKind(res.Warnings, WarningNotCrossChecked, append([]string{honest}, liars...)...) {
				t.Errorf("warnings %q do not say that the result was not cross-checked with the honest peer %s, and rests on the peers left %v", res.Warnings, honest, liars)
			}
			if !hasKind(res.Warnings, WarningSlowPeer, honest) {
				t.Errorf("warnings %q do not name the honest peer left out as too slow", res.Warnings)
			}
		})
	}
}
