package client

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// TestOwnWordBelowCheckpointNeedsProof: below the chain's last checkpoint
// a peer serves a filter off the agreed filter header. Agreed is not
// proof: two colluders, the only peers when the headers were verified,
// forged block 500's filter and every header after it (their
// checkpoints too), and an honest peer added later serves the true
// filter; its own filter headers lead from its word on block 500 to its
// own checkpoint, so it is not proven false and is not taken as lying:
// the heights are disputed from the segment's start. A liar whose word
// on block 500 states its forged filter but whose own filter headers
// after it do not follow from that word is proven false by them.
func TestOwnWordBelowCheckpointNeedsProof(t *testing.T) {
	needFixture(t)
	const h = 500
	if fx.tip < wire.CFCheckptInterval {
		t.Fatalf("the fixture's tip %d is below the first checkpoint", fx.tip)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lie := errors.New("the filter leads to another filter header than the agreed one")
	member := func(c *Client, addr string) *pool.Member {
		t.Helper()
		for _, m := range c.pool.Members() {
			if m.Addr() == addr {
				return m
			}
		}
		t.Fatalf("no member %s", addr)
		return nil
	}

	t.Run("honest peer against agreed colluders", func(t *testing.T) {
		var colluders []string
		for range 2 {
			forge := peertest.Forge(t, fx.node, h, func(height int32, _ *wire.MsgBlock) bool { return height == h }, peertest.EmptyFilter)
			colluders = append(colluders, peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, forge).Addr)
		}
		c := connectTo(t, fx.node, 5*time.Second, colluders...)
		if err := c.verifyFilterHeaders(ctx, 0, fx.tip); err != nil {
			t.Fatal(err)
		}
		honest := honestPeers(t, 1)[0]
		if err := c.AddPeer(ctx, honest, true); err != nil {
			t.Fatal(err)
		}
		m := member(c, honest)
		var data []byte
		if err := c.conn(m).GetCFilters(ctx, h, []chainhash.Hash{c.chain.Hash(h)}, func(_ int, d []byte) error { data = d; return nil }); err != nil {
			t.Fatal(err)
		}
		c.opMu.Lock()
		agreed := c.knownPrefix(h-1, h)
		c.opMu.Unlock()
		fh := chainhash.DoubleHashH(data)
		if len(agreed) != 2 || gcs.MakeHeader(&fh, &agreed[0]) == agreed[1] {
			t.Fatalf("premise: the agreed filter header of %d is the colluders' forged one (%d known)", h, len(agreed))
		}
		off := &offHeaderError{height: h, hash: fh, msg: "off the agreed header"}
		from, err := c.ownWord(ctx, nil, m, off, [2]chainhash.Hash{agreed[0], agreed[1]}, lie)
		t.Logf("own word: from %d, %v", from, err)
		if errors.Is(err, lie) || !errors.Is(err, errDisputedHeader) {
			t.Errorf("the honest peer's filter off the colluders' agreed header: %v, want a dispute (errDisputedHeader), no proof", err)
		}
		if want := segmentFirst(segmentOf(h)); from != want {
			t.Errorf("disputed from height %d, want the segment's start %d", from, want)
		}
	})

	t.Run("liar whose headers contradict its word", func(t *testing.T) {
		forged := chainhash.DoubleHashH([]byte{0})
		stop := func() chainhash.Hash { hash, _ := fx.node.RPC().GetBlockHash(h); return *hash }()
		liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
			if ch, ok := m.(*wire.MsgCFHeaders); ok && ch.StopHash == stop && len(ch.FilterHashes) == 1 {
				*ch.FilterHashes[0] = forged
			}
			return []wire.Message{m}, false
		})
		c := connectTo(t, fx.node, 5*time.Second, honestPeers(t, 1)[0], liar.Addr)
		if err := c.verifyFilterHeaders(ctx, 0, fx.tip); err != nil {
			t.Fatal(err)
		}
		c.opMu.Lock()
		agreed := c.knownPrefix(h-1, h)
		c.opMu.Unlock()
		off := &offHeaderError{height: h, hash: forged, msg: "off the agreed header"}
		_, err := c.ownWord(ctx, nil, member(c, liar.Addr), off, [2]chainhash.Hash{agreed[0], agreed[1]}, lie)
		t.Logf("own word: %v", err)
		if !isLie(err) && !errors.Is(err, lie) {
			t.Errorf("the liar's word off its own filter headers: %v, want a proof of a lie", err)
		}
	})
}
