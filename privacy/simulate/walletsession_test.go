package simulate

import (
	"slices"
	"testing"
)

// TestWalletSession: the wallet's scripts that appear from the scan's
// start are listed with their blocks there; a block fetched that holds
// none of them, in the range, is a false positive; blocks before the
// start count for neither.
func TestWalletSession(t *testing.T) {
	heights := map[string][]int32{"a": {5, 12, 20}, "b": {3}, "c": {15, 20}, "x": {30}}
	fs := WalletSession("s1", "127.0.0.1:1", "w1", []string{"a", "b", "c"}, heights, 10, 40, []int32{5, 12, 15, 20, 25, 31})
	if fs.ID != "s1" || fs.Client != "127.0.0.1:1" || fs.Wallet != "w1" || fs.Kind != KindWallet || fs.ScannedFrom != 10 || fs.ScannedTo != 40 {
		t.Errorf("session %+v", fs)
	}
	if !slices.Equal(fs.Scripts, []string{"a", "c"}) || !slices.Equal(fs.WalletHeights, []int32{12, 15, 20}) ||
		!slices.Equal(fs.FalsePositiveHeights, []int32{25, 31}) || fs.DecoyHeights == nil || len(fs.DecoyHeights) != 0 {
		t.Errorf("scripts %v, wallet heights %v, false positives %v, decoys %v: want [a c], [12 15 20], [25 31], []",
			fs.Scripts, fs.WalletHeights, fs.FalsePositiveHeights, fs.DecoyHeights)
	}
}
