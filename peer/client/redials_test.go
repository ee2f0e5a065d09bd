package client

import (
	"strings"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestIdleFloodBannedAndRedialsBounded: the service runs with no request
// in flight. A peer floods inv messages: its connection ends for the
// flood, and it is banned, named with the flood, and not dialled again.
// Another peer hangs up 50 ms after each handshake: it is not banned
// (hanging up proves nothing) but redialled with a backoff, not four
// times a second. The figures are logged.
func TestIdleFloodBannedAndRedialsBounded(t *testing.T) {
	needFixture(t)
	honest := honestPeers(t, 1)[0]
	inv := peertest.NewFlooder(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.Flood{Kind: peertest.FloodInv, Interval: 20 * time.Millisecond})
	hang := peertest.NewFlooder(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.Flood{Kind: peertest.HangUp, Delay: 50 * time.Millisecond})
	c := connect(t, 5*time.Second, honest, inv.Addr, hang.Addr)
	startService(t, c)
	const watch = 4 * time.Second
	time.Sleep(watch)
	st := peerStatus(c, inv.Addr)
	t.Logf("in %v: the flooder made %d connections (%+v); the peer hanging up made %d (%+v)",
		watch, inv.Connections(), st, hang.Connections(), peerStatus(c, hang.Addr))
	if !st.Banned || !strings.Contains(st.Reason, inv.Addr) || !strings.Contains(st.Reason, "flood") || inv.Connections() > 2 {
		t.Errorf("the flooder: %+v after %d connections; want it banned for the flood, named", st, inv.Connections())
	}
	if st := peerStatus(c, hang.Addr); st.Banned {
		t.Errorf("the peer hanging up was banned: %+v", st)
	}
	// With the backoff, 0.5 s then doubling: at most 5 in 4 s, and the
	// first connection.
	if n := hang.Connections(); n > 6 {
		t.Errorf("the peer hanging up was dialled %d times in %v", n, watch)
	}
}
