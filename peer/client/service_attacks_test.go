package client

import (
	"context"
	"encoding/binary"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// The tests of this file play peers that try to keep a following client
// busy, or to lose it a peer.

// count returns how many times cmd occurs in cmds.
func count(cmds []string, cmd string) int {
	n := 0
	for _, c := range cmds {
		if c == cmd {
			n++
		}
	}
	return n
}

// announceFakeBlocks has l announce n random block hashes, one inv every
// interval, until the client hangs up on it; it returns how many it
// announced.
func announceFakeBlocks(t *testing.T, l *peertest.Liar, n int, every time.Duration) int {
	t.Helper()
	for i := 0; i < n; i++ {
		var h chainhash.Hash
		binary.LittleEndian.PutUint64(h[:], rand.Uint64())
		inv := wire.NewMsgInv()
		inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h))
		if err := l.Inject(inv); err != nil {
			t.Logf("the client hung up on the announcer after %d announcements: %v", i, err)
			return i
		}
		time.Sleep(every)
	}
	return n
}

// peerStatus returns what c knows of the peer at addr.
func peerStatus(c *Client, addr string) PeerStatus {
	for _, p := range c.Peers() {
		if p.Address == addr {
			return p
		}
	}
	return PeerStatus{}
}

// TestFakeBlockAnnouncementsSpareOtherPeers: a peer of a started service
// announces a block hash nobody has, 50 times a second (a twentieth of
// its inv budget). An announcement of an unknown block syncs the
// announcer alone, and one that announces twenty blocks in a row it does
// not serve is banned: the announcements cost the honest peer few
// getheaders rounds, or the announcer is named. The figures are logged.
func TestFakeBlockAnnouncementsSpareOtherPeers(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	spammer := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c := connectTo(t, node, 5*time.Second, honest.Addr, spammer.Addr)
	startService(t, c)
	time.Sleep(time.Second)
	before := count(honest.Commands(), wire.CmdGetHeaders)
	const invs, every = 150, 20 * time.Millisecond
	start := time.Now()
	announceFakeBlocks(t, spammer, invs, every)
	time.Sleep(200 * time.Millisecond)
	during := count(honest.Commands(), wire.CmdGetHeaders) - before
	elapsed := time.Since(start)
	st := peerStatus(c, spammer.Addr)
	t.Logf("%d announcements of unknown blocks in %v made the service send %d getheaders to the honest peer (%d before them, in 1 s); the announcer: %+v",
		invs, elapsed.Round(time.Millisecond), during, before, st)
	if during > invs/10 && !st.Banned && st.Reason == "" {
		t.Errorf("%d fake block announcements cost the honest peer %d getheaders rounds and the announcer is neither named nor ranked down", invs, during)
	}
}

// TestServiceConflictNotReplayedPerAnnouncement: a started service over
// an honest node and a liar in front of it whose filter of the new block
// 112 leaves out the script its spend reveals (the block cannot prove it
// false; one against one, the service cannot decide). The service logs
// the conflict; the liar then announces unknown block hashes. A failed
// verification is not tried again for the same block and peers within a
// minute, and the announcer of blocks it does not serve is banned, so the
// announcements do not replay the dispute (the block downloaded, a filter
// from each side) each time. The figures are logged.
func TestServiceConflictNotReplayedPerAnnouncement(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice, bob := peertest.NewKey("alice"), peertest.NewKey("bob")
	fund := node.SpendCoinbase(t, wire.NewTxOut(50_000_000, alice.PkScript()))
	node.Confirm(t, fund) // 111
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, peertest.ForgeFilter(t, node, 112, peertest.OutputsOnly))
	c := connectTo(t, node, 5*time.Second, honest.Addr, liar.Addr)
	spend := node.Spend(t, []peertest.Output{peertest.OutputOf(fund, 0, alice)}, wire.NewTxOut(50_000_000-peertest.Fee, bob.PkScript()))
	node.Confirm(t, spend) // 112: the filter the liar forges
	// The service's first header sync finds block 112 on both peers.
	startService(t, c)
	time.Sleep(time.Second)
	blocks := func() int { return count(honest.Commands(), wire.CmdGetData) + count(liar.Commands(), wire.CmdGetData) }
	cfilters := func() int {
		return count(honest.Commands(), wire.CmdGetCFilters) + count(liar.Commands(), wire.CmdGetCFilters)
	}
	b0, f0, h0 := blocks(), cfilters(), count(honest.Commands(), wire.CmdGetHeaders)
	if b0 == 0 || f0 == 0 {
		t.Fatalf("no dispute over block 112 took place (%d block requests, %d filter requests)", b0, f0)
	}
	const invs = 60
	announceFakeBlocks(t, liar, invs, 50*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	db, df, dh := blocks()-b0, cfilters()-f0, count(honest.Commands(), wire.CmdGetHeaders)-h0
	st := peerStatus(c, liar.Addr)
	t.Logf("before the announcements: %d getdata (blocks), %d getcfilters; %d announcements of unknown blocks by the liar: %d getdata (blocks), %d getcfilters, %d getheaders to the honest peer; the liar: %+v",
		b0, f0, invs, db, df, dh, st)
	if db > invs/4 && !st.Banned && st.Reason == "" {
		t.Errorf("the announcements replayed the dispute: %d block requests and %d filter requests for %d announcements, and the announcer is neither named nor ranked down", db, df, invs)
	}
}

// TestLiarHangingUpOnDisputeIsNotReplayed: a liar hides a payment behind
// an empty filter (which the block proves false), hangs up when asked for
// that filter (which only a dispute does) and passes on none of its
// node's announcements. Block 111, the payment, is mined before the
// service starts, so the service's first header sync finds it on both
// peers and its verification meets the lie: a dispute, which the liar
// hangs up on. Hanging up proves nothing, so the side stands and the
// block is a conflict; the dispute is not replayed each time the liar
// comes back: at most three disputes in four seconds, or the liar banned.
// The figures are logged.
func TestLiarHangingUpOnDisputeIsNotReplayed(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice := peertest.NewKey("alice")
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	h := &hangUp{forge: peertest.Forge(t, node, 111, paysTo(alice.PkScript()), peertest.EmptyFilter)}
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, h.lie, peertest.AlsoSees(wire.CmdInv)).Addr
	c := connectTo(t, node, 5*time.Second, honest.Addr, liar)
	pay := node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	h.target(*node.Confirm(t, pay)) // 111
	b0 := count(honest.Commands(), wire.CmdGetData)
	startService(t, c)
	// Four seconds, or until the liar is banned.
	const watch = 4 * time.Second
	start := time.Now()
	for !peerStatus(c, liar).Banned && time.Since(start) < watch {
		time.Sleep(50 * time.Millisecond)
	}
	blocks := count(honest.Commands(), wire.CmdGetData) - b0
	st := peerStatus(c, liar)
	t.Logf("in %v after the service started: %d disputes (the liar hung up on each), %d block downloads from the honest peer; the liar: %+v",
		time.Since(start).Round(time.Millisecond), h.disputes.Load(), blocks, st)
	if h.disputes.Load() == 0 {
		t.Fatal("the liar was never asked for the filter it hides: no dispute took place")
	}
	if !st.Banned && h.disputes.Load() > 3 {
		t.Errorf("the liar hid a payment %d times in %v, each costing a dispute, and is not banned: %+v", h.disputes.Load(), watch, st)
	}
}

// hangUp is a liar's behaviour that forges filters, drops the node's
// announcements and hangs up when asked for the filter of one block.
type hangUp struct {
	forge    peertest.LieFunc
	mu       sync.Mutex
	block    chainhash.Hash // hung up on
	disputes atomic.Int64   // times hung up
}

// target makes h hang up when asked for the filter of block.
func (h *hangUp) target(block chainhash.Hash) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.block = block
}

func (h *hangUp) lie(m wire.Message) ([]wire.Message, bool) {
	switch m := m.(type) {
	case *wire.MsgInv:
		return nil, false
	case *wire.MsgCFilter:
		h.mu.Lock()
		hang := m.BlockHash == h.block
		h.mu.Unlock()
		if hang {
			h.disputes.Add(1)
			return nil, true
		}
	}
	return h.forge(m)
}

// TestFollowRedialsRestartedNode: a following rescan on a client whose
// service is not started over one node that restarts, away for a second.
// Without the service, every header sync redials the given peers that
// went away, so the rescan gets the node back and reports the block it
// mines once it is back (Run returning an error would be loud too).
func TestFollowRedialsRestartedNode(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c := connectTo(t, node, 5*time.Second, proxy.Addr)
	log := newEventLog()
	r := c.NewRescan(RescanOptions{From: 100, Follow: true, PollInterval: 100 * time.Millisecond, OnEvent: log.add,
		Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	log.waitFor(t, "the tip at 110", tipAt(110))
	proxy.Pause(t, time.Second)
	node.Generate(t, 1) // 111, once the node is back
	deadline := time.After(15 * time.Second)
	for {
		log.mu.Lock()
		ok := tipAt(111)(log.events)
		log.mu.Unlock()
		if ok {
			return
		}
		select {
		case err := <-done:
			t.Logf("Run returned: %v", err)
			return
		case <-log.signal:
		case <-deadline:
			t.Errorf("15 s after the node came back and mined block 111: no event, Run still waiting; the peer: %+v; the rescan's warnings: %q",
				c.Peers()[0], r.Warnings())
			return
		}
	}
}
