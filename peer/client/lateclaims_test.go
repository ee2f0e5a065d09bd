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
// answers again its word on the block is asked and had. A late peer cut
// off as too slow in the first sync (under load) sits out its minute
// before block 111 is mined; a failure shows the client's log, each
// peer's state and the late claims.
func TestSilentLateClaimerDoesNotStall(t *testing.T) {
	const (
		lateDelay = time.Second
		timeout   = 20 * time.Second
	)
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	w := newLateWitness()
	var withhold atomic.Bool
	var withheld atomic.Int32
	var mu sync.Mutex
	var answered, withheldAt []chainhash.Hash // the stop hashes of the cfheaders answered since, and withheld
	late := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		switch msg := m.(type) {
		case *wire.MsgInv:
			w.notef("late peer: an inv of %d items (the first %v), held %v", len(msg.InvList), msg.InvList[0].Hash, lateDelay)
			time.Sleep(lateDelay)
		case *wire.MsgCFHeaders:
			if withhold.Load() {
				withheld.Add(1)
				w.notef("late peer: cfheaders to %v withheld", msg.StopHash)
				mu.Lock()
				withheldAt = append(withheldAt, msg.StopHash)
				mu.Unlock()
				return nil, false
			}
			w.notef("late peer: cfheaders to %v forwarded", msg.StopHash)
			mu.Lock()
			answered = append(answered, msg.StopHash)
			mu.Unlock()
		}
		return []wire.Message{m}, false
	}, peertest.AlsoSees(wire.CmdInv))
	fast := []string{peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr}
	w.name(late.Addr, "the late peer")
	w.name(fast[0], "a fast peer")
	w.name(fast[1], "a fast peer")
	c := connectWith(t, Config{Peers: []string{fast[0], fast[1], late.Addr}, Params: node.Params, Timeout: timeout, Log: w.log})
	w.explainOnFailure(t, c)
	startService(t, c)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	// The late peer may have been cut off as too slow in the sync to 110
	// under load (an honest node's answer held past its budget) and sit
	// out its minute: what follows needs it in use at 110.
	w.waitInUse(t, c, late.Addr, 110, time.Minute+30*time.Second)
	withhold.Store(true)
	w.notef("block 111 mined; the late peer's cfheaders withheld from now on")
	node.Generate(t, 1)
	log.waitFor(t, "block 111", tipAt(111))
	w.notef("block 111 reported")
	for end := time.Now().Add(10 * time.Second); withheld.Load() == 0; {
		if time.Now().After(end) {
			t.Fatalf("the late peer was not asked for its filter headers within 10 s of block 111; %s", w.state(c))
		}
		time.Sleep(20 * time.Millisecond)
	}
	start := time.Now()
	w.notef("block 112 mined")
	node.Generate(t, 1)
	log.waitForWithin(t, "block 112", tipAt(112), timeout+10*time.Second)
	took := time.Since(start)
	w.notef("block 112 reported")
	mu.Lock()
	var at []int32
	for _, h := range withheldAt {
		height, _ := c.Chain().HeightOf(h)
		at = append(at, height)
	}
	mu.Unlock()
	t.Logf("block 112 reported %v after it was mined, the late peer silent (answers withheld up to heights %v)", took, at)
	if limit := timeout / 4; took > limit {
		t.Errorf("block 112 reported %v after it was mined, with a silent late peer (at most %v; its timeout %v)", took, limit, timeout)
	}
	// Its word on a height at or above 111 commits to the filter
	// header of 111.
	mu.Lock()
	answered = nil
	mu.Unlock()
	withhold.Store(false)
	w.notef("the late peer's cfheaders forwarded again")
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
		t.Errorf("the late peer, answering again, gave no word on the filter header of block 111 or above within %v; %s", within, w.state(c))
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
		t.Fatalf("take = %v, want the claim from 120; the claims then: %s", got, l.describe())
	}
	l.unanswered(m, 120, now)
	l.add(m, 118)
	if got := l.take(now.Add(lateWait - time.Millisecond)); len(got) != 0 {
		t.Errorf("a silent peer's claim taken before its backoff: %v; the claims then: %s", got, l.describe())
	}
	if got := l.take(now.Add(lateWait)); got[m] != 118 {
		t.Errorf("take after the backoff = %v, want the claim from 118; the claims then: %s", got, l.describe())
	}
	l.unanswered(m, 118, now)
	if got := l.take(now.Add(lateWait)); len(got) != 0 || l.silences(m) != 2 {
		t.Errorf("after a second silence: taken %v, silences %d; want nothing before %v, 2 silences; the claims then: %s", got, l.silences(m), 2*lateWait, l.describe())
	}
	if got := l.reachFor(m, 130); got != 117 {
		t.Errorf("reach of a peer silent on its claim from 118 = %d, want 117; the claims then: %s", got, l.describe())
	}
	l.answered(m)
	if got := l.reachFor(m, 130); got != 130 {
		t.Errorf("reach of a peer that answered = %d, want 130; the claims then: %s", got, l.describe())
	}
	l.add(m, 125)
	if got := l.take(now); got[m] != 125 {
		t.Errorf("take after the peer answered = %v, want the claim from 125 at once; the claims then: %s", got, l.describe())
	}
}

// TestTurnTimer: the service's timer for the silent claims fires at the
// first one's turn, and is none while no claim waits for its turn: none
// silent, one taken (being asked or answered), or one whose word is out.
func TestTurnTimer(t *testing.T) {
	m, o := new(pool.Member), new(pool.Member)
	now := time.Now()
	for _, tt := range []struct {
		name  string
		setup func(l *lateClaims)
		fires bool
	}{
		{"no claim", func(l *lateClaims) {}, false},
		{"a late claim, not silent", func(l *lateClaims) { l.add(m, 120) }, false},
		{"a silent claim", func(l *lateClaims) { l.unanswered(m, 120, now.Add(-lateWait)) }, true},
		{"a silent claim taken", func(l *lateClaims) {
			l.unanswered(m, 120, now.Add(-lateWait))
			l.take(now)
		}, false},
		{"a silent claim whose word is out", func(l *lateClaims) {
			l.unanswered(m, 120, now.Add(-lateWait))
			l.asking = map[*pool.Member]bool{m: true}
		}, false},
		{"two silent claims, one due", func(l *lateClaims) {
			l.unanswered(m, 120, now.Add(time.Hour))
			l.unanswered(o, 118, now.Add(-lateWait))
		}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var l lateClaims
			tt.setup(&l)
			turn := l.turnTimer()
			defer turn.stop()
			select {
			case <-turn.c():
				if !tt.fires {
					t.Errorf("the timer fired; the claims: %s", l.describe())
				}
			case <-time.After(100 * time.Millisecond):
				if tt.fires {
					t.Errorf("the timer did not fire at a claim's turn; the claims: %s", l.describe())
				}
			}
		})
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
		t.Errorf("a claim taken while the peer's word was out: %v; the claims then: %s", got, l.describe())
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
		t.Errorf("take once the word is in = %v, want the claim from 121; the claims then: %s", got, l.describe())
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

// lateWitness is what a test of late claims shows when it fails: the
// client's log, stamped, with the test's own notes in it (what a proxy
// forwarded or withheld, when a block was mined), each peer's state as the
// client sees it (its tip, and why it is not in use: left out as too slow,
// banned, disconnected) and the late claims pending, so that a failure
// names its cause.
type lateWitness struct {
	log   *stampedWriter
	mu    sync.Mutex
	names map[string]string // what each peer's address is in the test
}

func newLateWitness() *lateWitness {
	return &lateWitness{log: &stampedWriter{w: &lockedWriter{w: &strings.Builder{}}, start: time.Now()}, names: map[string]string{}}
}

// name notes what the peer at addr is in the test.
func (w *lateWitness) name(addr, what string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.names[addr] = what
}

// notef writes one of the test's notes into the client's log.
func (w *lateWitness) notef(format string, args ...any) {
	fmt.Fprintf(w.log, "test: "+format+"\n", args...)
}

// waitInUse waits, up to within, until the peer at addr is in use (live,
// neither dropped nor banned) and holds height: a peer cut off as too
// slow sits out a minute (see pool.Each) and comes back with its tip
// unknown until its headers are synced. A peer out when asked is named in
// the test's log with why; one out for another reason (a stall, a ban:
// being slow proves nothing), or that does not come back, fails the test.
func (w *lateWitness) waitInUse(t *testing.T, c *Client, addr string, height int32, within time.Duration) {
	t.Helper()
	start := time.Now()
	var out []string // why it was not in use, each reason once
	for {
		i := slices.IndexFunc(c.Peers(), func(st PeerStatus) bool { return st.Address == addr })
		if i < 0 {
			t.Fatalf("peer %s is not among the client's peers; %s", addr, w.state(c))
		}
		st := c.Peers()[i]
		switch why := st.Reason; {
		case st.Banned:
			t.Fatalf("peer %s banned: %s; %s", addr, st.Reason, w.state(c))
		case why != "" && why != "connecting" && !strings.Contains(why, ": too slow: "):
			t.Fatalf("peer %s out of use, not for being slow: %s; %s", addr, why, w.state(c))
		case why == "" && st.Tip >= height:
			if len(out) > 0 {
				t.Logf("peer %s was out of use before height %d, back in use after %v: %s",
					addr, height+1, time.Since(start).Round(time.Millisecond), strings.Join(out, "; then "))
				w.notef("peer %s back in use", addr)
				// Its tip is noted by the service once synced (see
				// risenTips): the next block is then claimed late.
				time.Sleep(announceSettle)
			}
			return
		case why == "":
			why = fmt.Sprintf("its tip at %d, not synced yet", st.Tip)
			fallthrough
		default:
			if !slices.Contains(out, why) {
				out = append(out, why)
			}
		}
		if time.Since(start) > within {
			t.Fatalf("peer %s not in use at height %d within %v: %s; %s", addr, height, within, strings.Join(out, "; then "), w.state(c))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// explainOnFailure has the test, if it fails, log the state of c and its
// log (before c is closed: its peers' state is still live then).
func (w *lateWitness) explainOnFailure(t *testing.T, c *Client) {
	t.Helper()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("%s\nthe client's log (test: lines are the test's):\n%s", w.state(c), w.log)
		}
	})
}

// state describes each peer of c and the late claims pending.
func (w *lateWitness) state(c *Client) string {
	var b strings.Builder
	b.WriteString("the peers:")
	w.mu.Lock()
	for _, st := range c.Peers() {
		reason := st.Reason
		if reason == "" {
			reason = "in use"
		}
		fmt.Fprintf(&b, "\n  %s (%s): tip %d, banned %v: %s", st.Address, w.names[st.Address], st.Tip, st.Banned, reason)
	}
	w.mu.Unlock()
	fmt.Fprintf(&b, "\nthe late claims: %s", c.svc.late.describe())
	return b.String()
}

// describe says what l holds: the claims to ask, those of silent peers,
// and the words asked, for a test that fails to name.
func (l *lateClaims) describe() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var parts []string
	for m, h := range l.from {
		parts = append(parts, fmt.Sprintf("%s claimed from %d", memberName(m), h))
	}
	for m, s := range l.silent {
		again := "its turn taken"
		if !s.next.IsZero() {
			again = fmt.Sprintf("asked again in %v", time.Until(s.next).Round(time.Millisecond))
		}
		parts = append(parts, fmt.Sprintf("%s silent %d times on its claim from %d, %s", memberName(m), s.silences, s.from, again))
	}
	for m := range l.asking {
		parts = append(parts, fmt.Sprintf("%s asked for its word", memberName(m)))
	}
	if len(parts) == 0 {
		return "none"
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// memberName is m's address, or "a peer" for a member without one (a
// unit test's).
func memberName(m *pool.Member) string {
	if a := m.Addr(); a != "" {
		return a
	}
	return "a peer"
}

// TestSilentClaimAskedInItsTurn: a peer silent on its late claim is
// asked again once its backoff passed, though no block comes and no peer
// announces anything (the service sleeps until then), not at the next
// header sync of every peer (SyncInterval) or the next block.
func TestSilentClaimAskedInItsTurn(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	w := newLateWitness()
	var words atomic.Int32
	late := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if msg, ok := m.(*wire.MsgCFHeaders); ok {
			words.Add(1)
			w.notef("late peer: cfheaders to %v", msg.StopHash)
		}
		return []wire.Message{m}, false
	})
	other := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	w.name(late.Addr, "the silent peer")
	w.name(other.Addr, "another peer")
	c := connectWith(t, Config{Peers: []string{other.Addr, late.Addr}, Params: node.Params, Timeout: 20 * time.Second, Log: w.log})
	w.explainOnFailure(t, c)
	startService(t, c)
	log, _ := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	w.waitInUse(t, c, late.Addr, 110, time.Minute+30*time.Second)
	m := c.pool.Members()[slices.IndexFunc(c.pool.Members(), func(m *pool.Member) bool { return m.Addr() == late.Addr })]
	// Its claim of the heights from 105 on went unanswered: its turn
	// comes lateWait from now.
	before := words.Load()
	c.svc.late.unanswered(m, 105, time.Now())
	w.notef("the late peer silent on its claim from 105")
	const within = lateWait + 3*time.Second
	for end := time.Now().Add(within); c.svc.late.silences(m) > 0; {
		if time.Now().After(end) {
			t.Fatalf("the silent claim's turn passed and its peer was not asked again within %v (%d cfheaders since); %s", within, words.Load()-before, w.state(c))
		}
		time.Sleep(20 * time.Millisecond)
	}
	if words.Load() == before {
		t.Errorf("the silent claim was cleared without its peer's word; %s", w.state(c))
	}
}
