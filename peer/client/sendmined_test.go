package client

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// minedBesideLiars is one send of TestSendMinedRestsOnOnePeer and
// TestSendMinedRestsOnColluders: liars hold a block of their own above
// the honest tip that mines the transaction sent.
type minedBesideLiars struct {
	honest  *peertest.Node
	good    string   // the honest peer's address (the node or a Core-like front)
	liars   []string // the liars' addresses
	block   *chainhash.Hash
	tip     int32 // the liars' height, the client's after connecting
	timeout time.Duration
}

// minedOutcome is what one send came to.
type minedOutcome struct {
	res      *SendResult
	err      error
	inHonest bool // the honest node's mempool held the transaction within a second
}

// send connects a client to the honest peer and the liars, sends tx and
// waits up to a second for the honest node's mempool to hold it. It
// fails the test if the client's chain is not at the liars' tip or the
// honest node holds the liars' block (the test would prove nothing).
func (m minedBesideLiars) send(t *testing.T, i int, tx *wire.MsgTx) minedOutcome {
	t.Helper()
	c := connectTo(t, m.honest, m.timeout, append([]string{m.good}, m.liars...)...)
	if h := c.Chain().Height(); h != m.tip {
		t.Fatalf("the client's chain is at %d: want the liars' %d", h, m.tip)
	}
	start := time.Now()
	res, err := c.SendTransaction(context.Background(), tx)
	elapsed := time.Since(start)
	c.Close()
	if _, err := m.honest.RPC().GetBlockHeader(m.block); err == nil {
		t.Fatal("the honest node holds the liars' block: the test proves nothing")
	}
	inHonest := false
	for end := time.Now().Add(time.Second); !inHonest && time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		inHonest = m.honest.InMempool(t, tx.TxHash())
	}
	t.Logf("send %d: %v after %v; given to %v (honest %s, liars %v); mined %+v; warnings %q; in the honest node's mempool: %t",
		i, err, elapsed.Round(time.Millisecond), res.Given, m.good, m.liars, res.Mined, res.Warnings, inHonest)
	return minedOutcome{res: res, err: err, inHonest: inHonest}
}

// searched reports whether the send searched the chain for the
// transaction: always beside a node that gives no verdict (Core-like),
// beside btcd when a liar's turn came first.
func (m minedBesideLiars) searched(coreLike bool, o minedOutcome) bool {
	return coreLike || len(o.res.Given) > 0 && slices.Contains(m.liars, o.res.Given[0])
}

// namesLiars reports whether a warning names every liar and, when
// withBlock, the liars' block.
func (m minedBesideLiars) namesLiars(o minedOutcome, withBlock bool) bool {
	return slices.ContainsFunc(o.res.Warnings, func(w string) bool {
		for _, l := range m.liars {
			if !strings.Contains(w, l) {
				return false
			}
		}
		return !withBlock || strings.Contains(w, m.block.String())
	})
}
