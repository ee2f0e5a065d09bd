package client

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
)

// TestHangUpFailsNoFetchBlocks: a peer that answers each block request
// and then hangs up, beside an honest peer that holds every block, and
// the user fetching a range of blocks again and again (FetchBlocks, one
// window spread over both peers). The hang-ups never let a connection
// last, so the peer's next dial, counted when a request finds the end,
// doubles; but the pool still lists it among the live peers until that
// end is counted (its next dial was cleared when the connection was
// made, see pool's Member.serves), so the next plan puts blocks on it,
// and its request, dialling it again (Pool.RedialDue), is refused once
// the backoff passes a first failure's. The download must then ask the
// honest peer for those blocks, not fail: every fetch is to succeed, the
// honest peer charged nothing. Seen too: the failed fetch's cancel can
// drop the honest peer's connection (a request in flight abandoned);
// dialled again, its chain is not known until its headers come, and the
// fetches meanwhile fail with ErrNoPeers, their error naming the other
// peer's refusal, not that.
func TestHangUpFailsNoFetchBlocks(t *testing.T) {
	needFixture(t)
	for _, tt := range []struct {
		name    string
		service bool          // the pool's Run looks after the members too
		span    time.Duration // how long fetches are made, one after another
	}{
		{"fetches alone", false, 2 * time.Second},
		// Run dials the peer dropped for the refusal again after its
		// backoff: it comes back to fail another fetch.
		{"service started", true, 12 * time.Second},
	} {
		t.Run(tt.name, func(t *testing.T) {
			liar, served := answerThenHangUp(t, fx.node.P2PAddr, "block")
			c := connectWith(t, Config{Peers: []string{fx.node.P2PAddr, liar}, Params: fx.node.Params, Timeout: 10 * time.Second, Log: testLog{t, time.Now()}})
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			if tt.service {
				if err := c.Start(ctx); err != nil {
					t.Fatal(err)
				}
			}
			honest := clientMember(t, c, fx.node.P2PAddr)
			replaced := 0 // the honest peer's connections replaced between fetches
			conn := c.pool.Conn(honest)
			to := int32(peer.MaxBlocksPerRequest * 2)
			var failed []int
			noPeersLive := 0 // fetches failed with ErrNoPeers, the honest peer live
			var took []time.Duration
			began := time.Now()
			rounds := 0
			for round := 0; time.Since(began) < tt.span; round++ {
				rounds++
				time.Sleep(2 * hangUpAfter) // the hang-up, most often before the pool's look
				start := time.Now()
				n := 0
				err := c.FetchBlocks(ctx, 1, to, func(int32, *wire.MsgBlock) error {
					n++
					return nil
				})
				took = append(took, time.Since(start).Round(time.Millisecond))
				if now := c.pool.Conn(honest); now != conn {
					replaced++
					conn = now
				}
				if err != nil && errors.Is(err, ErrNoPeers) && c.pool.Status(honest).Live {
					noPeersLive++
				}
				if err != nil {
					failed = append(failed, round)
					t.Logf("round %d (%v in): the fetch failed after %v, %d blocks in (ErrNoPeers %v): %v", round, time.Since(began).Round(time.Millisecond), took[round], n, errors.Is(err, ErrNoPeers), err)
				} else if n != int(to) {
					t.Errorf("round %d: %d blocks, want %d", round, n, to)
				}
			}
			unharmedAt(t, c, fx.node.P2PAddr)
			t.Logf("%d fetches of blocks 1..%d in %v, the slowest %v; failed: rounds %v; the peer that hangs up served %d block answers; the honest peer's connection replaced %d times",
				rounds, to, time.Since(began).Round(time.Millisecond), slices.Max(took), failed, served.Load(), replaced)
			if served.Load() == 0 {
				t.Fatal("the peer that hangs up was never asked: the attack did not run")
			}
			if noPeersLive > 0 {
				t.Errorf("%d fetches failed with ErrNoPeers, the honest peer live (its connection, dropped by a failed fetch's cancel, dialled again and its chain not yet known), the error naming the other peer's refusal", noPeersLive)
			}
			if len(failed) > 0 {
				t.Errorf("%d of %d fetches failed, the honest peer holding every block: a peer that hangs up made the user's download fail", len(failed), rounds)
			}
		})
	}
}
