package client

import (
	"testing"

	"github.com/btcsuite/btcd/chaincfg"
	"github.com/spvfilter/spvfilter/peer/cover"
	"github.com/spvfilter/spvfilter/privacy/leak"
)

// TestGroupEpochs: the scan after one that asked for the wallet's
// blocks once numbers its chains in a new, even epoch, and names the
// last odd one as the epoch of the chains found by then; a scan asking
// for them once starts an odd epoch past every group.
func TestGroupEpochs(t *testing.T) {
	for _, tc := range []struct {
		name      string
		groups    []uint64
		next      uint64
		once      uint64
		known     bool
		onceStart uint64 // nextGroup after startOnceEpoch
	}{
		{"none", nil, 1, 0, false, epochStart(1)},
		{"before epochs", []uint64{0, 3, 7}, 8, 0, false, epochStart(1)},
		{"after a scan asking once", []uint64{5, epochStart(1), epochStart(1) + 4}, epochStart(2), 1, true, epochStart(3)},
		{"a run on", []uint64{epochStart(1) + 4, epochStart(2) + 1}, epochStart(2) + 2, 1, true, epochStart(3)},
		{"a second run asked once", []uint64{epochStart(1), epochStart(2), epochStart(3) + 9}, epochStart(4), 3, true, epochStart(5)},
		{"its run on", []uint64{epochStart(3), epochStart(4) + 2}, epochStart(4) + 3, 3, true, epochStart(5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs := &coverScan{}
			cs.nextEpoch(tc.groups)
			if cs.nextGroup != tc.next || cs.onceEpoch != tc.once || cs.onceKnown != tc.known {
				t.Errorf("next group %#x, once epoch %d (%v); want %#x, %d (%v)", cs.nextGroup, cs.onceEpoch, cs.onceKnown, tc.next, tc.once, tc.known)
			}
			cs.startOnceEpoch()
			if cs.nextGroup != tc.onceStart {
				t.Errorf("asking once, next group %#x, want %#x", cs.nextGroup, tc.onceStart)
			}
			for _, g := range tc.groups {
				if g >= cs.nextGroup {
					t.Errorf("group %#x at or past the next %#x", g, cs.nextGroup)
				}
			}
		})
	}
}

// TestOnceTierFirst: the draw takes, of a shape, the chains found by
// the last scan that asked for the wallet's blocks once or before it
// (onceTier) before those found later, and takes those only where the
// first are too few; with no such scan known it prefers none.
func TestOnceTierFirst(t *testing.T) {
	set, _, err := cover.Open(t.TempDir(), &chaincfg.RegressionNetParams)
	if err != nil {
		t.Fatal(err)
	}
	d := &roundDraw{cs: &coverScan{set: set}, coverBy: map[string]cover.Cover{}}
	// Chains of two: 1 and 2 found before the epochs, 3 and 4 by a scan
	// asking once (epoch 1), 5 and 6 later (epoch 2).
	groups := []uint64{1, 2, epochStart(1), epochStart(1) + 1, epochStart(2), epochStart(2) + 1}
	shape := leak.Profile{Class: 2, Chain: 2}
	for i, g := range groups {
		for m := range 2 {
			s := []byte{0x00, 0x14, byte(i), byte(m), 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21}
			d.coverBy[string(s)] = cover.Cover{Script: s, Profile: cover.Profile{Group: g}}
			p := shape
			p.Group = i + 1
			d.cands = append(d.cands, leak.Profiled{Script: s, Profile: p})
		}
	}
	if tier := d.onceTier(); tier != nil {
		t.Fatalf("no scan asked once, yet %d scripts taken first", len(tier))
	}
	d.cs.nextEpoch(groups)
	tier := d.onceTier()
	if len(tier) != 8 {
		t.Fatalf("%d scripts taken first, want the 8 of the chains of epochs 0 and 1", len(tier))
	}
	for _, tc := range []struct {
		need, later int // chains needed, of them found later
	}{{2, 0}, {4, 0}, {5, 1}, {6, 2}} {
		got, _ := d.cs.drawPreferring(d.cands, map[leak.Profile]int{shape: tc.need}, tier)
		later := map[uint64]bool{}
		for _, c := range got {
			if g := d.coverBy[string(c.Script)].Profile.Group; groupEpoch(g) > 1 {
				later[g] = true
			}
		}
		if len(got) != 2*tc.need || len(later) != tc.later {
			t.Errorf("need %d: %d scripts drawn, %d chains found later, want %d and %d", tc.need, len(got), len(later), 2*tc.need, tc.later)
		}
	}
}
