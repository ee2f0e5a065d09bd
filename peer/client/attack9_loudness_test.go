package client

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestAttack9LieAfterHangUp: of three peers, one hangs up mid-answer (its
// request's first block passed on), and its blocks planned again go in
// part to a second that served its first request whole and lies in the
// next (a block not its header's, intact on the wire), beside an honest
// one. The lie fails FetchBlocks and bans the liar, as a lie in a first
// plan does; the peer that hung up is charged nothing, the honest one
// nothing (its request cut by the lie's failure is this side's end); the
// hang-up is named in the log, and in the error returned beside the lie
// (as a download that fails for want of peers names it). Before, the
// error was the lie's alone: FetchBlocks returned the failure's own
// error, which the hang-up was not part of.
func TestAttack9LieAfterHangUp(t *testing.T) {
	from, to := attack9Range(t, 3)
	const rounds = 3
	named, ran := 0, 0
	for round := range rounds {
		quitter := hangUpOnFirstBlock(t, nil)
		var blocks atomic.Int32
		liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
			if b, ok := m.(*wire.MsgBlock); ok && blocks.Add(1) == peer.MaxBlocksPerRequest+1 {
				b.Transactions[0].LockTime ^= 1
			}
			return []wire.Message{m}, false
		})
		honest := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
		log := &linesLog{t: t, start: time.Now()}
		c := connectWith(t, Config{Peers: []string{quitter, liar.Addr, honest.Addr}, Params: fx.node.Params, Timeout: 10 * time.Second, Log: log})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		err := c.FetchBlocks(ctx, from, to, func(int32, *wire.MsgBlock) error { return nil })
		cancel()
		if blocks.Load() <= peer.MaxBlocksPerRequest {
			t.Logf("round %d: the liar was asked for %d blocks, none in a plan after the hang-up: %v", round, blocks.Load(), err)
			continue
		}
		ran++
		liarSt := c.pool.Status(clientMember(t, c, liar.Addr))
		quitSt := c.pool.Status(clientMember(t, c, quitter))
		if strings.Contains(err.Error(), "peer "+quitter+": getdata block: "+peer.ErrDisconnected.Error()) {
			named++
		} else {
			t.Errorf("round %d: %v: the hang-up of %s not named", round, err, quitter)
		}
		t.Logf("round %d: %v; liar banned %v; the peer that hung up %+v", round, err, liarSt.Banned, quitSt)
		if !errors.Is(err, peer.ErrBadBlock) || !strings.Contains(err.Error(), liar.Addr) || !liarSt.Banned {
			t.Errorf("round %d: %v, liar banned %v: want its lie named and it banned", round, err, liarSt.Banned)
		}
		if quitSt.Banned || log.count("dropped "+quitter) > 0 {
			t.Errorf("round %d: the peer that hung up charged: %+v", round, quitSt)
		}
		if log.count(quitter, "asked of the other peers") == 0 {
			t.Errorf("round %d: the hang-up of %s not named in the log", round, quitter)
		}
		unharmedAt(t, c, honest.Addr)
	}
	t.Logf("%d rounds, the liar asked after the hang-up in %d: the error returned named the peer that hung up in %d", rounds, ran, named)
	if ran < 2 {
		t.Errorf("the liar was asked for blocks after the hang-up in %d of %d rounds: the attack hardly ran", ran, rounds)
	}
}
