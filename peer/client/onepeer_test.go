package client

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// The tests of this file put a block, or a height, on one peer alone:
// what the client answers of it is either checked against the block, or
// said to rest on that peer.

// liarOneAhead starts an honest node at 110 and a copy of it one block
// ahead, whose block 111 pays alice, behind a liar that hides the payment
// with an empty filter and coherent filter headers. The test owns both
// nodes: it may mine on either.
func liarOneAhead(t *testing.T) (node, ahead *peertest.Node, liar *peertest.Liar) {
	t.Helper()
	node = peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	ahead = peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	alice := peertest.NewKey("alice")
	ahead.Confirm(t, ahead.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))) // 111
	liar = peertest.NewLiar(t, ahead.P2PAddr, ahead.Params.Net, peertest.Forge(t, ahead, 111, paysTo(alice.PkScript()), peertest.EmptyFilter))
	return node, ahead, liar
}

// TestGetCFilterNeverKeepsOnePeerHeader: an honest node at 110 and a liar
// in front of a copy one block ahead whose block 111 pays alice, the
// payment hidden behind an empty filter with coherent headers. GetCFilter
// of block 111, which only the liar holds, returns the true filter or
// fails (the filter header rests on one peer); it never returns the
// liar's filter as if compared. Once the honest node holds block 111 too
// (and the client knows it), GetCFilter compares the filter header with
// it: nothing of the first call was kept, and the true filter comes back
// (or a loud failure).
func TestGetCFilterNeverKeepsOnePeerHeader(t *testing.T) {
	node, ahead, liar := liarOneAhead(t)
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, liar.Addr)
	ctx := context.Background()
	hash, err := ahead.RPC().GetBlockHash(111)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ahead.RPC().GetCFilter(hash, wire.GCSFilterRegular)
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.GetCFilter(ctx, *hash)
	if err == nil && !bytes.Equal(first, want.Data) {
		t.Errorf("GetCFilter of the block only the liar holds returned its forged filter %x with no error: want the true filter or an error", first)
	}
	// The honest node gets the block; the client learns it holds it.
	node.CopyBlocks(t, ahead, 111)
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	for _, st := range c.Peers() {
		if st.Tip != 111 {
			t.Fatalf("peer %s at tip %d, want 111", st.Address, st.Tip)
		}
	}
	again, err := c.GetCFilter(ctx, *hash)
	if err != nil {
		t.Logf("GetCFilter failed loudly once both hold the block: %v", err)
		return
	}
	if !bytes.Equal(again, want.Data) {
		t.Errorf("both peers hold block 111, yet GetCFilter returns the liar's filter %x (the true one has %d bytes): want the filter header compared with both",
			again, len(want.Data))
	}
}

// TestOnePeerNamedAboveOtherTips: a scan whose whole range lies above
// every tip but the liar's (two peers given: the fixture's node and a
// liar one block ahead that hides the payment of its own block) rests on
// the liar alone, and ScanResult.OnePeer names that height and that peer.
func TestOnePeerNamedAboveOtherTips(t *testing.T) {
	a := needAhead(t)
	liar := peertest.NewLiar(t, a.node.P2PAddr, a.node.Params.Net, peertest.ForgeFilter(t, a.node, a.top, peertest.EmptyFilter))
	c := connect(t, 5*time.Second, fx.node.P2PAddr, liar.Addr)
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}, From: a.top, To: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.To != a.top || hasMatch(res, a.pay.TxHash()) {
		t.Fatalf("scanned to %d, payment found %v: the liar did not lie", res.To, hasMatch(res, a.pay.TxHash()))
	}
	want := OnePeer{From: a.top, To: a.top, Peer: liar.Addr}
	if !slices.Equal(res.OnePeer, []OnePeer{want}) {
		t.Errorf("ScanResult.OnePeer %+v, want %+v; warnings %q", res.OnePeer, want, res.Warnings)
	}
}

// TestFollowNamesOnePeerBlock: a following rescan over an honest node and
// a liar in front of a copy of it. Both stand at 110; the liar's node
// alone then mines block 111, which pays alice, and the liar hides the
// payment. The rescan reports block 111 connected with Event.OnePeer
// naming the liar, the one peer whose chain reached it.
func TestFollowNamesOnePeerBlock(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	ahead := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	alice := peertest.NewKey("alice")
	liar := peertest.NewLiar(t, ahead.P2PAddr, ahead.Params.Net, peertest.Forge(t, ahead, 111, paysTo(alice.PkScript()), peertest.EmptyFilter))
	c := connectTo(t, node, 2*time.Second, node.P2PAddr, liar.Addr)
	log, stop := follow(t, c, 100, alice.PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	pay := ahead.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	ahead.Confirm(t, pay) // 111, on the liar's node only
	log.waitFor(t, "the tip at 111", tipAt(111))
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	events := log.snapshot()
	i := slices.IndexFunc(events, func(e Event) bool { return e.Kind == EventConnected && e.Height == 111 })
	if i < 0 {
		t.Fatal("block 111 not reported")
	}
	if len(matched(events, pay.TxHash())) != 0 {
		t.Fatal("the payment was found: the liar did not lie")
	}
	if events[i].OnePeer != liar.Addr {
		t.Errorf("block 111, held by the liar alone, reported with OnePeer %q (want %s)", events[i].OnePeer, liar.Addr)
	}
}

// TestGetBlockFromOnePeerChecked: GetBlock of a block only a liar holds
// (the fixture's node beside a liar one block ahead). A liar that serves
// the block unchanged gives the true block (it is checked against its
// header); one that drops a transaction from it is banned, and GetBlock
// fails naming it.
func TestGetBlockFromOnePeerChecked(t *testing.T) {
	a := needAhead(t)
	hash, err := a.node.RPC().GetBlockHash(int64(a.top))
	if err != nil {
		t.Fatal(err)
	}
	for _, mutate := range []bool{false, true} {
		lie := peertest.ForgeFilter(t, a.node, a.top, peertest.EmptyFilter)
		if mutate {
			lie = func(m wire.Message) ([]wire.Message, bool) {
				if b, ok := m.(*wire.MsgBlock); ok && len(b.Transactions) > 1 {
					b.Transactions = b.Transactions[:len(b.Transactions)-1]
				}
				return []wire.Message{m}, false
			}
		}
		liar := peertest.NewLiar(t, a.node.P2PAddr, a.node.Params.Net, lie)
		c := connect(t, 5*time.Second, fx.node.P2PAddr, liar.Addr)
		b, err := c.GetBlock(context.Background(), *hash)
		switch {
		case !mutate && (err != nil || !slices.ContainsFunc(b.Transactions, func(tx *wire.MsgTx) bool { return tx.TxHash() == a.pay.TxHash() })):
			t.Errorf("the unchanged block: %v", err)
		case mutate && (err == nil || !strings.Contains(err.Error(), liar.Addr)):
			t.Errorf("the mutated block: %v", err)
		case mutate && !c.Peers()[1].Banned:
			t.Errorf("the liar that mutated the block: %+v", c.Peers()[1])
		}
	}
}

// TestGetUtxoNamesOnePeerHeights: the spend of alice's output is in a
// block only a liar holds, and the liar hides it (its filter leaves out
// the spent script, which the block cannot prove). GetUtxo reports the
// output unspent only with a warning naming the liar and the height it
// could not compare.
func TestGetUtxoNamesOnePeerHeights(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	alice, bob := peertest.NewKey("alice"), peertest.NewKey("bob")
	fund := node.SpendCoinbase(t, wire.NewTxOut(50_000_000, alice.PkScript()))
	node.Confirm(t, fund) // 102
	node.Generate(t, 3)   // 105
	ahead := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	spend := ahead.Spend(t, []peertest.Output{peertest.OutputOf(fund, 0, alice)}, wire.NewTxOut(50_000_000-peertest.Fee, bob.PkScript()))
	ahead.Confirm(t, spend) // 106, on the liar's node only
	liar := peertest.NewLiar(t, ahead.P2PAddr, ahead.Params.Net, peertest.ForgeFilter(t, ahead, 106, peertest.OutputsOnly))
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, liar.Addr)
	rep, err := c.GetUtxo(context.Background(), UtxoRequest{OutPoint: wire.OutPoint{Hash: fund.TxHash()}, Script: alice.PkScript(), From: 100})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Output == nil || rep.To != 106 {
		t.Fatalf("report %+v", rep)
	}
	if rep.Unspent() && !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "106..106") && strings.Contains(w, liar.Addr) }) {
		t.Errorf("output reported unspent up to 106, spent at 106 on the liar's chain, without a warning naming 106 and the liar: %q", rep.Warnings)
	}
}

// TestLiarAtCheckpointBoundary: a liar and an honest node whose tips sit
// at the first checkpoint (1000) or one block off it, the lie an empty
// filter (which the block proves false) with coherent headers and
// checkpoints. A lie at a height the honest node holds is caught; one
// above it is caught or named as resting on the liar alone; the honest
// node is never banned. An honest node left out (too slow under load)
// holds nothing for the scan: then the result must name the liar as the
// one peer it rests on. The rows cover each side of the checkpoint: the
// lie at the checkpoint or just below it with the honest node below it,
// at the checkpoint or just above it with the honest node at it, and
// above it with both past it.
func TestLiarAtCheckpointBoundary(t *testing.T) {
	cp := int32(wire.CFCheckptInterval)
	nodes := map[int32]*peertest.Node{cp - 1: needBehind(t)}
	nodeAt := func(h int32) *peertest.Node {
		if nodes[h] == nil {
			nodes[h] = peertest.CopyChainTo(t, fx.node, h, peertest.WithArgs("--nobanning"))
		}
		return nodes[h]
	}
	for _, tt := range []struct {
		name                string
		honest, liar, lieAt int32
		slow                bool // the honest node answers headers too late to be waited for
	}{
		{"honest 999, liar 1000, lie at 1000", cp - 1, cp, cp, false},
		{"honest 999, liar 1000, lie at 999", cp - 1, cp, cp - 1, false},
		{"honest 1000, liar 1001, lie at 1000", cp, cp + 1, cp, false},
		{"honest 1000, liar 1001, lie at 1001", cp, cp + 1, cp + 1, false},
		{"honest 1001, liar 1001, lie at 1001 (checkpoint honest, tail false)", cp + 1, cp + 1, cp + 1, false},
		{"honest 999 left out as too slow, liar 1000, lie at 999", cp - 1, cp, cp - 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ln := nodeAt(tt.liar)
			liar := peertest.NewLiar(t, ln.P2PAddr, ln.Params.Net, peertest.ForgeFilter(t, ln, tt.lieAt, peertest.EmptyFilter)).Addr
			var slow peertest.LieFunc
			if tt.slow {
				slow = func(m wire.Message) ([]wire.Message, bool) {
					if _, ok := m.(*wire.MsgHeaders); ok {
						time.Sleep(4 * time.Second) // beyond the budget of the scan for it (1 s at least)
					}
					return []wire.Message{m}, false
				}
			}
			honest := peertest.NewLiar(t, nodeAt(tt.honest).P2PAddr, fx.node.Params.Net, slow).Addr
			c := connectTo(t, fx.node, 10*time.Second, liar, honest)
			res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: items(fx.watch), To: -1})
			if err != nil {
				t.Fatal(err)
			}
			st, hs := status(t, res, liar), status(t, res, honest)
			named := slices.ContainsFunc(res.OnePeer, func(o OnePeer) bool { return o.Peer == liar && o.From <= tt.lieAt && tt.lieAt <= o.To })
			// An honest node left out (too slow under load, say) spoke
			// for nothing: the whole result rests on the liar, and must
			// say so, naming it.
			left := !hs.Banned && hs.Reason != ""
			if left {
				t.Logf("the honest node was left out: %s", hs.Reason)
				named = named || hasKind(res.Warnings, WarningOnePeer, liar)
			} else if tt.slow {
				t.Fatalf("premise: the slow honest node was not left out: %+v", hs)
			}
			switch {
			case tt.lieAt <= tt.honest && !st.Banned && !(left && named):
				t.Errorf("lie at %d, which the honest node holds, not caught: liar %+v, one-peer %+v, warnings %q", tt.lieAt, st, res.OnePeer, res.Warnings)
			case tt.lieAt > tt.honest && !st.Banned && !named:
				t.Errorf("lie at %d above the honest tip neither caught nor named: liar %+v, one-peer %+v, warnings %q", tt.lieAt, st, res.OnePeer, res.Warnings)
			}
			if hs.Banned {
				t.Errorf("honest node banned: %+v", hs)
			}
		})
	}
}

// TestOnePeerResultNamesIt: of two peers given, one cannot be reached; the
// scan's result rests on the other alone, and its warning names that peer,
// so that a result a liar alone gave says whose word it is.
func TestOnePeerResultNamesIt(t *testing.T) {
	node := peertest.StartBtcd(t)
	node.Generate(t, 10)
	const nobody = "127.0.0.1:1" // nothing listens on port 1
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, nobody)
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: items([][]byte{peertest.NewKey("alice").PkScript()}), To: -1})
	if err != nil {
		t.Fatal(err)
	}
	if !hasKind(res.Warnings, WarningOnePeer, node.P2PAddr) {
		t.Errorf("warnings %q: none says the result rests on %s", res.Warnings, node.P2PAddr)
	}
}
