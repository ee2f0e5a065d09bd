//go:build openattacks

// Attacks on a client following the tip that it does not withstand yet:
// each test asserts what the client should do and fails while the attack
// works, with the figures it measured.

package client

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestStaleLeadPreemptsRestSync (open): a peer whose node is stale (it
// never gets the new blocks) relays the announcement of every new block,
// and leads its sync (it wins the random pick; with the honest
// announcers remembered as withholders after one slow answer, see
// withheldMemory, it is the only one the pick may take). It answers
// getheaders at once with its stale chain, so the block is not in the
// chain after the lead's sync and waits for the rest sync of the honest
// announcers (two, each answering getheaders within 300 ms, as over a
// slow link). Just before that sync starts, the stale peer announces the
// block again: preemptOnNews takes that for news and cancels the rest
// sync, which leaves the honest announcers' announcements for the next
// sync, uncharged, whose lead is the stale peer again. The block waits
// until the stale peer has been charged maxUndelivered times and banned
// (without proof): one announcement repeated is not news, and a peer
// whose own sync just showed it lacks the block should not preempt
// those that may hold it.
//
// Picked at random, the lead is the stale peer as well: it answers at
// once, the honest peers in 300 ms, so they are ranked slow and the pick
// (pool.PickFast) leaves them out; and a preempted sync abandons their
// getheaders, which closes their connections, and the pick prefers open
// ones. Only once both are dialled again may one of them lead. Then the
// stale peer's announcement of the block, now in the chain, raises its
// tip (see announced): it is asked for the block's filter header, which
// its node lacks, and the report waits for it until it is cut off.
//
// What should hold: the block, held by two honest peers that answer in
// 300 ms, is reported within announceSettle + announceLeadWait + 1 s of
// being mined.
func TestStaleLeadPreemptsRestSync(t *testing.T) {
	for _, tc := range []struct {
		name   string
		forced bool
	}{
		{"the stale peer leads", true},
		{"the lead picked at random", false},
	} {
		t.Run(tc.name, func(t *testing.T) { testStaleLeadPreempts(t, tc.forced) })
	}
}

// testStaleLeadPreempts plays TestStaleLeadPreemptsRestSync, with the
// stale peer the lead of every announcement's sync (forced) or the lead
// picked as ever.
func testStaleLeadPreempts(t *testing.T, forced bool) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	stale := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	var target atomic.Pointer[chainhash.Hash]
	var staleLead *peertest.Liar
	staleLead = peertest.NewLiar(t, stale.P2PAddr, stale.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgHeaders); ok {
			if hash := target.Load(); hash != nil {
				// Announced again once the report of its sync is over,
				// before the rest sync starts (restYield).
				time.AfterFunc(restYield/2, func() {
					inv := wire.NewMsgInv()
					inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, hash))
					staleLead.Inject(inv)
				})
			}
		}
		return []wire.Message{m}, false
	})
	slowLink := func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgHeaders); ok {
			time.Sleep(300 * time.Millisecond)
		}
		return []wire.Message{m}, false
	}
	honest := []*peertest.Liar{peertest.NewLiar(t, node.P2PAddr, node.Params.Net, slowLink), peertest.NewLiar(t, node.P2PAddr, node.Params.Net, slowLink)}
	const timeout = 10 * time.Second
	c := connectWith(t, Config{Peers: []string{honest[0].Addr, honest[1].Addr, staleLead.Addr}, Params: node.Params, Timeout: timeout, Log: testLog{t, time.Now()}})
	t.Logf("honest %s and %s, stale lead %s", honest[0].Addr, honest[1].Addr, staleLead.Addr)
	if forced {
		c.pickLead = leadIs(staleLead.Addr)
	}
	startService(t, c)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	time.Sleep(2 * time.Second) // the first syncs end before the attack
	asked := count(staleLead.Commands(), wire.CmdGetHeaders)
	start := time.Now()
	hash := node.Generate(t, 1)[0]
	target.Store(hash)
	inv := wire.NewMsgInv()
	inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, hash))
	staleLead.Inject(inv) // the relay of the announcement
	log.waitForWithin(t, "the new block", connectedHash(*hash), time.Minute)
	took := time.Since(start)
	target.Store(nil)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	rounds := count(staleLead.Commands(), wire.CmdGetHeaders) - asked
	for _, st := range c.Peers() {
		t.Logf("peer %s: banned %v, reason %q", st.Address, st.Banned, st.Reason)
	}
	limit := announceSettle + announceLeadWait + time.Second
	t.Logf("block 111 reported %v after it was mined, after %d getheaders to the stale lead (want at most %v)", took.Round(time.Millisecond), rounds, limit)
	if took > limit {
		t.Errorf("block 111, held by two honest peers, reported %v after it was mined, want at most %v: the stale lead preempted the honest announcers' sync %d times", took.Round(time.Millisecond), limit, rounds)
	}
}
