package client

import (
	"testing"
	"time"
)

// TestRacedHonestAnnouncerNotBanned: an attack on the unserved score,
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
// Before the announcer was asked for the blocks it announced (2 runs):
// both honest peers banned without proof ("announced 20 blocks it then
// did not serve") after 21 races, in about 28 s, the client left with no
// peer in use. Now, once its score reaches maxUndelivered, each block an
// announcer was charged for is asked of it, and served on a parent the
// chain holds: refunded, no ban in 26 races (see also
// unserved_races_test.go: slow, stale branches, no witness blocks).
func TestRacedHonestAnnouncerNotBanned(t *testing.T) {
	const races = 26
	node, _, c := followBesideRelay(t, nil)
	race := 0
	for race = 1; race <= races && len(bannedReasons(c)) == 0; race++ {
		raced := node.Generate(t, 1)[0]
		if err := node.RPC().InvalidateBlock(raced); err != nil {
			t.Fatal(err)
		}
		tip := *node.Generate(t, 2)[1]
		for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if _, hash := c.Chain().Tip(); hash == tip {
				break
			}
			if len(bannedReasons(c)) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("race %d: the branch's tip %v not in the client's chain within 20 s", race, tip)
			}
		}
		time.Sleep(announceSettle)
	}
	got := bannedReasons(c)
	t.Logf("after %d race(s) lost by the honest node: banned %q", race-1, got)
	if len(got) > 0 {
		t.Errorf("honest peers banned without proof after %d races that replaced blocks they announced: %q", race-1, got)
	}
}
