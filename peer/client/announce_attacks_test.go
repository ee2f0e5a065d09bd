package client

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestAnnouncedBlockNotHeldRestsOnOnePeer: two peers whose node stays a
// block behind announce the honest peer's new blocks, which the chain
// then holds: one together with the honest peer's announcement (taken in
// before or after the chain holds the block, whichever comes first), the
// other once the block was reported (a late announcement). Their tips are
// raised on their word, but they hold neither block and cannot state
// their filter headers: each block is reported resting on the honest
// peer, the late announcer is asked for its word on block 112, a recheck
// it brings about reports the block (if at all) still resting on the
// honest peer (see TestRecheckedOnlyWhereCompared), and nobody is banned (not serving a block announced is
// no proof of a lie). A peer asked for filter headers it withholds is
// left out as too slow, so each announcement comes from a peer of its
// own, not yet asked for anything it cannot answer.
func TestAnnouncedBlockNotHeldRestsOnOnePeer(t *testing.T) {
	honest := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	honest.Generate(t, 110)
	behind := peertest.CopyChain(t, honest, peertest.WithArgs("--nobanning"))
	together := peertest.NewLiar(t, behind.P2PAddr, behind.Params.Net, nil)
	late := peertest.NewLiar(t, behind.P2PAddr, behind.Params.Net, nil)
	c := connectTo(t, honest, 5*time.Second, honest.P2PAddr, together.Addr, late.Addr)
	startService(t, c)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	announce := func(claimer *peertest.Liar, hash *chainhash.Hash) {
		t.Helper()
		inv := wire.NewMsgInv()
		if err := inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, hash)); err != nil {
			t.Fatal(err)
		}
		if err := claimer.Inject(inv); err != nil {
			t.Fatal(err)
		}
	}
	announce(together, honest.Generate(t, 1)[0])
	log.waitFor(t, "block 111", tipAt(111))
	block := honest.Generate(t, 1)[0]
	log.waitFor(t, "block 112", tipAt(112))
	announce(late, block)
	for deadline := time.Now().Add(30 * time.Second); comparedTo(c, late) < 112; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the late announcer was asked for filter headers up to height %d within 30s, want 112 (its word taken); events: %q", comparedTo(c, late), log.summary())
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	reported := map[int32]bool{}
	for _, e := range log.snapshot() {
		if e.Height <= 110 || e.Kind != EventConnected && e.Kind != EventRechecked {
			continue
		}
		reported[e.Height] = reported[e.Height] || e.Kind == EventConnected
		if e.OnePeer != honest.P2PAddr {
			t.Errorf("%v event of block %d: OnePeer %q, want %s (the claimers do not hold it)", e.Kind, e.Height, e.OnePeer, honest.P2PAddr)
		}
	}
	if !reported[111] || !reported[112] {
		t.Errorf("blocks reported connected: %v, want 111 and 112", reported)
	}
	for _, st := range c.Peers() {
		if st.Banned {
			t.Errorf("peer %s banned: %s", st.Address, st.Reason)
		}
		t.Logf("peer %s: tip %d, reason %q", st.Address, st.Tip, st.Reason)
	}
	t.Logf("events: %q", log.summary())
}

// TestLateHonestAnnouncerIsCompared: two colluders in front of a node
// forge the filter of every new block that pays alice and announce each
// block at once; the honest peer's announcements reach the client
// lateDelay after theirs (a slower link). The new block's filter headers
// are verified with the colluders before the honest peer claims the block,
// yet being first buys them nothing: the honest peer's word on the block
// is asked once it claims it, the block proves the colluders false, and
// the rescan, which reported the block on their filter, scans it again
// and reports the payment their filter hid (once, then the block
// rechecked); with the filter headers kept in memory or in a data
// directory.
func TestLateHonestAnnouncerIsCompared(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) { testLateHonestAnnouncer(t, stored) })
	}
}

func testLateHonestAnnouncer(t *testing.T, stored bool) {
	// Later than the service waits for the announcements to settle:
	// the block is verified and reported before the honest peer claims
	// it (see TestLateClaimerAheadIsComparedOnTheNewBlock for a claim
	// that comes with the next block).
	const lateDelay = announceSettle + 300*time.Millisecond
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice := peertest.NewKey("alice")
	colluders := forgingColluders(t, node, alice.PkScript())
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgInv); ok {
			time.Sleep(lateDelay)
		}
		return []wire.Message{m}, false
	}, peertest.AlsoSees(wire.CmdInv))
	cfg := Config{Peers: []string{colluders[0], colluders[1], honest.Addr}, Params: node.Params, Timeout: 5 * time.Second}
	if stored {
		cfg.DataDir = t.TempDir()
	}
	c := connectWith(t, cfg)
	startService(t, c)
	log, stop := follow(t, c, 100, alice.PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 111
	log.waitFor(t, "block 111", tipAt(111))
	banned := func() int {
		n := 0
		for _, st := range c.Peers() {
			if slices.Contains(colluders, st.Address) && st.Banned && strings.Contains(st.Reason, "proves it false") {
				n++
			}
		}
		return n
	}
	for end := time.Now().Add(15 * time.Second); banned() < len(colluders) && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
	}
	// Block 111 was reported on the forged filter; once the proof
	// replaced its filter header, the rescan scans it again and reports
	// the payment it missed, then the block rechecked.
	log.waitFor(t, "block 111 rechecked", func(es []Event) bool {
		return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventRechecked && e.Height == 111 })
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	es := log.snapshot()
	if ms := matched(es, pay.TxHash()); len(ms) != 1 {
		t.Errorf("the payment hidden by the forged filter was reported %d times, want once; events %q", len(ms), log.summary())
	} else if i := slices.IndexFunc(es, func(e Event) bool { return e.Kind == EventRechecked && e.Height == 111 }); i < 1 || es[i-1].Kind != EventMatch || es[i-1].Match.Txid != pay.TxHash() {
		t.Errorf("the payment is not reported just before block 111 rechecked: %q", log.summary())
	}
	if top := comparedTo(c, honest); top < 111 {
		t.Errorf("the honest peer was asked for filter headers up to height %d, want 111", top)
	}
	for _, st := range c.Peers() {
		if slices.Contains(colluders, st.Address) != st.Banned {
			t.Errorf("peer %s (colluder: %v): banned %v, reason %q", st.Address, slices.Contains(colluders, st.Address), st.Banned, st.Reason)
		}
	}
	t.Logf("events: %q", log.summary())
}

// TestWithholdingAnnouncerCostsLittle: two peers announce each new block;
// the one whose headers the service syncs first (the lead, see
// Client.syncAnnounced) withholds them: it never answers getheaders. The
// block is still reported within seconds, from the other announcer, not
// after the withholder's timeout (after its budget as the only other
// voice, a quarter of it at least); the withholder is left out as too
// slow, not banned (withholding proves no lie).
func TestWithholdingAnnouncerCostsLittle(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	withholder, withhold := headersWithholder(t, node, 0)
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	const timeout = 20 * time.Second
	c := connectTo(t, node, timeout, withholder.Addr, honest.Addr)
	c.pickLead = leadIs(withholder.Addr)
	startService(t, c)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	withhold.Store(true)
	start := time.Now()
	node.Generate(t, 1)
	log.waitForWithin(t, "block 111", tipAt(111), timeout)
	took := time.Since(start)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// The withholder is the only peer that could contradict the other:
	// pool.Each gives it a budget of a quarter of the timeout (the hold),
	// or twice the operation's own time if more; half the timeout bounds
	// both here.
	if limit := timeout / 2; took > limit {
		t.Errorf("block 111 reported %v after it was mined, with a withholding lead (at most %v; its timeout %v)", took, limit, timeout)
	}
	t.Logf("block 111 reported %v after it was mined", took)
	for _, st := range c.Peers() {
		if st.Banned {
			t.Errorf("peer %s banned: %s", st.Address, st.Reason)
		}
	}
}

// TestSilentFilterHeaderPeerNotCompared: of two peers holding the chain,
// one never answers getcfheaders. The scan's filter headers rest on the
// other alone: the silent peer is not marked compared, and the result
// says it rests on one peer.
func TestSilentFilterHeaderPeerNotCompared(t *testing.T) {
	needFixture(t)
	silent := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgCFHeaders); ok {
			return nil, false
		}
		return []wire.Message{m}, false
	})
	honest := honestPeers(t, 1)[0]
	c := connect(t, 5*time.Second, silent.Addr, honest)
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: items(fx.watch), To: fx.tip})
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	for _, st := range res.Peers {
		if st.Address == silent.Addr && st.Compared {
			t.Errorf("the peer that stated no filter header is marked compared: %+v", st)
		}
	}
	onOne := hasKind(res.Warnings, WarningOnePeer)
	for _, o := range res.OnePeer {
		onOne = onOne || o.Peer == honest && o.From <= fx.tip && fx.tip <= o.To
	}
	if !onOne {
		t.Errorf("the result rests on %s alone but does not say so: OnePeer %+v, warnings %q", honest, res.OnePeer, res.Warnings)
	}
}
