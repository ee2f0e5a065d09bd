package pool

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestLiveAndServingDiffer: Status.Live, Pool.Live and Pool.Serving of a
// member whose node hung up (a relay closing each connection 1 s after
// it is made), before the end is counted and after a request counted it
// (RedialDue). With no failure before, counting the end sets a first
// failure's backoff: all three list it, and it is dialled again. With
// failures before, the backoff would be longer: Serving leaves it out
// (a request would be refused) while Live and Status.Live, the pool
// having decided nothing against it yet, still list it, as Status.Live's
// doc says; once the refusal counted the end, none does. A member whose
// connection is open is listed by all three.
func TestLiveAndServingDiffer(t *testing.T) {
	node := peertest.StartBtcd(t)
	tests := []struct {
		name        string
		before      int  // failures in a row before the connection was made
		end         bool // wait for the node's end
		serving     bool // Serving lists it before the end is counted
		liveCounted bool // Live lists it after RedialDue
	}{
		{"open", 2, false, true, true},
		{"node's end, no failure before", 0, true, true, true},
		{"node's end, two failures before", 2, true, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, m, _ := hungUpMember(t, node, tt.before, tt.end)
			status, live, serving := p.Status(m).Live, slices.Contains(p.Live(), m), slices.Contains(p.Serving(0), m)
			t.Logf("before counting: Status.Live %v, Live %v, Serving %v", status, live, serving)
			if !status || !live {
				t.Errorf("Status.Live %v, Live %v: want both true, nothing counted against it", status, live)
			}
			if serving != tt.serving {
				t.Errorf("Serving lists it: %v, want %v", serving, tt.serving)
			}
			if serving && !live {
				t.Error("Serving lists a member Live leaves out: Live is to be a superset")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
			rerr := p.RedialDue(ctx, m)
			cancel()
			status, live = p.Status(m).Live, slices.Contains(p.Live(), m)
			t.Logf("after RedialDue (%v): Status.Live %v, Live %v", rerr, status, live)
			if status != live || live != tt.liveCounted {
				t.Errorf("Status.Live %v, Live %v, want both %v", status, live, tt.liveCounted)
			}
		})
	}
}

// hungUpMember returns a pool of one member, btcd node behind a relay
// that closes each connection 1 s after it is made, connected, with
// before failures in a row set; with end, once its node ended the
// connection, the end not yet counted. It also returns the relay's dials.
func hungUpMember(t *testing.T, node *peertest.Node, before int, end bool) (*Pool, *Member, *atomic.Int64) {
	t.Helper()
	addr, dials := hangUpRelay(t, node.P2PAddr, time.Second)
	p, _, err := New(Config{Params: node.Params, Peers: []string{addr}, ConnectOnly: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	p.Connect(context.Background())
	m := p.Members()[0]
	c := p.Conn(m)
	if c == nil {
		t.Fatal("not connected")
	}
	p.mu.Lock()
	m.failures = before
	p.mu.Unlock()
	if end {
		<-c.Done() // the node's end, not counted yet
	}
	return p, m, dials
}
