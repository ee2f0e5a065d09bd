package client

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestAttack9LieThenHangUp: a peer that answers a block request with a
// lie (a block whose transactions are not its header's, intact on the
// wire) or by withholding (a notfound for the block asked for), then
// hangs up as the node's next message comes, so that the connection's
// end follows the lie at once (when the client has not ended it first). The end is now a reason to plan the
// request's blocks again without charging the peer: it must not cover
// the lie before it. Each row is run with and without the hang-up, a
// fresh client each round (FetchBlocks, which judges the peer whose
// request failed): the outcome (the download's error, the liar banned or
// not) is to be the same, and the honest peer beside it never charged.
func TestAttack9LieThenHangUp(t *testing.T) {
	from, to := attack9Range(t, 2)
	type outcome struct {
		lie, withheld, banned bool
	}
	for _, tt := range []struct {
		name string
		want error // what the download's error wraps
		lie  func(*wire.MsgBlock) wire.Message
	}{
		{"a block not its header's", peer.ErrBadBlock, func(b *wire.MsgBlock) wire.Message {
			b.Transactions[0].LockTime ^= 1 // its txid, then the merkle root, changes
			return b
		}},
		{"a block withheld", peer.ErrMissingBlocks, func(b *wire.MsgBlock) wire.Message {
			h := b.BlockHash()
			nf := wire.NewMsgNotFound()
			nf.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessBlock, &h))
			return nf
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const rounds = 4
			outcomes, madeEnds := map[bool]map[outcome]int{}, 0
			for _, hangUp := range []bool{false, true} {
				outcomes[hangUp] = map[outcome]int{}
				for round := range rounds {
					var blocks, ends atomic.Int32
					liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
						b, ok := m.(*wire.MsgBlock)
						if !ok {
							return []wire.Message{m}, false
						}
						switch blocks.Add(1) {
						case 1:
							return []wire.Message{tt.lie(b)}, false
						case 2:
							if hangUp {
								ends.Add(1)
								return nil, true
							}
						}
						return []wire.Message{m}, false
					})
					honest := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
					c := connectWith(t, Config{Peers: []string{liar.Addr, honest.Addr}, Params: fx.node.Params, Timeout: 10 * time.Second})
					ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
					err := c.FetchBlocks(ctx, from, to, func(int32, *wire.MsgBlock) error { return nil })
					cancel()
					if blocks.Load() == 0 {
						t.Fatalf("hang-up %v, round %d: the liar was asked for no block: the attack did not run (%v)", hangUp, round, err)
					}
					st := c.pool.Status(clientMember(t, c, liar.Addr))
					o := outcome{lie: errors.Is(err, peer.ErrBadBlock), withheld: errors.Is(err, peer.ErrMissingBlocks), banned: st.Banned}
					outcomes[hangUp][o]++
					if ends.Load() > 0 {
						madeEnds++
					}
					t.Logf("hang-up %v (made %d), round %d: %+v; %v; liar %+v", hangUp, ends.Load(), round, o, err, st)
					if !errors.Is(err, tt.want) {
						t.Errorf("hang-up %v, round %d: %v, want it to wrap %v", hangUp, round, err, tt.want)
					}
					unharmedAt(t, c, honest.Addr)
				}
			}
			t.Logf("outcomes without a hang-up %v, with %v (the hang-up made in %d of %d rounds)", outcomes[false], outcomes[true], madeEnds, rounds)
			if madeEnds < rounds/2 {
				t.Errorf("the liar hung up in %d of %d rounds: the attack hardly ran", madeEnds, rounds)
			}
			if len(outcomes[false]) != 1 || len(outcomes[true]) != 1 {
				t.Errorf("outcomes vary: without a hang-up %v, with %v", outcomes[false], outcomes[true])
			}
			for o := range outcomes[false] {
				if outcomes[true][o] != rounds {
					t.Errorf("the hang-up changed the outcome: without %v, with %v", outcomes[false], outcomes[true])
				}
			}
		})
	}
}
