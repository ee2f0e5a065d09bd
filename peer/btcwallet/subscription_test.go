package btcwallet

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/client"
)

// TestTranslation feeds a subscription the events of the client's rescan
// and checks the notifications it queues for the wallet: blocks already
// known are not reported again, RescanProgress and RescanFinished come
// where the package documentation says, and a reorganization the wallet
// cannot follow block by block ends the subscription with ClientConnected.
// (The order of the disconnections the wallet can follow, and the fork
// block connected again after them, need the client's chain:
// TestDeepReorganization checks them against nodes.)
func TestTranslation(t *testing.T) {
	hash := func(h int32, branch byte) chainhash.Hash { return chainhash.Hash{branch, byte(h), byte(h >> 8)} }
	ev := func(kind client.EventKind, h int32, branch byte) client.Event {
		return client.Event{Kind: kind, Height: h, BlockHash: hash(h, branch), Header: wire.BlockHeader{Timestamp: time.Unix(int64(h), 0)}}
	}
	match := func(h int32) client.Event {
		e := ev(client.EventMatch, h, 0)
		tx := wire.NewMsgTx(wire.TxVersion)
		tx.AddTxOut(wire.NewTxOut(int64(h), []byte{0x51}))
		e.Match = &client.Match{Txid: tx.TxHash(), Tx: tx, Height: h, BlockHash: e.BlockHash}
		return e
	}
	connected := func(from, to int32) []client.Event {
		var out []client.Event
		for h := from; h <= to; h++ {
			out = append(out, ev(client.EventConnected, h, 0))
		}
		return out
	}
	filtered := func(h int32, txs int) notification {
		return notification{kind: kindFilteredBlockConnected, height: h, txs: txs}
	}
	block := func(h int32) notification { return notification{kind: kindBlockConnected, height: h} }
	gone := func(h int32) notification { return notification{kind: kindBlockDisconnected, height: h} }
	progress := func(h int32) notification { return notification{kind: kindRescanProgress, height: h} }
	finished := func(h int32) notification { return notification{kind: kindRescanFinished, height: h} }
	relevant := func(h int32) notification { return notification{kind: kindRelevantTx, height: h, txs: 1} }
	resync := notification{kind: kindClientConnected}

	tests := []struct {
		name   string
		finish bool // a Rescan's subscription, started at block 100
		events []client.Event
		want   []notification
		ended  bool
	}{{
		name:   "catch-up",
		finish: true,
		events: slices.Concat(connected(100, 100), []client.Event{match(101)}, connected(101, 102),
			[]client.Event{ev(client.EventTip, 102, 0)}, connected(103, 103), []client.Event{ev(client.EventTip, 103, 0)}),
		want: []notification{filtered(101, 1), block(101), progress(101), filtered(102, 0), block(102), finished(102),
			filtered(103, 0), block(103)},
	}, {
		name:   "already at the tip",
		finish: true,
		events: slices.Concat(connected(100, 100), []client.Event{ev(client.EventTip, 100, 0)}),
		want:   []notification{finished(100)},
	}, {
		name:   "following",
		events: slices.Concat(connected(100, 101), []client.Event{ev(client.EventTip, 101, 0)}),
		want:   []notification{filtered(101, 0), block(101)},
	}, {
		name: "a payment found when a block told is scanned again",
		events: slices.Concat(connected(100, 102), []client.Event{match(101), ev(client.EventRechecked, 101, 0),
			ev(client.EventRechecked, 102, 0)}),
		want: []notification{filtered(101, 0), block(101), filtered(102, 0), block(102), relevant(101)},
	}, {
		name:   "the start block's payment, which the wallet has",
		events: slices.Concat([]client.Event{match(100)}, connected(100, 101), []client.Event{ev(client.EventRechecked, 101, 0)}),
		want:   []notification{filtered(101, 0), block(101)},
	}, {
		name:   "progress every 2,000 blocks",
		finish: true,
		events: slices.Concat(connected(101, 4102), []client.Event{ev(client.EventTip, 4102, 0)}),
		want:   []notification{progress(101), progress(2101), progress(4101), finished(4102)},
	}, {
		name:   "reorganization during the catch-up",
		finish: true,
		events: slices.Concat(connected(101, 103),
			[]client.Event{ev(client.EventDisconnected, 103, 0), ev(client.EventDisconnected, 102, 0), ev(client.EventConnected, 102, 1)}),
		want:  []notification{progress(101), block(103), gone(102), gone(103), resync},
		ended: true,
	}, {
		name:   "reorganization below the start",
		finish: true,
		events: slices.Concat(connected(101, 101), []client.Event{ev(client.EventTip, 101, 0),
			ev(client.EventDisconnected, 101, 0), ev(client.EventDisconnected, 100, 0), ev(client.EventConnected, 100, 1)}),
		want:  []notification{progress(101), finished(101), gone(100), gone(101), resync},
		ended: true,
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			b := &Backend{ctx: ctx, cancel: cancel, queue: make(chan interface{}, 10_000), recent: newRecentHeaders(recentDepth), started: true}
			s := newSubscription(b, nil, 100, hash(100, 0), tc.finish)
			b.sub = s
			for _, e := range tc.events {
				s.onEvent(e)
			}
			var got []notification
			for len(b.queue) > 0 {
				got = append(got, describe(<-b.queue))
			}
			if n, ok := missing(got, tc.want); !ok {
				t.Errorf("no %v in order %v; got %s", n, tc.want, summarize(got))
			}
			for _, k := range []string{kindRescanProgress, kindRescanFinished, kindClientConnected, kindBlockDisconnected, kindRelevantTx} {
				if g, w := countKind(got, k), countKind(tc.want, k); g != w {
					t.Errorf("%d %s, want %d: %s", g, k, w, summarize(got))
				}
			}
			if tc.ended != (s.ctx.Err() != nil) || tc.ended != (b.current() == nil) {
				t.Errorf("subscription ended %v (backend's %p), want %v", s.ctx.Err() != nil, b.current(), tc.ended)
			}
			if tc.ended && got[len(got)-1].kind != kindClientConnected {
				t.Errorf("notifications after ClientConnected: %s", summarize(got))
			}
		})
	}
}

func countKind(ns []notification, kind string) int {
	n := 0
	for _, x := range ns {
		if x.kind == kind {
			n++
		}
	}
	return n
}
