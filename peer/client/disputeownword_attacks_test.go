package client

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// wordLiar serves a forged filter at every height below 1051 (or at one
// height alone, see at) and, asked
// for its own word on one (see ownWord), states the forged filter's hash;
// asked then for its checkpoint at 1000 and its filter headers up to it
// from its word (ownCheckpoint), it states ones that lead from its word.
// Everything else it answers honestly: the checkpoints and filter headers
// a verification asks for.
type wordLiar struct {
	cp1k   chainhash.Hash
	hashes []chainhash.Hash // the true filter hashes of 0..1000
	forged chainhash.Hash   // the forged filter's hash
	data   []byte           // the forged filter
	at     int32            // the one height it forges, or -1: every one below 1051

	mu                   sync.Mutex
	heights              blockHeights
	word                 int32          // the height of its last word
	stated               chainhash.Hash // its last word on the filter header there
	words                int
	served, forgedServed int
}

func newWordLiar(t *testing.T, node *peertest.Node, at int32, data []byte) *wordLiar {
	l := &wordLiar{heights: blockHeights{node, map[chainhash.Hash]int32{}}, forged: chainhash.DoubleHashH(data), data: data, at: at, word: -1}
	for h := int32(0); h <= 1000; h++ {
		hash, err := node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		l.heights.heights[*hash] = h
		cf, err := node.RPC().GetCFilter(hash, wire.GCSFilterRegular)
		if err != nil {
			t.Fatal(err)
		}
		l.hashes = append(l.hashes, chainhash.DoubleHashH(cf.Data))
		if h == 1000 {
			l.cp1k = *hash
		}
	}
	return l
}

func (l *wordLiar) lie(m wire.Message) ([]wire.Message, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	switch m := m.(type) {
	case *wire.MsgCFilter:
		l.served++
		if h := l.heights.of(m.BlockHash); l.forges(h) {
			m.Data = l.data
			l.forgedServed++
		}
	case *wire.MsgCFHeaders:
		stop := l.heights.of(m.StopHash)
		start := stop - int32(len(m.FilterHashes)) + 1
		switch {
		case len(m.FilterHashes) == 1 && l.forges(start):
			// Its word on a filter it forged (a verification's words
			// are at the tip, 1051).
			forged := l.forged
			m.FilterHashes[0] = &forged
			l.word, l.stated = start, gcs.MakeHeader(&forged, &m.PrevFilterHeader)
			l.words++
		case l.word >= 0 && l.word < 1000 && start == l.word+1 && stop == 1000:
			m.PrevFilterHeader = l.stated
		}
	case *wire.MsgCFCheckpt:
		if m.StopHash == l.cp1k && len(m.FilterHeaders) == 1 && l.word >= 0 && l.word <= 1000 {
			cp := l.stated
			for h := l.word + 1; h <= 1000; h++ {
				cp = gcs.MakeHeader(&l.hashes[h], &cp)
			}
			m.FilterHeaders[0] = &cp
		}
	}
	return []wire.Message{m}, false
}

// forges reports whether it forges the filter of height h.
func (l *wordLiar) forges(h int32) bool {
	return h >= 0 && (l.at < 0 && h < 1051 || h == l.at)
}

// TestOwnWordLiarBannedOnBlockProof: a liar serves a forged filter in
// each batch of filters it takes and, asked for its own word (ownWord),
// states the forged filter's hash, with filter headers and a checkpoint
// at 1000 that lead from it (ownCheckpoint). The forged filter is
// checked against its block first (blockProof), which proves it false:
// the liar is banned on that proof, and the scan, beside an honest peer,
// succeeds.
func TestOwnWordLiarBannedOnBlockProof(t *testing.T) {
	needFixture(t)
	if fx.tip < 1001 {
		t.Fatalf("the fixture's tip %d: want 1001 at least", fx.tip)
	}
	l := newWordLiar(t, fx.node, -1, peertest.EmptyFilter(nil))
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, l.lie).Addr
	c := connect(t, 5*time.Second, append(honestPeers(t, 1), liar)...)
	b0 := c.pool.BytesReceived()
	start := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: fx.tip})
	l.mu.Lock()
	words := l.words
	t.Logf("the liar served %d filters, %d forged", l.served, l.forgedServed)
	l.mu.Unlock()
	t.Logf("scan: %v in %v, %d bytes received; the liar gave %d forged words", err, time.Since(start).Round(time.Millisecond), c.pool.BytesReceived()-b0, words)
	for _, p := range c.Peers() {
		t.Logf("%s: banned %v %q", p.Address, p.Banned, p.Reason)
		if p.Address == liar && !p.Banned {
			t.Errorf("the liar, whose word contradicts its own checkpoint, is not banned: %q", p.Reason)
		}
	}
	if err != nil {
		if errors.Is(err, errDisputedHeader) {
			t.Errorf("the scan with an honest peer failed on the liar's disagreement: %v", err)
		} else {
			t.Errorf("scan: %v", err)
		}
		return
	}
	checkMatches(t, res, fx.want)
}

// TestAttackUndecidableWordHeldToCheckpoint: the word liar forges the
// filter of the block with alice's spend alone, leaving out the script
// it spends, which the block cannot prove false; asked for its own word
// there (ownWord), it states the forged filter's hash, with filter
// headers and a checkpoint at 1000 that lead from it (ownCheckpoint): a
// disagreement, no proof yet. The segment is verified again, where it
// sends the true checkpoint at 1000: its word and its checkpoint
// contradict it, and it is banned on them, beside an honest peer.
func TestAttackUndecidableWordHeldToCheckpoint(t *testing.T) {
	needFixture(t)
	h := fx.height[fx.spendAlice.TxHash()]
	if h >= wire.CFCheckptInterval || fx.tip < 1001 {
		t.Fatalf("the fixture's spend at %d, tip %d: want the spend in segment 0 and a tip past 1000", h, fx.tip)
	}
	hash, err := fx.node.RPC().GetBlockHash(int64(h))
	if err != nil {
		t.Fatal(err)
	}
	block, err := fx.node.RPC().GetBlock(hash)
	if err != nil {
		t.Fatal(err)
	}
	l := newWordLiar(t, fx.node, h, peertest.OutputsOnly(block))
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, l.lie).Addr
	c := connect(t, 5*time.Second, append(honestPeers(t, 1), liar)...)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := c.verifyFilterHeaders(ctx, 0, fx.tip); err != nil {
		t.Fatal(err)
	}
	var m *pool.Member
	for _, o := range c.pool.Members() {
		if o.Addr() == liar {
			m = o
		}
	}
	c.opMu.Lock()
	defer c.opMu.Unlock()
	agreed := c.knownPrefix(h-1, h)
	if m == nil || len(agreed) != 2 {
		t.Fatalf("premise: the liar in the pool (%v), the filter headers of %d..%d verified (%d)", m != nil, h-1, h, len(agreed))
	}
	lie := errors.New("the filter leads to another filter header than the agreed one")
	off := &offHeaderError{height: h, hash: l.forged, data: l.data, msg: "off the agreed header"}
	from, err := c.ownWord(ctx, nil, m, off, [2]chainhash.Hash{agreed[0], agreed[1]}, lie)
	t.Logf("own word: from %d, %v", from, err)
	if !errors.Is(err, errDisputedHeader) {
		t.Fatalf("the liar's word on a filter its block cannot decide: %v, want a disagreement", err)
	}
	c.giveUpVerified(from - 1)
	err = c.verifyRange(ctx, from, fx.tip)
	t.Logf("verifying %d..%d again: %v", from, fx.tip, err)
	if err != nil {
		t.Errorf("verifying again beside an honest peer: %v", err)
	}
	for _, p := range c.Peers() {
		t.Logf("%s: banned %v %q", p.Address, p.Banned, p.Reason)
		switch {
		case p.Address == liar && !p.Banned:
			t.Errorf("the liar, whose checkpoint contradicts its word, is not banned: %q", p.Reason)
		case p.Address != liar && p.Banned:
			t.Errorf("the honest peer is banned: %s", p.Reason)
		}
	}
}
