package client

import "testing"

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
