package client

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// The ways a modeRelay passes a message of its command on.
const (
	relayPlain  int32 = iota // as it came
	relayHangUp              // then hangs up, hangUpAfter later
	relaySlow                // relaySlowFor late, once, then plain
	relayDamage              // its last byte flipped, once, then plain
)

// relaySlowFor is how late a modeRelay in relaySlow passes a message on.
const relaySlowFor = 2 * time.Second

// relayAfterFor bounds how long a modeRelay waits for another's turn
// (modeRelay.after) before its own: less than the clients' timeout in
// the tests using it, so that a turn that never comes shows as the path
// not reached, not as a request that timed out.
const relayAfterFor = 5 * time.Second

// modeRelay passes a node's messages on; those of cmd as mode says.
type modeRelay struct {
	cmd    atomic.Value // string
	mode   atomic.Int32
	served atomic.Int32 // messages of cmd passed on in relayHangUp
	// turned is closed once the relay's relaySlow or relayDamage took
	// its turn: a message held back (from then on its request is in
	// flight), or one damaged and passed on.
	turned chan struct{}
	// after, if set before the mode, orders the turns of two relays: a
	// relayDamage one passes its damaged message only once after is
	// closed (another's turn, at most relayAfterFor), and a relaySlow
	// one, its message held, counts relaySlowFor only from then on.
	after chan struct{}
}

// startModeRelay starts a modeRelay to target, plain until told.
func startModeRelay(t *testing.T, target, cmd string) (string, *modeRelay) {
	t.Helper()
	r := &modeRelay{turned: make(chan struct{})}
	r.cmd.Store(cmd)
	return relayFrames(t, target, r.pass), r
}

// pass does to a message of the node's what r's mode says (see
// relayFrames): it reports whether the relay hangs up after it.
func (r *modeRelay) pass(cmd string, body []byte) bool {
	if cmd != r.cmd.Load().(string) {
		return false
	}
	switch r.mode.Load() {
	case relayHangUp:
		r.served.Add(1)
		return true
	case relaySlow:
		if r.mode.CompareAndSwap(relaySlow, relayPlain) {
			close(r.turned)
			r.awaitAfter()
			time.Sleep(relaySlowFor)
		}
	case relayDamage:
		if len(body) > 0 && r.mode.CompareAndSwap(relayDamage, relayPlain) {
			r.awaitAfter()
			body[len(body)-1] ^= 0x10
			close(r.turned)
		}
	}
	return false
}

// awaitAfter waits for r.after, if set, at most relayAfterFor.
func (r *modeRelay) awaitAfter() {
	if r.after == nil {
		return
	}
	t := time.NewTimer(relayAfterFor)
	defer t.Stop()
	select {
	case <-r.after:
	case <-t.C:
	}
}

// seenLog writes the client's log to the test's (see testLog) and
// counts the lines holding want.
type seenLog struct {
	testLog
	want string
	seen *atomic.Int32
}

func (l seenLog) Write(b []byte) (int, error) {
	if strings.Contains(string(b), l.want) {
		l.seen.Add(1)
	}
	return l.testLog.Write(b)
}

// clientMember returns c's member at addr.
func clientMember(t *testing.T, c *Client, addr string) *pool.Member {
	t.Helper()
	ms := c.pool.Members()
	i := slices.IndexFunc(ms, func(m *pool.Member) bool { return m.Addr() == addr })
	if i < 0 {
		t.Fatalf("no member at %s", addr)
	}
	return ms[i]
}

// pushBackoff has the peer at liar (a modeRelay) answer a block and hang
// up n times, each end counted (Pool.RedialDue, as a request would):
// its connections never last, so its next dial is put off further each
// time (0.5 s, 1 s, 2 s...). It is then dialled once more by the user
// (Pool.Add, whatever its backoff), live, its next dial still far off.
func pushBackoff(ctx context.Context, t *testing.T, c *Client, liar string, r *modeRelay, n int, next *int32) {
	t.Helper()
	r.cmd.Store("block")
	r.mode.Store(relayHangUp)
	m := clientMember(t, c, liar)
	for range n {
		hangUpOnce(ctx, t, c, liar, &r.served, next)
		c.pool.RedialDue(ctx, m) // counts the end; dials only if due soon
	}
	r.mode.Store(relayPlain)
	if err := c.pool.Add(ctx, liar, true); err != nil {
		t.Fatalf("dialling the peer that hung up again: %v", err)
	}
	if _, err := c.SyncHeaders(ctx); err != nil { // its chain, forgotten at the dial
		t.Fatal(err)
	}
}

// TestDamagedBlockWaitsNoOtherBackoff: blocks fetched over an honest
// peer, one whose link damages its first block answer, and a slow one
// (its first block held back) whose earlier hang-ups put its next dial
// 8 s off before the user dialled it again. The damage cancels the slow
// peer's request in flight, dropping its connection, and the blocks not
// in are asked again (fetchAgain), the plan's other peers readied first:
// with Pool.Redial that waited 8 s for the slow peer's backoff. Then
// Pool.RedialDue refused it at once, but it still counted as live: the
// blocks asked again, and those of FetchBlocks' next window, were
// planned on it, its request refused the same way, and the fetch failed
// (the download left it out of its plans after that). Now the pool
// clears a next dial once a connection is made: the slow peer is
// dialled again at once, and every block comes within a first failure's
// backoff, the honest peer charged nothing.
//
// The relays order their turns (modeRelay.after): the damaged block
// passes only once the slow peer's first block is held back, and that is
// held relaySlowFor after the damage, so the damage lands while the slow
// peer's request is in flight however the requests of the plan are
// sent. And the peers are ranked alike before the fetch (rankedAlike):
// a relay ranked slow is left out of the plan.
func TestDamagedBlockWaitsNoOtherBackoff(t *testing.T) {
	needFixture(t)
	for _, tt := range []struct {
		name string
		to   int32 // the fetch's last height, from 1
	}{
		// One window of FetchBlocks: one fetchWanted, its blocks spread
		// over the three peers.
		{"one window", peer.MaxBlocksPerRequest * 3},
		{"every window", fx.tip},
	} {
		t.Run(tt.name, func(t *testing.T) {
			liar, lr := startModeRelay(t, fx.node.P2PAddr, "block")
			damager, dr := startModeRelay(t, fx.node.P2PAddr, "block")
			var readied atomic.Int32 // the slow peer readied after the damage
			log := seenLog{testLog{t, time.Now()}, liar + ": dialled again after another peer's damaged block", &readied}
			c := connectWith(t, Config{Peers: []string{fx.node.P2PAddr, damager, liar}, Params: fx.node.Params, Timeout: 10 * time.Second, Log: log})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			next := int32(1)
			pushBackoff(ctx, t, c, liar, lr, 5, &next)
			rankedAlike(ctx, t, c)
			lr.after, dr.after = dr.turned, lr.turned
			lr.mode.Store(relaySlow)
			dr.mode.Store(relayDamage)
			start := time.Now()
			var got []int32
			err := c.FetchBlocks(ctx, 1, tt.to, func(h int32, _ *wire.MsgBlock) error {
				got = append(got, h)
				return nil
			})
			took := time.Since(start)
			t.Logf("the fetch of blocks 1..%d took %v", tt.to, took.Round(time.Millisecond))
			unharmedAt(t, c, fx.node.P2PAddr)
			if dr.mode.Load() != relayPlain || lr.mode.Load() != relayPlain {
				t.Fatal("no block answer was damaged, or the slow peer was asked for none: the path was not reached")
			}
			if readied.Load() == 0 {
				t.Error("the slow peer, its request in flight at the damage, was not dialled again after it")
			}
			if err != nil {
				t.Fatalf("the fetch: %v", err)
			}
			if len(got) != int(tt.to) {
				t.Errorf("%d blocks fetched, want %d", len(got), tt.to)
			}
			if took > 3*time.Second {
				t.Errorf("the fetch took %v: it waited for the backoff of the slow peer", took)
			}
		})
	}
}

// maxRankings bounds the headers requests rankedAlike asks of each peer.
const maxRankings = 20

// rankedAlike has c ask its peers for headers until none is ranked
// down as slow (pool.Pool.Slow: one answer late under load, against
// another's quick, leaves a peer out of a fetch's plan), at most
// maxRankings times, and fails the test if one still is.
func rankedAlike(ctx context.Context, t *testing.T, c *Client) {
	t.Helper()
	for range maxRankings {
		if len(c.pool.Slow(c.pool.Members())) == 0 {
			return
		}
		if _, err := c.SyncHeaders(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if slow := c.pool.Slow(c.pool.Members()); len(slow) > 0 {
		t.Fatalf("%d peers still ranked slow after %d headers requests: the path cannot be set up", len(slow), maxRankings)
	}
}

// TestAbandonedEndFailsNoFetch: a peer whose hang-ups put its next dial
// 8 s off, dialled again by the user, then a request of this client's
// over it abandoned (its connection dropped by this side). It counted as
// live, so FetchBlocks planned blocks on it; Pool.RedialDue refused its
// request, its stale next dial far off, which failed the fetch though
// the honest peer holds every block. The pool now clears a next dial
// once a connection is made: the fetch dials the peer again at once, its
// blocks come, and neither peer is charged.
func TestAbandonedEndFailsNoFetch(t *testing.T) {
	needFixture(t)
	liar, lr := startModeRelay(t, fx.node.P2PAddr, "block")
	c := connectWith(t, Config{Peers: []string{fx.node.P2PAddr, liar}, Params: fx.node.Params, Timeout: 10 * time.Second, Log: testLog{t, time.Now()}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	next := int32(1)
	pushBackoff(ctx, t, c, liar, lr, 5, &next)
	m := clientMember(t, c, liar)
	dropped := c.pool.Conn(m)
	abandonOn(t, dropped, c.chain)
	to := int32(peer.MaxBlocksPerRequest * 2)
	start := time.Now()
	n := 0
	err := c.FetchBlocks(ctx, 1, to, func(int32, *wire.MsgBlock) error {
		n++
		return nil
	})
	took := time.Since(start)
	st := c.pool.Status(m)
	t.Logf("the fetch of blocks 1..%d took %v; %s: live %v, reason %q", to, took.Round(time.Millisecond), liar, st.Live, st.Reason)
	unharmedAt(t, c, fx.node.P2PAddr)
	if err != nil {
		t.Fatalf("the fetch: %v", err)
	}
	if c.pool.Conn(m) == dropped {
		t.Fatal("the peer whose connection this client dropped was not dialled again: the path was not reached")
	}
	if n != int(to) {
		t.Errorf("%d blocks fetched, want %d", n, to)
	}
	if took > 3*time.Second {
		t.Errorf("the fetch took %v: it waited for the backoff of the peer whose connection this client dropped", took)
	}
	if st.Banned || !st.Live {
		t.Errorf("the peer was charged for the end this client caused: %+v", st)
	}
}
