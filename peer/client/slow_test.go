package client

import (
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// budgetFloor is the least budget of a slow peer over a scan (a second,
// as the package documentation says).
const budgetFloor = time.Second

// TestSlowPeerWithinBudget: beside two fast honest peers, a peer that
// holds every answer for 5 s, handshake included, with the default
// timeout (30 s), inside which each answer comes. It is waited for within
// a budget relative to the scan's own time (see pool.Budget), then left
// out of the scan with a warning naming it and its answer time; the two
// fast peers still compare each other's answers (with one only, the slow
// peer would be waited for: TestFastLiarBuysNoTrust). The scan takes at
// most three times a clean one, but for the budget's floor, which spares
// a peer a short stall while a scan has only begun (this scan is far
// shorter than the floor), and an allowance for scheduling. The figures
// are logged.
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
	if took > 3*clean+budgetFloor+scheduling {
		t.Errorf("the scan took %v, over three times the clean scan's %v, the budget's floor %v and %v of scheduling", took, clean, budgetFloor, scheduling)
	}
	if !hasWarning(res.Warnings, slow.Addr, "too slow", "its budget") {
		t.Errorf("warnings %q: want the slow peer named, left out for its budget", res.Warnings)
	}
	if hasWarning(res.Warnings, "one peer") {
		t.Errorf("warnings %q: the two fast peers were compared", res.Warnings)
	}
}
