package client

import (
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestAnnouncedBlockNotHeldRestsOnOnePeer: a peer whose node stays a
// block behind announces the honest peer's new blocks, which the chain
// then holds, once together with the honest peer's announcement (taken
// in without a getheaders, see Client.syncAnnounced) and once after the
// block was reported (a late announcement). Its tip is raised on its word,
// but it holds neither block and cannot state their filter headers: each
// block is reported resting on the honest peer, no recheck reports it
// confirmed by a second peer, and nobody is banned (not serving a block
// announced is no proof of a lie).
func TestAnnouncedBlockNotHeldRestsOnOnePeer(t *testing.T) {
	honest := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	honest.Generate(t, 110)
	behind := peertest.CopyChain(t, honest, peertest.WithArgs("--nobanning"))
	claimer := peertest.NewLiar(t, behind.P2PAddr, behind.Params.Net, nil)
	c := connectTo(t, honest, 5*time.Second, honest.P2PAddr, claimer.Addr)
	startService(t, c)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	announce := func(hash *chainhash.Hash) {
		t.Helper()
		inv := wire.NewMsgInv()
		if err := inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, hash)); err != nil {
			t.Fatal(err)
		}
		if err := claimer.Inject(inv); err != nil {
			t.Fatal(err)
		}
	}
	// Together with the honest peer's announcement.
	announce(honest.Generate(t, 1)[0])
	log.waitFor(t, "block 111", tipAt(111))
	// Late: after the block was reported.
	late := honest.Generate(t, 1)[0]
	log.waitFor(t, "block 112", tipAt(112))
	announce(late)
	time.Sleep(3 * time.Second) // the comparisons and rechecks end
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	for _, e := range log.snapshot() {
		if e.Height <= 110 || e.Kind != EventConnected && e.Kind != EventRechecked {
			continue
		}
		if e.OnePeer != honest.P2PAddr {
			t.Errorf("%v event of block %d: OnePeer %q, want %s (the claimer does not hold it)", e.Kind, e.Height, e.OnePeer, honest.P2PAddr)
		}
	}
	for _, st := range c.Peers() {
		if st.Banned {
			t.Errorf("peer %s banned: %s", st.Address, st.Reason)
		}
		t.Logf("peer %s: tip %d, reason %q", st.Address, st.Tip, st.Reason)
	}
	t.Logf("events: %q", log.summary())
}
