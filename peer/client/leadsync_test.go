package client

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// headerCounter is a relay's lie that forwards everything and counts the
// headers messages the node sends, the headers in them and the filter
// hashes of its cfheaders.
type headerCounter struct{ msgs, n, filterHashes atomic.Int64 }

func (h *headerCounter) lie(m wire.Message) ([]wire.Message, bool) {
	switch msg := m.(type) {
	case *wire.MsgHeaders:
		h.msgs.Add(1)
		h.n.Add(int64(len(msg.Headers)))
	case *wire.MsgCFHeaders:
		h.filterHashes.Add(int64(len(msg.FilterHashes)))
	}
	return []wire.Message{m}, false
}

// reset returns the counts and sets them to zero.
func (h *headerCounter) reset() (msgs, n, filterHashes int64) {
	return h.msgs.Swap(0), h.n.Swap(0), h.filterHashes.Swap(0)
}

// leadIs returns a lead picker that picks the member at addr.
func leadIs(addr string) func([]*pool.Member) *pool.Member {
	return func(ms []*pool.Member) *pool.Member {
		if i := slices.IndexFunc(ms, func(m *pool.Member) bool { return m.Addr() == addr }); i >= 0 {
			return ms[i]
		}
		return ms[0]
	}
}

// TestHeadersFromOneLead: three honest nodes (one a block ahead) serve a
// chain of over a thousand blocks. The header sync takes the chain from
// one of them; the others send only what follows the tip it reached (one
// header each, or the one block more), yet each is measured at its own
// tip, so the chain rests on all three.
func TestHeadersFromOneLead(t *testing.T) {
	needFixture(t)
	nodes := []*peertest.Node{fx.node, twinShared.Get(t), needAhead(t).node}
	counts := make([]*headerCounter, len(nodes))
	addrs := make([]string, len(nodes))
	for i, n := range nodes {
		counts[i] = &headerCounter{}
		addrs[i] = peertest.NewLiar(t, n.P2PAddr, n.Params.Net, counts[i].lie).Addr
	}
	c := connectWith(t, Config{Peers: addrs, Params: fx.node.Params, Timeout: 10 * time.Second})
	top := fx.tip + 1
	if h := c.Chain().Height(); h != top {
		t.Fatalf("chain at %d, want %d", h, top)
	}
	var total int64
	for i := range nodes {
		total += counts[i].n.Load()
	}
	// The lead sends every header; each other peer a few (one a round,
	// and a header sync takes two rounds when the first changed the
	// chain); when every peer downloads the chain, three times it.
	if limit := int64(top) * 3 / 2; total > limit {
		t.Errorf("the peers sent %d headers for a chain of %d (at most %d)", total, top, limit)
	}
	t.Logf("the peers sent %d headers for a chain of %d", total, top)
	tips := map[string]int32{addrs[0]: fx.tip, addrs[1]: fx.tip, addrs[2]: top}
	for _, st := range c.Peers() {
		if st.Tip != tips[st.Address] || st.Banned || st.Reason != "" {
			t.Errorf("peer %s: tip %d, want %d; banned %v, %q", st.Address, st.Tip, tips[st.Address], st.Banned, st.Reason)
		}
	}
}

// TestStalledLeadCostsLittle: the lead of the header sync never answers
// getheaders. The other peer starts once the chain has not grown for
// leadStall, not after the lead's head start or its timeout; the lead,
// the only other voice, is waited for within its budget of a quarter of
// the timeout; the chain is the honest peer's, and the lead is left out
// as too slow, not banned.
func TestStalledLeadCostsLittle(t *testing.T) {
	needFixture(t)
	staller := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgHeaders); ok {
			return nil, false
		}
		return []wire.Message{m}, false
	})
	honest := twinShared.Get(t)
	c := connectUnsynced(t, fx.node, 30*time.Second, staller.Addr, honest.P2PAddr)
	c.pickLead = leadIs(staller.Addr)
	start := time.Now()
	if _, err := c.SyncHeaders(context.Background()); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	if h := c.Chain().Height(); h != fx.tip {
		t.Fatalf("chain at %d, want %d", h, fx.tip)
	}
	// The lead is the only peer that could contradict the honest one:
	// pool.Each gives it a budget of a quarter of the timeout (7.5 s),
	// however fast the honest answer (twice the sync's own time if more:
	// far less here); its timeout is 30 s.
	if limit := 30*time.Second/4 + 4*time.Second; took > limit {
		t.Errorf("the sync took %v with a stalled lead (at most %v)", took, limit)
	}
	for _, st := range c.Peers() {
		if st.Address == staller.Addr && (st.Banned || st.Reason == "") {
			t.Errorf("the stalled lead: banned %v, reason %q; want left out as too slow, not banned", st.Banned, st.Reason)
		}
	}
}

// TestLeadOnLesserBranch: whichever peer leads the header sync, the chain
// is the one with the most work, and the peer on a branch of its own is
// measured so: leading buys nothing.
func TestLeadOnLesserBranch(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	other := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	best := node.Generate(t, 3)       // 111..113: the chain with the most work
	branch := other.Generate(t, 2)[1] // 111', 112': a branch with less
	for _, lead := range []string{node.P2PAddr, other.P2PAddr} {
		c := connectUnsynced(t, node, 5*time.Second, node.P2PAddr, other.P2PAddr)
		c.pickLead = leadIs(lead)
		if _, err := c.SyncHeaders(context.Background()); err != nil {
			t.Fatal(err)
		}
		if h, hash := c.Chain().Height(), c.Chain().Hash(113); h != 113 || hash != *best[2] {
			t.Errorf("lead %s: chain at %d (%v), want 113 (%v)", lead, h, hash, best[2])
		}
		for _, st := range c.Peers() {
			if st.Banned || st.Reason != "" {
				t.Errorf("lead %s: peer %s blamed: %+v", lead, st.Address, st)
			}
			if st.Address == other.P2PAddr && (st.Branch == nil || *st.Branch != (Branch{Fork: 110, Height: 112, Hash: *branch}) || st.Tip != 110) {
				t.Errorf("lead %s: the peer on a branch: %+v (branch %+v)", lead, st, st.Branch)
			}
		}
	}
}

// TestAnnouncedBlockCostsOneHeaders: a service follows the tip through
// four peers, each announcing every new block at about the same time. A
// block costs one headers message or two, not one a peer: the peers whose
// announced blocks the chain holds after one's headers are not asked for
// them. Every peer is still compared on the new filter headers: asked for
// them up to the last block but one at least (a peer whose announcement
// of a block comes after that block was compared is asked for it then,
// see lateClaims; the last block's may still be under way when the
// rescan stops).
func TestAnnouncedBlockCostsOneHeaders(t *testing.T) {
	needFixture(t)
	node := peertest.CopyChain(t, fx.node, peertest.WithArgs("--nobanning"))
	counts := make([]*headerCounter, 4)
	relays := make([]*peertest.Liar, len(counts))
	addrs := make([]string, len(counts))
	for i := range counts {
		counts[i] = &headerCounter{}
		relays[i] = peertest.NewLiar(t, node.P2PAddr, node.Params.Net, counts[i].lie)
		addrs[i] = relays[i].Addr
	}
	c := connectTo(t, node, 5*time.Second, addrs...)
	startService(t, c)
	log, stop := follow(t, c, fx.tip-5, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip", tipAt(fx.tip))
	time.Sleep(time.Second) // the service's first sync and verification end
	for _, h := range counts {
		h.reset()
	}
	const blocks = 6
	for i := int32(1); i <= blocks; i++ {
		node.Generate(t, 1)
		log.waitFor(t, "the new block", tipAt(fx.tip+i))
	}
	// A peer's announcement of a block may come after the block was
	// compared (it is then asked again, see lateClaims): on a loaded
	// machine that can be seconds after the tip moved.
	want := fx.tip + blocks - 1
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if slices.IndexFunc(relays, func(r *peertest.Liar) bool { return comparedTo(c, r) < want }) < 0 {
			break
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	var msgs int64
	for i, h := range counts {
		m, n, fh := h.reset()
		msgs += m
		t.Logf("peer %d: %d headers messages of %d headers, %d filter hashes for %d new blocks", i, m, n, fh, blocks)
		if top := comparedTo(c, relays[i]); top < want {
			t.Errorf("peer %d was asked for filter headers up to height %d, want %d at least", i, top, want)
		}
	}
	if limit := int64(2 * blocks); msgs > limit {
		t.Errorf("the peers sent %d headers messages for %d new blocks, want at most %d", msgs, blocks, limit)
	}
}

// comparedTo returns the highest height whose filter header the client
// asked of the relay r (-1 for none).
func comparedTo(c *Client, r *peertest.Liar) int32 {
	top := int32(-1)
	for _, m := range r.Requests() {
		if req, ok := m.(*wire.MsgGetCFHeaders); ok {
			if h, ok := c.Chain().HeightOf(req.StopHash); ok {
				top = max(top, h)
			}
		}
	}
	return top
}
