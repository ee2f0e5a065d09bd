package client

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/chain"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// TestHangUpDelaysNoSend: a peer that answers each block request and
// then hangs up, beside an honest one; between the blocks asked, the
// wallet sends a transaction. SendTransaction dialled every peer whose
// connection had ended again first, and with Pool.Redial it waited there
// for the backoff the hang-ups set, doubling as the peer's connections
// never last (0.5 s, 1 s, 2 s...), before anything was sent. It waits no
// longer than a first failure's backoff (Pool.RedialDue): the send goes
// to the peers it has, and its result names the peer left out, with why
// (SendResult.LeftOut). The honest peer is charged nothing.
func TestHangUpDelaysNoSend(t *testing.T) {
	const sends = 8
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 100+sends+2)
	liar, served := answerThenHangUp(t, node.P2PAddr, "block")
	c := connectTo(t, node, 10*time.Second, node.P2PAddr, liar)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var took []time.Duration
	leftOut := 0 // sends whose result names the peer that hangs up as left out
	next := int32(1)
	for i := 1; i <= sends; i++ {
		hangUpOnce(ctx, t, c, liar, served, &next)
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").P2WPKHScript()))
		start := time.Now()
		res, err := c.SendTransaction(ctx, tx)
		took = append(took, time.Since(start).Round(time.Millisecond))
		if err != nil {
			t.Fatalf("send %d, after %v: %v (each took %v)", i, took[len(took)-1], err, took)
		}
		if !slices.Contains(res.Accepted, node.P2PAddr) || !node.InMempool(t, tx.TxHash()) {
			t.Errorf("send %d: the honest peer did not take it: %+v", i, res)
		}
		if why, ok := res.LeftOut[liar]; ok {
			leftOut++
			if why == nil || slices.Contains(res.Given, liar) {
				t.Errorf("send %d: the peer that hangs up is named left out (%v), yet given %v", i, why, res.Given)
			}
		}
		if _, ok := res.LeftOut[node.P2PAddr]; ok {
			t.Errorf("send %d: the honest peer named left out: %v", i, res.LeftOut)
		}
		if slices.Max(took)-slices.Min(took) > 10*time.Second {
			break // the hole is shown; the next waits would double
		}
	}
	unharmedAt(t, c, node.P2PAddr)
	t.Logf("%d sends, each took %v; the peer that hangs up served %d blocks, left out of %d sends (named in the result)", len(took), took, served.Load(), leftOut)
	if leftOut == 0 {
		t.Error("no send named the peer that hangs up as left out: the path was not reached")
	}
	if spread := slices.Max(took) - slices.Min(took); spread > 900*time.Millisecond {
		t.Errorf("the slowest send took %v more than the fastest, the honest peer live: it waited for the backoff of a peer that hangs up", spread)
	}
}

// TestAbandonedEndDelaysNoSend: a peer whose hang-ups put its next dial
// far off (its connections never lasted), dialled again by the user
// (Pool.Add dials whatever the backoff), then a request of this client's
// over it abandoned (its connection dropped by this side,
// peer.ErrAbandoned). A send met that end: Pool.RedialDue waited for the
// backoff of the peer's earlier failures before dialling it, up to a
// minute, and a Drop counted the end as the peer's failure; then it
// refused it at once and the send left it out. The pool now clears a
// next dial once a connection is made: the send dials the peer again at
// once and gives it the transaction (or finds it holding it), charging it
// nothing.
func TestAbandonedEndDelaysNoSend(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110) // a coinbase to spend for each send
	liar, served := answerThenHangUp(t, node.P2PAddr, "block")
	c := connectTo(t, node, 10*time.Second, node.P2PAddr, liar)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	next := int32(1)
	for range 5 { // five hang-ups in a row, each counted by a send: the backoff 8 s
		hangUpOnce(ctx, t, c, liar, served, &next)
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").P2WPKHScript()))
		if _, err := c.SendTransaction(ctx, tx); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.pool.Add(ctx, liar, true); err != nil {
		t.Fatalf("dialling the peer that hangs up again: %v", err)
	}
	m := c.pool.Members()[slices.IndexFunc(c.pool.Members(), func(m *pool.Member) bool { return m.Addr() == liar })]
	abandonOn(t, c.pool.Conn(m), c.chain)
	tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").P2WPKHScript()))
	start := time.Now()
	res, err := c.SendTransaction(ctx, tx)
	took := time.Since(start)
	st := c.pool.Status(m)
	t.Logf("the send after the abandoned end took %v; %s: live %v, reason %q", took.Round(time.Millisecond), liar, st.Live, st.Reason)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Accepted, node.P2PAddr) {
		t.Errorf("the honest peer did not take it: %+v", res)
	}
	// Given it, or found holding it already (both peers are one btcd
	// behind: given to the honest one first, the relay's node holds it
	// before its turn): either way dialled again and asked, not left out.
	if _, out := res.LeftOut[liar]; out || !(slices.Contains(res.Given, liar) || slices.Contains(res.Accepted, liar)) {
		t.Errorf("the peer whose connection this client dropped was not dialled again and asked: %+v", res)
	}
	if took > 900*time.Millisecond {
		t.Errorf("the send took %v: it waited for the backoff of a peer whose connection this client dropped", took)
	}
	if !st.Live || st.Banned {
		t.Errorf("the peer was charged for the end this client caused: %+v", st)
	}
}

// abandonOn asks p for the filters of the first blocks of ch (a request
// the peer that hangs up after a block answers in full) and gives the
// request up at the first: this side drops the connection
// (peer.ErrAbandoned).
func abandonOn(t *testing.T, p *peer.Peer, ch *chain.Chain) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	hashes := make([]chainhash.Hash, 10)
	for i := range hashes {
		hashes[i] = ch.Hash(int32(i) + 1)
	}
	err := p.GetCFilters(ctx, 1, hashes, func(int, []byte) error {
		cancel()
		return nil
	})
	<-p.Done()
	if !errors.Is(p.Err(), peer.ErrAbandoned) {
		t.Fatalf("the abandoned request: %v; the connection ended with %v", err, p.Err())
	}
}

// hangUpOnce has the peer at liar, which hangs up after each block it
// serves (answerThenHangUp, served counting them), answer a block of the
// chain from *next on (each asked once: the last few are kept, see
// GetBlock) and hang up, its end left for the next request to
// find (no Run here): it returns once the connection is gone. It is dialled at once first if a request left it
// out (Pool.Add, the user's word, dials whatever its backoff): its
// failures in a row, and so its backoff, keep growing.
func hangUpOnce(ctx context.Context, t *testing.T, c *Client, liar string, served *atomic.Int32, next *int32) {
	t.Helper()
	if err := c.pool.Add(ctx, liar, true); err != nil {
		t.Fatalf("dialling the peer that hangs up again: %v", err)
	}
	n := served.Load()
	for try := 0; served.Load() == n; try++ {
		if try == 50 {
			t.Fatalf("the peer that hangs up was not picked for any of %d blocks: the attack did not run", try)
		}
		if *next > c.chain.Height() {
			t.Fatalf("the chain's %d blocks were all asked", c.chain.Height())
		}
		if _, err := c.GetBlock(ctx, c.chain.Hash(*next)); err != nil {
			t.Fatalf("GetBlock of height %d: %v", *next, err)
		}
		*next++
	}
	// The hang-up, hangUpAfter after the answer, waited for: once the
	// connection is gone, the next request finds the end. A pause of
	// twice that, under load, ended before the client read it, and the
	// next request went over the dead connection, dropping the peer.
	if p := c.pool.Conn(clientMember(t, c, liar)); p != nil {
		select {
		case <-p.Done():
		case <-ctx.Done():
			t.Fatalf("the peer that hangs up did not: %v", ctx.Err())
		}
	}
}

// unharmedAt logs c's members, and fails the test if the honest one, at
// addr, is not live or carries a reason.
func unharmedAt(t *testing.T, c *Client, addr string) {
	t.Helper()
	for _, m := range c.pool.Members() {
		st := c.pool.Status(m)
		t.Logf("%s: live %v, reason %q", m.Addr(), st.Live, st.Reason)
		if m.Addr() == addr && (!st.Live || st.Banned || st.Reason != "") {
			t.Errorf("the honest peer was charged for the other's hang-ups: %+v", st)
		}
	}
}
