package client

import (
	"bytes"
	"context"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
)

// Each test of this file poisons a data directory with a scan that rests
// on a liar alone, then opens it with honest peers.

// scanDir runs one BIP 157 scan of the fixture's watch list to To with a
// client on dir and peers, closed afterwards.
func scanDir(t *testing.T, dir string, to int32, peers ...string) (*ScanResult, error) {
	t.Helper()
	ctx := context.Background()
	c, err := Connect(ctx, Config{Peers: peers, Params: fx.node.Params, DataDir: dir, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: to})
}

// hasMatch reports whether res holds the transaction txid.
func hasMatch(res *ScanResult, txid chainhash.Hash) bool {
	return slices.ContainsFunc(res.Matches, func(m Match) bool { return m.Txid == txid })
}

// TestStoredSegmentComparedWithPeerBelowCheckpoint: a data directory
// written by a scan that rested on a liar alone holds a lie at height 102
// (alice's payment hidden behind an empty filter). It is opened with the
// liar and an honest node that is behind, at height 999: below the first
// checkpoint (1000), which only the liar states. The stored segment
// 0..1000 leads to that checkpoint, but the honest node's chain ends
// inside it, so the segment is not taken as it is: the honest node is
// compared at every height it holds, and the payment at 102 is found or
// the liar banned, as by the scan of the same two peers without the data
// directory (checked first). A scan that fails loudly would do too.
func TestStoredSegmentComparedWithPeerBelowCheckpoint(t *testing.T) {
	needFixture(t)
	hFund := fx.height[fx.fundAlice.TxHash()]
	liar, top, _ := aheadLiar(t, hFund)
	behind := needBehind(t)

	// Without a data directory the two peers are compared at 102.
	clean, err := scanDir(t, "", -1, liar, behind.P2PAddr)
	if err != nil {
		t.Fatal(err)
	}
	if !hasMatch(clean, fx.fundAlice.TxHash()) || !status(t, clean, liar).Banned {
		t.Fatalf("without a data directory: payment found %v, liar %+v", hasMatch(clean, fx.fundAlice.TxHash()), status(t, clean, liar))
	}

	dir := t.TempDir()
	poisoned, err := scanDir(t, dir, -1, liar)
	if err != nil {
		t.Fatal(err)
	}
	if poisoned.To != top || hasMatch(poisoned, fx.fundAlice.TxHash()) {
		t.Fatalf("the liar alone: scanned to %d, payment found %v: it did not lie", poisoned.To, hasMatch(poisoned, fx.fundAlice.TxHash()))
	}
	res, err := scanDir(t, dir, -1, liar, behind.P2PAddr)
	if err != nil {
		t.Logf("scan with the store failed loudly: %v", err)
		return
	}
	if !hasMatch(res, fx.fundAlice.TxHash()) && !status(t, res, liar).Banned {
		t.Errorf("alice's payment at height %d, which the honest node holds, is missing and the liar not banned: liar %+v, honest %+v, one-peer heights %+v, warnings %q",
			hFund, status(t, res, liar), status(t, res, behind.P2PAddr), res.OnePeer, res.Warnings)
	}
}

// TestGetCFilterComparesStoredHeader: a data directory written by a scan
// that rested on a liar alone holds the liar's filter header of alice's
// payment block. Opened with two honest peers that both hold the block,
// GetCFilter of that block trusts the stored header only once it is
// verified with them: it returns the true filter (or fails loudly), never
// the liar's.
func TestGetCFilterComparesStoredHeader(t *testing.T) {
	needFixture(t)
	hFund := fx.height[fx.fundAlice.TxHash()]
	liar, _, _ := aheadLiar(t, hFund)
	dir := t.TempDir()
	if res, err := scanDir(t, dir, -1, liar); err != nil || hasMatch(res, fx.fundAlice.TxHash()) {
		t.Fatalf("the liar alone: %v; it must hide the payment", err)
	}
	ctx := context.Background()
	c, err := Connect(ctx, Config{Peers: honestPeers(t, 2), Params: fx.node.Params, DataDir: dir, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	hash := blockHashAt(t, hFund)
	got, err := c.GetCFilter(ctx, hash)
	if err != nil {
		t.Logf("GetCFilter failed loudly: %v", err)
		return
	}
	want, err := fx.node.RPC().GetCFilter(&hash, wire.GCSFilterRegular)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Data) {
		t.Errorf("GetCFilter(block %d) with two honest peers returned %x, the liar's stored filter (the true one has %d bytes), with no error",
			hFund, got, len(want.Data))
	}
}

// TestPoisonedCacheEntryReplaced: a data directory written by a scan that
// rested on a liar alone holds the liar's filter of block 102 in its
// filter cache. The first scan with an honest peer repairs the filter
// headers, finds the cached filter false against them and downloads its
// batch again; the verified filter replaces the cached one, so a later
// scan of the repaired directory (the third is checked) downloads
// nothing. Every scan finds every payment.
func TestPoisonedCacheEntryReplaced(t *testing.T) {
	needFixture(t)
	hFund := fx.height[fx.fundAlice.TxHash()]
	liar, _, _ := aheadLiar(t, hFund)
	dir := t.TempDir()
	if res, err := scanDir(t, dir, fx.tip, liar); err != nil || hasMatch(res, fx.fundAlice.TxHash()) {
		t.Fatalf("the liar alone: %v; it must hide the payment", err)
	}
	honest := honestPeers(t, 1)[0]
	var received []int
	for i := 0; i < 3; i++ {
		res, err := scanDir(t, dir, fx.tip, honest)
		if err != nil {
			t.Fatal(err)
		}
		checkMatches(t, res, fx.want)
		received = append(received, res.FiltersReceived)
	}
	t.Logf("filters downloaded by three scans of the repaired data directory: %v", received)
	if received[2] != 0 {
		t.Errorf("the third scan downloaded %d filters again (scans: %v): want none once the liar's cached filter of block %d is replaced", received[2], received, hFund)
	}
}
