package client

import (
	"context"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestFeedFatHashesDamagedRedialRefused is
// TestFeedFatHashesDamagedNotBanned where the first dial after the
// damage fails (the link refuses its second connection, as a loaded node
// may be slow to take one): the feed's request for the first segment's
// filter hashes is damaged on the way, which ends the connection, and the
// verification's own request for them must not be the dead connection's
// damage again. The peer must be dialled again (after its backoff) and
// asked again, the scan succeed and find every payment to alice, and the
// peer not be banned nor dropped; the segment's hashes are asked twice
// in all.
func TestFeedFatHashesDamagedRedialRefused(t *testing.T) {
	r, l, d := fatDamagedCFHeaders(t)
	rr := peertest.NewRefuser(t, d.Addr, 2)
	c := connectTo(t, r.node, time.Minute, rr.Addr)
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(r.alice.PkScript())}, From: 0, To: -1})
	hs, cf := cfRequests(t, l, c)
	st := peerStatus(c, rr.Addr)
	t.Logf("getcfheaders %v, getcfilters %v; banned %v (%s); error %v", hs, cf, st.Banned, st.Reason, err)
	if d.Damaged() == 0 {
		t.Fatal("no cfheaders passed the damaging link")
	}
	if !rr.Refused() {
		t.Fatal("the relay refused no dial: the redial after the damage was not tested")
	}
	if st.Banned {
		t.Fatalf("the peer behind the damaging link was banned: %s", st.Reason)
	}
	if err != nil {
		t.Fatal(err)
	}
	checkFound(t, res, alicePaid(t, r.node, r.alice, res.To))
	n := 0
	for _, q := range hs {
		if q == [2]int32{0, wire.CFCheckptInterval} {
			n++
		}
	}
	if n != 2 {
		t.Errorf("the first segment's filter hashes were asked %d times, want twice (damaged, then asked again)", n)
	}
}
