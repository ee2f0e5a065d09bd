package client

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// lateColluders is a following rescan from height 100 watching alice,
// over a node at height 110 with two colluders in front of it, which
// forge the filter of every block that pays alice (peertest.Forge, its
// behaviour passed through wrap if not nil) and announce each block at
// once, and an honest peer whose announcements reach the client
// lateDelay after theirs (a slower link), or later (holdHonest).
type lateColluders struct {
	node      *peertest.Node
	alice     *peertest.Key
	c         *Client
	honest    *peertest.Liar
	colluders []string
	log       *eventLog
	stop      func() error
	// The honest peer's announcements held while holding (see
	// holdHonest).
	mu      sync.Mutex
	holding bool
	held    []wire.Message
}

// lateDelay is how much later than the colluders' the honest peer's
// announcements reach the client.
const lateDelay = 300 * time.Millisecond

// holdHonest holds the honest peer's announcements until release is
// called (at the latest when the test ends); its link carries everything
// else meanwhile, and the announcements held go first once released: a
// link slower than the rescan however loaded the machine, which lateDelay
// alone is not.
func (x *lateColluders) holdHonest(t *testing.T) (release func()) {
	x.mu.Lock()
	x.holding = true
	x.mu.Unlock()
	release = func() {
		x.mu.Lock()
		x.holding = false
		x.mu.Unlock()
	}
	t.Cleanup(release)
	return release
}

// honestLink is the honest peer's link: its announcements reach the
// client lateDelay after the colluders', or after holdHonest's release.
func (x *lateColluders) honestLink(m wire.Message) ([]wire.Message, bool) {
	_, inv := m.(*wire.MsgInv)
	x.mu.Lock()
	if x.holding && inv {
		x.held = append(x.held, m)
		x.mu.Unlock()
		return nil, false
	}
	out := append(x.held, m)
	x.held = nil
	x.mu.Unlock()
	if inv || len(out) > 1 {
		time.Sleep(lateDelay)
	}
	return out, false
}

// startLateColluders starts a lateColluders rescan, with the filter
// headers kept in memory or in a data directory; the client's log and its
// peers are logged if the test fails.
func startLateColluders(t *testing.T, stored bool, wrap func(peertest.LieFunc) peertest.LieFunc) *lateColluders {
	t.Helper()
	x := &lateColluders{node: peertest.StartBtcd(t, peertest.WithArgs("--nobanning")), alice: peertest.NewKey("alice")}
	x.node.Generate(t, 110)
	for range 2 {
		lie := peertest.Forge(t, x.node, 111, paysTo(x.alice.PkScript()), peertest.EmptyFilter)
		if wrap != nil {
			lie = wrap(lie)
		}
		x.colluders = append(x.colluders, peertest.NewLiar(t, x.node.P2PAddr, x.node.Params.Net, lie).Addr)
	}
	x.honest = peertest.NewLiar(t, x.node.P2PAddr, x.node.Params.Net, x.honestLink, peertest.AlsoSees(wire.CmdInv))
	cfg := Config{Peers: append(slices.Clone(x.colluders), x.honest.Addr), Params: x.node.Params, Timeout: 5 * time.Second}
	if stored {
		cfg.DataDir = t.TempDir()
	}
	clog := &lockedWriter{w: &strings.Builder{}}
	cfg.Log = clog
	x.c = connectWith(t, cfg)
	startService(t, x.c)
	t.Cleanup(func() {
		if t.Failed() {
			for _, st := range x.c.Peers() {
				t.Logf("peer %s: tip %d banned %v reason %q", st.Address, st.Tip, st.Banned, st.Reason)
			}
			t.Logf("client log:\n%s", clog)
		}
	})
	x.log, x.stop = follow(t, x.c, 100, x.alice.PkScript())
	x.log.waitFor(t, "the tip at 110", tipAt(110))
	return x
}

// TestLateProofOfSeveralForgeries: two colluders forge the filter of
// every block that pays alice, and three consecutive blocks do; the
// honest peer's announcements reach the client later than theirs (a
// slower link), so that when its word on the first is asked, the client
// knows it to hold fewer blocks than the colluders verified. The block
// proves the colluders false and they are banned; then, with no further
// block mined, each payment their filters hid is reported once, just
// before its block's EventRechecked, every match an EventRechecked follows
// is a transaction of that block, and each block is rechecked once; with
// the filter headers kept in memory or in a data directory.
func TestLateProofOfSeveralForgeries(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) { testSeveralForgeries(t, stored, false, false) })
	}
}

// TestSeveralForgeriesRecheckedByNextBlock is
// TestLateProofOfSeveralForgeries with the three paying blocks mined at
// once (the honest peer's late word on a block arrives while the rescan
// scans the next) and one more block mined once the colluders are banned:
// the scan of that block verifies the filter headers below it anew, and
// each hidden payment is reported once, then its block rechecked.
func TestSeveralForgeriesRecheckedByNextBlock(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) { testSeveralForgeries(t, stored, true, true) })
	}
}

func testSeveralForgeries(t *testing.T, stored, burst, next bool) {
	x := startLateColluders(t, stored, nil)
	node, alice, c, log, stop, colluders := x.node, x.alice, x.c, x.log, x.stop, x.colluders
	var pays []*wire.MsgTx
	for h := int32(111); h <= 113; h++ {
		pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
		node.Confirm(t, pay)
		pays = append(pays, pay)
		if !burst {
			log.waitFor(t, fmt.Sprintf("block %d", h), tipAt(h))
		}
	}
	node.Generate(t, 1) // 114, paying nobody
	top := int32(114)
	if next {
		log.waitFor(t, "the tip at 114", tipAt(114))
		for end := time.Now().Add(30 * time.Second); banned(c, colluders) < len(colluders) && time.Now().Before(end); {
			time.Sleep(100 * time.Millisecond)
		}
		node.Generate(t, 1)
		top = 115
	}
	reported := func(pay *wire.MsgTx) func([]Event) bool {
		return func(es []Event) bool { return len(matched(es, pay.TxHash())) > 0 }
	}
	for i, pay := range pays {
		log.waitForWithin(t, fmt.Sprintf("the payment in block %d", 111+i), reported(pay), 30*time.Second)
	}
	log.waitFor(t, fmt.Sprintf("the tip at %d", top), tipAt(top))
	time.Sleep(time.Second) // room for a needless second recheck
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	es := log.snapshot()
	checkRecheckOrder(t, es)
	for i, pay := range pays {
		if ms := matched(es, pay.TxHash()); len(ms) != 1 || ms[0].Height != 111+int32(i) {
			t.Errorf("payment %d (block %d) reported %d times; events %q", i, 111+i, len(ms), log.summary())
		}
	}
	checkRecheckedInBlock(t, node, es)
	// Each block scanned against a forged filter header rechecked with
	// what it missed once; a block may be rechecked again with nothing
	// missed while it rests on the honest peer alone (OnePeer names it).
	// A paying block the rescan reached only once the colluders were
	// banned reports its payment without a recheck.
	for h := int32(111); h <= top; h++ {
		n, plain := 0, false
		for i, e := range es {
			if e.Kind == EventRechecked && e.Height == h && i > 0 && es[i-1].Kind == EventMatch {
				n++
			}
			plain = plain || e.Kind == EventMatch && e.Height == h && (i+1 == len(es) || es[i+1].Kind != EventRechecked)
		}
		want := 0
		if h <= 113 && !plain {
			want = 1
		}
		if n != want {
			t.Errorf("block %d rechecked with matches %d times, want %d", h, n, want)
		}
	}
	for _, st := range c.Peers() {
		if colluder := slices.Contains(colluders, st.Address); colluder != st.Banned || colluder && !strings.Contains(st.Reason, "proves it false") {
			t.Errorf("peer %s (colluder: %v): banned %v, reason %q", st.Address, colluder, st.Banned, st.Reason)
		}
	}
	t.Logf("events: %q", log.summary())
	for _, e := range es {
		if e.Kind == EventRechecked || e.Kind == EventMatch {
			t.Logf("%v@%d one peer %q", e.Kind, e.Height, e.OnePeer)
		}
	}
}

// banned returns how many of the colluders c banned on a proof.
func banned(c *Client, colluders []string) int {
	n := 0
	for _, st := range c.Peers() {
		if slices.Contains(colluders, st.Address) && st.Banned && strings.Contains(st.Reason, "proves it false") {
			n++
		}
	}
	return n
}

// checkRecheckOrder checks the rules of the event stream with rechecks:
// as checkOrder, except that a match may come just before its block's
// EventRechecked too, which names a block connected and not disconnected
// since.
func checkRecheckOrder(t *testing.T, events []Event) {
	t.Helper()
	var plain []Event
	connected := map[int32]chainhash.Hash{}
	for i, e := range events {
		switch e.Kind {
		case EventConnected:
			connected[e.Height] = e.BlockHash
		case EventDisconnected:
			delete(connected, e.Height)
		case EventRechecked:
			if connected[e.Height] != e.BlockHash {
				t.Errorf("event %d: block %d rechecked, not connected", i, e.Height)
			}
		case EventMatch:
			if j := slices.IndexFunc(events[i+1:], func(n Event) bool { return n.Kind != EventMatch }); j >= 0 && events[i+1+j].Kind == EventRechecked {
				if n := events[i+1+j]; n.Height != e.Height || n.BlockHash != e.BlockHash {
					t.Errorf("event %d: match at height %d followed by block %d rechecked", i, e.Height, n.Height)
				}
				continue // checked here: checkOrder has no rechecks
			}
		}
		if e.Kind != EventRechecked {
			plain = append(plain, e)
		}
	}
	checkOrder(t, plain)
}

// checkRecheckedInBlock checks that every match reported with a recheck
// (just before an EventRechecked) is a transaction of that block on the
// node.
func checkRecheckedInBlock(t *testing.T, node *peertest.Node, events []Event) {
	t.Helper()
	for i, e := range events {
		if e.Kind != EventRechecked {
			continue
		}
		b, err := node.RPC().GetBlock(&e.BlockHash)
		if err != nil {
			t.Errorf("block %d rechecked: %v", e.Height, err)
			continue
		}
		for j := i - 1; j >= 0 && events[j].Kind == EventMatch; j-- {
			txid := events[j].Match.Txid
			if !slices.ContainsFunc(b.Transactions, func(tx *wire.MsgTx) bool { return tx.TxHash() == txid }) {
				t.Errorf("block %d rechecked with a match %v not in it", e.Height, txid)
			}
		}
	}
}

// lockedWriter is a writer safe for the client's goroutines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprint(l.w)
}

// TestReorgDoesNotRescanLonelyBlocks: a peer's node stays at height 110
// while the honest node mines five more blocks, which the following
// rescan reports resting on the honest peer alone; then the honest node
// replaces its tip (a one-block reorganization, which gives up the filter
// headers verified above the fork). The blocks below the fork are the
// same blocks with the same filter headers, and no other peer holds them:
// they are not scanned again (no EventRechecked), with the filter headers
// kept in memory or in a data directory alike, and the scan goes on on
// the new branch.
func TestReorgDoesNotRescanLonelyBlocks(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) { testReorgLonely(t, stored) })
	}
}

func testReorgLonely(t *testing.T, stored bool) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	behind := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	cfg := Config{Peers: []string{honest.Addr, behind.P2PAddr}, Params: node.Params, Timeout: 2 * time.Second}
	if stored {
		cfg.DataDir = t.TempDir()
	}
	c := connectWith(t, cfg)
	startService(t, c)
	alice := peertest.NewKey("alice")
	log, stop := follow(t, c, 100, alice.PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	node.Generate(t, 2)
	pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 113
	node.Generate(t, 2)
	log.waitFor(t, "the tip at 115", tipAt(115))
	before := len(log.snapshot())
	asked := len(honest.Requests())
	hash, err := node.RPC().GetBlockHash(115)
	if err == nil {
		err = node.RPC().InvalidateBlock(hash)
	}
	if err != nil {
		t.Fatal(err)
	}
	node.Generate(t, 2)
	log.waitFor(t, "the tip at 116", tipAt(116))
	time.Sleep(time.Second) // room for a needless recheck
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	es := log.snapshot()
	checkRecheckOrder(t, es)
	if ms := matched(es, pay.TxHash()); len(ms) != 1 {
		t.Errorf("the payment in block 113 reported %d times, want once", len(ms))
	}
	var again []int32
	for _, e := range es[before:] {
		if e.Kind == EventRechecked && e.Height <= 114 {
			again = append(again, e.Height)
		}
	}
	if len(again) > 0 {
		t.Errorf("after a reorganization above height 114, blocks %v rechecked (same blocks, same filter headers, no other peer holds them)", again)
	}
	filters := 0
	for _, m := range honest.Requests()[asked:] {
		if req, ok := m.(*wire.MsgGetCFilters); ok && req.StartHeight <= 114 {
			filters++
		}
	}
	t.Logf("after the reorganization: %d getcfilters starting at or below 114; events: %q", filters, log.summary())
}

// TestForgedBlockReorganizedAway: the colluders of
// TestLateProofOfSeveralForgeries forge the filter of the block that pays
// alice; once the rescan reported it (without the payment: the honest
// peer's announcement of it is held until then), the node replaces it by a branch two blocks long whose first block pays alice
// again, which they forge too. The payment is reported once, in the new
// branch's block, which the node holds; no block that left the chain is
// rechecked, and the event stream keeps its rules; with the filter
// headers kept in memory or in a data directory.
func TestForgedBlockReorganizedAway(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) { testForgedReorganized(t, stored) })
	}
}

func testForgedReorganized(t *testing.T, stored bool) {
	x := startLateColluders(t, stored, nil)
	node, alice, c, log, stop, colluders := x.node, x.alice, x.c, x.log, x.stop, x.colluders
	release := x.holdHonest(t)
	pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	old := node.Confirm(t, pay) // 111
	log.waitFor(t, "block 111", tipAt(111))
	release()
	if ms := matched(log.snapshot(), pay.TxHash()); len(ms) > 0 {
		t.Fatalf("the payment reported in block 111 before the honest peer announced it: the colluders' filter was not taken; events %q", log.summary())
	}
	if err := node.RPC().InvalidateBlock(old); err != nil {
		t.Fatal(err)
	}
	node.Generate(t, 2) // 111, paying alice again, and 112
	log.waitFor(t, "the tip at 112", tipAt(112))
	for end := time.Now().Add(20 * time.Second); len(finalMatches(log.snapshot())) == 0 && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(time.Second) // room for a second report
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	es := log.snapshot()
	checkRecheckOrder(t, es)
	final := finalMatches(es)
	if _, ok := final[pay.TxHash()]; !ok {
		t.Errorf("the payment is not reported in the new branch; events %q", log.summary())
	}
	checkOnChain(t, node, final)
	if ms := matched(es, pay.TxHash()); len(ms) != 1 || ms[0].BlockHash == *old {
		t.Errorf("the payment reported %d times (first in the block that left the chain: %v); events %q", len(ms), len(ms) > 0 && ms[0].BlockHash == *old, log.summary())
	}
	for _, st := range c.Peers() {
		t.Logf("peer %s (colluder %v): banned %v, reason %q", st.Address, slices.Contains(colluders, st.Address), st.Banned, st.Reason)
	}
	t.Logf("events: %q", log.summary())
}

// TestHonestPeerNotBannedForColludersHeader: two colluders, faster than
// the honest peer, state forged filter headers for the block that pays
// alice (peertest.Forge) but serve that block's true filter, which does
// not lead to the header they stated: they are caught by their own word.
// The honest peer's filter is the true one too; that it does not lead to
// the colluders' header proves nothing against it: it is not banned, and
// the payment is reported; with the filter headers kept in memory or in a
// data directory.
func TestHonestPeerNotBannedForColludersHeader(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) { testColludersHeader(t, stored) })
	}
}

func testColludersHeader(t *testing.T, stored bool) {
	x := startLateColluders(t, stored, func(forge peertest.LieFunc) peertest.LieFunc {
		return func(m wire.Message) ([]wire.Message, bool) {
			if _, ok := m.(*wire.MsgCFilter); ok {
				return []wire.Message{m}, false // the true filter
			}
			return forge(m)
		}
	})
	node, alice, c, log, stop, colluders := x.node, x.alice, x.c, x.log, x.stop, x.colluders
	pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 111
	for end := time.Now().Add(20 * time.Second); len(matched(log.snapshot(), pay.TxHash())) == 0 && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Errorf("the rescan ended: %v", err)
	}
	for _, st := range c.Peers() {
		if st.Address == x.honest.Addr && st.Banned {
			t.Errorf("the honest peer is banned: %s", st.Reason)
		}
		t.Logf("peer %s (colluder %v): banned %v, reason %q", st.Address, slices.Contains(colluders, st.Address), st.Banned, st.Reason)
	}
	if ms := matched(log.snapshot(), pay.TxHash()); len(ms) != 1 {
		t.Errorf("the payment reported %d times, want once; events %q", len(ms), log.summary())
	}
	t.Logf("events: %q", log.summary())
}

// TestLateClaimerOneBlockBehind: two colluders in front of a node forge
// the filter of the block that pays alice (111) and announce every block
// at once; the honest peer is a node of its own, which gets each block
// later (a slower link). It gets block 111 only once block 112 was
// verified with the colluders alone: it claims 111 late and is asked for
// its word at 111, the highest block it holds (an honest btcd does not
// answer for a block it lacks), which differs from the forged header.
// Once it holds every block, its word on the next block commits to its
// true header of 112, which differs from the agreed (forged) one too.
// The colluders are banned, the payment reported, the honest peer not
// banned.
func TestLateClaimerOneBlockBehind(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	behind := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	alice, colluders := forgingPair(t, node)
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
	time.Sleep(10 * time.Second)    // room for a request at 112 to time out (5 s)
	behind.CopyBlocks(t, node, 112)
	node.Generate(t, 1) // 113
	behind.CopyBlocks(t, node, 113)
	log.waitFor(t, "block 113", tipAt(113))
	forgeryVerdict(t, c, colluders, honest, log, stop, pay.TxHash())
}

// TestHonestPeerBackAfterForgeryNotBanned: two colluders forge the
// filter of the block that pays alice (111); the one honest peer's
// connection is down (its proxy is paused) while 111 and 112 are
// verified, with the colluders alone. It comes back: a peer seen again
// claims nothing late, so it is never asked about 111, and its answer on
// the next block (113) states its true filter header of 112 before it,
// which differs from the agreed one. That header was verified without
// it, so the difference proves nothing: the heights from the last
// checkpoint are verified again with every peer, and block 111 proves
// the colluders false. The colluders are banned, the payment reported,
// the honest peer not banned; with the filter headers kept in memory or
// in a data directory.
func TestHonestPeerBackAfterForgeryNotBanned(t *testing.T) {
	for _, stored := range []bool{false, true} {
		t.Run(fmt.Sprintf("stored=%v", stored), func(t *testing.T) { testHonestPeerBack(t, stored) })
	}
}

func testHonestPeerBack(t *testing.T, stored bool) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice, colluders := forgingPair(t, node)
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	cfg := Config{Peers: append(slices.Clone(colluders), honest.Addr), Params: node.Params, Timeout: 5 * time.Second}
	if stored {
		cfg.DataDir = t.TempDir()
	}
	c := connectWith(t, cfg)
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
	forgeryVerdict(t, c, colluders, honest, log, stop, pay.TxHash())
}

// forgingPair returns alice and two colluders in front of node that
// forge the filter of every block from 111 on that pays her.
func forgingPair(t *testing.T, node *peertest.Node) (*peertest.Key, []string) {
	alice := peertest.NewKey("alice")
	var colluders []string
	for range 2 {
		lie := peertest.Forge(t, node, 111, paysTo(alice.PkScript()), peertest.EmptyFilter)
		colluders = append(colluders, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, lie).Addr)
	}
	return alice, colluders
}

// forgeryVerdict waits up to 20 s for the colluders to be banned, stops
// the rescan and wants the colluders banned, the honest peer not, and
// the payment pay, which their filter hid, reported.
func forgeryVerdict(t *testing.T, c *Client, colluders []string, honest *peertest.Liar, log *eventLog, stop func() error, pay chainhash.Hash) {
	t.Helper()
	for end := time.Now().Add(20 * time.Second); banned(c, colluders) < len(colluders) && time.Now().Before(end); {
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
	t.Logf("honest peer asked for filter headers %s", cfHeadersAsked(c, honest))
	if ms := matched(log.snapshot(), pay); len(ms) == 0 {
		t.Errorf("the payment in block 111, hidden by the colluders' forged filter, was never reported: events %q", log.summary())
	}
	t.Logf("events: %q", log.summary())
}

// cfHeadersAsked lists the getcfheaders l was sent from height 100 on,
// as start..stop heights.
func cfHeadersAsked(c *Client, l *peertest.Liar) string {
	var out []string
	for _, m := range l.Requests() {
		if req, ok := m.(*wire.MsgGetCFHeaders); ok {
			if h, ok := c.Chain().HeightOf(req.StopHash); ok && h >= 100 {
				out = append(out, fmt.Sprintf("%d..%d", req.StartHeight, h))
			}
		}
	}
	return strings.Join(out, " ")
}
