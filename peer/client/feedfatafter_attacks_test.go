package client

import (
	"context"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestFeedAttackFatLiarAfterFullSegment has the only peer of a chain of
// two fed segments serve filters of full blocks (about 20 KiB, 20 MiB a
// segment) consistent with its filter headers and checkpoints in the
// first segment, and a well-formed filter of nearly 256 KiB for every
// block of the second, off its own checkpoint: the scan must fail naming
// the false filter and ban the liar, having downloaded of it no more
// than the first segment's filters and fatLiarBound: the first
// segment's honest filters must not widen what the liar brings in
// unchecked after them (measured: 20.1 MiB, the first segment's 19.4 MiB
// and the false filter of height 1001, read against the second segment's
// filter hashes asked first; 59.1 MiB under a bound of twice the largest
// segment the scan proved, 39.7 MiB of false filters read before the
// bound cut them); unbounded, the second segment's false filters alone
// cost 250 MiB.
func TestFeedAttackFatLiarAfterFullSegment(t *testing.T) {
	r := newFedChain(t, 2003)
	filter, fat := fatFilter(t, 7_700), fatFilter(t, 96_000)
	forge := peertest.Forge(t, r.node, 1, func(int32, *wire.MsgBlock) bool { return true }, func(*wire.MsgBlock) []byte { return filter })
	second := map[chainhash.Hash]bool{}
	for h := int64(wire.CFCheckptInterval + 1); h <= 2*wire.CFCheckptInterval; h++ {
		hash, err := r.node.RPC().GetBlockHash(h)
		if err != nil {
			t.Fatal(err)
		}
		second[*hash] = true
	}
	l := peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		out, hangUp := forge(m)
		for _, o := range out {
			if cf, ok := o.(*wire.MsgCFilter); ok && second[cf.BlockHash] {
				cf.Data = fat
			}
		}
		return out, hangUp
	})
	c := connectTo(t, r.node, time.Minute, l.Addr)
	start := time.Now()
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(r.alice.PkScript())}, From: 0, To: -1})
	st := peerStatus(c, l.Addr)
	first := uint64(wire.CFCheckptInterval+1) * uint64(len(filter)+wire.MessageHeaderSize+36)
	bound := first + fatLiarBound
	hs, cf := cfRequests(t, l, c)
	t.Logf("%v: %.1f MiB from the liar (the first segment's filters %.1f MiB), bound %.1f MiB; getcfheaders %v, getcfilters %v; banned %v (%s)",
		time.Since(start).Round(time.Millisecond), mib(st.BytesReceived), mib(first), mib(bound), hs, cf, st.Banned, st.Reason)
	if res != nil || err == nil {
		t.Fatal("the scan of a liar serving fat filters in its second segment succeeded")
	}
	checkPeerError(t, err, l.Addr, peer.ErrBadFilter)
	if !st.Banned {
		t.Errorf("the liar is not banned: %+v", st)
	}
	if st.BytesReceived > bound {
		t.Errorf("the liar cost %.1f MiB of download, bound %.1f MiB", mib(st.BytesReceived), mib(bound))
	}
}
