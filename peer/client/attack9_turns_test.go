package client

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestAttack9HangUpsInTurn: five colluding peers, listed first, beside
// an honest one that could serve every block, hanging up in turn: the
// first on its first block, each other on the first block of a request
// for a block asked of the one before it (a plan of that one's blocks
// not in). Each such hang-up costs the download a re-plan and charges
// nothing. When every block planned again went to the first peer
// listed, the five took the plans in turn every time; spread by load
// among peers at their caps, a plan of a few blocks mostly gives the
// next colluder none of them. A block that passed along all five still
// failed the download while the plans were bounded by maxRefusedPlans
// alone (five in a row used them up, the honest peer never asked); they
// are bounded by the peers now (see Client.replans), so the honest peer is
// asked last. The test wants every round whole, every block right, none
// charged. Measured (96 blocks, a request's worth each of 6 peers):
// with lead's pick, 0 of 8 rounds whole (each colluder was asked for
// all 16 blocks of the one before); with the plans bounded by
// maxRefusedPlans, 27 of 32 (go test -run TestAttack9HangUpsInTurn
// -count=2); now every one.
func TestAttack9HangUpsInTurn(t *testing.T) {
	needFixture(t)
	const liarsN, from = maxRefusedPlans + 1, 1
	to := int32(from + (liarsN+1)*peer.MaxBlocksPerRequest - 1) // a request's worth each
	if to > fx.tip {
		t.Fatalf("the fixture's chain ends at %d, below %d", fx.tip, to)
	}
	var heights []int32
	for h := int32(from); h <= to; h++ {
		heights = append(heights, h)
	}
	const rounds = 16
	whole := 0
	for round := range rounds {
		liars := make([]*peertest.Liar, liarsN)
		ends := make([]atomic.Int32, liarsN)
		for i := range liars {
			liars[i] = peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
				b, ok := m.(*wire.MsgBlock)
				if ok && (i == 0 || slices.Contains(blocksAsked(liars[i-1]), b.BlockHash())) {
					ends[i].Add(1)
					return nil, true
				}
				return []wire.Message{m}, false
			})
		}
		honest := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
		log := &linesLog{t: t, start: time.Now()}
		c := connectWith(t, Config{Peers: append(relayAddrs(liars), honest.Addr), Params: fx.node.Params, Timeout: 10 * time.Second, Log: log})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		rankedAlike(ctx, t, c) // a liar ranked slow is asked nothing
		blocks, err := c.fetchBlocks(ctx, newScanLog(), heights, nil)
		cancel()
		asked, made := make([]int, liarsN), make([]int32, liarsN)
		for i, l := range liars {
			asked[i], made[i] = len(blocksAsked(l)), ends[i].Load()
		}
		t.Logf("round %d: hang-ups %v, blocks asked of the liars %v, of the honest peer %d: %v", round, made, asked, len(blocksAsked(honest)), err)
		if made[0] == 0 {
			t.Fatalf("round %d: the first liar did not hang up: the attack did not run", round)
		}
		switch {
		case err != nil:
			// Loud: each peer that hung up named with its end.
			for _, l := range liars {
				if !strings.Contains(err.Error(), "peer "+l.Addr+": getdata block: "+peer.ErrDisconnected.Error()) {
					t.Errorf("round %d: the error does not name %s's end: %v", round, l.Addr, err)
				}
			}
			if !errors.Is(err, peer.ErrDisconnected) {
				t.Errorf("round %d: %v, want it to wrap %v", round, err, peer.ErrDisconnected)
			}
		default:
			whole++
			for i, b := range blocks {
				if b.BlockHash() != c.chain.Hash(heights[i]) {
					t.Errorf("round %d: height %d: block %v, want %v", round, heights[i], b.BlockHash(), c.chain.Hash(heights[i]))
				}
			}
		}
		for _, l := range liars {
			if st := c.pool.Status(clientMember(t, c, l.Addr)); st.Banned || log.count("dropped "+l.Addr) > 0 {
				t.Errorf("round %d: %s charged for hanging up: %+v", round, l.Addr, st)
			}
		}
		unharmedAt(t, c, honest.Addr)
	}
	t.Logf("%d rounds of %d liars hanging up in turn: %d downloads whole", rounds, liarsN, whole)
	if whole < rounds {
		t.Errorf("%d of %d downloads whole: the liars took the plans in turn", whole, rounds)
	}
}
