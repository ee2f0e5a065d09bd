package client

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// TestSilentLateClaimerDoesNotStall: of three peers, two announce each
// new block at once and the third lateDelay later (a slower link), so
// that its word on the block's filter header is asked once the others
// verified it (see Client.verifyLate). The late peer then leaves its
// getcfheaders unanswered, as btcd does while it catches up. The next
// block is still reported within a quarter of the timeout, not after the
// late peer's timeout; the silent peer is not banned, and once it
// answers again its word on the block is asked and had.
func TestSilentLateClaimerDoesNotStall(t *testing.T) {
	const (
		lateDelay = time.Second
		timeout   = 20 * time.Second
	)
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	var withhold atomic.Bool
	var withheld atomic.Int32
	var mu sync.Mutex
	var answered, withheldAt []chainhash.Hash // the stop hashes of the cfheaders answered since, and withheld
	late := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		switch msg := m.(type) {
		case *wire.MsgInv:
			time.Sleep(lateDelay)
		case *wire.MsgCFHeaders:
			if withhold.Load() {
				withheld.Add(1)
				mu.Lock()
				withheldAt = append(withheldAt, msg.StopHash)
				mu.Unlock()
				return nil, false
			}
			mu.Lock()
			answered = append(answered, msg.StopHash)
			mu.Unlock()
		}
		return []wire.Message{m}, false
	}, peertest.AlsoSees(wire.CmdInv))
	fast := []string{peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr}
	clog := &stampedWriter{w: &lockedWriter{w: &strings.Builder{}}, start: time.Now()}
	c := connectWith(t, Config{Peers: []string{fast[0], fast[1], late.Addr}, Params: node.Params, Timeout: timeout, Log: clog})
	startService(t, c)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	withhold.Store(true)
	node.Generate(t, 1)
	log.waitFor(t, "block 111", tipAt(111))
	for end := time.Now().Add(10 * time.Second); withheld.Load() == 0; {
		if time.Now().After(end) {
			t.Fatal("the late peer was not asked for its filter headers within 10 s of block 111")
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	node.Generate(t, 1)
	log.waitForWithin(t, "block 112", tipAt(112), timeout+10*time.Second)
	took := time.Since(start)
	mu.Lock()
	var at []int32
	for _, h := range withheldAt {
		height, _ := c.Chain().HeightOf(h)
		at = append(at, height)
	}
	mu.Unlock()
	t.Logf("block 112 reported %v after it was mined, the late peer silent (answers withheld up to heights %v)", took, at)
	if limit := timeout / 4; took > limit {
		t.Errorf("block 112 reported %v after it was mined, with a silent late peer (at most %v; its timeout %v); the client's log:\n%s", took, limit, timeout, clog)
	}
	// Its word on a height at or above 111 commits to the filter
	// header of 111.
	mu.Lock()
	answered = nil
	mu.Unlock()
	withhold.Store(false)
	worded := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return slices.ContainsFunc(answered, func(h chainhash.Hash) bool {
			height, ok := c.Chain().HeightOf(h)
			return ok && height >= 111
		})
	}
	// Under load its silence may be met by a verification of the new
	// block instead, which leaves it out as too slow for a minute.
	const within = time.Minute + 30*time.Second
	for end := time.Now().Add(within); !worded() && time.Now().Before(end); {
		node.Generate(t, 1)
		time.Sleep(time.Second)
	}
	if !worded() {
		t.Errorf("the late peer, answering again, gave no word on the filter header of block 111 or above within %v", within)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, st := range c.Peers() {
		t.Logf("peer %s: banned %v, tip %d, reason %q", st.Address, st.Banned, st.Tip, st.Reason)
		if st.Banned {
			t.Errorf("peer %s banned: %s", st.Address, st.Reason)
		}
	}
}

// TestSilentClaimWaitsItsTurn: a claim whose peer gave no word is not
// asked again before its backoff, which doubles with each silence up to
// maxLateBackoff; new claims of that peer wait with it, the lowest height
// kept; once it answers, its claims are taken at once again.
func TestSilentClaimWaitsItsTurn(t *testing.T) {
	for _, tt := range []struct {
		silences int
		want     time.Duration
	}{{1, lateWait}, {2, 2 * lateWait}, {3, 4 * lateWait}, {20, maxLateBackoff}} {
		if got := lateBackoff(tt.silences); got != tt.want {
			t.Errorf("lateBackoff(%d) = %v, want %v", tt.silences, got, tt.want)
		}
	}
	var l lateClaims
	m := new(pool.Member)
	now := time.Now()
	l.add(m, 120)
	if got := l.take(now); got[m] != 120 {
		t.Fatalf("take = %v, want the claim from 120", got)
	}
	l.unanswered(m, 120, now)
	l.add(m, 118)
	if got := l.take(now.Add(lateWait - time.Millisecond)); len(got) != 0 {
		t.Errorf("a silent peer's claim taken before its backoff: %v", got)
	}
	if got := l.take(now.Add(lateWait)); got[m] != 118 {
		t.Errorf("take after the backoff = %v, want the claim from 118", got)
	}
	l.unanswered(m, 118, now)
	if got := l.take(now.Add(lateWait)); len(got) != 0 || l.silences(m) != 2 {
		t.Errorf("after a second silence: taken %v, silences %d; want nothing before %v, 2 silences", got, l.silences(m), 2*lateWait)
	}
	if got := l.reachFor(m, 130); got != 117 {
		t.Errorf("reach of a peer silent on its claim from 118 = %d, want 117", got)
	}
	l.answered(m)
	if got := l.reachFor(m, 130); got != 130 {
		t.Errorf("reach of a peer that answered = %d, want 130", got)
	}
	l.add(m, 125)
	if got := l.take(now); got[m] != 125 {
		t.Errorf("take after the peer answered = %v, want the claim from 125 at once", got)
	}
}

// TestLateWordAskedInBackground: a late claimer's word is asked in the
// background and wakes the service once it is in; while it is out, the
// peer's new claims wait for it (one word a peer at a time).
func TestLateWordAskedInBackground(t *testing.T) {
	var l lateClaims
	m := new(pool.Member)
	l.asking = map[*pool.Member]bool{m: true}
	l.add(m, 121)
	if got := l.take(time.Now()); len(got) != 0 {
		t.Errorf("a claim taken while the peer's word was out: %v", got)
	}
	delete(l.asking, m)
	woken := make(chan struct{}, 1)
	// Without a connection, the word fails at once.
	l.ask(context.Background(), lateWord{m: m, from: 120, top: 120}, func() { woken <- struct{}{} })
	select {
	case <-woken:
	case <-time.After(lateWait + time.Second):
		t.Fatal("the service was not woken when the word came in")
	}
	l.wait()
	words := l.takeWords()
	if len(words) != 1 || words[0].m != m || words[0].err == nil {
		t.Errorf("words = %+v, want the one asked, failed (no connection)", words)
	}
	if got := l.take(time.Now()); got[m] != 121 {
		t.Errorf("take once the word is in = %v, want the claim from 121", got)
	}
}

// stampedWriter is a lockedWriter whose lines start with the time since
// start, so that a test's log shows what the client waited for.
type stampedWriter struct {
	w     *lockedWriter
	start time.Time
}

func (s *stampedWriter) Write(p []byte) (int, error) {
	if _, err := s.w.Write(fmt.Appendf(nil, "%8.3fs %s", time.Since(s.start).Seconds(), p)); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (s *stampedWriter) String() string { return s.w.String() }
