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
)

// wordLiar serves a forged filter at every height below 1051 and, asked
// for its own word on one (see ownWord), states the forged filter's hash;
// asked then for its checkpoint at 1000 and its filter headers up to it
// from its word (ownCheckpoint), it states ones that lead from its word.
// Everything else it answers honestly: the checkpoints and filter headers
// a verification asks for.
type wordLiar struct {
	cp1k   chainhash.Hash
	hashes []chainhash.Hash // the true filter hashes of 0..1000
	forged chainhash.Hash   // the forged filter's hash

	mu                   sync.Mutex
	heights              blockHeights
	word                 int32          // the height of its last word
	stated               chainhash.Hash // its last word on the filter header there
	words                int
	served, forgedServed int
}

func newWordLiar(t *testing.T, node *peertest.Node) *wordLiar {
	l := &wordLiar{heights: blockHeights{node, map[chainhash.Hash]int32{}}, forged: chainhash.DoubleHashH(peertest.EmptyFilter(nil)), word: -1}
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
		if h := l.heights.of(m.BlockHash); h >= 0 && h < 1051 {
			m.Data = peertest.EmptyFilter(nil)
			l.forgedServed++
		}
	case *wire.MsgCFHeaders:
		stop := l.heights.of(m.StopHash)
		start := stop - int32(len(m.FilterHashes)) + 1
		switch {
		case len(m.FilterHashes) == 1 && start < 1051:
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

// TestAttack30OwnWordLiarFailsScan: a liar serves a forged filter in
// each batch of filters it takes and, asked for its own word (ownWord),
// states the forged filter's hash, with filter headers and a checkpoint
// at 1000 that lead from it (ownCheckpoint): a disagreement, no proof.
// Every filter header below is given up (the word at 999 gives up the
// whole segment 0, giveUpVerified(-1) through filterDownload.disputed),
// the scan starts again and the verification, where the liar answers
// honestly (its checkpoint at 1000 is the true one there, unlike the one
// it sent ownCheckpoint), finds nothing: maxAttempts times, and then the
// scan fails and the liar is dropped, not banned, beside an honest peer.
// Its word contradicts the hashes and the checkpoint it states in the
// verification: a proof that is never held against it.
func TestAttack30OwnWordLiarFailsScan(t *testing.T) {
	needFixture(t)
	if fx.tip < 1001 {
		t.Fatalf("the fixture's tip %d: want 1001 at least", fx.tip)
	}
	l := newWordLiar(t, fx.node)
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
