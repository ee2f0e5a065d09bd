package client

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestSendToCoreLike: a node that serves transactions by getdata as
// Bitcoin Core does (only once it announced them to that connection)
// and sends no reject. Alone, its acceptance is known from its
// announcement to the send's second connection, within seconds, on its
// word alone (a warning says so): before, the send failed after the
// timeout, reporting the transaction dropped (10.0 s of a 10 s
// timeout). A node that announces the transaction without taking it,
// and serves notfound or another transaction, is not believed: the send
// fails naming the false announcement.
func TestSendToCoreLike(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 105)
	other := node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, peertest.NewKey("bob").P2WPKHScript()))
	tests := []struct {
		name    string
		opts    []peertest.CoreLikeOption
		timeout time.Duration
		taken   bool
	}{
		{"honest", nil, 10 * time.Second, true},
		{"announces falsely, serves notfound", []peertest.CoreLikeOption{peertest.CoreLikeAnnouncesFalsely(nil)}, 3 * time.Second, false},
		{"announces falsely, serves another transaction", []peertest.CoreLikeOption{peertest.CoreLikeAnnouncesFalsely(other)}, 3 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
			core := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net, tt.opts...)
			c := connectTo(t, node, tt.timeout, core.Addr)
			start := time.Now()
			res, err := c.SendTransaction(context.Background(), tx)
			elapsed := time.Since(start)
			t.Logf("%v after %v; result %+v", err, elapsed.Round(time.Millisecond), res)
			if !tt.taken {
				if err == nil || !errors.Is(err, peer.ErrFalseAnnouncement) || !strings.Contains(err.Error(), core.Addr) ||
					len(res.Accepted)+len(res.Announced) != 0 || node.InMempool(t, tx.TxHash()) {
					t.Fatalf("error %v, result %+v: want the send failed, naming the false announcement", err, res)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(res.Accepted, []string{core.Addr}) || res.Announced[core.Addr] == 0 || len(res.Seen) != 0 || res.Propagated() ||
				!slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "on its own word") }) {
				t.Errorf("result %+v: want accepted by its announcement, on its word", res)
			}
			if elapsed > tt.timeout/2 || !node.InMempool(t, tx.TxHash()) {
				t.Fatalf("took %v; in the mempool: %t", elapsed, node.InMempool(t, tx.TxHash()))
			}
		})
	}
}

// TestSendPropagatesToCoreLike: two btcd nodes connected to each other,
// the second behind a CoreLike proxy. Whichever is given the transaction
// first, the second's announcement is checked and counted: it proves
// propagation when it was not given it, its acceptance when it was. The
// proof rests on that one peer's word, and SeenAlone says so.
func TestSendPropagatesToCoreLike(t *testing.T) {
	first := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	first.Generate(t, 101)
	second := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--connect="+first.P2PAddr))
	for end := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if n, err := second.RPC().GetBlockCount(); err == nil && n == 101 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the second node did not sync")
		}
	}
	core := peertest.NewCoreLike(t, second.P2PAddr, second.Params.Net)
	const timeout = 10 * time.Second
	c := connectTo(t, first, timeout, first.P2PAddr, core.Addr)
	tx := first.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	start := time.Now()
	res, err := c.SendTransaction(context.Background(), tx)
	elapsed := time.Since(start)
	t.Logf("%v after %v; result %+v", err, elapsed.Round(time.Millisecond), res)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Propagated() || res.Announced[core.Addr] == 0 || !slices.Contains(res.Accepted, core.Addr) ||
		slices.Contains(res.Seen, res.Given[0]) || len(res.Warnings) != 0 ||
		len(res.Seen) != 1 || res.SeenAlone == nil || res.SeenAlone.Seen != res.Seen[0] {
		t.Errorf("result %+v: want propagation seen, the Core-like node's announcement counted", res)
	}
	if elapsed > timeout/2 || !first.InMempool(t, tx.TxHash()) || !second.InMempool(t, tx.TxHash()) {
		t.Fatalf("took %v; in the mempools: %t, %t", elapsed, first.InMempool(t, tx.TxHash()), second.InMempool(t, tx.TxHash()))
	}
}

// TestSendToCoreLikeTrickle: the CoreLike node of TestSendToCoreLike
// announcing on a trickle of 5 s, the mean delay of Bitcoin Core's
// announcements to inbound peers (net_processing's
// INBOUND_INVENTORY_BROADCAST_INTERVAL): its acceptance is known within
// one trickle, well before the timeout.
func TestSendToCoreLikeTrickle(t *testing.T) {
	const trickle, timeout = 5 * time.Second, 15 * time.Second
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--trickleinterval="+trickle.String()))
	node.Generate(t, 101)
	tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	core := peertest.NewCoreLike(t, node.P2PAddr, node.Params.Net)
	c := connectTo(t, node, timeout, core.Addr)
	start := time.Now()
	res, err := c.SendTransaction(context.Background(), tx)
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("taken after %v, announced after %v", elapsed.Round(time.Millisecond), res.Announced[core.Addr].Round(time.Millisecond))
	if res.Announced[core.Addr] == 0 || elapsed > trickle+time.Second || !node.InMempool(t, tx.TxHash()) {
		t.Fatalf("result %+v after %v: want it taken by the node's announcement within a trickle", res, elapsed)
	}
}
