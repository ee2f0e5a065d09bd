package client

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// headerBytes counts the bytes of the filter-header answers (cfheaders
// and cfcheckpt) a node sends through a peertest.Liar, and the filter
// hashes they carry.
type headerBytes struct {
	mu             sync.Mutex
	n, hashes      int
	headers, cpMsg int
}

func (b *headerBytes) lie(m wire.Message) ([]wire.Message, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	switch msg := m.(type) {
	case *wire.MsgCFHeaders:
		b.hashes += len(msg.FilterHashes)
		b.headers++
	case *wire.MsgCFCheckpt:
		b.cpMsg++
	default:
		return []wire.Message{m}, false
	}
	var buf bytes.Buffer
	if err := m.BtcEncode(&buf, wire.ProtocolVersion, wire.WitnessEncoding); err == nil {
		b.n += wire.MessageHeaderSize + buf.Len()
	}
	return []wire.Message{m}, false
}

func (b *headerBytes) reset() (n, hashes, headers, checkpoints int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	n, hashes, headers, checkpoints = b.n, b.hashes, b.headers, b.cpMsg
	b.n, b.hashes, b.headers, b.cpMsg = 0, 0, 0, 0
	return n, hashes, headers, checkpoints
}

// TestFollowAsksNewFilterHeaderAlone: a service with a data directory
// follows the tip of a chain past the first checkpoint through two peers.
// Each new block's filter header is still compared between both peers,
// but each is asked for that header alone: the filter-header bytes the
// peers send per new block are bounded by one getcfheaders answer of one
// hash each, without the checkpoints.
func TestFollowAsksNewFilterHeaderAlone(t *testing.T) {
	needFixture(t)
	node := peertest.CopyChain(t, fx.node, peertest.WithArgs("--nobanning"))
	var counts [2]headerBytes
	a := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, counts[0].lie)
	b := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, counts[1].lie)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Connect(ctx, Config{Peers: []string{a.Addr, b.Addr}, Params: node.Params, DataDir: t.TempDir(), Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	startService(t, c)
	tip := fx.tip
	log, stop := follow(t, c, tip-5, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip", tipAt(tip))
	for i := range counts {
		counts[i].reset()
	}
	const blocks = 8
	for i := int32(1); i <= blocks; i++ {
		node.Generate(t, 1)
		log.waitFor(t, "the new block", tipAt(tip+i))
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	// One answer of one hash per peer and block: 24 bytes of message
	// header, the filter type, the stop hash, the previous header, the
	// count and the hash. A block one peer announced before the other is
	// asked again once both hold it (it rested on one peer): twice at
	// most. The checkpoints, whose answer grows with the chain (32 bytes
	// a thousand blocks), are not asked at all.
	const perBlock = wire.MessageHeaderSize + 1 + 32 + 32 + 1 + 32
	for i := range counts {
		n, hashes, headers, checkpoints := counts[i].reset()
		t.Logf("peer %d: %d bytes of filter headers for %d new blocks (%d cfheaders of %d hashes, %d cfcheckpt)",
			i, n, blocks, headers, hashes, checkpoints)
		switch {
		case hashes == 0:
			t.Errorf("peer %d was asked for no filter header: the new blocks were not compared", i)
		case checkpoints > 0:
			t.Errorf("peer %d was asked for its checkpoints %d times while following", i, checkpoints)
		case hashes > 2*blocks || n > 2*blocks*perBlock:
			t.Errorf("peer %d sent %d filter hashes in %d bytes for %d new blocks, want at most %d in %d bytes", i, hashes, n, blocks, 2*blocks, 2*blocks*perBlock)
		}
	}
}

// TestNewHeightsAskOneForHashesOthersForWords: three peers, the filter
// headers verified up to five blocks below the tip; the verification of
// the last five asks one peer for their five filter hashes and each
// other peer for its word on the tip's filter header alone, one hash
// each: 7 hashes in all, where each peer stating the five cost 15.
func TestNewHeightsAskOneForHashesOthersForWords(t *testing.T) {
	needFixture(t)
	tip := fx.tip
	if tip%wire.CFCheckptInterval < 5 {
		t.Fatalf("the fixture's tip %d is too close above a checkpoint for this test", tip)
	}
	var counts [3]headerBytes
	addrs := make([]string, len(counts))
	for i := range counts {
		addrs[i] = peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, counts[i].lie).Addr
	}
	c := connectTo(t, fx.node, 5*time.Second, addrs...)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.verifyFilterHeaders(ctx, 0, tip-5); err != nil {
		t.Fatal(err)
	}
	for i := range counts {
		counts[i].reset()
	}
	if err := c.verifyFilterHeaders(ctx, tip-4, tip); err != nil {
		t.Fatal(err)
	}
	var got []int
	total := 0
	for i := range counts {
		n, hashes, headers, checkpoints := counts[i].reset()
		t.Logf("peer %d: %d cfheaders of %d hashes, %d bytes, %d cfcheckpt", i, headers, hashes, n, checkpoints)
		if headers != 1 || checkpoints != 0 {
			t.Errorf("peer %d sent %d cfheaders and %d cfcheckpt, want one cfheaders", i, headers, checkpoints)
		}
		got = append(got, hashes)
		total += hashes
	}
	slices.Sort(got)
	if !slices.Equal(got, []int{1, 1, 5}) {
		t.Errorf("filter hashes per peer %v, want one peer 5 and the others 1 each (%d in all)", got, total)
	}
	for _, p := range c.Peers() {
		if !p.Compared || p.Banned {
			t.Errorf("peer %s: compared %v, banned %v: every honest peer's word is compared", p.Address, p.Compared, p.Banned)
		}
	}
}

// TestWordOnTipLieIsCaught: of three peers (or two), one forges the
// filter hash of the tip's block in its filter-header answers: in every
// one (whether it is asked for the new hashes or for its word on the tip:
// its word differs, the peers state their hashes in full, and the block
// proves it wrong), or, slower than the others so that it gives its word,
// in its word alone (its hashes then contradict its own word). It is
// banned and the honest peers are not, and the heights are verified up
// to the tip with the peers left: with two, they rest on neither alone;
// with one, they are verified and said to rest on it.
func TestWordOnTipLieIsCaught(t *testing.T) {
	needFixture(t)
	tip := fx.tip
	tipHash, err := fx.node.RPC().GetBlockHash(int64(tip))
	if err != nil {
		t.Fatal(err)
	}
	forge := func(words bool) peertest.LieFunc {
		return func(m wire.Message) ([]wire.Message, bool) {
			if words {
				time.Sleep(20 * time.Millisecond)
			}
			if ch, ok := m.(*wire.MsgCFHeaders); ok && ch.StopHash == *tipHash && len(ch.FilterHashes) > 0 && (!words || len(ch.FilterHashes) == 1) {
				ch.FilterHashes[len(ch.FilterHashes)-1][0] ^= 1
			}
			return []wire.Message{m}, false
		}
	}
	noLie := func(m wire.Message) ([]wire.Message, bool) { return []wire.Message{m}, false }
	for _, tt := range []struct {
		name          string
		peers, liarAt int
		words         bool
	}{
		{"every answer, first", 3, 0, false}, {"every answer, last", 3, 2, false}, {"its word alone", 3, 1, true},
		{"every answer, one honest peer", 2, 0, false}, {"its word alone, one honest peer", 2, 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			addrs := make([]string, tt.peers)
			for i := range addrs {
				lie := noLie
				if i == tt.liarAt {
					lie = forge(tt.words)
				}
				addrs[i] = peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, lie).Addr
			}
			c := connectTo(t, fx.node, 5*time.Second, addrs...)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			if err := c.verifyFilterHeaders(ctx, 0, tip-5); err != nil {
				t.Fatal(err)
			}
			if err := c.verifyFilterHeaders(ctx, tip-4, tip); err != nil {
				t.Errorf("verifying the new heights: %v, want them verified with the peers left", err)
			}
			c.opMu.Lock()
			verifiedTo, known, lonely := c.verifiedTo, len(c.knownPrefix(tip-4, tip)), slices.Clone(c.lonely)
			c.opMu.Unlock()
			if verifiedTo != tip {
				t.Errorf("filter headers verified up to %d, want the tip %d", verifiedTo, tip)
			}
			onOne := slices.ContainsFunc(lonely, func(o OnePeer) bool { return o.From <= tip && tip <= o.To })
			switch honest := tt.peers - 1; {
			case honest >= 2 && (known != 5 || onOne):
				t.Errorf("with %d honest peers left, %d of the 5 new heights known, resting on one peer %v (%+v): want all, on neither alone", honest, known, onOne, lonely)
			case honest == 1 && !onOne:
				t.Errorf("with one honest peer left, the tip is not said to rest on it: %+v", lonely)
			}
			for _, p := range c.Peers() {
				t.Logf("%s: banned %v %s", p.Address, p.Banned, p.Reason)
				if liar := p.Address == addrs[tt.liarAt]; p.Banned != liar {
					t.Errorf("peer %s (liar %v): banned %v, %s", p.Address, liar, p.Banned, p.Reason)
				}
			}
		})
	}
}

// lateWordLiar is a peer whose announcements reach the client
// lateWordDelay after the other peers' (so it claims each new block late,
// see lateClaims), and which, once armed, flips the filter hash of the
// first getcfheaders answer of one hash it then sends for a block the
// rescan reported already: its word on a block it claimed late, not its
// word when the block was first verified (a header sync may have told
// its tip before its announcement came).
type lateWordLiar struct {
	mu    sync.Mutex
	c     *Client
	log   *eventLog // armed once set
	done  chan struct{}
	fired bool
}

// lateWordDelay is long enough for the other peers to have verified a new
// block before the liar announces it, and short enough for the answers
// that wait behind its announcement to stay within its budget (see
// pool.Budget).
const lateWordDelay = 700 * time.Millisecond

func (l *lateWordLiar) lie(m wire.Message) ([]wire.Message, bool) {
	if _, ok := m.(*wire.MsgInv); ok {
		time.Sleep(lateWordDelay)
		return []wire.Message{m}, false
	}
	ch, ok := m.(*wire.MsgCFHeaders)
	if !ok || len(ch.FilterHashes) != 1 {
		return []wire.Message{m}, false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.log == nil || l.fired {
		return []wire.Message{m}, false
	}
	if h, ok := l.c.Chain().HeightOf(ch.StopHash); !ok || !tipAt(h)(l.log.snapshot()) {
		return []wire.Message{m}, false
	}
	l.fired = true
	close(l.done)
	ch.FilterHashes[0][0] ^= 1
	return []wire.Message{m}, false
}

func (l *lateWordLiar) arm(c *Client, log *eventLog) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.c, l.log = c, log
}

// TestLateWordLieIsBlamed: of three peers, one announces each block a
// second after the others (it claims it late) and gives a false word on
// the filter header of that block (see lateAgree): its filter hash
// flipped. The heights are verified again with every peer, where it
// states the true hashes: its own hashes contradict its word, as a word
// on the tip does in TestWordOnTipLieIsCaught, and it is banned for it,
// the honest peers not.
func TestLateWordLieIsBlamed(t *testing.T) {
	l := &lateWordLiar{done: make(chan struct{})}
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	a := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	b := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	late := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, l.lie, peertest.AlsoSees(wire.CmdInv))
	c := connectTo(t, node, 5*time.Second, a.Addr, b.Addr, late.Addr)
	startService(t, c)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	l.arm(c, log)
	for h := int32(111); ; h++ {
		node.Generate(t, 1)
		log.waitFor(t, fmt.Sprintf("block %d", h), tipAt(h))
		select {
		case <-l.done:
		case <-time.After(10 * time.Second):
			if h < 113 {
				continue
			}
			for _, st := range c.Peers() {
				t.Logf("peer %s: tip %d, reason %q", st.Address, st.Tip, st.Reason)
			}
			t.Fatalf("the late peer was never asked for a filter header alone after blocks 111 to 113: asked %s", cfHeadersAsked(c, late))
		}
		break
	}
	liarVerdict(t, c, late, log, stop)
}

// liarVerdict waits up to 15 s for liar to be banned, stops the rescan,
// and wants liar alone banned, for a filter header it stated itself.
func liarVerdict(t *testing.T, c *Client, liar *peertest.Liar, log *eventLog, stop func() error) {
	t.Helper()
	banned := func() bool {
		return slices.ContainsFunc(c.Peers(), func(st PeerStatus) bool { return st.Address == liar.Addr && st.Banned })
	}
	for end := time.Now().Add(15 * time.Second); !banned() && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, st := range c.Peers() {
		t.Logf("peer %s: banned %v, reason %q", st.Address, st.Banned, st.Reason)
		if isLiar := st.Address == liar.Addr; st.Banned != isLiar || isLiar && !strings.Contains(st.Reason, "where it stated") {
			t.Errorf("peer %s (the liar %v): banned %v, reason %q", st.Address, isLiar, st.Banned, st.Reason)
		}
	}
	t.Logf("liar asked %s; events %q", cfHeadersAsked(c, liar), log.summary())
}

// TestFalsePreviousHeaderIsBlamed: of three peers following the tip,
// one states a false filter header before every new height it is asked
// for (its answers' previous filter header flipped, from height 111 on).
// Its false header at 110 contradicts the one its own filter hashes
// stated there when 110 was verified (see ownHeaders): it is banned on
// that. (Without its own word kept, a previous header that differs from
// the verified one above the last checkpoint proves nothing alone, and
// the heights from the checkpoint are asked again of every peer: the
// liar, asked from the checkpoint's header, states the true hashes, which
// contradict the header it stated, and it is banned for that.) The
// honest peers are not, and the blocks are reported.
func TestFalsePreviousHeaderIsBlamed(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	var chain atomic.Pointer[Client]
	lie := func(m wire.Message) ([]wire.Message, bool) {
		ch, ok := m.(*wire.MsgCFHeaders)
		if c := chain.Load(); ok && c != nil {
			if h, ok := c.Chain().HeightOf(ch.StopHash); ok && h-int32(len(ch.FilterHashes))+1 > 110 {
				ch.PrevFilterHeader[0] ^= 1
			}
		}
		return []wire.Message{m}, false
	}
	// The honest peers answer later, so that the liar, the fastest, is
	// the one asked for the new hashes, not only for its word.
	slower := func(m wire.Message) ([]wire.Message, bool) {
		switch m.(type) {
		case *wire.MsgHeaders, *wire.MsgCFHeaders, *wire.MsgCFCheckpt:
			time.Sleep(40 * time.Millisecond)
		}
		return []wire.Message{m}, false
	}
	a := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, slower)
	b := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, slower)
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, lie)
	c := connectTo(t, node, 5*time.Second, a.Addr, b.Addr, liar.Addr)
	chain.Store(c)
	startService(t, c)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	node.Generate(t, 1)
	log.waitFor(t, "the tip at 111", tipAt(111))
	liarVerdict(t, c, liar, log, stop)
}
