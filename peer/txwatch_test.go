package peer

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// watchTx opens a TxWatch of txid's announcement at addr, closed when the
// test ends.
func watchTx(t *testing.T, node *peertest.Node, addr string, tx *wire.MsgTx) *TxWatch {
	t.Helper()
	w, err := WatchTx(context.Background(), Config{Addr: addr, Params: node.Params, Timeout: 5 * time.Second}, tx.TxHash())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

// waitSighting waits up to limit for w's verdict.
func waitSighting(t *testing.T, w *TxWatch, limit time.Duration) (*Sighting, error) {
	t.Helper()
	select {
	case <-w.Done():
		return w.Result()
	case <-time.After(limit):
		t.Fatalf("no verdict within %v", limit)
		return nil, nil
	}
}

// TestWatchSeesPropagation: two btcd nodes connected to each other; a
// transaction given to the first is announced by the second to a watch
// connection of its own (it reached the second through the network),
// and by the first to a second connection of ours (on its word alone).
// Both announcements are checked by fetching the transaction, and both
// nodes hold it. btcd announces on a trickle of 10 s, so the second's
// announcement comes after two trickles at most.
func TestWatchSeesPropagation(t *testing.T) {
	first := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	first.Generate(t, 101)
	second := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--connect="+first.P2PAddr))
	if !waitForLong(30*time.Second, func() bool {
		n, err := second.RPC().GetBlockCount()
		return err == nil && n == 101
	}) {
		t.Fatal("the second node did not sync the first's 101 blocks")
	}
	tx := first.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
	own, other := watchTx(t, first, first.P2PAddr, tx), watchTx(t, first, second.P2PAddr, tx)
	p, err := Dial(context.Background(), Config{Addr: first.P2PAddr, Params: first.Params, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	start := time.Now()
	if err := p.Broadcast(context.Background(), tx); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		w    *TxWatch
		addr string
	}{{"the node given it", own, first.P2PAddr}, {"the other node", other, second.P2PAddr}} {
		s, err := waitSighting(t, c.w, 45*time.Second)
		if err != nil || s.Peer != c.addr || s.Txid != tx.TxHash() {
			t.Fatalf("%s: sighting %+v, %v", c.name, s, err)
		}
		t.Logf("%s announced it: checked %v after the watch opened, %v after the broadcast began", c.name, s.After.Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	}
	if !first.InMempool(t, tx.TxHash()) || !second.InMempool(t, tx.TxHash()) {
		t.Fatal("a node announced a transaction its mempool does not hold")
	}
}

// waitForLong polls cond for up to limit.
func waitForLong(limit time.Duration, cond func() bool) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// TestWatchCatchesFalseAnnouncement: a node that announces the
// transaction it is offered without taking it, then answers the getdata
// for it with notfound or with another transaction, gives no sighting:
// the watch names the false announcement (and what was served), at once.
func TestWatchCatchesFalseAnnouncement(t *testing.T) {
	needFixture(t)
	alice := fx.alice
	other := fx.node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, alice.P2WPKHScript()))
	otherID := other.TxHash()
	tests := []struct {
		name   string
		serve  *wire.MsgTx
		served bool
	}{
		{"notfound", nil, false},
		{"another transaction", other, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			liar := peertest.NewCoreLike(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.CoreLikeAnnouncesFalsely(tt.serve))
			tx := fx.node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, alice.P2WPKHScript()))
			w := watchTx(t, fx.node, liar.Addr, tx)
			p := dial(t, liar.Addr, 5*time.Second)
			start := time.Now()
			if err := p.Reannounce(context.Background(), tx); err != nil {
				t.Fatal(err)
			}
			s, err := waitSighting(t, w, 5*time.Second)
			t.Logf("%v after %v", err, time.Since(start).Round(time.Millisecond))
			checkPeerError(t, err, liar.Addr, ErrFalseAnnouncement)
			var fe *FalseAnnounceError
			if s != nil || !errors.As(err, &fe) || fe.Txid != tx.TxHash() || (fe.Served != nil) != tt.served ||
				tt.served && *fe.Served != otherID {
				t.Fatalf("sighting %+v, error %v: want a false announcement of %v", s, err, tx.TxHash())
			}
			if fx.node.InMempool(t, tx.TxHash()) {
				t.Fatal("the node got the transaction")
			}
		})
	}
}

// TestWatchIgnoresOtherTransactions: the node announces every
// transaction entering its mempool to a watch; those of other txids
// give no verdict (a connection beside it with the relay flag shows the
// node did announce them).
func TestWatchIgnoresOtherTransactions(t *testing.T) {
	needFixture(t)
	watched := fx.node.BuildCoinbaseSpend(t, wire.NewTxOut(1_000_000, fx.alice.P2WPKHScript()))
	w := watchTx(t, fx.node, fx.node.P2PAddr, watched)
	var seen announcements
	p, err := Dial(context.Background(), Config{Addr: fx.node.P2PAddr, Params: fx.node.Params, RelayTx: true, OnAnnounce: seen.add})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var others []*wire.MsgTx
	for range 3 {
		others = append(others, fx.node.SpendCoinbase(t, wire.NewTxOut(1_000_000, fx.alice.P2WPKHScript())))
	}
	if !waitFor(func() bool {
		for _, tx := range others {
			if !seen.has(false, tx.TxHash()) {
				return false
			}
		}
		return true
	}) {
		t.Fatal("the node did not announce the other transactions")
	}
	time.Sleep(200 * time.Millisecond) // two of the node's trickles
	select {
	case <-w.Done():
		s, err := w.Result()
		t.Fatalf("a verdict on other transactions: %+v, %v", s, err)
	default:
	}
	fx.confirm(t, others...)
}
