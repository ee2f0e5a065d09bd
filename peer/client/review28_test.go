package client

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// lateWordLiar is a peer whose announcements reach the client lateDelay
// after the other peers' (so it claims each new block late, see
// lateClaims), and which, once armed, does one thing to the first
// getcfheaders answer of one hash it then sends: withholds it, or
// flips its filter hash.
type lateWordLiar struct {
	withhold bool
	mu       sync.Mutex
	armed    bool
	done     chan struct{} // closed once the answer was touched
}

const reviewLateDelay = time.Second

func (l *lateWordLiar) lie(m wire.Message) ([]wire.Message, bool) {
	if _, ok := m.(*wire.MsgInv); ok {
		time.Sleep(reviewLateDelay)
		return []wire.Message{m}, false
	}
	ch, ok := m.(*wire.MsgCFHeaders)
	if !ok || len(ch.FilterHashes) != 1 {
		return []wire.Message{m}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.armed {
		return []wire.Message{m}, false
	}
	l.armed = false
	close(l.done)
	if l.withhold {
		return nil, false
	}
	ch.FilterHashes[0][0] ^= 1
	return []wire.Message{m}, false
}

func (l *lateWordLiar) arm() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.armed = true
}

// reviewLateSetup starts a node of 110 blocks, two honest peers and a
// late one lying as l says, a started client following from block 100,
// and mines blocks from 111 on until the late peer, claiming one late,
// was asked for a filter header alone (its answer touched); it returns
// that block's height.
func reviewLateSetup(t *testing.T, l *lateWordLiar, timeout time.Duration) (*peertest.Node, *Client, *peertest.Liar, *eventLog, func() error, int32) {
	t.Helper()
	l.done = make(chan struct{})
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	a := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	b := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	late := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, l.lie, peertest.AlsoSees(wire.CmdInv))
	c := connectTo(t, node, timeout, a.Addr, b.Addr, late.Addr)
	reviewLiars = map[string]*peertest.Liar{a.Addr: a, b.Addr: b, late.Addr: late}
	startService(t, c)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	l.arm()
	for h := int32(111); ; h++ {
		node.Generate(t, 1)
		log.waitFor(t, fmt.Sprintf("block %d", h), tipAt(h))
		select {
		case <-l.done:
			return node, c, late, log, stop, h
		case <-time.After(10 * time.Second):
		}
		if h == 113 {
			for _, st := range c.Peers() {
				t.Logf("peer %s: tip %d, reason %q, asked %s", st.Address, st.Tip, st.Reason, reviewCFHeadersAsked(c, reviewLiars[st.Address]))
			}
			t.Fatal("the late peer was never asked for a filter header alone after blocks 111 to 113")
		}
	}
}

// TestReviewLateWordWithheldStallsFollowing: of three peers, one
// announces each block a second after the others (it claims it late)
// and withholds one answer: its word on the filter header of the block
// it claimed late (lateAgree's getcfheaders of one hash). lateAgree asks
// it alone, under the operation lock, with the whole request timeout
// and no budget: the service and every rescan wait the timeout for one
// withheld answer, and the next block is reported a timeout late. A
// withholding peer must cost little (as TestWithholdingAnnouncerCostsLittle
// holds for a withheld header sync): the next block within timeout/4.
func TestReviewLateWordWithheldStallsFollowing(t *testing.T) {
	const timeout = 20 * time.Second
	l := &lateWordLiar{withhold: true}
	node, c, _, log, stop, h := reviewLateSetup(t, l, timeout)
	start := time.Now()
	node.Generate(t, 1)
	log.waitForWithin(t, fmt.Sprintf("block %d", h+1), tipAt(h+1), 2*timeout)
	took := time.Since(start)
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, st := range c.Peers() {
		t.Logf("peer %s: banned %v, reason %q", st.Address, st.Banned, st.Reason)
	}
	if limit := timeout / 4; took > limit {
		t.Errorf("block %d reported %v after it was mined, after a late claimer withheld one word (at most %v; its timeout %v)", h+1, took, limit, timeout)
	}
	t.Logf("block %d reported %v after it was mined", h+1, took)
}

// TestReviewLateWordLieIsBlamed: of three peers, one announces each
// block a second after the others (it claims it late) and gives a false
// word on the filter header of that block (lateAgree): its filter hash
// flipped. The verified heights are given up and every peer states them
// again (verifyRange), where the liar states the true hashes: its own
// hashes contradict its word, as in TestWordOnTipLieIsCaught's "its word
// alone", where such a peer is banned. Here nothing blames it, so a late
// claimer makes every block it claims late be verified again with every
// peer, the heights given up first, for free.
func TestReviewLateWordLieIsBlamed(t *testing.T) {
	l := &lateWordLiar{}
	_, c, late, log, stop, _ := reviewLateSetup(t, l, 5*time.Second)
	banned := func() bool {
		for _, st := range c.Peers() {
			if st.Address == late.Addr && st.Banned {
				return true
			}
		}
		return false
	}
	for end := time.Now().Add(15 * time.Second); !banned() && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, st := range c.Peers() {
		t.Logf("peer %s: banned %v, reason %q", st.Address, st.Banned, st.Reason)
		if liar := st.Address == late.Addr; st.Banned != liar {
			t.Errorf("peer %s (the late word's liar %v): banned %v, reason %q", st.Address, liar, st.Banned, st.Reason)
		}
	}
	for _, st := range c.Peers() {
		t.Logf("peer %s asked: %s", st.Address, reviewCFHeadersAsked(c, reviewLiars[st.Address]))
	}
	t.Logf("events: %q", log.summary())
}

// reviewLiars are the proxies of the last reviewLateSetup, by address.
var reviewLiars = map[string]*peertest.Liar{}

// reviewCFHeadersAsked lists the getcfheaders l was sent from height 100
// on, as start..stop heights.
func reviewCFHeadersAsked(c *Client, l *peertest.Liar) string {
	var out []string
	if l == nil {
		return ""
	}
	for _, m := range l.Requests() {
		if req, ok := m.(*wire.MsgGetCFHeaders); ok {
			if h, ok := c.Chain().HeightOf(req.StopHash); ok && h >= 100 {
				out = append(out, fmt.Sprintf("%d..%d", req.StartHeight, h))
			}
		}
	}
	return strings.Join(out, " ")
}

// TestReviewLateClaimerOneBlockBehind: two colluders in front of a node
// forge the filter of the block that pays alice (111) and announce every
// block at once; the honest peer is a node of its own, which gets each
// block later (a slower link). It gets block 111 only once block 112 was
// verified with the colluders alone: it claims 111 late, and lateAgree
// asks it for its word on the filter header of 112, a block it does not
// hold yet. An honest btcd does not answer that; the request times out,
// and the late claim, the one way the honest peer's word on 111 was to be
// heard, is gone: the forged filter header of 111 stands on the
// colluders' word. Once the honest node holds every block, its word on
// the next block commits to its true header of 111, which the agreed
// (forged) one contradicts. Want: the colluders banned, the payment
// reported, the honest peer not banned.
func TestReviewLateClaimerOneBlockBehind(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	behind := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	alice, colluders := reviewColluders(t, node)
	honest := peertest.NewLiar(t, behind.P2PAddr, behind.Params.Net, nil)
	c := connectTo(t, node, 5*time.Second, colluders[0], colluders[1], honest.Addr)
	startService(t, c)
	log, stop := follow(t, c, 100, alice.PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 111
	log.waitFor(t, "block 111", tipAt(111))
	node.Generate(t, 1) // 112
	log.waitFor(t, "block 112", tipAt(112))
	behind.CopyBlocks(t, node, 111) // the honest node gets 111 and announces it: late
	time.Sleep(10 * time.Second)    // lateAgree's request times out (5 s)
	behind.CopyBlocks(t, node, 112)
	node.Generate(t, 1) // 113
	behind.CopyBlocks(t, node, 113)
	log.waitFor(t, "block 113", tipAt(113))
	reviewVerdict(t, c, colluders, honest, log, stop, pay.TxHash())
}

// TestReviewHonestPeerBackAfterForgeryIsBanned: two colluders forge the
// filter of the block that pays alice (111); the one honest peer's
// connection is down (its proxy is paused) while 111 and 112 are
// verified, with the colluders alone. It comes back: a peer seen again
// claims nothing late, so it is never asked about 111, and its word on
// the next block (113) commits to its true filter header of 112, which
// differs from the agreed one. It is then asked from the agreed header
// and banned for "previous filter header ... the agreed one is": a ban
// that rests on the colluders' word, not on a proof. Want: the
// colluders banned, the payment reported, the honest peer not banned.
func TestReviewHonestPeerBackAfterForgeryIsBanned(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice, colluders := reviewColluders(t, node)
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c := connectTo(t, node, 5*time.Second, colluders[0], colluders[1], honest.Addr)
	startService(t, c)
	log, stop := follow(t, c, 100, alice.PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	back := make(chan struct{})
	go func() {
		defer close(back)
		honest.Pause(t, 8*time.Second) // its connection closes at once
	}()
	time.Sleep(500 * time.Millisecond)
	pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 111, announced by inv: the honest connection hangs up
	log.waitFor(t, "block 111", tipAt(111))
	node.Generate(t, 1) // 112
	log.waitFor(t, "block 112", tipAt(112))
	<-back
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
		if i := slices.IndexFunc(c.Peers(), func(st PeerStatus) bool { return st.Address == honest.Addr && st.Reason == "" && st.Tip >= 112 }); i >= 0 {
			break
		}
	}
	node.Generate(t, 1) // 113
	log.waitFor(t, "block 113", tipAt(113))
	reviewVerdict(t, c, colluders, honest, log, stop, pay.TxHash())
}

// TestReviewFollowWaitsForeverWithoutFilterPeer: a started client with
// two peers, one offering compact filters and one not (btcd
// --nocfilters). The filter peer lies about the next block's filter
// headers (a cfheaders answer for another block) and is banned: no peer
// that offers compact filters is left, nor can one come back. The
// following rescan still waits, as if one might be dialled again
// (mayComeBack counts every member not banned, the one without compact
// filters too), and never ends. Want: Run returns an error naming that
// no peer is left.
func TestReviewFollowWaitsForeverWithoutFilterPeer(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	noCF := peertest.CopyChain(t, node, peertest.WithArgs("--nocfilters", "--nobanning"))
	var armed sync.Mutex
	lie := false
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		armed.Lock()
		defer armed.Unlock()
		if ch, ok := m.(*wire.MsgCFHeaders); ok && lie {
			ch.StopHash[0] ^= 1
		}
		return []wire.Message{m}, false
	})
	c := connectTo(t, node, 5*time.Second, liar.Addr, noCF.P2PAddr)
	startService(t, c)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	armed.Lock()
	lie = true
	armed.Unlock()
	node.Generate(t, 1) // 111
	noCF.CopyBlocks(t, node, 111)
	for end := time.Now().Add(20 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		log.mu.Lock()
		ended := log.ended
		log.mu.Unlock()
		if ended != "" {
			t.Logf("%s", ended)
			return
		}
	}
	for _, st := range c.Peers() {
		t.Logf("peer %s: services %s, banned %v, reason %q", st.Address, st.Services, st.Banned, st.Reason)
	}
	t.Errorf("the following rescan has not ended 20 s after its only filter peer was banned (a peer without compact filters left); events %q", log.summary())
	stop()
}

// reviewColluders returns alice and two colluders in front of node that
// forge the filter of every block from 111 on that pays her.
func reviewColluders(t *testing.T, node *peertest.Node) (*peertest.Key, []string) {
	alice := peertest.NewKey("alice")
	var colluders []string
	for range 2 {
		lie := peertest.Forge(t, node, 111, paysTo(alice.PkScript()), peertest.EmptyFilter)
		colluders = append(colluders, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, lie).Addr)
	}
	return alice, colluders
}

// reviewVerdict waits up to 20 s for the colluders to be banned, stops
// the rescan and wants the colluders banned, the honest peer not, and
// the payment pay, which their filter hid, reported.
func reviewVerdict(t *testing.T, c *Client, colluders []string, honest *peertest.Liar, log *eventLog, stop func() error, pay chainhash.Hash) {
	t.Helper()
	bannedColluders := func() int {
		n := 0
		for _, st := range c.Peers() {
			if slices.Contains(colluders, st.Address) && st.Banned {
				n++
			}
		}
		return n
	}
	for end := time.Now().Add(20 * time.Second); bannedColluders() < len(colluders) && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, st := range c.Peers() {
		t.Logf("peer %s: tip %d, banned %v, reason %q", st.Address, st.Tip, st.Banned, st.Reason)
		if colluder := slices.Contains(colluders, st.Address); st.Banned != colluder {
			t.Errorf("peer %s (colluder %v): banned %v, reason %q", st.Address, colluder, st.Banned, st.Reason)
		}
	}
	t.Logf("honest peer asked for filter headers %s; its commands %q", reviewCFHeadersAsked(c, honest), honest.Commands())
	if ms := matched(log.snapshot(), pay); len(ms) == 0 {
		t.Errorf("the payment in block 111, hidden by the colluders' forged filter, was never reported: events %q", log.summary())
	}
	t.Logf("events: %q", log.summary())
}
