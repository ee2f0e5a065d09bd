package attack

import (
	"strings"
	"testing"
)

// TestVerdictWords: the verdict agrees in number with the count of
// candidates exposed.
func TestVerdictWords(t *testing.T) {
	for _, tt := range []struct {
		confident int
		want      string
	}{
		{0, "; 0 are exposed with probability >= 95%."},
		{1, "; 1 is exposed with probability >= 95%."},
		{3, "; 3 are exposed with probability >= 95%."},
	} {
		r := &Report{MatchedCount: 5, UniverseSize: 100, EstimatedWallet: 4, EstimatedWalletLow: 3, EstimatedWalletHigh: 5, Confident: tt.confident}
		if got := r.verdict(); !strings.HasSuffix(got, tt.want) {
			t.Errorf("%d exposed: %q, want it to end %q", tt.confident, got, tt.want)
		}
	}
}
