package client

import (
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// hold is the least budget of a slow peer over an operation: a quarter
// of the default timeout (see pool.Each).
const hold = 30 * time.Second / 4

// TestSlowPeerWithinBudget: beside two fast honest peers, a peer that
// holds every answer for 5 s, handshake included, with the default
// timeout (30 s), inside which each answer comes. It is waited for within
// its budget, the hold at least (however fast and many the others: they
// could be colluding liars), in the connect and in the scan, each an
// operation of its own; then it is left out of the scan with a warning
// naming it and its answer time, and the two fast peers still compare
// each other's answers. The scan takes at most three times a clean one
// and the hold of each operation (the clean scan is far shorter than
// the hold), and an allowance for scheduling. The figures are logged.
func TestSlowPeerWithinBudget(t *testing.T) {
	needFixture(t)
	const delay = 5 * time.Second
	honest := honestPeers(t, 2)
	measure := func(peers ...string) (time.Duration, *ScanResult) {
		t.Helper()
		return timedScan(t, Config{Peers: peers, Params: fx.node.Params, ConnectOnly: true})
	}
	measure(honest...) // warm the node's caches
	clean, _ := measure(append(honestPeers(t, 1), honestPeers(t, 1)...)...)
	slow := peertest.NewFlooder(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.Flood{Kind: peertest.SlowAnswers, Delay: delay})
	took, res := measure(honest[0], honest[1], slow.Addr)
	st := status(t, res, slow.Addr)
	t.Logf("scan: %v beside a peer %v late on every answer, against %v with two fast peers (%.1fx); the slow peer: %q; warnings %q",
		took.Round(time.Millisecond), delay, clean.Round(time.Millisecond), float64(took)/float64(clean), st.Reason, res.Warnings)
	// As in TestSilentBookAddressesBounded, the handshakes' own
	// scheduling on a loaded machine gets an allowance.
	const scheduling = 250 * time.Millisecond
	if limit := 3*clean + 2*hold + scheduling; took > limit {
		t.Errorf("the scan took %v, over three times the clean scan's %v, the hold of two operations (%v each) and %v of scheduling", took, clean, hold, scheduling)
	}
	if !hasKind(res.Warnings, WarningSlowPeer, slow.Addr, "its budget") {
		t.Errorf("warnings %q: want the slow peer named, left out for its budget", res.Warnings)
	}
	if hasKind(res.Warnings, WarningOnePeer) {
		t.Errorf("warnings %q: the two fast peers were compared", res.Warnings)
	}
}
