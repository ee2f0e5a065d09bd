package client

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestRescanRechecksLonelyBlock: a peer first to hold block 113 (which
// spends a watched output) is alone with it beyond the client's wait, so
// a following rescan reports it connected naming that peer. Then the
// honest node gets the same block, and two more. When the peer alone was
// a liar whose filter left the spend out, the spend must be reported
// then, once (EventMatch before EventRechecked for 113), whether the liar
// is still there to be banned with the block's proof or went away first;
// nothing is reported disconnected. An honest peer alone costs nothing
// reported twice. The same when the liar was the client's only peer
// until it went away and the honest one was added: the filter headers
// the liar alone stated are asked again, and the honest peer, which
// disagrees with them, is not banned for it.
func TestRescanRechecksLonelyBlock(t *testing.T) {
	for _, tc := range []struct {
		name             string
		lies, gone, only bool
	}{
		{"honest ahead (control)", false, false, false},
		{"liar ahead, banned", true, false, false},
		{"liar ahead, gone before", true, true, false},
		{"liar the only peer, gone before", true, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) { lonelyBlock(t, tc.lies, tc.gone, tc.only) })
	}
}

func lonelyBlock(t *testing.T, lies, gone, only bool) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice, carol := peertest.NewKey("alice"), peertest.NewKey("carol")
	payAlice := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, payAlice) // 111
	node.Generate(t, 1)       // 112
	ahead := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	lie := peertest.Honest
	if lies {
		lie = peertest.Forge(t, ahead, 113, func(_ int32, b *wire.MsgBlock) bool { return len(b.Transactions) > 1 }, peertest.EmptyFilter)
	}
	var away atomic.Bool
	liar := peertest.NewLiar(t, ahead.P2PAddr, ahead.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if away.Load() {
			return nil, true
		}
		return lie(m)
	})
	peers := []string{node.P2PAddr, liar.Addr}
	if only {
		peers = peers[1:]
	}
	c := connectTo(t, node, 5*time.Second, peers...)
	startService(t, c)
	log := newEventLog()
	op := wire.OutPoint{Hash: payAlice.TxHash()}
	r := c.NewRescan(RescanOptions{Watch: []WatchItem{OutPointItem(op, alice.PkScript())}, From: 111, Follow: true,
		PollInterval: 100 * time.Millisecond, OnEvent: log.add})
	following(t, r)
	log.waitFor(t, "tip at 112", func(es []Event) bool {
		return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventTip && e.Height == 112 })
	})

	spend := peertest.BuildSpend(t, []peertest.Output{peertest.OutputOf(payAlice, 0, alice)}, wire.NewTxOut(30_000_000-peertest.Fee, carol.PkScript()))
	if _, err := ahead.RPC().SendRawTransaction(spend, true); err != nil {
		t.Fatal(err)
	}
	ahead.Confirm(t, spend) // 113, on the peer ahead only
	log.waitFor(t, "113 connected on one peer", func(es []Event) bool {
		return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventConnected && e.Height == 113 })
	})
	if e := connectedAt(log.snapshot(), 113); e.OnePeer != liar.Addr && !only {
		t.Fatalf("premise: block 113 connected naming %q, want the peer alone with it %s", e.OnePeer, liar.Addr)
	}
	if got := matched(log.snapshot(), spend.TxHash()); len(got) != 0 == lies {
		t.Fatalf("premise: the spend matched %d times before the honest node had it (lies %v)", len(got), lies)
	}
	if gone {
		away.Store(true)
		if err := c.DisconnectPeer(liar.Addr); err != nil {
			t.Fatal(err)
		}
	}
	node.CopyBlocks(t, ahead, 113) // the honest node holds the same block
	node.Generate(t, 2)            // 114, 115
	if only {
		if err := c.AddPeer(context.Background(), node.P2PAddr, true); err != nil {
			t.Fatal(err)
		}
	}
	log.waitFor(t, "115 connected and 113 rechecked", func(es []Event) bool {
		return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventConnected && e.Height == 115 }) &&
			slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventRechecked && e.Height == 113 })
	})
	events := log.snapshot()
	if got := matched(events, spend.TxHash()); len(got) != 1 || got[0].Height != 113 {
		t.Errorf("the spend at 113 was matched %d times, want once: %+v", len(got), got)
	}
	var kinds []string
	for _, e := range events {
		if e.Height == 113 && e.Kind != EventTip {
			kinds = append(kinds, e.Kind.String())
		}
		if e.Kind == EventDisconnected {
			t.Errorf("block %d reported disconnected: the chain did not change", e.Height)
		}
	}
	want := []string{"match", "connected", "rechecked"}
	if lies {
		want = []string{"connected", "match", "rechecked"}
	}
	if !slices.Equal(kinds, want) {
		t.Errorf("events of 113: %v, want %v", kinds, want)
	}
	for _, st := range c.Peers() {
		if banned := st.Address == liar.Addr && lies && !gone; st.Banned != banned {
			t.Errorf("peer %s banned %v, want %v (%s)", st.Address, st.Banned, banned, st.Reason)
		}
	}
}

// connectedAt returns the event of the block reported connected at
// height h, the last one.
func connectedAt(es []Event, h int32) Event {
	var out Event
	for _, e := range es {
		if e.Kind == EventConnected && e.Height == h {
			out = e
		}
	}
	return out
}
