package client

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestRememberedWithholderIsSyncedAgain: the one peer, slow once (its
// node under load answers getheaders in 2.5 s, over announceLeadWait),
// is dropped for withholding the block it announced and remembered so
// (withheldMemory). Dialled again, it is the only announcer, and one
// that withheld lately: its sync is left to syncRest, which must sync
// it then, not wait for the next periodic sync (SyncInterval). The block
// is in the chain within a few seconds of its announcement.
//
// Before, syncAnnouncers charged the announcers other than the rest with
// slices.DeleteFunc on the slice the rest shared (syncAnnounced returns
// the announcers themselves when all withheld lately): it cleared the
// rest to a nil member, so nobody was synced, or charged, until the
// periodic sync 30 s later.
func TestRememberedWithholderIsSyncedAgain(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	var slowOnce atomic.Bool
	h := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgHeaders); ok && slowOnce.CompareAndSwap(true, false) {
			time.Sleep(announceLeadWait + 500*time.Millisecond)
		}
		return []wire.Message{m}, false
	})
	c := connectTo(t, node, 10*time.Second, h.Addr)
	startService(t, c)
	for deadline := time.Now().Add(10 * time.Second); c.chain.Height() < 110; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the first sync did not reach 110")
		}
	}
	time.Sleep(time.Second) // the first syncs end
	slowOnce.Store(true)
	start := time.Now()
	hash := node.Generate(t, 1)[0]
	const limit = 8 * time.Second
	for {
		if _, ok := c.chain.HeightOf(*hash); ok {
			break
		}
		if time.Since(start) > limit {
			for _, st := range c.Peers() {
				t.Logf("peer %s: banned %v, reason %q", st.Address, st.Banned, st.Reason)
			}
			t.Fatalf("block 111 not in the chain %v after it was mined: the announcer, remembered as a withholder, was not synced again", limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Logf("block 111 in the chain %v after it was mined", time.Since(start).Round(time.Millisecond))
	if !slowOnce.Load() {
		return
	}
	t.Fatal("the peer was never slow: its first answer after the block came in time, the test proves nothing")
}
