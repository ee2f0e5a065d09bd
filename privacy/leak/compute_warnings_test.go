package leak_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/spvfilter/spvfilter/privacy/leak"
)

// TestComputeWarnings: each view of Compute carries the attack's
// warnings (PeerLeak.Warnings), of few blocks where the attack with the
// client's labels on the full index warns of them (the counts of the
// others differ: the partial index holds what the fetched blocks and
// tested candidates give), and Leak.Warnings repeats, named by the view, the
// one that changes how a view's figures read: a session of 6 blocks or
// fewer (leak.FewBlocks), whose matches alone the attack on it would give less
// than the client's account does. On the chain of seed 3 the peers
// together fetched 6 blocks, of one watched script's 2 payments among
// others, and are warned so; on the chain of seed 1 (a wallet of 8)
// every view fetched more blocks, or gave no group 0.5 to 0.8, and none
// is.
func TestComputeWarnings(t *testing.T) {
	tests := []struct {
		name string
		spec chainSpec
		few  []string // the views Leak.Warnings names
	}{
		{"few blocks colluding", chainSpec{blocks: 300, txs: 40, wallet: 1, seed: 3}, []string{"the peers together"}},
		{"none", chainSpec{blocks: 300, txs: 12, wallet: 8, seed: 1}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := newTestChain(t, tc.spec)
			full := c.analyzeFull(t)
			got, err := leak.Compute(c.input(nil), leak.Limits{MaxQueries: 1 << 20, MaxSingles: 1 << 20})
			if err != nil {
				t.Fatal(err)
			}
			views := append(slices.Clone(got.Peers), got.Collusion)
			few := func(ws []string) bool {
				return slices.ContainsFunc(ws, func(w string) bool { return strings.HasPrefix(w, leak.FewBlocks) })
			}
			for i, pl := range views {
				if len(pl.Warnings) == 0 || few(pl.Warnings) != few(full[i].Warnings) {
					t.Errorf("view %d: warnings %q, the full index's %q", i, pl.Warnings, full[i].Warnings)
				}
			}
			var named []string
			for _, w := range got.Warnings {
				who, rest, ok := strings.Cut(w, ": ")
				if ok && strings.HasPrefix(rest, leak.FewBlocks) {
					named = append(named, who)
				}
			}
			if !slices.Equal(named, tc.few) {
				t.Errorf("Leak.Warnings name %q of few blocks, want %q: %q", named, tc.few, got.Warnings)
			}
		})
	}
}
