package client

import (
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// blockQuitter starts a relay to the fixture's node that hangs up
// whenever the node's answer to a request is a block, counting its
// hang-ups in ends.
func blockQuitter(t *testing.T, ends *atomic.Int32) string {
	t.Helper()
	return peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgBlock); ok {
			ends.Add(1)
			return nil, true
		}
		return []wire.Message{m}, false
	}).Addr
}

// TestOwnWordNotesRefusals: a scan of the last blocks with a word liar,
// which serves an empty filter for one block and states its hash as its
// own word there (see ownWord), and two peers that hang up whenever a
// block is asked of them. The liar's filter is checked against its block
// (blockProof); when the block's download asks a peer that hangs up
// before the liar, which serves it, the block proves the filter false,
// the liar is banned, and the scan succeeds from the two others. Its
// warnings name the end of the peer that hung up, as a dispute's
// downloads do (see TestScanDisputeNotesRefusals). Before, the own
// word's download kept its notes to itself, and the scan's result said
// nothing of that peer.
func TestOwnWordNotesRefusals(t *testing.T) {
	needFixture(t)
	at := fx.tip - 2
	l := newWordLiar(t, fx.node, at, peertest.EmptyFilter(nil))
	const rounds = 20
	ran, noted := 0, 0
	for round := 0; round < rounds && ran < 3; round++ {
		var ends atomic.Int32
		quitters := []string{blockQuitter(t, &ends), blockQuitter(t, &ends)}
		c, liar, words, res, err := wordScan(t, l, nil, items(fx.watch), quitters...)
		if words == 0 || ends.Load() == 0 {
			t.Logf("round %d: the liar's word not asked (%d) or its block not asked first of a peer that hangs up (%d ends): %v", round, words, ends.Load(), err)
			continue
		}
		ran++
		if err != nil {
			t.Errorf("round %d: the scan failed with two peers left: %v", round, err)
			continue
		}
		if st := c.pool.Status(clientMember(t, c, liar)); !st.Banned {
			t.Errorf("round %d: the liar not banned: %+v", round, st)
		}
		named := slices.ContainsFunc(quitters, func(q string) bool {
			want := "peer " + q + ": getdata block: " + peer.ErrDisconnected.Error()
			return slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, want) })
		})
		if named {
			noted++
		} else {
			t.Errorf("round %d: the warnings do not name the end of the peer that hung up (%d ends): %q", round, ends.Load(), res.Warnings)
		}
		for _, q := range quitters {
			if st := c.pool.Status(clientMember(t, c, q)); st.Banned {
				t.Errorf("round %d: %s, which hung up, banned: %+v", round, q, st)
			}
		}
	}
	t.Logf("%d rounds with the liar's block asked first of a peer that hangs up: the warnings named its end in %d", ran, noted)
	if ran == 0 {
		t.Fatalf("the liar's block was never asked of a peer that hangs up in %d rounds: the attack did not run", rounds)
	}
}
