package btcwallet

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/walletdb"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// The backend against a lying peer and a reorganization two blocks deep.

// sharedCase is a backend case whose backends all use the client c and
// announce reorganizations in order.
func sharedCase(name string, c *client.Client, order disconnectionOrder) backendCase {
	return backendCase{name: name, open: func(context.Context, []string, time.Time) (*backendLife, error) {
		b := New(c, Config{Log: testLog()})
		b.order = order
		return &backendLife{client: b, release: func() {}}, nil
	}}
}

// sharedClient starts a client of addrs for the test, with the given
// timeout per request (zero: the client's default), closed when the test
// ends.
func sharedClient(t *testing.T, addrs []string, timeout time.Duration) *client.Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	c, release, err := startClient(ctx, client.Config{Peers: addrs, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(release)
	return c
}

// syncedWallet creates a wallet born an hour ago, waits for its first
// sync to the tip of h's net and checks that its first address pays
// script; the notifications that follow are filed under "receive".
func (h *harness) syncedWallet(t *testing.T, script []byte) *walletLife {
	t.Helper()
	h.log.setPhase("connect")
	tip, height := h.net.tip(t)
	l := h.createWallet(t.TempDir(), time.Now().Add(-time.Hour), 0)
	h.expectState(h.waitSynced(l, "the first sync", tip, nil), walletState{Tip: height})
	firstAddress(t, l, script)
	h.log.setPhase("receive")
	return l
}

// firstAddress creates the wallet's first BIP 84 address and checks that
// it pays script.
func firstAddress(t *testing.T, l *walletLife, script []byte) {
	t.Helper()
	addr, err := l.w.NewAddress(waddrmgr.DefaultAccountNum, waddrmgr.KeyScopeBIP0084)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := txscript.PayToAddrScript(addr); err != nil || !bytes.Equal(got, script) {
		t.Fatalf("the wallet's first address %v pays %x (%v), want %x", addr, got, err, script)
	}
}

// paymentState is the state of a wallet paid once, by pay in the block
// hash at height, with its tip at tip.
func paymentState(pay *wire.MsgTx, hash chainhash.Hash, height, tip int32) walletState {
	return walletState{
		Tip: tip, Confirmed: received, Total: received,
		History: []txEntry{{Txid: pay.TxHash(), Height: height, Block: hash, Credit: received}},
		UTXOs:   []utxoEntry{{OutPoint: wire.OutPoint{Hash: pay.TxHash(), Index: 0}, Value: received, Height: height, Block: hash}},
	}
}

// paysScript reports whether an output of the block pays script.
func paysScript(b *wire.MsgBlock, script []byte) bool {
	for _, tx := range b.Transactions {
		for _, out := range tx.TxOut {
			if bytes.Equal(out.PkScript, script) {
				return true
			}
		}
	}
	return false
}

// TestLyingPeer pays the wallet while one of its three peers serves, for
// the payment's block, a filter that leaves the payment out, consistent
// with the filter headers it serves (peertest.Forge): the wallet must see
// the payment, and the liar must be banned.
func TestLyingPeer(t *testing.T) {
	net := startNodes(t, testChainSpec, 2)
	script := seedKeys(t, [][2]uint32{{waddrmgr.ExternalBranch, 0}})[0].P2WPKHScript()
	_, height := net.tip(t)
	hides := func(_ int32, b *wire.MsgBlock) bool { return paysScript(b, script) }
	liar := peertest.NewLiar(t, net.nodes[1].P2PAddr, params.Net,
		peertest.Forge(t, net.nodes[1], height+1, hides, peertest.EmptyFilter))
	addrs := append(net.addrs(), liar.Addr)
	c := sharedClient(t, addrs, 0)
	h := &harness{t: t, addrs: addrs, bc: sharedCase("spvfilter", c, lowestFirst), log: newNotificationLog(), limit: waitLimit, net: net}

	l := h.syncedWallet(t, script)
	pay := spendGenerated(t, net, 2, wire.NewTxOut(int64(received), script))
	hash := *net.miner.Confirm(t, pay)
	net.waitSame(t)
	tip, height := net.tip(t)
	st := h.waitSynced(l, "the payment", tip, func(s walletState) bool { return s.Confirmed == received })
	h.expectState(st, paymentState(pay, hash, height, height))

	for _, p := range c.Peers() {
		if lied := p.Address == liar.Addr; p.Banned != lied {
			t.Errorf("peer %s (the liar: %v) banned: %v (%s)", p.Address, lied, p.Banned, p.Reason)
		} else if lied {
			t.Logf("the liar %s was banned: %s", p.Address, p.Reason)
		}
	}
	t.Logf("notifications:\n%v", h.log)
}

// TestDeepReorganization replaces the two blocks at the top of the chain,
// the lower of which pays the wallet, by three, the first of which pays it
// again; two wallets follow, one announced the disconnections lowest
// first, as the backend does, the other from the old tip down, as
// btcwallet's neutrino backend does. The first must end right, with the
// block hashes it recorded those of the chain; the second shows why the
// order matters: btcwallet v0.16.10 keeps the payment confirmed in the
// block that left the chain (see the package documentation). The first
// wallet is then reopened, and the chain reorganized from below the block
// its new rescan starts at: it must sync again and end right.
func TestDeepReorganization(t *testing.T) {
	net := startNodes(t, testChainSpec, 2)
	script := seedKeys(t, [][2]uint32{{waddrmgr.ExternalBranch, 0}})[0].P2WPKHScript()
	c := sharedClient(t, net.addrs(), 0)
	orders := []disconnectionOrder{lowestFirst, tipFirst}
	hs := make([]*harness, len(orders))
	ls := make([]*walletLife, len(orders))
	tip, height := net.tip(t)
	dirs := make([]string, len(orders))
	for i, o := range orders {
		hs[i] = &harness{t: t, addrs: net.addrs(), bc: sharedCase(o.String(), c, o), log: newNotificationLog(), limit: waitLimit, net: net}
		hs[i].log.setPhase("connect")
		dirs[i] = t.TempDir()
		ls[i] = hs[i].createWallet(dirs[i], time.Now().Add(-time.Hour), 0)
	}
	for i, h := range hs {
		h.expectState(h.waitSynced(ls[i], "the first sync", tip, nil), walletState{Tip: height})
		firstAddress(t, ls[i], script)
		h.log.setPhase("receive")
	}

	pay := spendGenerated(t, net, 2, wire.NewTxOut(int64(received), script))
	paid := *net.miner.Confirm(t, pay)
	net.mine(t, 1)
	tip, height = net.tip(t)
	for i, h := range hs {
		st := h.waitSynced(ls[i], "the payment", tip, func(s walletState) bool { return s.Confirmed == received })
		h.expectState(st, paymentState(pay, paid, height-1, height))
		h.log.setPhase("reorg")
	}

	if err := net.miner.RPC().InvalidateBlock(&paid); err != nil {
		t.Fatalf("invalidateblock: %v", err)
	}
	first := *net.mine(t, 3)[0]
	b, err := net.miner.RPC().GetBlock(&first)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(b.Transactions, func(tx *wire.MsgTx) bool { return tx.TxHash() == pay.TxHash() }) {
		t.Fatalf("the new branch's first block %v does not hold the payment", first)
	}
	tip, top := net.tip(t)
	payHeight := height - 1
	want := paymentState(pay, first, payHeight, top).sorted()

	lowest := hs[0]
	st := lowest.waitSynced(ls[0], "the reorganization", tip, func(s walletState) bool {
		return len(s.History) == 1 && s.History[0].Block == first
	})
	lowest.expectState(st, want)
	if bad := wrongHashes(t, net, ls[0], payHeight-2, top); len(bad) > 0 {
		t.Errorf("the wallet's block hashes differ from the chain's at heights %v", bad)
	}
	disconnected := func(h int32) notification { return notification{kind: kindBlockDisconnected, height: h} }
	connected := func(h int32) notification { return notification{kind: kindBlockConnected, height: h} }
	filtered := notification{kind: kindFilteredBlockConnected, height: payHeight, txs: 1}
	checkOrder(t, lowest, disconnected(payHeight), disconnected(payHeight+1), connected(payHeight-1), filtered, connected(top))

	// The other wallet reaches the tip too, with a store that is wrong.
	tipFirst := hs[1]
	waitFor(t, "the tip-first wallet at the tip", waitLimit, func() (bool, string) {
		synced := ls[1].w.Manager.SyncedTo()
		return synced.Hash == tip, fmt.Sprintf("synced to %d; notifications:\n%v", synced.Height, tipFirst.log)
	})
	checkOrder(t, tipFirst, disconnected(payHeight+1), disconnected(payHeight), filtered, connected(top))
	got, err := snapshot(ls[1].w)
	if err == nil && reflect.DeepEqual(got, want) {
		t.Errorf("the wallet that got the disconnections from the tip down ended right: btcwallet no longer needs them lowest first")
	}
	t.Logf("with the disconnections from the tip down, the wallet ends with %v (error %v), want %v", got, err, want)
	ls[1].stop(t)

	// Reopened, the first wallet's rescan starts at its tip; a
	// reorganization from below that block is beyond what the rescan
	// knows: the backend has the wallet sync again from its own block
	// hashes.
	lowest.log.setPhase("reopen")
	ls[0].stop(t)
	ls[0] = lowest.openWallet(dirs[0])
	lowest.waitSynced(ls[0], "the reopened wallet", tip, nil)
	lowest.log.setPhase("resync")
	if err := net.miner.RPC().InvalidateBlock(&first); err != nil {
		t.Fatalf("invalidateblock: %v", err)
	}
	again := *net.mine(t, 4)[0]
	tip, top = net.tip(t)
	want = paymentState(pay, again, payHeight, top).sorted()
	st = lowest.waitSynced(ls[0], "the reorganization below the rescan's start", tip, func(s walletState) bool {
		return len(s.History) == 1 && s.History[0].Block == again
	})
	lowest.expectState(st, want)
	if n, ok := missing(lowest.log.of("resync"), []notification{disconnected(top - 1), {kind: kindClientConnected}, filtered}); !ok {
		t.Errorf("no %v in %s", n, summarize(lowest.log.of("resync")))
	}
	t.Logf("notifications, lowest first:\n%vfrom the tip down:\n%v", lowest.log, tipFirst.log)
}

func (o disconnectionOrder) String() string {
	if o == tipFirst {
		return "tip first"
	}
	return "lowest first"
}

// checkOrder checks that the wallet of h received want in that order
// during the phase "reorg".
func checkOrder(t *testing.T, h *harness, want ...notification) {
	t.Helper()
	if n, ok := missing(h.log.of("reorg"), want); !ok {
		t.Errorf("%s: no %v in order %v; got %s", h.bc.name, n, want, summarize(h.log.of("reorg")))
	}
}

// wrongHashes returns the heights from..to at which the block hash the
// wallet recorded is not the chain's. The wallet moves its tip in memory
// before its database transaction commits: the records are waited for.
func wrongHashes(t *testing.T, net *testNet, l *walletLife, from, to int32) []int32 {
	t.Helper()
	var bad []int32
	waitFor(t, "the wallet's block hashes", waitLimit, func() (bool, string) {
		bad = nil
		err := walletdb.View(l.w.Database(), func(tx walletdb.ReadTx) error {
			ns := tx.ReadBucket(waddrmgrNamespace)
			for h := from; h <= to; h++ {
				got, err := l.w.Manager.BlockHash(ns, h)
				if err != nil {
					return fmt.Errorf("the wallet's block at height %d: %w", h, err)
				}
				if want := blockHashAt(t, net, h); *got != *want {
					bad = append(bad, h)
				}
			}
			return nil
		})
		return err == nil, fmt.Sprint(err)
	})
	return bad
}
