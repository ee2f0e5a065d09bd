package client

import (
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// memberAt returns a member at addr, of a pool of its own.
func memberAt(t *testing.T, addr string) *pool.Member {
	t.Helper()
	p, _, err := pool.New(pool.Config{Params: &chaincfg.RegressionNetParams, Peers: []string{addr}, ConnectOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p.Members()[0]
}

// TestStrikesOutliveTheMember: a peer struck once for not serving the
// filter it stated in a dispute, then gone from the pool (forgotten, as
// a member found by discovery that failed too often), comes back under
// the same address as a new member with its strike: the next is its
// second in a row (maxDisputeStrikes, a ban without proof), not its
// first. Another address starts clean; a strike forgotten by serving
// stays forgotten; the strikes kept stay within maxStruck.
func TestStrikesOutliveTheMember(t *testing.T) {
	var pv peerViews
	liar := memberAt(t, "127.0.0.1:18444")
	if got := pv.strike(liar, true); got != 1 {
		t.Fatalf("first strike %d, want 1", got)
	}
	pv.keep(nil) // gone from the pool
	again := memberAt(t, "127.0.0.1:18444")
	if got := pv.strike(again, true); got != maxDisputeStrikes {
		t.Errorf("the peer found again under its address: strike %d, want %d (its record kept)", got, maxDisputeStrikes)
	}
	other := memberAt(t, "127.0.0.1:18445")
	if got := pv.strike(other, true); got != 1 {
		t.Errorf("another address: strike %d, want 1", got)
	}
	pv.strike(other, false) // served
	pv.keep(nil)
	if got := pv.strike(memberAt(t, "127.0.0.1:18445"), true); got != 1 {
		t.Errorf("a peer that served before it went: strike %d, want 1", got)
	}
	var many peerViews
	many.m = map[*pool.Member]*view{}
	for i := range maxStruck + 5 {
		many.keepStrikes(string(rune('a'+i%26))+string(rune(i)), struck{n: 1})
	}
	if len(many.struck) > maxStruck {
		t.Errorf("%d addresses' strikes kept, want at most %d", len(many.struck), maxStruck)
	}
}
