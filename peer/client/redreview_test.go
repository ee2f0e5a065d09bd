//go:build openattacks

package client

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// An open attack on the records kept by address (unservedScores,
// peerViews.struck): they are keyed by host:port, while a ban is kept by
// host (banlist: the port is dropped but for a loopback address). One
// host that answers on many ports, each a fresh address the book may
// learn by gossip, starts each port with a clean score and a clean
// strike count, so it announces and does not serve, or fails disputes,
// without bound and is never banned, though the ban its conduct would
// earn covers every one of its ports. The addresses below are
// documentation addresses (RFC 5737), used as keys only: nothing is
// dialled.

// rotatingHost is the host of the attacks below; ports are its ports.
const rotatingHost = "192.0.2.7"

// TestUnservedScoreEscapedByPortRotation: one host announces, from each
// of its ports in turn, maxUndelivered-1 blocks it does not serve, all
// within one minute. The score of the host's conduct passes
// maxUndelivered after its second port; the score kept by host:port
// never reaches it.
//
// Measured on main: 10 ports, 190 unserved blocks in a minute from one
// host, no ban (each port's score 19).
func TestUnservedScoreEscapedByPortRotation(t *testing.T) {
	const ports = 10
	var u unservedScores
	now := time.Unix(1_700_000_000, 0)
	total, banned := 0, -1
	for i := range ports {
		addr := net.JoinHostPort(rotatingHost, strconv.Itoa(8333+i))
		score := u.add(addr, maxUndelivered-1, now)
		total += maxUndelivered - 1
		if score >= maxUndelivered && banned < 0 {
			banned = total
		}
		now = now.Add(5 * time.Second)
	}
	t.Logf("one host, %d ports: %d blocks announced and not served in %v; first ban after %d (-1: none)", ports, total, time.Duration(ports)*5*time.Second, banned)
	if banned < 0 || banned > 2*maxUndelivered {
		t.Errorf("one host left %d announced blocks unserved from %d ports without a ban, want a ban by %d: the score is kept by host:port, the ban by host",
			total, ports, 2*maxUndelivered)
	}
}

// TestStrikesEscapedByPortRotation: one host fails to serve the filter it
// stated in a dispute from one port, leaves, and comes back under
// another port of the same host: its strike is kept under the first
// port only, so the next failure is a first strike again, and the host
// fails maxDisputeStrikes times and more without a ban.
//
// Measured on main: 6 dispute failures from one host over 6 ports, each
// a first strike, no ban.
func TestStrikesEscapedByPortRotation(t *testing.T) {
	const ports = 6
	var pv peerViews
	worst := 0
	for i := range ports {
		m := memberAt(t, net.JoinHostPort(rotatingHost, strconv.Itoa(8333+i)))
		worst = max(worst, pv.strike(m, true))
		pv.keep(nil) // gone from the pool, found again under another port
	}
	t.Logf("one host, %d dispute failures over %d ports: highest strike count %d (ban at %d)", ports, ports, worst, maxDisputeStrikes)
	if worst < maxDisputeStrikes {
		t.Errorf("one host failed %d disputes from %d ports and never reached %d strikes: strikes are kept by host:port, the ban by host",
			ports, ports, maxDisputeStrikes)
	}
}

// TestRacedHonestAnnouncerBanned: an open attack on the unserved score,
// by a miner racing honest blocks (regtest: hash power is free). The
// client's two peers are honest (a node, and an honest relay in front of
// it). Each round, a block is mined and the node announces it; before
// the client syncs the node, a branch of two blocks from the block below
// replaces it (the honest node reorganized, as a race lost to a miner
// who releases a longer branch at once makes it). The node cannot serve
// the block it announced, the client never held it (no reorganization
// for the client: the branch extends its chain), so each honest peer is
// charged one unserved block a race. An honest node is banned without
// proof after maxUndelivered such races within the score's half-life.
//
// Measured on main (2 runs): both honest peers banned without proof
// ("announced 20 blocks it then did not serve") after 21 races, in about
// 28 s, the client left with no peer in use.
func TestRacedHonestAnnouncerBanned(t *testing.T) {
	const races = 26
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	relay := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c := connectTo(t, node, 10*time.Second, node.P2PAddr, relay.Addr)
	startService(t, c)
	time.Sleep(2 * time.Second)
	banned := func() []string {
		var out []string
		for _, p := range c.Peers() {
			if p.Banned {
				out = append(out, p.Address+": "+p.Reason)
			}
		}
		return out
	}
	race := 0
	for race = 1; race <= races && len(banned()) == 0; race++ {
		raced := node.Generate(t, 1)[0]
		if err := node.RPC().InvalidateBlock(raced); err != nil {
			t.Fatal(err)
		}
		tip := *node.Generate(t, 2)[1]
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, hash := c.Chain().Tip(); hash == tip {
				break
			}
			if len(banned()) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("race %d: the branch's tip %v not in the client's chain within 20 s", race, tip)
			}
		}
		time.Sleep(announceSettle)
	}
	got := banned()
	t.Logf("after %d race(s) lost by the honest node: banned %q", race-1, got)
	if len(got) > 0 {
		t.Errorf("honest peers banned without proof after %d races that replaced blocks they announced: %q", race-1, got)
	}
}
