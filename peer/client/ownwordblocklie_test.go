package client

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// onceBlockLiar starts a relay to the fixture's node that serves the block at
// height h with a transaction changed (intact on the wire, its merkle
// root no longer the header's) the first time it is asked for it, and
// honestly after, counting its lies in lies.
func onceBlockLiar(t *testing.T, h int32, lies *atomic.Int32) string {
	t.Helper()
	hash, err := fx.node.RPC().GetBlockHash(int64(h))
	if err != nil {
		t.Fatal(err)
	}
	return peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if b, ok := m.(*wire.MsgBlock); ok && b.BlockHash() == *hash && lies.CompareAndSwap(0, 1) {
			b.Transactions[0].LockTime ^= 1
		}
		return []wire.Message{m}, false
	}).Addr
}

// TestOwnWordBlockLieBanned: a scan of the last blocks with a word liar,
// which serves an empty filter for one block and states its hash as its
// own word there (see ownWord), a block liar, which serves that block
// with a transaction changed the first time it is asked for it, and an
// honest peer. The liar's filter is checked against its block
// (blockProof), downloaded from one of the three: when it is the block
// liar, its block, not its header's, is a proof, and it is banned as a
// scan's download bans (see Client.blame). The watched script is in no
// block, so that the scan downloads no block of its own: the block liar
// lies to the own word's download alone. Before, that lie ended the
// download and was only noted: the block liar stayed a peer. The honest
// peer, which serves the same block, is never charged.
func TestOwnWordBlockLieBanned(t *testing.T) {
	needFixture(t)
	at := fx.tip - 2
	l := newWordLiar(t, fx.node, at, peertest.EmptyFilter(nil))
	watch := items([][]byte{peertest.NewKey("in no block").PkScript()})
	const rounds = 30
	ran, banned := 0, 0
	for round := 0; round < rounds && ran < 4; round++ {
		var lies atomic.Int32
		bl := onceBlockLiar(t, at, &lies)
		honest := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil).Addr
		c, _, words, res, err := wordScan(t, l, nil, watch, bl, honest)
		if st := c.pool.Status(clientMember(t, c, honest)); st.Banned {
			t.Errorf("round %d: the honest peer banned: %+v", round, st)
		}
		if words == 0 || lies.Load() == 0 {
			t.Logf("round %d: the liar's word not asked (%d) or the block not asked of the block liar first (%d lies): %v", round, words, lies.Load(), err)
			continue
		}
		ran++
		if err != nil {
			t.Errorf("round %d: the scan failed with an honest peer: %v", round, err)
			continue
		}
		st := c.pool.Status(clientMember(t, c, bl))
		if st.Banned {
			banned++
		} else {
			t.Errorf("round %d: the block liar, whose block is not its header's, not banned: %+v; warnings %q", round, st, res.Warnings)
		}
		t.Logf("round %d: block liar %+v", round, st)
	}
	t.Logf("%d rounds with the block asked of the block liar for the own word's check: banned in %d", ran, banned)
	if ran == 0 {
		t.Fatalf("the block liar was never asked for the block in %d rounds: the attack did not run", rounds)
	}
}

// wordScan scans the last blocks of the fixture's chain for watch with
// the peers at others and a relay telling l's lies (through wrap, if not
// nil), listed last, and returns the client, the relay's address, the
// number of times l stated its word during the scan, and its result.
func wordScan(t *testing.T, l *wordLiar, wrap func(peertest.LieFunc) peertest.LieFunc, watch []WatchItem, others ...string) (c *Client, liar string, words int, _ *ScanResult, _ error) {
	t.Helper()
	lie := peertest.LieFunc(l.lie)
	if wrap != nil {
		lie = wrap(lie)
	}
	l.mu.Lock()
	words0 := l.words
	l.mu.Unlock()
	liar = peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, lie).Addr
	c = connectWith(t, Config{Peers: append(slices.Clone(others), liar), Params: fx.node.Params, Timeout: 10 * time.Second, ConnectOnly: true})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := c.ScanBIP157(ctx, ScanRequest{Watch: watch, From: fx.tip - 5, To: fx.tip})
	l.mu.Lock()
	defer l.mu.Unlock()
	return c, liar, l.words - words0, res, err
}

// firstBlockQuitter wraps lie (nil: honest) to hang up the first time
// the node's answer is a block, counting the hang-up in ends.
func firstBlockQuitter(lie peertest.LieFunc, ends *atomic.Int32) peertest.LieFunc {
	var done atomic.Bool
	return func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgBlock); ok && done.CompareAndSwap(false, true) {
			ends.Add(1)
			return nil, true
		}
		if lie == nil {
			return []wire.Message{m}, false
		}
		return lie(m)
	}
}

// TestOwnWordRefusalsNotedOnce: a scan of the last blocks with a word
// liar (see TestOwnWordBlockLieBanned) and two other peers, each of the
// three hanging up the first time a block is asked of it. The liar's
// filter is checked against its block (blockProof), whose download asks
// each in turn and fails, no peer left; the disagreement is settled by
// the scan going on (its verification again settles the disagreement
// with the block, which they then serve). Each hang-up is named once in the scan's
// warnings: the download's notes name it (see fetchWanted), and the note
// of the check's failure does not name it again. Before, that note
// repeated every hang-up the download's notes had named.
func TestOwnWordRefusalsNotedOnce(t *testing.T) {
	needFixture(t)
	at := fx.tip - 2
	l := newWordLiar(t, fx.node, at, peertest.EmptyFilter(nil))
	watch := items([][]byte{peertest.NewKey("in no block").PkScript()})
	const rounds = 10
	ran := 0
	for round := 0; round < rounds && ran < 3; round++ {
		var ends atomic.Int32
		var peers []string
		for range 2 {
			peers = append(peers, peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, firstBlockQuitter(nil, &ends)).Addr)
		}
		c, liar, words, res, err := wordScan(t, l, func(lie peertest.LieFunc) peertest.LieFunc { return firstBlockQuitter(lie, &ends) }, watch, peers...)
		peers = append(peers, liar)
		if words == 0 || ends.Load() < 3 {
			t.Logf("round %d: the liar's word not asked (%d) or not every peer hung up (%d ends): %v", round, words, ends.Load(), err)
			continue
		}
		ran++
		if err != nil {
			t.Errorf("round %d: the scan failed: %v", round, err)
			continue
		}
		for _, p := range peers {
			want := "peer " + p + ": getdata block: " + peer.ErrDisconnected.Error()
			n := 0
			for _, w := range res.Warnings {
				n += strings.Count(w, want)
			}
			if n != 1 {
				t.Errorf("round %d: the hang-up of %s named %d times in the warnings, want once: %q", round, p, n, res.Warnings)
			}
		}
		// The liar is not always asked again after the check: its ban is
		// not this test's.
		t.Logf("round %d: the liar banned %v; warnings %q", round, c.pool.Status(clientMember(t, c, liar)).Banned, res.Warnings)
		for _, p := range peers[:2] {
			if st := c.pool.Status(clientMember(t, c, p)); st.Banned {
				t.Errorf("round %d: %s, which only hung up, banned: %+v", round, p, st)
			}
		}
	}
	if ran == 0 {
		t.Fatalf("the liar's word was never asked, or the peers never all hung up, in %d rounds: the attack did not run", rounds)
	}
}

// TestOwnWordBlockLieIsProof: when the peer whose filter is checked
// against its block (blockProof) is the one that serves that block
// changed, its block is the proof against it, banned and returned as
// such, so that its own word is not asked of a peer it has just banned.
// Before, the lie was banned and blockProof returned no proof.
func TestOwnWordBlockLieIsProof(t *testing.T) {
	needFixture(t)
	at := fx.tip - 3
	var lies atomic.Int32
	liar := onceBlockLiar(t, at, &lies)
	c := connectTo(t, fx.node, 10*time.Second, liar)
	m := clientMember(t, c, liar)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	off := &offHeaderError{height: at, data: peertest.EmptyFilter(nil), msg: "off the agreed header"}
	err := c.blockProof(ctx, nil, m, off)
	if lies.Load() != 1 {
		t.Fatalf("premise: the liar lied %d times about block %d, want once", lies.Load(), at)
	}
	if !isLie(err) {
		t.Errorf("the block liar's own filter checked against its changed block: %v, want its block as the proof", err)
	}
	if st := c.pool.Status(m); !st.Banned {
		t.Errorf("the block liar is not banned: %+v", st)
	}
}
