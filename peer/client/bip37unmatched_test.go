package client

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestBIP37UnmatchedTransactionsDropPeer: the peer a BIP 37 scan filters
// at proves every transaction of every block as matched (valid merkle
// proofs of real transactions), though the filter it was given matches
// almost none of them. The client holds the very filter it loaded
// (bip37Scan.local, with the node's update rule mirrored): a transaction
// it does not match is one the node made up as a match, not a false
// positive of the filter, and is not counted as one, so the node forces
// no fresh filter (each would tell it more of the watch list). The node
// is dropped, not banned (with BloomUpdateAll a node's filter also grows
// from mempool transactions the copy never saw), and the error names it.
func TestBIP37UnmatchedTransactionsDropPeer(t *testing.T) {
	needFixture(t)
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, matchEverything(t, fx.node))
	c := connect(t, 10*time.Second, liar.Addr)
	res, err := c.ScanBIP37(context.Background(), ScanRequest{Watch: items(fx.watch), From: 0, To: 600},
		BIP37Options{FPRate: 0.0001, Flags: wire.BloomUpdateAll, Tweak: &testTweak})
	if err == nil {
		t.Fatalf("the scan resting on a node sending transactions its filter does not match succeeded: %d fresh filters, warnings %q",
			res.FilterReloads, res.Warnings)
	}
	var se *BIP37ScanError
	if !errors.Is(err, ErrUnmatchedTxs) || !errors.As(err, &se) || !strings.Contains(err.Error(), liar.Addr) {
		t.Fatalf("the scan failed with %v, want ErrUnmatchedTxs naming %s", err, liar.Addr)
	}
	for _, p := range se.Peers {
		if p.Address == liar.Addr && len(p.Filters) != 1 {
			t.Errorf("the node was given %d filters of the watch list, want 1: %v", len(p.Filters), err)
		}
	}
	for _, st := range c.Peers() {
		if st.Address == liar.Addr && (st.Banned || !errors.Is(st.Err, ErrUnmatchedTxs)) {
			t.Errorf("the node's state %+v, want dropped (not banned) for ErrUnmatchedTxs", st)
		}
	}
}

// TestBIP37UnmatchedTransactionsScanGoesOn: beside the node of
// TestBIP37UnmatchedTransactionsDropPeer, an honest one. A scan that
// filters at the liar drops it, goes on at the honest node and finds
// every payment; its warnings name the liar, which was given one filter:
// it forced no fresh one.
// The first peer is drawn at random: scans are run until one draws the
// liar.
func TestBIP37UnmatchedTransactionsScanGoesOn(t *testing.T) {
	needFixture(t)
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, matchEverything(t, fx.node))
	c := connect(t, 10*time.Second, liar.Addr, fx.node.P2PAddr)
	for range 20 {
		res, err := c.ScanBIP37(context.Background(), ScanRequest{Watch: items(fx.watch), To: fx.tip},
			BIP37Options{FPRate: 0.0001, Flags: wire.BloomUpdateAll})
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(res.BIP37Peers, func(p BIP37Peer) bool { return p.Address == liar.Addr })
		if i < 0 {
			continue // filtered at the honest node alone
		}
		checkMatches(t, res, fx.want)
		// A fresh filter the liar forced would be loaded into the liar:
		// its one filter shows it forced none. (The honest node's own
		// false positives may call for one, as they would without it.)
		if p := res.BIP37Peers[i]; len(p.Filters) != 1 || !p.Abandoned {
			t.Errorf("the liar was given %d filters (abandoned %v); want 1, true", len(p.Filters), p.Abandoned)
		}
		if res.FilteringPeer != fx.node.P2PAddr || !hasWarning(res.Warnings, liar.Addr, "does not match") {
			t.Errorf("filtered at %s, warnings %q; want the honest node, and a warning naming the liar", res.FilteringPeer, res.Warnings)
		}
		return
	}
	t.Fatal("no scan of 20 filtered at the liar")
}
