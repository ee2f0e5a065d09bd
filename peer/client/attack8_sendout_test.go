package client

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestHonestOutSendSaysSo: an attacker who can end one node's connections
// (a relay in its path hangs up after block answers) pushes that peer's
// next dial 16 s off, its end counted, so the pool no longer lists it;
// a send then goes to the other peer alone (here a plain relay, whose
// word is all the send has). The result must not read like a send to
// every peer: the peer left out must be named (SendResult.LeftOut, or a
// warning naming it), or a warning must say the send rests on the word
// of the one peer given it. Measured: the latter (acceptance unconfirmed,
// only the peer given it says it holds it, no other peer to ask); the
// peer left out, not listed by the pool, is in neither LeftOut nor a
// warning, unlike a scan's result (which says it was not used).
func TestHonestOutSendSaysSo(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110) // coinbases to spend
	out, r := startModeRelay(t, node.P2PAddr, "block")
	keeper, _ := answerThenHangUp(t, node.P2PAddr, "none") // a plain relay
	c := connectWith(t, Config{Peers: []string{out, keeper}, Params: node.Params, Timeout: 10 * time.Second, Log: testLog{t, time.Now()}})
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pushOut(ctx, t, c, out, r)
	tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("alice").P2WPKHScript()))
	res, err := c.SendTransaction(ctx, tx)
	if err != nil {
		t.Fatalf("the send: %v", err)
	}
	named := false
	if _, ok := res.LeftOut[out]; ok {
		named = true
	}
	onePeer := false
	for _, w := range res.Warnings {
		if strings.Contains(w, out) {
			named = true
		}
		if WarningKindOf(w) == WarningOnePeer || strings.Contains(w, keeper) && strings.Contains(w, "no other peer") {
			onePeer = true
		}
	}
	t.Logf("given %v, accepted %v, seen %v, left out %v; the peer left out named %v, resting on one peer said %v; warnings %q",
		res.Given, res.Accepted, res.Seen, res.LeftOut, named, onePeer, res.Warnings)
	if slices.Contains(res.Given, out) {
		t.Fatalf("the peer left out was given the transaction: the attack did not run")
	}
	if !named && !onePeer {
		t.Errorf("the send went to %s alone, %s left out by its attacker-made ends, and its result names neither the peer left out nor that it rests on one peer's word", keeper, out)
	}
}
