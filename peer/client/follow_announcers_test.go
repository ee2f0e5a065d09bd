//go:build openattacks

// Attacks on a client following the tip. Those not answered yet fail
// (see each test); the one that holds runs here too, as it takes about
// ten seconds: go test -tags openattacks runs them.

package client

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// The tests of this file play peers that try to slow down, or mislead, a
// client following the tip.

// connectedAllAt returns the events reporting height h connected.
func connectedAllAt(es []Event, h int32) []Event {
	var out []Event
	for _, e := range es {
		if e.Kind == EventConnected && e.Height == h {
			out = append(out, e)
		}
	}
	return out
}

// TestPrivateForkBlockRestsOnItsMiner (holds: the client names the
// miner): a peer mines a block of its own on
// the chain's tip (it has the hash power: regtest) and announces it
// before the honest peers find theirs. The client takes it (it has more
// work than the chain) and reports it, yet the report names the one peer
// whose chain holds it (Event.OnePeer): the two honest peers do not. Once
// the honest peers' chain has more work, the block is reported
// disconnected and the honest blocks connected, resting on no one peer;
// nobody is banned for mining a block that lost.
func TestPrivateForkBlockRestsOnItsMiner(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	miner := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, honest.Addr, miner.P2PAddr)
	startService(t, c)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	private := miner.Generate(t, 1)[0]
	log.waitFor(t, "the miner's block 111", func(es []Event) bool {
		return slices.ContainsFunc(connectedAllAt(es, 111), func(e Event) bool { return e.BlockHash == *private })
	})
	won := node.Generate(t, 2)
	log.waitFor(t, "the honest block 112", func(es []Event) bool {
		return slices.ContainsFunc(connectedAllAt(es, 112), func(e Event) bool { return e.BlockHash == *won[1] })
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	es := log.snapshot()
	for _, e := range connectedAllAt(es, 111) {
		switch {
		case e.BlockHash == *private && e.OnePeer != miner.P2PAddr:
			t.Errorf("the miner's own block 111 was reported with OnePeer %q, want %s (no other peer holds it)", e.OnePeer, miner.P2PAddr)
		case e.BlockHash == *won[0] && e.OnePeer != "":
			t.Errorf("the honest block 111 was reported resting on %q alone, want no one peer", e.OnePeer)
		}
	}
	if !slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventDisconnected && e.BlockHash == *private }) {
		t.Errorf("the miner's block was not reported disconnected: %q", log.summary())
	}
	for _, st := range c.Peers() {
		if st.Banned {
			t.Errorf("peer %s banned: %s", st.Address, st.Reason)
		}
	}
	t.Logf("events: %q", log.summary())
}

// fakeAnnouncer has a proxy announce a random block hash every interval
// until stop is closed, whatever becomes of its connections.
func fakeAnnouncer(l *peertest.Liar, every time.Duration, stop <-chan struct{}) {
	for {
		var h chainhash.Hash
		binary.LittleEndian.PutUint64(h[:], rand.Uint64())
		inv := wire.NewMsgInv()
		inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h))
		l.Inject(inv) // a connection the client dropped is dialled again
		select {
		case <-stop:
			return
		case <-time.After(every):
		}
	}
}

// blockLatencies mines n blocks on node, one at a time, each once the
// one before was reported, and returns how long each took to be
// reported after it was mined.
func blockLatencies(t *testing.T, node *peertest.Node, log *eventLog, n int) []time.Duration {
	t.Helper()
	var out []time.Duration
	for range n {
		start := time.Now()
		hash := node.Generate(t, 1)[0]
		log.waitForWithin(t, "the new block", func(es []Event) bool {
			return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventConnected && e.BlockHash == *hash })
		}, time.Minute)
		out = append(out, time.Since(start))
	}
	return out
}

// TestFakeAnnouncerWithholdingHeadersDelaysLittle: a peer relays the
// node's announcements (so it serves a block of every run it announces,
// and is never charged for the others) and adds one of a random block
// hash every 200 ms, which keeps the service's settle wait going to its
// end (announceSettle) and makes it the lead of a header sync of its own
// announcements; and it never answers getheaders, so each sync abandons
// it after announceLeadWait. Each new block is still reported within
// announceSettle + announceLeadWait + 2 s of being mined (the figures, a
// run before the attack and one during it, are logged), and nobody
// honest is banned.
//
// Not answered yet: the lead of each header sync is picked among the
// announcers at random; when it is an honest peer, the announcer's own
// blocks are not all in the chain after the lead's sync, so it is synced
// alone (syncAnnounced's rest), with no lead wait and no other voice to
// fall back on: the service waits for it the whole timeout (a stall,
// after which it is dialled again) before it verifies and reports the
// block the lead's headers brought, with opMu held. Measured: blocks
// reported 31 s after they were mined (timeout 30 s) against 0.31 s
// before the attack, and a scan of 11 blocks already verified took 29.6
// s; the peer is dropped as stalled, with a reason guessing btcd's stale
// tip, and dialled again.
func TestFakeAnnouncerWithholdingHeadersDelaysLittle(t *testing.T) {
	testFakeAnnouncerHeaders(t, 0, 30*time.Second, 5)
}

// TestFakeAnnouncerSlowHeadersDelaysLittle is
// TestFakeAnnouncerWithholdingHeadersDelaysLittle with a peer that
// answers every getheaders, in full, 8 s late (the client's timeout is
// 10 s): it never stalls, so it is never dropped.
//
// Not answered yet: every block waits for its late answer. Measured:
// 9.0 s for four blocks in a row (0.31 s before the attack), until the
// pool leaves the peer out as too slow, for a minute: on a network with
// ten-minute blocks it is back for the next block, whose report waits
// again about the whole timeout; nobody is banned or warned. The
// operation lock is held meanwhile: a scan of 11 blocks already verified,
// started 1.5 s after a block was mined, took 7.6 s.
func TestFakeAnnouncerSlowHeadersDelaysLittle(t *testing.T) {
	testFakeAnnouncerHeaders(t, 8*time.Second, 10*time.Second, 5)
}

// TestFakeAnnouncerHeadersUnderHoldDelaysLittle is
// TestFakeAnnouncerSlowHeadersDelaysLittle with the default timeout (30
// s) and headers 6 s late, below the quarter of the timeout a peer's
// answer is waited for beside others (the hold): the peer is never left
// out as too slow.
//
// Not answered yet: measured, seven blocks in a row reported 7.0 to 7.6
// s after they were mined (0.3 s before the attack), until the peer had
// kept the syncs waiting its budget (7.5 s) in all and was left out for a
// minute: on a network with ten-minute blocks, it holds every block.
func TestFakeAnnouncerHeadersUnderHoldDelaysLittle(t *testing.T) {
	testFakeAnnouncerHeaders(t, 6*time.Second, peer.DefaultTimeout, 8)
}

// testFakeAnnouncerHeaders plays the announcer of
// TestFakeAnnouncerWithholdingHeadersDelaysLittle, withholding its
// headers (late 0) or sending them late.
func testFakeAnnouncerHeaders(t *testing.T, late, timeout time.Duration, blocks int) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	var withhold atomic.Bool
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgHeaders); ok && withhold.Load() {
			if late == 0 {
				return nil, false
			}
			time.Sleep(late)
		}
		return []wire.Message{m}, false
	})
	honest := []*peertest.Liar{peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil), peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)}
	c := connectTo(t, node, timeout, honest[0].Addr, honest[1].Addr, liar.Addr)
	startService(t, c)
	log, stopLog := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	before := blockLatencies(t, node, log, 3)
	getheaders := func() int {
		return count(honest[0].Commands(), wire.CmdGetHeaders) + count(honest[1].Commands(), wire.CmdGetHeaders)
	}
	asked := getheaders()
	withhold.Store(true)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		fakeAnnouncer(liar, 200*time.Millisecond, stop)
	}()
	attackStart := time.Now()
	// A scan the wallet starts while the service syncs the announcer's
	// headers waits for the operation lock.
	hash := node.Generate(t, 1)[0]
	time.Sleep(announceSettle + 500*time.Millisecond)
	scanStart := time.Now()
	if _, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: items([][]byte{peertest.NewKey("alice").PkScript()}), From: 100, To: 110}); err != nil {
		t.Fatal(err)
	}
	scanTook := time.Since(scanStart)
	log.waitForWithin(t, "the first block of the attack", func(es []Event) bool {
		return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventConnected && e.BlockHash == *hash })
	}, time.Minute)
	t.Logf("a scan of 11 verified blocks started %v after the attack's first block was mined took %v", announceSettle+500*time.Millisecond, scanTook.Round(time.Millisecond))
	during := blockLatencies(t, node, log, blocks)
	close(stop)
	<-done
	took := time.Since(attackStart)
	asked = getheaders() - asked
	if err := stopLog(); err != nil {
		t.Fatal(err)
	}
	t.Logf("block latencies before the attack %v, during it %v; the honest peers were sent %d getheaders in %v of attack (%.1f/s)",
		before, during, asked, took.Round(time.Millisecond), float64(asked)/took.Seconds())
	limit := announceSettle + announceLeadWait + 2*time.Second
	for i, d := range during {
		if d > limit {
			t.Errorf("block %d of the attack reported %v after it was mined, want at most %v", i+1, d.Round(time.Millisecond), limit)
		}
	}
	for _, st := range c.Peers() {
		if st.Banned && st.Address != liar.Addr {
			t.Errorf("honest peer %s banned: %s", st.Address, st.Reason)
		}
		t.Logf("peer %s: banned %v, reason %q", st.Address, st.Banned, st.Reason)
	}
}
