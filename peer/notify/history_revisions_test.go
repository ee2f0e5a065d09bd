package notify_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/notify"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// rerunLog counts the lines of a notifier's log saying a history is
// scanned again because filter headers were verified anew.
type rerunLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *rerunLog) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, strings.TrimSpace(string(b)))
	return len(b), nil
}

// reruns returns how many times the history of the registration named by
// name was scanned again for a revision of the filter headers.
func (l *rerunLog) reruns(name string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, s := range l.lines {
		if strings.Contains(s, name) && strings.Contains(s, "verified anew") {
			n++
		}
	}
	return n
}

// TestRevisionStormBoundsHistoryReruns: a peer with hash power (regtest)
// keeps a branch of its own from block 115, below where the notifier's
// rescan starts (120), and overtakes the honest node's branch again and
// again, two blocks at a time, each time the honest node got ahead: every
// flip has the client give up the filter headers from 116 and verify
// them anew (client.Client.Revised). Each revision would have every
// registration's history, which covers 105..119, scanned again. The
// re-runs are coalesced: a history is scanned again at most once every
// revisedGap, from the lowest height given up since its last scan began,
// so from the storm's start until its last revisions were taken in, a
// registration's history is scanned again at most once a revisedGap
// (plus one), however many revisions came. And no
// confirmation is lost or told twice: alice's payment in block 111 (on
// both branches) is told once, to a registration made before the storm
// and to one made during it, and never taken back.
//
// Measured before (every revision re-ran every history at once): 16
// flips in 9.2 s, 16 revisions, bob's history scanned again 15 times.
// Now: 16 flips in 9.2 s, scanned again twice in the 16 s until the
// revisions were taken in.
func TestRevisionStormBoundsHistoryReruns(t *testing.T) {
	const flips = 16
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice, bob := peertest.NewKey("alice"), peertest.NewKey("bob")
	pay, _ := aliceSpent(t, node) // 111, 112
	node.Generate(t, 3)           // 115
	miner := peertest.CopyChainTo(t, node, 115, peertest.WithArgs("--nobanning"))
	node.Generate(t, 17) // 132: the rescan starts at 120
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.Connect(ctx, client.Config{Peers: []string{node.P2PAddr, miner.P2PAddr}, Params: node.Params, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.BestBlock(ctx); err != nil {
		t.Fatal(err)
	}
	log := &rerunLog{}
	n := notify.New(c, notify.Options{ReorgSafety: reorgSafety, PollInterval: 100 * time.Millisecond, Log: log})
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	bobEv, err := n.RegisterConfirmations(nil, bob.PkScript(), 1, 105) // nothing pays bob: it stays
	if err != nil {
		t.Fatal(err)
	}
	followConf(bobEv)
	id := pay.TxHash()
	payEv, err := n.RegisterConfirmations(&id, alice.PkScript(), 1, 105)
	if err != nil {
		t.Fatal(err)
	}
	before := followConf(payEv)
	before.waitCount(t, "conf ", 1)
	waitHistories(t, n)
	heights := map[*peertest.Node]int32{node: 132, miner: 115}
	sides := []*peertest.Node{miner, node}
	var during *record
	start := time.Now()
	for i := range flips {
		lag, lead := sides[i%2], sides[(i+1)%2]
		hashes := lag.Generate(t, int(heights[lead]-heights[lag]+1))
		heights[lag] = heights[lead] + 1
		tip := *hashes[len(hashes)-1]
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(20 * time.Millisecond) {
			if h, hash := c.Chain().Tip(); h == heights[lag] && hash == tip {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("flip %d: the client did not take the branch at %d within 30 s", i, heights[lag])
			}
		}
		if i == flips/2 {
			ev, err := n.RegisterConfirmations(&id, alice.PkScript(), 1, 105)
			if err != nil {
				t.Fatal(err)
			}
			during = followConf(ev)
		}
		time.Sleep(300 * time.Millisecond) // a history scan of 4 blocks ends
	}
	storm := time.Since(start)
	// The revisions of the storm's end are coalesced into one scan
	// more, after the gap.
	time.Sleep(notify.RevisedGap + time.Second)
	waitHistories(t, n)
	during.waitCount(t, "conf ", 1)
	time.Sleep(time.Second) // anything told twice is told by now
	window := time.Since(start)
	now, _ := c.Revised(0)
	reruns := log.reruns(fmt.Sprintf("paying %x", bob.PkScript()))
	t.Logf("%d flips in %v, %d revisions of the filter headers: bob's history scanned again %d times in %v; alice's confirmation told %q before the storm, %q to the registration made during it",
		flips, storm.Round(time.Millisecond), now, reruns, window.Round(time.Millisecond), before.snapshot(), during.snapshot())
	if now < flips {
		t.Fatalf("%d revisions for %d flips: the storm did not take place", now, flips)
	}
	if limit := int(window/notify.RevisedGap) + 1; reruns > limit {
		t.Errorf("bob's history scanned again %d times in the %v from the storm's start, want at most %d (once every %v)", reruns, window.Round(time.Millisecond), limit, notify.RevisedGap)
	}
	if reruns == 0 {
		t.Errorf("bob's history never scanned again after %d revisions that gave up heights it covers", now)
	}
	for name, r := range map[string]*record{"before the storm": before, "during the storm": during} {
		if got := r.count("conf "); got != 1 || r.count("neg ") != 0 {
			t.Errorf("the registration made %s: %q, want alice's confirmation told once, never taken back", name, r.snapshot())
		} else if r.confs[0].BlockHash != hashAt(t, node, 111) {
			t.Errorf("the registration made %s: told in %v, want block 111 %v", name, r.confs[0].BlockHash, hashAt(t, node, 111))
		}
	}
}

// waitHistories waits until no history scan is under way or queued.
func waitHistories(t *testing.T, n *notify.Notifier) {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		busy := false
		for _, s := range n.Stalls(0) {
			busy = busy || s.Kind == notify.StallHistory
		}
		if !busy {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("history scans still under way after 60 s: %+v", n.Stalls(0))
		}
	}
}
