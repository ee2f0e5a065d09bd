package btcwallet

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg"
	"github.com/btcsuite/btcd/txscript"
	"github.com/btcsuite/btcd/wire"
	"github.com/btcsuite/btcwallet/chain"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// taken is the notifications a test's wallet took, in order.
type taken struct {
	mu sync.Mutex
	ns []interface{}
}

func (k *taken) has(cond func(interface{}) bool) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.ContainsFunc(k.ns, cond)
}

// startBackendOn starts a client of addrs (ConnectOnly, started) and a
// backend over it whose notifications are taken at once; both stop when
// the test ends.
func startBackendOn(t *testing.T, params *chaincfg.Params, addrs ...string) (*client.Client, *Backend, *taken) {
	t.Helper()
	c := startedClient(t, params, addrs...)
	b := New(c, Config{Log: testLog()})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	k := &taken{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for n := range b.Notifications() {
			k.mu.Lock()
			k.ns = append(k.ns, n)
			k.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		b.Stop()
		b.WaitForShutdown()
		<-done
	})
	return c, b, k
}

// connectClient connects a client to addrs (ConnectOnly), closed when the
// test ends; it is not started.
func connectClient(t *testing.T, params *chaincfg.Params, addrs ...string) *client.Client {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	c, err := client.Connect(ctx, client.Config{Peers: addrs, Params: params, Timeout: 5 * time.Second, ConnectOnly: true})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		c.Close()
	})
	return c
}

// startedClient connects a client to addrs and starts it.
func startedClient(t *testing.T, params *chaincfg.Params, addrs ...string) *client.Client {
	t.Helper()
	c := connectClient(t, params, addrs...)
	if err := c.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// connectedAt picks BlockConnected at height.
func connectedAt(height int32) func(interface{}) bool {
	return func(n interface{}) bool {
		bc, ok := n.(chain.BlockConnected)
		return ok && bc.Height == height
	}
}

// addressOf returns the address script pays.
func addressOf(t *testing.T, script []byte, params *chaincfg.Params) btcutil.Address {
	t.Helper()
	_, addrs, _, err := txscript.ExtractPkScriptAddrs(script, params)
	if err != nil || len(addrs) != 1 {
		t.Fatalf("address of %x: %v", script, err)
	}
	return addrs[0]
}

// TestNotifyReceivedWaits: NotifyReceived called while the rescan scans
// a block returns only once that step is over and the rescan has the new
// address (the rescan's next height is past the block), and the payment
// to it in the next block is reported.
func TestNotifyReceivedWaits(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	var slow atomic.Bool
	inFlight := make(chan struct{}, 1)
	proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgCFilter); ok && slow.Load() {
			select {
			case inFlight <- struct{}{}:
			default:
			}
			time.Sleep(1500 * time.Millisecond)
		}
		return peertest.Honest(m)
	})
	_, b, k := startBackendOn(t, node.Params, proxy.Addr)
	if err := b.NotifyBlocks(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the rescan at the tip", waitLimit, func() (bool, string) {
		s := b.current()
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.r != nil && s.r.Height() == 111, "not there"
	})
	slow.Store(true)
	node.Generate(t, 1) // 111, its filter slow to come
	select {
	case <-inFlight:
	case <-time.After(waitLimit):
		t.Fatal("the rescan never asked for the new block's filter")
	}
	s := b.current()
	s.mu.Lock()
	r := s.r
	s.mu.Unlock()
	before := r.Height()
	alice := peertest.NewKey("alice")
	if err := b.NotifyReceived([]btcutil.Address{addressOf(t, alice.PkScript(), node.Params)}); err != nil {
		t.Fatal(err)
	}
	if after := r.Height(); after <= before {
		t.Errorf("NotifyReceived returned while the rescan was still scanning height %d (next height %d)", before, after)
	}
	slow.Store(false)
	pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 112
	waitFor(t, "the payment to the new address", waitLimit, func() (bool, string) {
		return k.has(func(n interface{}) bool {
			f, ok := n.(chain.FilteredBlockConnected)
			return ok && f.Block.Height == 112 && len(f.RelevantTxs) == 1 && f.RelevantTxs[0].Hash == pay.TxHash()
		}), "no FilteredBlockConnected at 112 with the payment"
	})
}

// TestUnminedSentAgain: a transaction the wallet sent to one node reaches
// a node added later, which never had it, at the next block; once a block
// holds it, it is no longer sent.
func TestUnminedSentAgain(t *testing.T) {
	a := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	a.Generate(t, 110)
	bNode := peertest.CopyChain(t, a)
	c, b, k := startBackendOn(t, a.Params, a.P2PAddr)
	if err := b.NotifyReceived([]btcutil.Address{addressOf(t, peertest.NewKey("alice").PkScript(), a.Params)}); err != nil {
		t.Fatal(err)
	}
	tx := a.BuildCoinbaseSpend(t, wire.NewTxOut(30_000_000, peertest.NewKey("alice").PkScript()))
	if _, err := b.SendRawTransaction(tx, false); err != nil {
		t.Fatal(err)
	}
	txid := tx.TxHash()
	if bNode.InMempool(t, txid) {
		t.Fatal("the second node has the transaction before it is a peer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := c.AddPeer(ctx, bNode.P2PAddr, true); err != nil {
		t.Fatal(err)
	}
	bNode.Generate(t, 1) // 111, on the second node only
	waitFor(t, "the transaction sent again to the second node", waitLimit, func() (bool, string) {
		return bNode.InMempool(t, txid), "not in its mempool"
	})
	bNode.Confirm(t, tx) // 112
	waitFor(t, "the block holding it", waitLimit, func() (bool, string) {
		return k.has(connectedAt(112)) && len(b.unmined.list()) == 0, "still unmined"
	})
}

// TestNotifyReceivedWalletBusy: NotifyReceived called while the rescan
// waits for a wallet that does not take its notifications returns at once
// (the rescan takes the address before its next step) instead of waiting
// for the call's timeout.
func TestNotifyReceivedWalletBusy(t *testing.T) {
	node := peertest.StartBtcd(t)
	node.Generate(t, 40)
	c := startedClient(t, node.Params, node.P2PAddr)
	b := New(c, Config{Log: testLog(), QueueSize: 2, Timeout: 20 * time.Second})
	defer func() {
		b.Stop()
		for range b.Notifications() {
		}
		b.WaitForShutdown()
	}()
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	genesis := node.Params.GenesisHash
	if err := b.Rescan(genesis, nil, nil); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the rescan waiting for the wallet", waitLimit, func() (bool, string) {
		s := b.current()
		s.mu.Lock()
		defer s.mu.Unlock()
		return isClosed(s.blocked), "not waiting"
	})
	began := time.Now()
	if err := b.NotifyReceived([]btcutil.Address{addressOf(t, peertest.NewKey("alice").PkScript(), node.Params)}); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(began); took > 2*time.Second {
		t.Errorf("NotifyReceived took %v while the wallet was busy", took)
	}
	s := b.current()
	s.mu.Lock()
	n := len(s.items)
	s.mu.Unlock()
	if n != 1 {
		t.Errorf("the rescan watches %d item(s), want the new address", n)
	}
}
