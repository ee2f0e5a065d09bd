package client

import (
	"context"
	"strings"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// cfRequests returns the getcfheaders and getcfilters requests l saw, as
// the height ranges they asked for (stop heights from the fixture's
// node).
func cfRequests(t *testing.T, l *peertest.Liar, c *Client) (cfheaders, cfilters [][2]int32) {
	t.Helper()
	for _, m := range l.Requests() {
		switch r := m.(type) {
		case *wire.MsgGetCFHeaders:
			stop, ok := c.Chain().HeightOf(r.StopHash)
			if !ok {
				t.Fatalf("getcfheaders up to an unknown block %v", r.StopHash)
			}
			cfheaders = append(cfheaders, [2]int32{int32(r.StartHeight), stop})
		case *wire.MsgGetCFilters:
			stop, ok := c.Chain().HeightOf(r.StopHash)
			if !ok {
				t.Fatalf("getcfilters up to an unknown block %v", r.StopHash)
			}
			cfilters = append(cfilters, [2]int32{int32(r.StartHeight), stop})
		}
	}
	return cfheaders, cfilters
}

// TestFedSegmentAsksNoFilterHeaders scans past the first checkpoint with
// one honest peer: the first segment (0..1000) is verified by its
// filters, so no getcfheaders asks for a height in it, each of its
// filters is asked once, and the scan finds what a scan whose headers
// are all asked finds (the same range without the checkpoint: a scan of
// heights above it).
func TestFedSegmentAsksNoFilterHeaders(t *testing.T) {
	needFixture(t)
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
	c := connect(t, 0, l.Addr)
	tip := c.Chain().Height()
	if tip <= wire.CFCheckptInterval {
		t.Fatalf("the fixture's chain (tip %d) does not pass the first checkpoint", tip)
	}
	res, err := scan(t, c, "bip157", 0, tip)
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	if res.FiltersReceived != int(tip)+1 {
		t.Errorf("%d filters received for heights 0..%d", res.FiltersReceived, tip)
	}
	cfheaders, cfilters := cfRequests(t, l, c)
	t.Logf("%d bytes received: getcfheaders %v, getcfilters %v", peerStatus(c, l.Addr).BytesReceived, cfheaders, cfilters)
	for _, r := range cfheaders {
		if r[0] <= wire.CFCheckptInterval {
			t.Errorf("getcfheaders %d..%d asks for the fed segment 0..%d", r[0], r[1], wire.CFCheckptInterval)
		}
	}
	asked := map[int32]int{}
	for _, r := range cfilters {
		for h := r[0]; h <= r[1]; h++ {
			asked[h]++
		}
	}
	for h := int32(0); h <= tip; h++ {
		if asked[h] != 1 {
			t.Errorf("the filter of height %d asked %d times, want once", h, asked[h])
		}
	}
}

// emptyFilters is a lie: every filter served empty (well formed, hiding
// every match), while the filter headers and checkpoints are the node's.
func emptyFilters(m wire.Message) ([]wire.Message, bool) {
	if cf, ok := m.(*wire.MsgCFilter); ok {
		cf.Data = []byte{0}
	}
	return []wire.Message{m}, false
}

// TestFedFilterLie has the only peer serve empty filters: those of the
// fed segment miss the checkpoint it sent itself, and the scan fails with
// the proof, naming it, and bans it.
func TestFedFilterLie(t *testing.T) {
	needFixture(t)
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, emptyFilters)
	c := connect(t, 0, l.Addr)
	res, err := scan(t, c, "bip157", 0, c.Chain().Height())
	if res != nil {
		t.Errorf("a result was returned with the error")
	}
	checkPeerError(t, err, l.Addr, peer.ErrBadFilter)
	if !strings.Contains(err.Error(), "checkpoint") {
		t.Errorf("error %q does not say the filters miss the checkpoint", err)
	}
	if st := peerStatus(c, l.Addr); !st.Banned || st.Reason == "" {
		t.Errorf("peer status after the lie: %+v", st)
	}
}

// scanBesideHonest scans the fixture's chain from height 0 with a client
// of the peers at addrs and honest, and returns the client: the scan must
// find every watched transaction, and honest must not be banned.
func scanBesideHonest(t *testing.T, honest *peertest.Liar, addrs ...string) *Client {
	t.Helper()
	c := connect(t, 0, append(addrs, honest.Addr)...)
	res, err := scan(t, c, "bip157", 0, c.Chain().Height())
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	if st := peerStatus(c, honest.Addr); st.Banned {
		t.Fatalf("the honest peer was banned: %+v", st)
	}
	return c
}

// TestFedFilterLiarBanned has a peer serve empty filters beside an
// honest one: each batch goes to whichever peer is free, so in each new
// client the liar serves some of them or none; a liar that served any is
// banned, the honest peer never, and every scan finds every watched
// transaction. A client whose liar served none is replaced by another.
func TestFedFilterLiarBanned(t *testing.T) {
	needFixture(t)
	for attempt := 0; attempt < 8; attempt++ {
		liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, emptyFilters)
		honest := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
		c := scanBesideHonest(t, honest, liar.Addr)
		if _, cfilters := cfRequests(t, liar, c); len(cfilters) == 0 {
			continue
		}
		if st := peerStatus(c, liar.Addr); !st.Banned || st.Reason == "" {
			t.Errorf("the liar served filters and is not banned: %+v", st)
		}
		return
	}
	t.Fatal("the liar served no filter to eight clients")
}

// TestCFHeadersOffCheckpoint has the only peer send filter hashes that do
// not reach the checkpoint it sent itself: a scan, which verifies the
// segment by its filters, never asks for them and finds every watched
// transaction; a filter looked up alone (GetCFilter: that of the
// checkpoint's height), whose segment's filter hashes are asked, fails
// with the proof, naming the peer, and bans it.
func TestCFHeadersOffCheckpoint(t *testing.T) {
	needFixture(t)
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if ch, ok := m.(*wire.MsgCFHeaders); ok && len(ch.FilterHashes) > 500 {
			ch.FilterHashes[500][0] ^= 1
		}
		return []wire.Message{m}, false
	})
	c := connect(t, 0, l.Addr)
	res, err := scan(t, c, "bip157", 0, c.Chain().Height())
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	c = connect(t, 0, l.Addr)
	_, err = c.GetCFilter(context.Background(), blockHashAt(t, wire.CFCheckptInterval))
	checkPeerError(t, err, l.Addr, peer.ErrBadFilterHeader)
	if st := peerStatus(c, l.Addr); !st.Banned || st.Reason == "" {
		t.Errorf("peer status after the lie: %+v", st)
	}
}

// TestPartSegmentNotFed scans from the middle of the first segment: the
// scan needs half its filters, so the segment's filter hashes are asked
// rather than all its filters, and no filter below the range is asked.
func TestPartSegmentNotFed(t *testing.T) {
	needFixture(t)
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
	c := connect(t, 0, l.Addr)
	const from = wire.CFCheckptInterval / 2
	if _, err := scan(t, c, "bip157", from, c.Chain().Height()); err != nil {
		t.Fatal(err)
	}
	cfheaders, cfilters := cfRequests(t, l, c)
	if len(cfheaders) == 0 || cfheaders[0] != [2]int32{0, wire.CFCheckptInterval} {
		t.Errorf("getcfheaders %v, want the first segment's first", cfheaders)
	}
	for _, r := range cfilters {
		if r[0] < from {
			t.Errorf("getcfilters %d..%d below the range's first height %d", r[0], r[1], from)
		}
	}
}
