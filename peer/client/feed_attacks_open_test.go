//go:build openattacks

package client

import (
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// Open attacks on the scan's filter feed: these fail until it is fixed.

// TestFeedAttackLieThenTruthBanned is TestFeedAttackLieThenTruthScanCorrect
// asking for the ban: the liar's empty filter reached the client intact
// (the proxy sends it with its own, valid checksum), so it is a lie, not
// damage on the way; but a fed filter's checksum is never checked, and
// the filter asked again is the true one, so the client takes it for
// damage and the liar, never banned, can make every scan download the
// segment twice and ask its filter hashes besides.
func TestFeedAttackLieThenTruthBanned(t *testing.T) {
	needFixture(t)
	o := &onceWrong{target: blockHashAt(t, fx.height[fx.fundAlice.TxHash()])}
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, o.lie)
	c := connect(t, 0, l.Addr)
	res, err := scan(t, c, "bip157", 0, c.Chain().Height())
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	if st := peerStatus(c, l.Addr); !st.Banned || !strings.Contains(st.Reason, "checkpoint") {
		t.Errorf("the liar that served an intact false filter is not banned: %+v", st)
	}
}

// TestFeedAttackHangUpOnRecheckBanned is TestFeedAttackHangUpOnRecheck
// asking for the ban: the liar's empty filters reached the client intact,
// a lie; but the client, which never checked their checksums, asks one
// again to tell damage from a lie, and a liar that hangs up then is only
// dropped (a connection lost proves nothing), free to come back and do it
// again each time it is dialled.
func TestFeedAttackHangUpOnRecheckBanned(t *testing.T) {
	needFixture(t)
	for attempt := 0; attempt < 8; attempt++ {
		liar := hangUpOnRecheck(t)
		honest := slowFirstFilter(t)
		c := connect(t, 0, liar.Addr, honest.Addr)
		res, err := scan(t, c, "bip157", 0, c.Chain().Height())
		if err != nil {
			t.Fatal(err)
		}
		checkMatches(t, res, fx.want)
		if _, cf := cfRequests(t, liar, c); !servedFed(cf) {
			continue
		}
		if st := peerStatus(c, liar.Addr); !st.Banned {
			t.Errorf("the liar that served intact false filters is not banned: %+v", st)
		}
		return
	}
	t.Fatal("the liar served no fed filter to eight clients")
}
