package client

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestQueriesRightAfterStart: a client fresh from Connect, whose peers are
// 1,000 blocks ahead of its chain (it holds the genesis block alone), is
// started and asked at once, from several goroutines: every query waits
// for the first header sync and answers right (the best block, the tip's
// block, filter and filter header, an output's creation and spend), as
// btcd's RPC states them. Then the same without the service: the queries
// sync the headers themselves.
func TestQueriesRightAfterStart(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	alice, bob := peertest.NewKey("alice"), peertest.NewKey("bob")
	pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 102
	node.Generate(t, 400)
	spend := node.Spend(t, []peertest.Output{peertest.OutputOf(pay, 0, alice)}, wire.NewTxOut(30_000_000-peertest.Fee, bob.PkScript()))
	node.Confirm(t, spend) // 503
	node.Generate(t, 497)  // 1000
	tipHash, err := node.RPC().GetBlockHash(1000)
	if err != nil {
		t.Fatal(err)
	}
	wantFilter, err := node.RPC().GetCFilter(tipHash, wire.GCSFilterRegular)
	if err != nil {
		t.Fatal(err)
	}
	wantHeader, err := node.RPC().GetCFilterHeader(tipHash, wire.GCSFilterRegular)
	if err != nil {
		t.Fatal(err)
	}
	op := wire.OutPoint{Hash: pay.TxHash(), Index: 0}

	for _, started := range []bool{true, false} {
		c := connectUnsynced(t, node, 10*time.Second, node.P2PAddr, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr)
		if h := c.Chain().Height(); h != 0 {
			t.Fatalf("the client starts at height %d, want 0", h)
		}
		if started {
			startService(t, c)
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		check := func(what string, f func() error) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if err := f(); err != nil {
					errs <- errorf("started %v: %s: %v", started, what, err)
				}
			}()
		}
		check("BestBlock", func() error {
			best, err := c.BestBlock(ctx)
			if err == nil && (best.Height != 1000 || best.Hash != *tipHash) {
				err = errorf("height %d %v, want 1000 %v", best.Height, best.Hash, tipHash)
			}
			return err
		})
		check("GetBlock of the tip", func() error {
			b, err := c.GetBlock(ctx, *tipHash)
			if err == nil && b.BlockHash() != *tipHash {
				err = errorf("block %v", b.BlockHash())
			}
			return err
		})
		check("GetCFilter of the tip", func() error {
			f, err := c.GetCFilter(ctx, *tipHash)
			if err == nil && !bytes.Equal(f, wantFilter.Data) {
				err = errorf("filter %x, btcd's %x", f, wantFilter.Data)
			}
			return err
		})
		check("FilterHeader of the tip", func() error {
			h, err := c.FilterHeader(ctx, 1000)
			if err == nil && h != wantHeader.PrevFilterHeader {
				err = errorf("filter header %v, btcd's %v", h, wantHeader.PrevFilterHeader)
			}
			return err
		})
		check("GetUtxo", func() error {
			rep, err := c.GetUtxo(ctx, UtxoRequest{OutPoint: op, Script: alice.PkScript(), From: 100})
			if err == nil && (rep.Output == nil || rep.Height != 102 || rep.SpentBy == nil || rep.SpentBy.TxHash() != spend.TxHash() || rep.SpendHeight != 503 || rep.To != 1000) {
				err = errorf("report %+v", rep)
			}
			return err
		})
		wg.Wait()
		cancel()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	}
}

// TestQueryWaitIsBounded: a query of a client whose only peer holds every
// answer for seconds gives up with its context, saying what it waited for
// and naming the peer it waited on.
func TestQueryWaitIsBounded(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 10)
	slow := peertest.NewFlooder(t, node.P2PAddr, node.Params.Net, peertest.Flood{Kind: peertest.SlowAnswers, Delay: 2 * time.Second})
	c := connectUnsynced(t, node, 20*time.Second, slow.Addr)
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := c.BestBlock(ctx)
	var we *SyncWaitError
	if !errors.As(err, &we) || !errors.Is(err, context.DeadlineExceeded) || len(we.Pending) != 1 || we.Pending[0] != slow.Addr || we.What != "the best block" {
		t.Fatalf("err %v, want a *SyncWaitError naming %s", err, slow.Addr)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("gave up after %v, its context ended after 500ms", d)
	}
	t.Log(err)
}

// connectUnsynced returns a client of addrs on node's network, as Connect
// leaves it: no header synced; it is closed when the test ends.
func connectUnsynced(t *testing.T, node *peertest.Node, timeout time.Duration, addrs ...string) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := Connect(ctx, Config{Peers: addrs, Params: node.Params, Timeout: timeout})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
