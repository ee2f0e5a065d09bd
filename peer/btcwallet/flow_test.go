package btcwallet

import (
	"slices"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/wallet"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// The end-to-end flow, run by several backends side by side on one chain:
// one wallet per backend, all from the same seed, so that every wallet
// must end in the same state.

// flowResult is what a run of the flow ends with, for one backend.
type flowResult struct {
	// final is the first wallet at the end, reopened; restored is the
	// wallet restored from the seed, at the same tip.
	final, restored walletState
	log             *notificationLog
	// Heights of the flow: the tip when the wallet first synced, the
	// payment's block, the spend's block (the same height before and
	// after the reorganization), the tip after the reorganization and
	// after the reopening.
	start, receive, spend, reorgTip, reopenTip int32
	// birthday is the height of the restored wallet's birthday block.
	birthday int32
}

// lane is one backend's wallet in the flow.
type lane struct {
	h   *harness
	dir string // the first wallet's database
	l   *walletLife
	res *flowResult
}

// flow runs the same wallet on every lane.
type flow struct {
	t     *testing.T
	net   *testNet
	lanes []*lane
}

// block is a block of the flow.
type block struct {
	hash   chainhash.Hash
	height int32
}

// runWalletFlows runs the flow against three nodes, with one wallet per
// backend of cases: a wallet is created and synced, receives a payment to
// a BIP 84 address and spends it to an external script (the first
// backend's wallet spends, the others see the spend in its block); a
// reorganization replaces the spend's block; the wallet is stopped and
// reopened after a block it missed, and a wallet restored from the seed
// with a birthday must end in the same state.
func runWalletFlows(t *testing.T, cases ...backendCase) []*flowResult {
	net := startTestNet(t, testChainSpec, 3)
	f := &flow{t: t, net: net}
	for _, bc := range cases {
		h := &harness{t: t, addrs: net.addrs(), bc: bc, log: newNotificationLog(), limit: waitLimit, net: net}
		f.lanes = append(f.lanes, &lane{h: h, dir: t.TempDir(), res: &flowResult{log: h.log}})
	}

	f.phase("connect")
	f.connect()
	f.phase("receive")
	pay, payBlock := f.receive()
	f.phase("spend")
	spend := f.spend(pay, payBlock)
	f.phase("reorg")
	f.reorganize(spend)
	f.phase("reopen")
	f.reopen()
	f.phase("restore")
	f.restore()

	out := make([]*flowResult, len(f.lanes))
	for i, ln := range f.lanes {
		r := ln.res
		if r.birthday <= 0 || r.birthday >= r.receive {
			t.Errorf("%s: the restored wallet's birthday block is at %d, want one between 0 and the payment at %d", ln.h.bc.name, r.birthday, r.receive)
		}
		t.Logf("%s backend: chain up to %d, payment at %d, spend at %d, restored wallet's birthday block at %d; notifications by phase:\n%v",
			ln.h.bc.name, r.reopenTip, r.receive, r.spend, r.birthday, ln.h.log)
		out[i] = r
	}
	return out
}

// phase files the notifications that follow under phase, on every lane.
func (f *flow) phase(name string) {
	for _, ln := range f.lanes {
		ln.h.log.setPhase(name)
	}
}

// each calls fn for every lane, in order.
func (f *flow) each(fn func(*lane)) {
	for _, ln := range f.lanes {
		fn(ln)
	}
}

// connect creates every wallet, then waits for each to sync.
func (f *flow) connect() {
	tip, height := f.net.tip(f.t)
	f.each(func(ln *lane) {
		ln.l = ln.h.createWallet(ln.dir, time.Now().Add(-time.Hour), 0)
		ln.res.start = height
	})
	f.each(func(ln *lane) {
		ln.h.expectState(ln.h.waitSynced(ln.l, "the first sync", tip, nil), walletState{Tip: height})
	})
}

// receive pays the wallets' first BIP 84 address (the same in every
// wallet) from a coinbase and waits for every wallet to see it confirmed.
func (f *flow) receive() (*wire.MsgTx, block) {
	t := f.t
	var addr btcutil.Address
	f.each(func(ln *lane) {
		a, err := ln.l.w.NewAddress(waddrmgr.DefaultAccountNum, waddrmgr.KeyScopeBIP0084)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := a.(*btcutil.AddressWitnessPubKeyHash); !ok {
			t.Fatalf("address %v is a %T, want P2WPKH", a, a)
		}
		if addr != nil && a.EncodeAddress() != addr.EncodeAddress() {
			t.Fatalf("%s: first address %v, another wallet's is %v", ln.h.bc.name, a, addr)
		}
		addr = a
	})
	script, err := txscript.PayToAddrScript(addr)
	if err != nil {
		t.Fatal(err)
	}
	pay := f.net.miner.SpendCoinbase(t, wire.NewTxOut(int64(received), script))
	hash := *f.net.miner.Confirm(t, pay)
	f.net.waitSame(t)
	tip, height := f.net.tip(t)
	want := walletState{
		Tip: height, Confirmed: received, Total: received,
		History: []txEntry{{Txid: pay.TxHash(), Height: height, Block: hash, Credit: received}},
		UTXOs:   []utxoEntry{{OutPoint: wire.OutPoint{Hash: pay.TxHash(), Index: 0}, Value: received, Height: height, Block: hash}},
	}
	f.each(func(ln *lane) {
		st := ln.h.waitSynced(ln.l, "the payment", tip, func(s walletState) bool { return s.Confirmed == received })
		ln.h.expectState(st, want)
		ln.res.receive = height
	})
	return pay, block{hash, height}
}

// spend has the first wallet pay sent to an external P2WPKH script; the
// other wallets learn the change address first (the first of the internal
// branch, as the spender's), and the spend from the chain: it spends the
// output they watch. It mines the spend and waits for every wallet to see
// it confirmed.
func (f *flow) spend(pay *wire.MsgTx, payBlock block) *wire.MsgTx {
	t := f.t
	scope := waddrmgr.KeyScopeBIP0084
	var changeAddrs []btcutil.Address
	for _, ln := range f.lanes[1:] {
		a, err := ln.l.w.NewChangeAddress(waddrmgr.DefaultAccountNum, scope)
		if err != nil {
			t.Fatal(err)
		}
		changeAddrs = append(changeAddrs, a)
	}
	external := peertest.NewKey("spvfilter btcwallet external").P2WPKHScript()
	spender := f.lanes[0]
	tx, err := spender.l.w.SendOutputs([]*wire.TxOut{wire.NewTxOut(int64(sent), external)}, &scope,
		waddrmgr.DefaultAccountNum, 1, feeRate, wallet.CoinSelectionLargest, "flow spend")
	if err != nil {
		t.Fatalf("%s: SendOutputs: %v", spender.h.bc.name, err)
	}
	change := changeOutput(t, tx, pay, external)
	for i, ln := range f.lanes[1:] {
		if want, _ := txscript.PayToAddrScript(changeAddrs[i]); !slices.Equal(want, tx.TxOut[change].PkScript) {
			t.Fatalf("%s: change address %v, the spend's change script is %x", ln.h.bc.name, changeAddrs[i], tx.TxOut[change].PkScript)
		}
	}
	f.net.waitMempool(t, tx.TxHash())
	hash := *f.net.miner.Confirm(t, tx)
	f.net.waitSame(t)
	tip, height := f.net.tip(t)
	changeValue := btcutil.Amount(tx.TxOut[change].Value)
	want := walletState{
		Tip: height, Confirmed: changeValue, Total: changeValue,
		History: []txEntry{
			{Txid: pay.TxHash(), Height: payBlock.height, Block: payBlock.hash, Credit: received},
			{Txid: tx.TxHash(), Height: height, Block: hash, Debit: received, Credit: changeValue},
		},
		UTXOs: []utxoEntry{{OutPoint: wire.OutPoint{Hash: tx.TxHash(), Index: change}, Value: changeValue, Height: height, Block: hash}},
	}
	f.each(func(ln *lane) {
		st := ln.h.waitSynced(ln.l, "the spend", tip, func(s walletState) bool {
			return s.Tip == height && len(s.History) == 2 && s.History[1].Height == height
		})
		ln.h.expectState(st, want)
		ln.res.spend = height
	})
	return tx
}

// reorganize invalidates the spend's block on the miner, which mines a
// longer branch from its parent: the spend, back in its mempool, is mined
// again in the branch's first block, at the same height. Every wallet
// must follow.
//
// The reorganization is one block deep on purpose: btcwallet v0.16.10
// loses track of a deeper one delivered block by block from the tip, as
// neutrino's backend delivers it (see the package documentation and
// TestDeepReorganization).
func (f *flow) reorganize(spend *wire.MsgTx) {
	t := f.t
	before := f.lanes[0].h.snapshot(f.lanes[0].l)
	i := slices.IndexFunc(before.History, func(e txEntry) bool { return e.Txid == spend.TxHash() })
	if i < 0 || before.History[i].Height != before.Tip {
		t.Fatalf("the spend is not at the tip: %v", before)
	}
	if err := f.net.miner.RPC().InvalidateBlock(&before.History[i].Block); err != nil {
		t.Fatalf("invalidateblock: %v", err)
	}
	// Both blocks at once, so that the peers rarely announce the first
	// alone: neutrino drops a peer that announces a branch no longer
	// than its own, and redials it 5 s later.
	first := *f.net.mine(t, 2)[0]
	b, err := f.net.miner.RPC().GetBlock(&first)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(b.Transactions, func(tx *wire.MsgTx) bool { return tx.TxHash() == spend.TxHash() }) {
		t.Fatalf("the new branch's first block %v does not hold the spend", first)
	}
	tip, height := f.net.tip(t)
	want := before
	want.Tip = height
	want.History = slices.Clone(before.History)
	want.History[i].Block = first
	want.UTXOs = slices.Clone(before.UTXOs)
	want.UTXOs[0].Block = first
	f.each(func(ln *lane) {
		st := ln.h.waitSynced(ln.l, "the reorganization", tip, func(s walletState) bool {
			return len(s.History) == 2 && s.History[i].Block == first
		})
		ln.h.expectState(st, want)
		ln.res.reorgTip = height
		bad := wrongHashes(t, f.net, ln.l, ln.res.start, height)
		if ln.h.bc.keepsHashes && len(bad) > 0 {
			t.Errorf("%s: the wallet's block hashes differ from the chain's at heights %v", ln.h.bc.name, bad)
		}
		t.Logf("%s: the wallet's block hashes differ from the chain's at heights %v", ln.h.bc.name, bad)
	})
}

// reopen stops every wallet, mines a block and reopens them from their
// databases: each must find its state, one block further.
func (f *flow) reopen() {
	wants := make([]walletState, len(f.lanes))
	for i, ln := range f.lanes {
		wants[i] = ln.h.snapshot(ln.l)
		ln.l.stop(f.t)
	}
	f.net.mine(f.t, 1)
	tip, height := f.net.tip(f.t)
	f.each(func(ln *lane) { ln.l = ln.h.openWallet(ln.dir) })
	for i, ln := range f.lanes {
		wants[i].Tip = height
		st := ln.h.waitSynced(ln.l, "the reopened wallet", tip, nil)
		ln.h.expectState(st, wants[i])
		ln.res.final, ln.res.reopenTip = st, st.Tip
	}
}

// restore stops every wallet and creates one from the seed per backend,
// with a birthday at the time of the block at restoreBirthdayHeight and a
// recovery window: each must end in its first wallet's final state.
func (f *flow) restore() {
	f.each(func(ln *lane) { ln.l.stop(f.t) }) // the notifications of this phase are the restored wallets'
	header, err := f.net.miner.RPC().GetBlockHeader(blockHashAt(f.t, f.net, restoreBirthdayHeight))
	if err != nil {
		f.t.Fatal(err)
	}
	tip, _ := f.net.tip(f.t)
	rs := make([]*walletLife, len(f.lanes))
	for i, ln := range f.lanes {
		rs[i] = ln.h.createWallet(f.t.TempDir(), header.Timestamp, recoveryWindow)
	}
	for i, ln := range f.lanes {
		st := ln.h.waitSynced(rs[i], "the restored wallet", tip, nil)
		ln.h.expectState(st, ln.res.final)
		ln.res.restored, ln.res.birthday = st, ln.h.birthdayBlock(rs[i])
	}
}
