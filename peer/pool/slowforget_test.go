package pool

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSlowDiscoveredNotForgotten: a node found by discovery (gossiped by
// the user's peer) is slow for SLOW_FOR seconds (default 10): a real btcd
// behind a proxy that holds each headers answer 2 s, past the hold of a
// timeout of 4 s (1 s), through back-to-back operations. It is cut off as
// too slow each time it is back, and sits out its backoff, doubling (no
// more cut-offs than the backoff allows), but slowness proves nothing: it
// is not forgotten, and once no longer slow it is back and live. When it
// was forgotten, or back, is logged.
//
// Measured before (the cut counted toward forgetting like a failed dial):
// slow for 4, 5, 10 or 20 s, it was forgotten 5.2 s after it turned
// slow, at its third cut-off (slow for 2 or 3 s, cut off twice, it was
// kept). Now it is kept, cut off 3, 4, 5 times over 4, 10, 20 s, and live
// again 1.7 to 2.5 s after it was no longer slow.
func TestSlowDiscoveredNotForgotten(t *testing.T) {
	slowFor := time.Duration(peertest.EnvCount(t, "SLOW_FOR", 10)) * time.Second
	node := peertest.StartBtcd(t)
	node.Generate(t, 5) // btcd answers getheaders once its tip is recent
	gossip := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	slowNode, delay := slowProxy(t, node)
	p, _, err := New(Config{Params: node.Params, Peers: []string{gossip.Addr}, Target: 2, Timeout: 4 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, stop := context.WithCancel(context.Background())
	var run sync.WaitGroup
	t.Cleanup(func() {
		stop()
		run.Wait()
		p.Close()
	})
	p.Connect(ctx)
	gossipAddr(t, gossip, slowNode.Addr)
	run.Add(1)
	go func() {
		defer run.Done()
		p.Run(ctx)
	}()
	member := func() *Member {
		i := slices.IndexFunc(p.Members(), func(m *Member) bool { return m.Addr() == slowNode.Addr })
		if i < 0 {
			return nil
		}
		return p.Members()[i]
	}
	var slow *Member
	for found := time.Now(); slow == nil || !p.Status(slow).Live; time.Sleep(20 * time.Millisecond) {
		if time.Since(found) > 30*time.Second {
			t.Fatal("the gossiped node was not found and connected within 30 s: the test proves nothing")
		}
		slow = member()
	}
	if slow.permanent {
		t.Fatal("the gossiped node is one of Config.Peers: the test proves nothing")
	}
	delay.Store(int64(2 * time.Second))
	start := time.Now()
	var cuts, rounds int
	forgotten := time.Duration(0)
	for time.Since(start) < slowFor {
		if _, asked := syncRound(t, p, NewBudget(), slow); asked {
			rounds++
			if st := p.Status(slow); !st.Live && strings.Contains(st.Reason, "too slow") {
				cuts++
			}
		}
		if member() != slow {
			forgotten = time.Since(start)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	delay.Store(0)
	t.Logf("slow for %v: asked in %d rounds, cut off %d times", slowFor, rounds, cuts)
	if cuts == 0 {
		t.Fatal("the slow node was never cut off: the test proves nothing")
	}
	if allowed := backoffDials(slowFor + time.Second); int64(cuts) > allowed {
		t.Errorf("cut off %d times in %v: its sit-outs allow %d", cuts, slowFor, allowed)
	}
	if forgotten > 0 {
		t.Fatalf("a node found by discovery, slow for %v, was forgotten %v after it turned slow, after %d cut-offs as too slow",
			slowFor, forgotten.Round(100*time.Millisecond), cuts)
	}
	back := time.Now()
	for !p.Status(slow).Live {
		if member() != slow {
			t.Fatalf("forgotten %v after it turned slow, after %d cut-offs as too slow", time.Since(start).Round(100*time.Millisecond), cuts)
		}
		if time.Since(back) > redialMax+5*time.Second {
			t.Fatalf("not live again %v after it was no longer slow: %+v", time.Since(back), p.Status(slow))
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("live again %v after it was no longer slow, a member throughout", time.Since(back).Round(100*time.Millisecond))
}
