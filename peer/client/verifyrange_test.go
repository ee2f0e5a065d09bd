package client

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/peer/pool"
)

// TestVerifyRangeJudged: verifyRange with the filter headers' verification
// failed by a peer that is dropped, not banned (a stall proves nothing).
// A lone peer stalling on filter headers leaves no peer to verify again
// with: the error is the one judged names, the stall, naming the peer,
// with no *pool.Failure left for a caller to judge again (without
// judged, verifyRange returned the failure itself). A peer stalling on
// the block of a dispute, after the other peer hung up on it and is
// gone from then on: the verification again finds no peer left, and its
// error names after that the stall and, after it, the end of the peer
// that hung up, found by errors.As (see afterDrop); before, it said only
// that no peer was left.
func TestVerifyRangeJudged(t *testing.T) {
	needFixture(t)
	tip := blockHashAt(t, fx.tip)
	// stalls withholds the node's answers of type drop; forged, it states
	// another filter hash for the tip (forgeTipHash).
	stalls := func(forge bool, drop func(wire.Message) bool) *peertest.Liar {
		return peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
			if forge {
				forgeTipHash(m, tip)
			}
			if drop(m) {
				return nil, false
			}
			return []wire.Message{m}, false
		})
	}
	isCFHeaders := func(m wire.Message) bool { _, ok := m.(*wire.MsgCFHeaders); return ok }
	isBlock := func(m wire.Message) bool { _, ok := m.(*wire.MsgBlock); return ok }
	for _, tt := range []struct {
		name string
		// quits, when set, is a peer that hangs up on its first block
		// request and is gone from then on (hangUpThenGone).
		quits bool
		stall func(wire.Message) bool
		forge bool
	}{
		{"a lone peer stalls on filter headers", false, isCFHeaders, false},
		{"the dispute's block stalls after a peer hung up", true, isBlock, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			const rounds = 10
			ran := 0
			for round := 0; round < rounds && ran < 2; round++ {
				staller := stalls(tt.forge, tt.stall).Addr
				peers := []string{staller}
				var ends func() int32
				if tt.quits {
					quitter, n := hangUpThenGone(t)
					peers, ends = append(peers, quitter), n.Load
				}
				c := connectWith(t, Config{Peers: peers, Params: fx.node.Params, Timeout: 2 * time.Second, ConnectOnly: true})
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				c.opMu.Lock()
				err := c.verifyRange(ctx, fx.tip-1, fx.tip)
				c.opMu.Unlock()
				cancel()
				if ends != nil && ends() == 0 {
					t.Logf("round %d: the dispute's block was not asked first of the peer that hangs up: %v", round, err)
					continue
				}
				ran++
				judgedNamed(t, round, c, err, staller, peers[1:])
			}
			if ran == 0 {
				t.Fatalf("the peer that hangs up was never asked first in %d rounds: the attack did not run", rounds)
			}
		})
	}
}

// judgedNamed checks err, what c.verifyRange ended with in round once
// staller stalled after quitters hung up: the stall named and judged
// (staller dropped, not banned), each quitter's end named after it, and
// no *pool.Failure left to judge again.
func judgedNamed(t *testing.T, round int, c *Client, err error, staller string, quitters []string) {
	t.Helper()
	st := c.pool.Status(clientMember(t, c, staller))
	t.Logf("round %d: %v; the peer that stalled %+v", round, err, st)
	var f *pool.Failure
	switch {
	case err == nil:
		t.Errorf("round %d: no error: want the stall of %s", round, staller)
	case !errors.Is(err, peer.ErrStalled) || !strings.Contains(err.Error(), "peer "+staller):
		t.Errorf("round %d: %v: want the stall of %s named", round, err, staller)
	case errors.As(err, &f):
		t.Errorf("round %d: %v still holds a failure, to be judged again", round, err)
	case st.Banned || st.Live:
		t.Errorf("round %d: the peer that stalled %+v: want it dropped, not banned", round, st)
	}
	var pe *peer.PeerError
	for _, q := range quitters {
		if !errors.Is(err, peer.ErrDisconnected) || !errors.As(err, &pe) || !strings.Contains(err.Error(), "peer "+q+": getdata block: "+peer.ErrDisconnected.Error()) {
			t.Errorf("round %d: %v: the end of %s not named", round, err, q)
		}
	}
}

// TestAfterDrop: the error that ends a verification names the failure
// of the peer dropped before it only when no peer was left, and then
// both stay reachable; any other error, or no drop, is returned as it
// is.
func TestAfterDrop(t *testing.T) {
	stall := errors.New("peer A: stalled on getcfheaders")
	other := errors.New("context deadline exceeded")
	noPeers := fmt.Errorf("getcfheaders: %w", ErrNoPeers)
	for _, c := range []struct {
		name          string
		err, dropped  error
		want          []error
		wantSame      bool
		wantStallText bool
	}{
		{"no peer left after a drop", noPeers, stall, []error{ErrNoPeers, stall}, false, true},
		{"no peer left, nothing dropped", noPeers, nil, []error{ErrNoPeers}, true, false},
		{"another end after a drop", other, stall, []error{other}, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := afterDrop(c.err, c.dropped)
			for _, w := range c.want {
				if !errors.Is(got, w) {
					t.Errorf("afterDrop = %v: errors.Is(%v) false", got, w)
				}
			}
			if same := got == c.err; same != c.wantSame {
				t.Errorf("afterDrop = %v: returned as it is %v, want %v", got, same, c.wantSame)
			}
			if has := strings.Contains(got.Error(), stall.Error()); has != c.wantStallText {
				t.Errorf("afterDrop = %q: names the drop %v, want %v", got, has, c.wantStallText)
			}
		})
	}
}
