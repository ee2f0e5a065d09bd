package client

import (
	"testing"
	"time"
)

// TestStrikesDecay: an honest node that once failed to serve what it
// stated in a dispute (a slow answer, a dropped connection) and fails
// once more long after is not at maxDisputeStrikes in a row: a strike
// older than strikeMemory is forgotten, kept for a member gone from the
// pool or not. A second failure within strikeMemory is still a second
// strike in a row (a ban without proof), whether the member stayed or
// came back under its host.
//
// Before (strikes kept for the run, never decayed): the failure a day
// after the first was its second in a row, a ban, both for a member that
// stayed and for one found again.
func TestStrikesDecay(t *testing.T) {
	t0 := time.Unix(1_700_000_000, 0)
	for _, tc := range []struct {
		name  string
		after time.Duration
		gone  bool // the member left the pool between its failures
		want  int
	}{
		{"stayed, a day later", 24 * time.Hour, false, 1},
		{"found again, a day later", 24 * time.Hour, true, 1},
		{"stayed, a minute later", time.Minute, false, maxDisputeStrikes},
		{"found again, a minute later", time.Minute, true, maxDisputeStrikes},
		{"stayed, just within strikeMemory", strikeMemory - time.Second, false, maxDisputeStrikes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pv peerViews
			m := memberAt(t, "127.0.0.1:18444")
			pv.strikeAt(m, true, t0)
			if tc.gone {
				pv.keep(nil)
				m = memberAt(t, "127.0.0.1:18444")
			}
			if got := pv.strikeAt(m, true, t0.Add(tc.after)); got != tc.want {
				t.Errorf("strike %d after %v, want %d", got, tc.after, tc.want)
			}
		})
	}
}
