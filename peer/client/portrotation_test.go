package client

import (
	"net"
	"strconv"
	"testing"
	"time"
)

// Attacks on the records kept of a peer's conduct (unservedScores,
// peerViews.struck): keyed by host:port, while a ban is kept by
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
// Before (scores by host:port): 10 ports, 190 unserved blocks in a
// minute from one host, no ban (each port's score 19). Now (by host):
// banned after 38, on the second port.
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
// Before (strikes by host:port): 6 dispute failures from one host over
// 6 ports, each a first strike, no ban. Now (by host): 6 strikes.
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
