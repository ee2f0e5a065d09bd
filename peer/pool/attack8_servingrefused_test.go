package pool

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestServingListsNoNodeEndRefused: a member whose node hung up (a
// relay closing each connection 1 s after it is made), with failures in
// a row before, its connection made since (which cleared its next dial,
// see Member.connected), before Run or a request counted the end. Serving
// is to list it only if a request would dial it again (RedialDue), as
// its doc says, so that no plan picks a member that is then refused (a
// client's block download fails on such a refusal, see the client's
// TestHangUpFailsNoFetchBlocks). Counting the end adds a failure, and
// RedialDue refuses unless that backoff is within redialMin: with no
// failure before, listed and dialled again; with one or more, refused.
func TestServingListsNoNodeEndRefused(t *testing.T) {
	node := peertest.StartBtcd(t)
	tests := []struct {
		name   string
		before int // failures in a row before the connection was made
	}{
		{"no failure before", 0},
		{"one failure before", 1},
		{"four failures before", 4},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, m, dials := hungUpMember(t, node, tt.before, true)
			listed := slices.Contains(p.Serving(0), m)
			kept := len(p.Keep([]*Member{m})) == 1
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			rerr := p.RedialDue(ctx, m)
			cancel()
			t.Logf("failures before %d: listed by Serving %v, by Keep %v; RedialDue: %v; dials %d", tt.before, listed, kept, rerr, dials.Load())
			if (listed || kept) && rerr != nil {
				t.Errorf("listed (Serving %v, Keep %v), then refused by RedialDue: %v", listed, kept, rerr)
			}
			if !listed && rerr == nil {
				t.Errorf("left out of Serving, yet RedialDue dialled it again")
			}
		})
	}
}
