package client

import (
	"context"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
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

// TestRecheckedOnlyWhereCompared: a recheck scans again from the lowest
// height another peer holds now up to the last one reported; those of its
// heights that still rest on the same peer alone were compared with
// nobody, and get no EventRechecked, unless the scan found what the first
// missed there. Those another peer held now, or that rest on another peer
// alone now, do.
func TestRecheckedOnlyWhereCompared(t *testing.T) {
	const liar, other = "127.0.0.1:1", "127.0.0.1:2"
	for _, tt := range []struct {
		name    string
		after   []OnePeer // what the scan again rests on one peer for
		matchAt int32     // a match the first scan missed, or -1
		want    []int32   // the heights rechecked
	}{
		{"the top still on the liar alone", []OnePeer{{From: 108, To: 110, Peer: liar}}, -1, []int32{106, 107}},
		{"all compared", nil, -1, []int32{106, 107, 108, 109, 110}},
		{"the top on the liar alone, a match missed there", []OnePeer{{From: 108, To: 110, Peer: liar}}, 109, []int32{106, 107, 109}},
		{"the top on another peer alone now", []OnePeer{{From: 108, To: 110, Peer: other}}, -1, []int32{106, 107, 108, 109, 110}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const base = int32(100)
			k := rechecks{reported: make([]reportedBlock, 11), unsure: []OnePeer{{From: 106, To: 110, Peer: liar}}, compareFrom: noRevision}
			for i := range k.reported {
				k.reported[i].items = 1
			}
			req := ScanRequest{From: 106, To: 110}
			res := &ScanResult{From: 106, To: 110, OnePeer: tt.after, Peers: []PeerStatus{{Address: other, Compared: true}}}
			for h := req.From; h <= req.To; h++ {
				res.headers = append(res.headers, wire.BlockHeader{Nonce: uint32(h)})
			}
			if tt.matchAt >= 0 {
				res.Matches = []Match{{Txid: chainhash.Hash{1}, Height: tt.matchAt, WatchItems: []int{0}}}
			}
			var got []int32
			for _, e := range k.take(&Client{}, base, req, res) {
				if e.Kind == EventRechecked {
					got = append(got, e.Height)
					if want := restsOn(tt.after, e.Height); e.OnePeer != want {
						t.Errorf("block %d rechecked resting on %q, want %q", e.Height, e.OnePeer, want)
					}
				}
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("rechecked %v, want %v", got, tt.want)
			}
		})
	}
}

// TestRevisionBelowMemoryWarned: a following rescan remembers the last
// maxReorgDepth blocks it reported, to scan them again when their filter
// headers are verified anew to other values. Filter headers given up
// below that memory (a late proof of a forgery there) cannot be
// compared: the rescan warns, naming the heights reported it did not
// scan again; a revision within its memory is not warned of.
func TestRevisionBelowMemoryWarned(t *testing.T) {
	needFixture(t)
	c := connectTo(t, fx.node, 5*time.Second)
	r := c.NewRescan(RescanOptions{From: 100, Follow: true})
	// As if it had reported blocks 100..1049 and remembered the last
	// 50 of them.
	r.mu.Lock()
	r.base, r.next, r.forgotFrom = 1000, 1050, 100
	r.rc.reported = make([]reportedBlock, 50)
	r.mu.Unlock()
	giveUp := func(h int32) {
		c.opMu.Lock()
		defer c.opMu.Unlock()
		c.verifiedTo = 1050
		c.giveUpVerified(h)
	}
	warned := func() []string {
		return slices.DeleteFunc(r.Warnings(), func(w string) bool { return WarningKindOf(w) != WarningRevised })
	}
	giveUp(1020)
	r.revisedFrom()
	if ws := warned(); len(ws) != 0 {
		t.Errorf("a revision within the rescan's memory warned of: %q", ws)
	}
	giveUp(499)
	r.revisedFrom()
	ws := warned()
	if len(ws) != 1 || !strings.Contains(ws[0], "500-999") {
		t.Errorf("a revision from height 500, below the memory's 1000, warned of as %q, want one warning naming heights 500-999", ws)
	}
}
