package notify_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/client"
	"github.com/spvfilter/spvfilter/peer/notify"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// TestHistoryNamesOnePeer: with one peer, a confirmation and a spend
// found by a registration's history scan rest on that peer as much as
// those the rescan finds, and must name it (OnePeer).
func TestHistoryNamesOnePeer(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice, bob := peertest.NewKey("alice"), peertest.NewKey("bob")
	payAlice, _ := aliceSpent(t, node) // 111, 112
	_, n := start(t, node)

	payBob := node.BuildCoinbaseSpend(t, wire.NewTxOut(20_000_000, bob.PkScript()))
	bobID := payBob.TxHash()
	ev, err := n.RegisterConfirmations(&bobID, bob.PkScript(), 1, 112)
	if err != nil {
		t.Fatal(err)
	}
	live := followConf(ev)
	aliceID := payAlice.TxHash()
	ev, err = n.RegisterConfirmations(&aliceID, alice.PkScript(), 1, 105)
	if err != nil {
		t.Fatal(err)
	}
	past := followConf(ev)
	op := wire.OutPoint{Hash: aliceID}
	sev, err := n.RegisterSpend(&op, alice.PkScript(), 105)
	if err != nil {
		t.Fatal(err)
	}
	pastSpend := followSpend(sev)
	if _, err := node.RPC().SendRawTransaction(payBob, true); err != nil {
		t.Fatal(err)
	}
	node.Confirm(t, payBob)
	live.waitCount(t, "conf ", 1)
	past.waitCount(t, "conf ", 1)
	pastSpend.waitCount(t, "spend ", 1)
	for what, one := range map[string]string{"live confirmation": live.confs[0].OnePeer,
		"confirmation found by the history": past.confs[0].OnePeer, "spend found by the history": pastSpend.spends[0].OnePeer} {
		if one != node.P2PAddr {
			t.Errorf("%s rests on the only peer %s, but OnePeer is %q", what, node.P2PAddr, one)
		}
	}
}

// TestNotifierSurvivesStall: the only peer stalls its filters for a
// while (a node under load, or a liar); once it serves again the
// notifier goes on with its registrations (lnd has no way to register
// everything again).
func TestNotifierSurvivesStall(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	var stall atomic.Bool
	proxy := filterStaller(t, node, &stall)
	_, n := start(t, node, proxy.Addr)
	bob := peertest.NewKey("bob")
	payBob := node.BuildCoinbaseSpend(t, wire.NewTxOut(20_000_000, bob.PkScript()))
	bobID := payBob.TxHash()
	ev, err := n.RegisterConfirmations(&bobID, bob.PkScript(), 1, 110)
	if err != nil {
		t.Fatal(err)
	}
	rec := followConf(ev)
	stall.Store(true)
	node.Generate(t, 1) // 111, whose filter does not come
	time.Sleep(15 * time.Second)
	t.Logf("while the peer stalls, Err: %v", n.Err())
	stall.Store(false)
	if _, err := node.RPC().SendRawTransaction(payBob, true); err != nil {
		t.Fatal(err)
	}
	node.Confirm(t, payBob) // 112
	deadline := time.After(30 * time.Second)
	for rec.count("conf ") == 0 {
		select {
		case <-deadline:
			t.Fatalf("no confirmation after the peer served again; notifier error: %v; registration told %q", n.Err(), rec.snapshot())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// TestStartBeforeSync: an lnd port starts the notifier right after
// the client; it must follow from ReorgSafety below the peers' tip, not
// from the height the client had synced then (0), downloading every filter.
func TestStartBeforeSync(t *testing.T) {
	for _, synced := range []bool{true, false} {
		t.Run(map[bool]string{true: "synced first (control)", false: "right after Start"}[synced], func(t *testing.T) { startBeforeSync(t, synced) })
	}
}

func startBeforeSync(t *testing.T, synced bool) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 600)
	var filters atomic.Int64
	proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgCFilter); ok {
			filters.Add(1)
		}
		return []wire.Message{m}, false
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.Connect(ctx, client.Config{Peers: []string{proxy.Addr}, Params: node.Params, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if synced {
		if _, err := c.BestBlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	n := notify.New(c, notify.Options{ReorgSafety: reorgSafety, PollInterval: 100 * time.Millisecond})
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	ev, err := n.RegisterBlockEpochs(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ev.Cancel()
	// A confirmation of a new block is told only once the rescan reached it.
	bob := peertest.NewKey("bob")
	payBob := node.BuildCoinbaseSpend(t, wire.NewTxOut(20_000_000, bob.PkScript()))
	bobID := payBob.TxHash()
	cev, err := n.RegisterConfirmations(&bobID, bob.PkScript(), 1, 600)
	if err != nil {
		t.Fatal(err)
	}
	rec := followConf(cev)
	if _, err := node.RPC().SendRawTransaction(payBob, true); err != nil {
		t.Fatal(err)
	}
	node.Confirm(t, payBob)
	rec.waitCount(t, "conf ", 1)
	if got := filters.Load(); got > 100 {
		t.Errorf("the notifier downloaded %d filters of a 601-block chain with ReorgSafety %d", got, reorgSafety)
	}
}

// TestHistoryNamesOnePeerAhead: block 111 is held by one peer only
// (honest, ahead of the other). A confirmation registered before it names
// that peer (OnePeer); the same confirmation found by the history scan of
// a registration made after must name it too.
func TestHistoryNamesOnePeerAhead(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	ahead := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	alice := peertest.NewKey("alice")
	_, n := start(t, node, node.P2PAddr, ahead.P2PAddr)
	pay := ahead.BuildCoinbaseSpend(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	id := pay.TxHash()
	ev, err := n.RegisterConfirmations(&id, alice.PkScript(), 1, 110)
	if err != nil {
		t.Fatal(err)
	}
	live := followConf(ev)
	if _, err := ahead.RPC().SendRawTransaction(pay, true); err != nil {
		t.Fatal(err)
	}
	ahead.Confirm(t, pay) // 111, on ahead only
	live.waitCount(t, "conf ", 1)
	if live.confs[0].OnePeer != ahead.P2PAddr {
		t.Fatalf("premise: live confirmation %+v does not name %s", live.confs[0], ahead.P2PAddr)
	}
	ev, err = n.RegisterConfirmations(&id, alice.PkScript(), 1, 105)
	if err != nil {
		t.Fatal(err)
	}
	past := followConf(ev)
	past.waitCount(t, "conf ", 1)
	if c := past.confs[0]; c.OnePeer != ahead.P2PAddr {
		t.Errorf("the same block found by the history: OnePeer %q, want %s", c.OnePeer, ahead.P2PAddr)
	}
}

// TestZeroHashMeansScript: lnd's ConfRequest and SpendRequest (and
// its chainrpc, which Loop and others call) ask for a script alone with a
// zero txid or the zero outpoint, not nil; the README's adapter passes
// them through. A script-only request must be found either way.
func TestZeroHashMeansScript(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice := peertest.NewKey("alice")
	aliceSpent(t, node) // 111, 112
	_, n := start(t, node)
	ev, err := n.RegisterConfirmations(&chainhash.Hash{}, alice.PkScript(), 1, 105)
	if err != nil {
		t.Fatal(err)
	}
	conf := followConf(ev)
	sev, err := n.RegisterSpend(&wire.OutPoint{}, alice.PkScript(), 105)
	if err != nil {
		t.Fatal(err)
	}
	spend := followSpend(sev)
	node.Generate(t, 2)
	time.Sleep(5 * time.Second)
	if conf.count("conf ") == 0 {
		t.Errorf("script-only confirmation asked with the zero txid never told: %q", conf.snapshot())
	}
	if spend.count("spend ") == 0 {
		t.Errorf("script-only spend asked with the zero outpoint never told: %q", spend.snapshot())
	}
}

// TestRegistrationLatency: registrations return at once, their history
// scanned apart (lnd's notifiers dispatch it asynchronously), however
// many are made, with the default poll interval, while the rescan is
// idle at the tip; the history of each is still found.
func TestRegistrationLatency(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice := peertest.NewKey("alice")
	payAlice := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, payAlice) // 111
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, err := client.Connect(ctx, client.Config{Peers: []string{node.P2PAddr}, Params: node.Params, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	n := notify.New(c, notify.Options{ReorgSafety: reorgSafety}) // the default poll, as an lnd port's
	if err := n.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	time.Sleep(2 * time.Second) // the rescan is at the tip, idle
	aliceID := payAlice.TxHash()
	for _, regs := range []int{5, 1000} {
		scripts := make([][]byte, regs)
		for i := range scripts {
			scripts[i] = peertest.NewKey(fmt.Sprintf("key %d", i)).PkScript()
		}
		begin := time.Now()
		var past []*record
		for i := range regs {
			// Every tenth asks for the history from genesis.
			if i%10 == 0 {
				ev, err := n.RegisterConfirmations(&aliceID, alice.PkScript(), 1, 0)
				if err != nil {
					t.Fatal(err)
				}
				defer ev.Cancel()
				past = append(past, followConf(ev))
				continue
			}
			op := wire.OutPoint{Index: uint32(i)}
			ev, err := n.RegisterSpend(&op, scripts[i], 1000)
			if err != nil {
				t.Fatal(err)
			}
			defer ev.Cancel()
		}
		took := time.Since(begin)
		t.Logf("%d registrations returned in %v (%v each)", regs, took, took/time.Duration(regs))
		if took > time.Second {
			t.Fatalf("%d registrations took %v (%v each)", regs, took, took/time.Duration(regs))
		}
		for _, r := range past {
			r.waitCount(t, "conf ", 1)
		}
		t.Logf("%d registrations and the history of %d: %v", regs, len(past), time.Since(begin))
	}
}

// filterStaller is a relay to node that withholds its compact filters,
// filter headers and filter checkpoints while stall is set: a node under
// load, or a liar.
func filterStaller(t *testing.T, node *peertest.Node, stall *atomic.Bool) *peertest.Liar {
	return peertest.NewLiar(t, node.P2PAddr, node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		switch m.(type) {
		case *wire.MsgCFilter, *wire.MsgCFHeaders, *wire.MsgCFCheckpt:
			if stall.Load() {
				return nil, false
			}
		}
		return []wire.Message{m}, false
	})
}
