package client

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// fixture is a regtest chain shared by the tests of this package: blocks
// past the first filter checkpoint (height 1000), with transactions the
// tests know about.
type fixture struct {
	node *peertest.Node
	// watch: 0 alice (P2PKH), 1 carol (P2PKH, funded before the scanned
	// range of the subrange test)
	watch [][]byte
	// want maps each transaction that involves a watch item to the items.
	want map[chainhash.Hash][]int
	// heights of the transactions in want
	height map[chainhash.Hash]int32
	// fundAlice pays alice at height 102.
	fundAlice *wire.MsgTx
	// spendAlice spends alice's first output to bob: only the update
	// rules (or the revealed key) find it.
	spendAlice *wire.MsgTx
	// late is a transaction after height 1000 paying carol.
	late       *wire.MsgTx
	spendCarol *wire.MsgTx
	fundCarol  *wire.MsgTx
	tip        int32
}

var (
	fx     *fixture
	shared = peertest.NewShared(newFixture, peertest.WithArgs("--nobanning"))
)

// needFixture starts the shared node on first use, so that fuzzing and
// examples run without it.
func needFixture(t *testing.T) { fx = shared.Get(t) }

func TestMain(m *testing.M) {
	code := m.Run()
	stopNodes(code)
	shared.Stop(code)
	os.Exit(code)
}

func newFixture(node *peertest.Node) (*fixture, error) {
	f := &fixture{node: node, want: map[chainhash.Hash][]int{}, height: map[chainhash.Hash]int32{}}
	alice, bob, carol, dave := peertest.NewKey("alice"), peertest.NewKey("bob"), peertest.NewKey("carol"), peertest.NewKey("dave")
	f.watch = [][]byte{alice.PkScript(), carol.PkScript()}
	mine := func(n int) error {
		_, err := node.GenerateErr(n)
		return err
	}
	confirm := func(txs ...*wire.MsgTx) error {
		hash, err := node.ConfirmErr(txs...)
		if err != nil {
			return err
		}
		h, err := node.RPC().GetBlockVerbose(hash)
		if err != nil {
			return err
		}
		for _, tx := range txs {
			f.height[tx.TxHash()] = int32(h.Height)
		}
		return nil
	}
	if err := mine(101); err != nil {
		return f, err
	}
	// Height 102: alice is paid; dave too, in another transaction.
	fundAlice, err := node.SpendCoinbaseErr(wire.NewTxOut(50_000_000, alice.PkScript()))
	if err != nil {
		return f, err
	}
	toDave, err := node.SpendCoinbaseErr(wire.NewTxOut(20_000_000, dave.PkScript()))
	if err != nil {
		return f, err
	}
	if err := confirm(fundAlice, toDave); err != nil {
		return f, err
	}
	f.want[fundAlice.TxHash()] = []int{0}
	f.fundAlice = fundAlice
	if err := mine(5); err != nil {
		return f, err
	}
	// Height 108: alice pays bob; nothing in it but alice's outpoint
	// links it to the watch list.
	f.spendAlice, err = node.SpendErr([]peertest.Output{peertest.OutputOf(fundAlice, 0, alice)},
		wire.NewTxOut(50_000_000-peertest.Fee, bob.PkScript()))
	if err != nil {
		return f, err
	}
	if err := confirm(f.spendAlice); err != nil {
		return f, err
	}
	f.want[f.spendAlice.TxHash()] = []int{0}
	// Height 109: carol is paid.
	f.fundCarol, err = node.SpendCoinbaseErr(wire.NewTxOut(30_000_000, carol.PkScript()))
	if err != nil {
		return f, err
	}
	if err := confirm(f.fundCarol); err != nil {
		return f, err
	}
	f.want[f.fundCarol.TxHash()] = []int{1}
	// Past the first checkpoint: carol spends to bob, and the same
	// block pays carol again from a coinbase.
	if err := mine(1000 - 109 + 20); err != nil {
		return f, err
	}
	f.spendCarol, err = node.SpendErr([]peertest.Output{peertest.OutputOf(f.fundCarol, 0, carol)},
		wire.NewTxOut(30_000_000-peertest.Fee, bob.PkScript()))
	if err != nil {
		return f, err
	}
	f.late, err = node.SpendCoinbaseErr(wire.NewTxOut(1_000_000, carol.PkScript()))
	if err != nil {
		return f, err
	}
	if err := confirm(f.spendCarol, f.late); err != nil {
		return f, err
	}
	f.want[f.spendCarol.TxHash()] = []int{1}
	f.want[f.late.TxHash()] = []int{1}
	if err := mine(30); err != nil {
		return f, err
	}
	count, err := node.RPC().GetBlockCount()
	if err != nil {
		return f, err
	}
	f.tip = int32(count)
	return f, nil
}

// connect returns a client of the given peers (the shared node by
// default) with its headers synced.
func connect(t *testing.T, timeout time.Duration, addrs ...string) *Client {
	t.Helper()
	return connectTo(t, fx.node, timeout, addrs...)
}

// connectTo returns a client of the given peers (node by default), on
// node's network, with its headers synced; it is closed when the test
// ends.
func connectTo(t *testing.T, node *peertest.Node, timeout time.Duration, addrs ...string) *Client {
	t.Helper()
	if len(addrs) == 0 {
		addrs = []string{node.P2PAddr}
	}
	return connectWith(t, Config{Peers: addrs, Params: node.Params, Timeout: timeout})
}

// connectWith returns a client of cfg with its headers synced; it is
// closed when the test ends.
func connectWith(t *testing.T, cfg Config) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Connect(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

// scripts returns the watch list of the fixture as watch items.
func items(scripts [][]byte) []WatchItem {
	out := make([]WatchItem, len(scripts))
	for i, s := range scripts {
		out[i] = ScriptItem(s)
	}
	return out
}

var testTweak = uint32(7)
