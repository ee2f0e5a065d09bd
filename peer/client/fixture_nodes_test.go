package client

import (
	"testing"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// Nodes beside the fixture's, started by the first test that needs each
// and stopped by TestMain; no test mines on them.
var (
	behindShared = peertest.NewShared(newBehind, peertest.WithArgs("--nobanning"))
	aheadShared  = peertest.NewShared(newAhead, peertest.WithArgs("--nobanning"))
)

// behindHeight is the tip of the node behind: one block below the first
// filter checkpoint, which it therefore cannot state.
const behindHeight = wire.CFCheckptInterval - 1

// needBehind returns an honest node holding the fixture's chain up to
// behindHeight only.
func needBehind(t *testing.T) *peertest.Node {
	t.Helper()
	needFixture(t)
	return behindShared.Get(t)
}

func newBehind(n *peertest.Node) (*peertest.Node, error) {
	return n, n.CopyBlocksErr(fx.node, behindHeight)
}

// ahead is a node holding the fixture's chain and one block more (fx.tip
// + 1), whose own payment to alice only it holds.
type ahead struct {
	node *peertest.Node
	top  int32
	pay  *wire.MsgTx // to alice, in block top
}

// needAhead returns the node one block ahead of the fixture's.
func needAhead(t *testing.T) *ahead {
	t.Helper()
	needFixture(t)
	return aheadShared.Get(t)
}

func newAhead(n *peertest.Node) (*ahead, error) {
	a := &ahead{node: n, top: fx.tip + 1}
	if err := n.CopyBlocksErr(fx.node, fx.tip); err != nil {
		return a, err
	}
	var err error
	if a.pay, err = n.SpendCoinbaseErr(wire.NewTxOut(10_000_000, peertest.NewKey("alice").PkScript())); err != nil {
		return a, err
	}
	_, err = n.ConfirmErr(a.pay)
	return a, err
}

// stopNodes stops the nodes of this file that were started; TestMain
// calls it with the tests' exit code.
func stopNodes(code int) {
	behindShared.Stop(code)
	aheadShared.Stop(code)
	spendsShared.Stop(code)
	twinShared.Stop(code)
	coversShared.Stop(code)
}
