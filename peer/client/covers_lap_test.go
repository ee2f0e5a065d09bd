package client

import (
	"context"
	"errors"
	"maps"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/cover"
)

// TestLapLeavesNoBlockUnasked: scans short of covers of a class the
// range holds none of, repeated until the sweep has lapped the range
// (RangeExplored), ask, over all of them, for every block of the range.
// The round that asks for the wallet's blocks once leaves out the other
// blocks of a chain none of whose blocks was asked before unless it
// sweeps one as full as its fullest (dropUnfound): left behind the
// sweep for good, once it has lapped the blocks never asked would be
// exactly those, the wallet's, for a peer that keeps every session (or
// colluding peers) to point at. The wallet's chain here is two
// scripts, one in a block of its own at each of ten heights and both in
// one more (the fullest), so that a round sweeps blocks of it without
// the fullest; no ledger is kept, so that each scan asks for the
// wallet's blocks once (as the first of a run would). It fails where,
// after the lap, a block of the range was never asked; and, so as to be
// able to fail, where no scan left out a block of the wallet's that its
// sweep reached (then nothing was tested).
func TestLapLeavesNoBlockUnasked(t *testing.T) {
	const (
		from, to = 100, 299
		target   = 0.25
		maxScans = 20
		fullAt   = 205
	)
	w1, _ := p2wpkhSpend(1)
	w2, _ := p2wpkhSpend(2)
	var oneAt []int32
	for h := int32(111); h < to; h += 19 {
		oneAt = append(oneAt, h)
	}
	w1At := slices.Sorted(slices.Values(append(slices.Clone(oneAt), fullAt)))
	// The chain holds blocks below from too: the covers' margin
	// (rangeMargin) is of the range swept.
	ec := newExploredChain(max(from-maxCoverMargin, 0), to, 24, w1, w1At, map[string][]int32{string(w2): {fullAt}}, nil)
	set, _, err := cover.Open(t.TempDir(), &chaincfg.RegressionNetParams)
	if err != nil {
		t.Fatal(err)
	}
	c := &Client{covers: set}
	wallet := map[int32]bool{fullAt: true}
	for _, h := range oneAt {
		wallet[h] = true
	}
	asked := map[int32]bool{}
	leftOut := 0      // wallet's blocks a scan's sweep reached and did not ask
	lo := int32(from) // the first height of the range swept
	for scan := 1; ; scan++ {
		if scan > maxScans {
			t.Fatalf("%d scans short never reached RangeExplored (%d blocks of %d asked)", maxScans, len(asked), to-lo+1)
		}
		cs, err := c.startCovers([][]byte{w1, w2}, from, to)
		if err != nil {
			t.Fatal(err)
		}
		lo = cs.from
		now := map[int32]bool{}
		cs.hashOf = func(h int32) chainhash.Hash { return chainhash.Hash{byte(h), byte(h >> 8), 0xdd} }
		cs.blocksAt = func(hs []int32) []*wire.MsgBlock {
			for _, h := range hs {
				now[h] = true
			}
			return ec.at(hs)
		}
		cs.seen = ec.heldSeen(set, cs.hashOf)
		cs.hot = 16
		cs.walletHeights = [][]int32{w1At, {fullAt}}
		cs.reprofileWallet()
		cs.walletAt = maps.Clone(wallet)
		cs.target = target
		order, place := cs.sweep()
		_, err = cs.planProfiled(context.Background(), nil, nil)
		var e *PrivacyTargetError
		if !errors.As(err, &e) {
			t.Fatalf("scan %d: %v, want a *PrivacyTargetError", scan, err)
		}
		// The sweep's reach this scan: the heights of its order up to
		// the place it stopped at.
		if cs.swept != nil {
			end := slices.Index(place, *cs.swept)
			for _, h := range order[:end+1] {
				if wallet[h] && !now[h] {
					leftOut++
				}
			}
		}
		fresh, freshWallet := 0, 0 // blocks asked for the first time
		for h := range now {
			if !asked[h] {
				fresh++
				if wallet[h] {
					freshWallet++
				}
			}
		}
		t.Logf("scan %d: %d blocks asked, %d for the first time (%d of them the wallet's; %d of the range's %d in all), RangeExplored %v", scan, len(now), fresh, freshWallet, len(asked)+fresh, to-lo+1, e.RangeExplored)
		for h := range now {
			asked[h] = true
		}
		if e.RangeExplored {
			break
		}
	}
	var never, neverWallet []int32
	for h := lo; h <= to; h++ {
		if !asked[h] {
			never = append(never, h)
			if wallet[h] {
				neverWallet = append(neverWallet, h)
			}
		}
	}
	t.Logf("after the lap: %d blocks never asked (%d of them the wallet's: %v); %d of the wallet's blocks left out by a scan whose sweep reached them", len(never), len(neverWallet), neverWallet, leftOut)
	if len(never) > 0 {
		t.Errorf("after the sweep lapped, %d blocks were never asked, %d of them the wallet's (%v): a peer that keeps every session points at them", len(never), len(neverWallet), neverWallet)
	}
	if leftOut == 0 {
		t.Errorf("no scan left out a block of the wallet's its sweep reached: nothing tested")
	}
}
