package client

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// TestDisputeNamesRefusals: FilterHeader of the tip with two peers, an
// honest one that hangs up on every block request (before passing it
// on) and a liar that states another filter hash for the tip (a dispute,
// settled by the block: settleAt) and serves blocks not their headers'.
// When the dispute's download asks the honest peer first, its end is
// planned again onto the liar, whose lie fails the download: the error
// the query returns names the lie and the end, each found by errors.As,
// the liar banned for its own lie alone and the peer that hung up
// charged nothing. settleAt passes the download's error on as it is;
// before, the query (agreedFilterHeader) returned the lie's own error
// alone, the refusals dropped where the failure was judged.
func TestDisputeNamesRefusals(t *testing.T) {
	needFixture(t)
	tip := blockHashAt(t, fx.tip)
	const rounds = 10
	ran, named := 0, 0
	for round := 0; round < rounds && ran < 3; round++ {
		quitter, ends := hangUpOnAsk(t, fx.node.P2PAddr, 1)
		liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
			switch m := m.(type) {
			case *wire.MsgCFHeaders:
				if m.StopHash == tip && len(m.FilterHashes) > 0 {
					forged := *m.FilterHashes[len(m.FilterHashes)-1]
					forged[0] ^= 1
					m.FilterHashes[len(m.FilterHashes)-1] = &forged
				}
			case *wire.MsgBlock:
				m.Transactions[0].LockTime ^= 1
			}
			return []wire.Message{m}, false
		})
		log := &linesLog{t: t, start: time.Now()}
		c := connectWith(t, Config{Peers: []string{quitter, liar.Addr}, Params: fx.node.Params, Timeout: 10 * time.Second, Log: log})
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		_, err := c.FilterHeader(ctx, fx.tip)
		cancel()
		if ends.Load() == 0 {
			t.Logf("round %d: the dispute's block was not asked of the peer that hangs up first: %v", round, err)
			continue
		}
		ran++
		liarSt := c.pool.Status(clientMember(t, c, liar.Addr))
		quitSt := c.pool.Status(clientMember(t, c, quitter))
		t.Logf("round %d: %v; liar %+v; the peer that hung up %+v", round, err, liarSt, quitSt)
		var pe *peer.PeerError
		var f *pool.Failure
		switch {
		case !errors.Is(err, peer.ErrBadBlock) || !strings.Contains(err.Error(), liar.Addr) || !liarSt.Banned:
			t.Errorf("round %d: %v, liar banned %v: want its lie named and it banned", round, err, liarSt.Banned)
		case !errors.Is(err, peer.ErrDisconnected) || !errors.As(err, &pe) || !strings.Contains(err.Error(), "peer "+quitter+": getdata block: "+peer.ErrDisconnected.Error()):
			t.Errorf("round %d: %v: the end of %s not named", round, err, quitter)
		case errors.As(err, &f):
			t.Errorf("round %d: %v still holds a failure, to be judged again", round, err)
		default:
			named++
		}
		if strings.Contains(liarSt.Reason, quitter) {
			t.Errorf("round %d: the liar's ban names the other peer's end: %s", round, liarSt.Reason)
		}
		if quitSt.Banned || log.count("dropped "+quitter) > 0 {
			t.Errorf("round %d: the peer that hung up charged: %+v", round, quitSt)
		}
	}
	t.Logf("%d rounds with the peer that hangs up asked first: the error named its end in %d", ran, named)
	if ran == 0 {
		t.Fatalf("the peer that hangs up was never asked first in %d rounds: the attack did not run", rounds)
	}
}
