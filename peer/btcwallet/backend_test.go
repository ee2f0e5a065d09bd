package btcwallet

import (
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/chain"
	"github.com/btcsuite/btcwallet/waddrmgr"
	"github.com/btcsuite/btcwallet/wtxmgr"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestBackendCalls calls the backend's methods one by one against two
// nodes, as the wallet and its users call them, and compares the answers
// with the nodes'.
func TestBackendCalls(t *testing.T) {
	net := startNodes(t, testChainSpec, 2)
	// A double spend is refused by the peer it is given to, and the
	// client then waits for other peers to hold it for up to its
	// timeout, before it gives it to the next: a shorter timeout keeps
	// the test short.
	c := sharedClient(t, net.addrs(), 5*time.Second)
	b := New(c, Config{Log: testLog()})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b.Stop()
		b.WaitForShutdown()
	})
	if n := <-b.Notifications(); n != (chain.ClientConnected{}) {
		t.Fatalf("first notification %#v, want ClientConnected", n)
	}
	tipHash, tip := net.tip(t)

	t.Run("chain", func(t *testing.T) { checkChainQueries(t, b, net, tipHash, tip) })
	t.Run("FilterBlocks", func(t *testing.T) { checkFilterBlocks(t, b, net) })
	t.Run("SendRawTransaction", func(t *testing.T) { checkSends(t, b, net) })

	if _, err := b.TestMempoolAccept(nil, 0); !errors.Is(err, chain.ErrUnimplemented) {
		t.Errorf("TestMempoolAccept: %v, want chain.ErrUnimplemented", err)
	}
	if got := b.BackEnd(); got != Name {
		t.Errorf("BackEnd() = %q", got)
	}

	// Stopped, it answers nothing that needs it running, and closes the
	// channel of notifications.
	b.Stop()
	b.WaitForShutdown()
	if _, ok := <-b.Notifications(); ok {
		t.Error("notification received after Stop")
	}
	if _, err := b.BlockStamp(); !errors.Is(err, ErrStopped) {
		t.Errorf("BlockStamp after Stop: %v", err)
	}
	if err := b.Rescan(&tipHash, nil, nil); !errors.Is(err, ErrStopped) {
		t.Errorf("Rescan after Stop: %v", err)
	}
	if err := b.NotifyBlocks(); !errors.Is(err, ErrStopped) {
		t.Errorf("NotifyBlocks after Stop: %v", err)
	}
	if err := b.Start(); !errors.Is(err, ErrStopped) {
		t.Errorf("Start after Stop: %v", err)
	}
}

// checkChainQueries compares the backend's answers about the chain with
// the miner's.
func checkChainQueries(t *testing.T, b *Backend, net *testNet, tipHash chainhash.Hash, tip int32) {
	if hash, height, err := b.GetBestBlock(); err != nil || *hash != tipHash || height != tip {
		t.Errorf("GetBestBlock = %v, %d, %v; the miner's tip is %v at %d", hash, height, err, tipHash, tip)
	}
	if bs, err := b.BlockStamp(); err != nil || bs.Hash != tipHash || bs.Height != tip {
		t.Errorf("BlockStamp before any block = %+v, %v; want the best block", bs, err)
	}
	if !b.IsCurrent() {
		t.Error("IsCurrent is false")
	}
	for _, h := range []int32{0, 1, 200, tip} {
		want := blockHashAt(t, net, h)
		if got, err := b.GetBlockHash(int64(h)); err != nil || *got != *want {
			t.Errorf("GetBlockHash(%d) = %v, %v; want %v", h, got, err, want)
		}
		wantHdr, err := net.miner.RPC().GetBlockHeader(want)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := b.GetBlockHeader(want); err != nil || *got != *wantHdr {
			t.Errorf("GetBlockHeader(%v) = %+v, %v; want %+v", want, got, err, wantHdr)
		}
	}
	for _, h := range []int64{-1, int64(tip) + 1} {
		if got, err := b.GetBlockHash(h); !errors.Is(err, client.ErrUnknownBlock) {
			t.Errorf("GetBlockHash(%d) = %v, %v; want ErrUnknownBlock", h, got, err)
		}
	}
	unknown := chainhash.Hash{1}
	if got, err := b.GetBlockHeader(&unknown); !errors.Is(err, client.ErrUnknownBlock) {
		t.Errorf("GetBlockHeader(%v) = %v, %v; want ErrUnknownBlock", unknown, got, err)
	}
	if blk, err := b.GetBlock(&tipHash); err != nil || blk.BlockHash() != tipHash {
		t.Errorf("GetBlock(%v): %v", tipHash, err)
	}
	if _, err := b.GetBlock(&unknown); !errors.Is(err, client.ErrUnknownBlock) {
		t.Errorf("GetBlock(%v): %v, want ErrUnknownBlock", unknown, err)
	}
}

// checkFilterBlocks pays an address and asks FilterBlocks about the
// blocks around the payment, and about blocks that are not the chain's.
func checkFilterBlocks(t *testing.T, b *Backend, net *testNet) {
	key := peertest.NewKey("spvfilter btcwallet FilterBlocks")
	addr, err := btcutil.NewAddressWitnessPubKeyHash(btcutil.Hash160(key.Priv.PubKey().SerializeCompressed()), params)
	if err != nil {
		t.Fatal(err)
	}
	pay := spendGenerated(t, net, 5, wire.NewTxOut(int64(received), key.P2WPKHScript()))
	net.miner.Confirm(t, pay)
	net.mine(t, 2)
	_, tip := net.tip(t)
	waitFor(t, "the client at the tip", waitLimit, func() (bool, string) {
		_, h, _ := b.GetBestBlock()
		return h == tip, ""
	})
	payHeight := tip - 2
	var blocks []wtxmgr.BlockMeta
	for h := payHeight - 3; h <= tip; h++ {
		hash, err := b.GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		blocks = append(blocks, blockMeta(h, *hash, time.Time{}))
	}
	scoped := waddrmgr.ScopedIndex{Scope: waddrmgr.KeyScopeBIP0084, Index: 7}
	req := &chain.FilterBlocksRequest{
		Blocks:        blocks,
		ExternalAddrs: map[waddrmgr.ScopedIndex]btcutil.Address{scoped: addr},
	}
	res, err := b.FilterBlocks(req)
	if err != nil {
		t.Fatal(err)
	}
	if res == nil || res.BatchIndex != 3 || res.BlockMeta.Height != payHeight || len(res.RelevantTxns) != 1 ||
		res.RelevantTxns[0].TxHash() != pay.TxHash() {
		t.Fatalf("FilterBlocks found %+v, want the payment %v at index 3 (height %d)", res, pay.TxHash(), payHeight)
	}
	if _, ok := res.FoundExternalAddrs[scoped.Scope][scoped.Index]; !ok {
		t.Errorf("FilterBlocks found external addresses %v, want %v", res.FoundExternalAddrs, scoped)
	}
	op := wire.OutPoint{Hash: pay.TxHash(), Index: 0}
	if res.FoundOutPoints[op] == nil {
		t.Errorf("FilterBlocks found outpoints %v, want %v", res.FoundOutPoints, op)
	}

	after := &chain.FilterBlocksRequest{Blocks: blocks[4:], ExternalAddrs: req.ExternalAddrs}
	if res, err := b.FilterBlocks(after); err != nil || res != nil {
		t.Errorf("FilterBlocks after the payment: %+v, %v; want nothing", res, err)
	}
	stale := *req
	stale.Blocks = append([]wtxmgr.BlockMeta(nil), blocks...)
	stale.Blocks[2].Hash = chainhash.Hash{2}
	if _, err := b.FilterBlocks(&stale); !errors.Is(err, ErrChainChanged) {
		t.Errorf("FilterBlocks of a block not in the chain: %v, want ErrChainChanged", err)
	}
	gap := *req
	gap.Blocks = []wtxmgr.BlockMeta{blocks[0], blocks[2]}
	if _, err := b.FilterBlocks(&gap); err == nil {
		t.Error("FilterBlocks of blocks that do not follow each other: no error")
	}
}

// checkSends sends a transaction, again, a double spend of it, and again
// once mined.
func checkSends(t *testing.T, b *Backend, net *testNet) {
	script := peertest.NewKey("spvfilter btcwallet send").P2WPKHScript()
	tx := buildGenerated(t, net, 6, wire.NewTxOut(int64(received), script))
	double := buildGenerated(t, net, 6, wire.NewTxOut(int64(sent), script))
	if hash, err := b.SendRawTransaction(tx, false); err != nil || *hash != tx.TxHash() {
		t.Fatalf("SendRawTransaction: %v, %v", hash, err)
	}
	net.waitMempool(t, tx.TxHash())
	if hash, err := b.SendRawTransaction(tx, false); err != nil || *hash != tx.TxHash() {
		t.Errorf("SendRawTransaction of a transaction the peers hold: %v, %v", hash, err)
	}
	if _, err := b.SendRawTransaction(double, false); !errors.Is(err, chain.ErrMempoolConflict) {
		t.Errorf("SendRawTransaction of a double spend: %v, want chain.ErrMempoolConflict", err)
	}
	net.miner.Confirm(t, tx)
	net.waitSame(t)
	if _, err := b.SendRawTransaction(tx, false); !errors.Is(err, chain.ErrTxAlreadyConfirmed) {
		t.Errorf("SendRawTransaction of a mined transaction: %v, want chain.ErrTxAlreadyConfirmed", err)
	}
}

// TestStartAfterStop: Start on a stopped backend says so at once, even
// when its client has not synced (it would otherwise wait for the best
// block first and return that wait's error).
func TestStartAfterStop(t *testing.T) {
	node := peertest.StartBtcd(t)
	node.Generate(t, 3)
	c := connectClient(t, node.Params, node.P2PAddr)
	b := New(c, Config{Log: testLog()}) // the client is not started: it never syncs
	b.Stop()
	began := time.Now()
	if err := b.Start(); !errors.Is(err, ErrStopped) {
		t.Errorf("Start after Stop: %v, want ErrStopped", err)
	}
	if took := time.Since(began); took > time.Second {
		t.Errorf("Start after Stop took %v", took)
	}
}
