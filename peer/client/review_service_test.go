package client

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// count returns how many times cmd occurs in cmds.
func count(cmds []string, cmd string) int {
	n := 0
	for _, c := range cmds {
		if c == cmd {
			n++
		}
	}
	return n
}

// announceFakeBlocks has l announce n random block hashes, one inv every
// interval, until the client hangs up on it; it returns how many it
// announced.
func announceFakeBlocks(t *testing.T, l *peertest.Liar, n int, every time.Duration) int {
	t.Helper()
	for i := 0; i < n; i++ {
		var h chainhash.Hash
		binary.LittleEndian.PutUint64(h[:], rand.Uint64())
		inv := wire.NewMsgInv()
		inv.AddInvVect(wire.NewInvVect(wire.InvTypeBlock, &h))
		if err := l.Inject(inv); err != nil {
			t.Logf("the client hung up on the announcer after %d announcements: %v", i, err)
			return i
		}
		time.Sleep(every)
	}
	return n
}

// peerStatus returns what c knows of the peer at addr.
func peerStatus(c *Client, addr string) PeerStatus {
	for _, p := range c.Peers() {
		if p.Address == addr {
			return p
		}
	}
	return PeerStatus{}
}

// TestReviewFakeBlockInvsKeepServiceSyncing: a peer of a started service
// announces a block hash nobody has, 50 times a second (a twentieth of
// its inv budget). Every announcement of an unknown block wakes a header
// sync that asks every peer, so each 37-byte inv costs every honest peer a
// getheaders round; the announcer is never asked to back its claim, never
// ranked down nor named. The figures are logged.
func TestReviewFakeBlockInvsKeepServiceSyncing(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	spammer := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c := connectTo(t, node, 5*time.Second, honest.Addr, spammer.Addr)
	startService(t, c)
	time.Sleep(time.Second)
	before := count(honest.Commands(), wire.CmdGetHeaders)
	const invs, every = 150, 20 * time.Millisecond
	start := time.Now()
	announceFakeBlocks(t, spammer, invs, every)
	// A scan of the same client while the announcements go on would wait
	// behind the syncs; measure one right after.
	time.Sleep(200 * time.Millisecond)
	during := count(honest.Commands(), wire.CmdGetHeaders) - before
	elapsed := time.Since(start)
	st := peerStatus(c, spammer.Addr)
	t.Logf("%d announcements of unknown blocks in %v made the service send %d getheaders to the honest peer (%d before them, in 1 s); the announcer: %+v",
		invs, elapsed.Round(time.Millisecond), during, before, st)
	if during > invs/10 && !st.Banned && st.Reason == "" {
		t.Errorf("%d fake block announcements cost the honest peer %d getheaders rounds; the announcer is neither named nor ranked down", invs, during)
	}
}

// TestReviewSlowPeerNearTimeout: a peer that holds every answer for three
// quarters of the timeout (it is never dropped: each answer arrives in
// time) beside one fast honest peer. Header syncs, checkpoints and the
// filter headers of every segment wait for every peer, so the scan takes
// several times the delay although the fast peer could serve it alone.
// The figures are logged; the test fails when the scan waits for more
// than two of the slow peer's answers.
func TestReviewSlowPeerNearTimeout(t *testing.T) {
	needFixture(t)
	const timeout, delay = 2 * time.Second, 1500 * time.Millisecond
	measure := func(peers ...string) (time.Duration, *ScanResult) {
		t.Helper()
		c := connect(t, timeout, peers...)
		start := time.Now()
		res, err := bip157(t, c)
		if err != nil {
			t.Fatal(err)
		}
		return time.Since(start), res
	}
	honest := honestPeers(t, 1)[0]
	alone, _ := measure(honest)
	slow := peertest.NewFlooder(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.Flood{Kind: peertest.SlowAnswers, Delay: delay})
	both, res := measure(honest, slow.Addr)
	checkMatches(t, res, fx.want)
	st := status(t, res, slow.Addr)
	t.Logf("scan of %d blocks: %v with the fast peer alone, %v beside a peer holding each answer %v (timeout %v): %.1fx; the slow peer: %+v",
		res.BlocksScanned, alone.Round(time.Millisecond), both.Round(time.Millisecond), delay, timeout, float64(both)/float64(alone), st)
	if both > alone+2*delay {
		t.Errorf("the scan waited %v for a slow peer (each answer held %v) beside a fast one that served it alone in %v", both, delay, alone)
	}
}

// TestReviewCloseDuringStart: a client is closed while its service
// starts, while a following rescan and a GetCFilter run. Close returns
// promptly and every goroutine ends.
func TestReviewCloseDuringStart(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	hashes := node.Generate(t, 110)
	second := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	runtime.GC()
	base := runtime.NumGoroutine()
	for i := 0; i < 6; i++ {
		ctx, cancel := context.WithCancel(context.Background())
		c, err := Connect(ctx, Config{Peers: []string{node.P2PAddr, second.Addr}, Params: node.Params, Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Start(ctx); err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			r := c.NewRescan(RescanOptions{From: 100, Follow: true, Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}})
			r.Run(ctx)
		}()
		go func() {
			defer wg.Done()
			c.GetCFilter(ctx, *hashes[50])
		}()
		time.Sleep(time.Duration(i) * 40 * time.Millisecond)
		closed := make(chan error, 1)
		go func() { closed <- c.Close() }()
		select {
		case <-closed:
		case <-time.After(15 * time.Second):
			buf := make([]byte, 1<<20)
			t.Fatalf("Close still running after 15 s (round %d):\n%s", i, buf[:runtime.Stack(buf, true)])
		}
		cancel()
		waited := make(chan struct{})
		go func() { wg.Wait(); close(waited) }()
		select {
		case <-waited:
		case <-time.After(15 * time.Second):
			t.Fatalf("round %d: the rescan or GetCFilter still runs 15 s after Close", i)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for runtime.NumGoroutine() > base+2 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > base+2 {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after six clients were closed, %d before:\n%s", n, base, buf[:runtime.Stack(buf, true)])
	}
}

// hookProxy is a loopback proxy in front of a node whose hooks see every
// message, decoded: fromClient answers or keeps the client's (nil
// forwards all), fromNode rewrites the node's or hangs up (nil forwards
// all).
type hookProxy struct {
	net        wire.BitcoinNet
	fromClient func(wire.Message) (reply []wire.Message, forward bool)
	fromNode   func(wire.Message) (out []wire.Message, hangup bool)
}

// start starts the proxy in front of the node at target; it stops when
// the test ends.
func (hp *hookProxy) start(t *testing.T, target string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var connMu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		connMu.Lock()
		for _, c := range conns {
			c.Close()
		}
		connMu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			client, err := ln.Accept()
			if err != nil {
				return
			}
			node, err := net.Dial("tcp", target)
			if err != nil {
				client.Close()
				continue
			}
			connMu.Lock()
			conns = append(conns, client, node)
			connMu.Unlock()
			wg.Add(2)
			c := &hookConn{hp: hp, client: client, node: node}
			go func() {
				defer wg.Done()
				c.fromClient()
			}()
			go func() {
				defer wg.Done()
				c.fromNode()
			}()
		}
	}()
	return ln.Addr().String()
}

// hookConn is one client's connection through a hookProxy.
type hookConn struct {
	hp           *hookProxy
	client, node net.Conn
	writeMu      sync.Mutex // both directions write to the client
}

func (c *hookConn) read(conn net.Conn) (wire.Message, error) {
	_, m, _, err := wire.ReadMessageWithEncodingN(conn, wire.ProtocolVersion, c.hp.net, wire.WitnessEncoding)
	return m, err
}

func (c *hookConn) write(conn net.Conn, m wire.Message) error {
	if conn == c.client {
		c.writeMu.Lock()
		defer c.writeMu.Unlock()
	}
	_, err := wire.WriteMessageWithEncodingN(conn, m, wire.ProtocolVersion, c.hp.net, wire.WitnessEncoding)
	return err
}

func (c *hookConn) close() {
	c.client.Close()
	c.node.Close()
}

// fromClient relays the client's messages, through fromClient.
func (c *hookConn) fromClient() {
	defer c.close()
	for {
		m, err := c.read(c.client)
		if err != nil {
			return
		}
		forward := true
		if c.hp.fromClient != nil {
			var reply []wire.Message
			reply, forward = c.hp.fromClient(m)
			for _, r := range reply {
				if c.write(c.client, r) != nil {
					return
				}
			}
		}
		if forward && c.write(c.node, m) != nil {
			return
		}
	}
}

// fromNode relays the node's messages, through fromNode.
func (c *hookConn) fromNode() {
	defer c.close()
	for {
		m, err := c.read(c.node)
		if err != nil {
			return
		}
		out := []wire.Message{m}
		if c.hp.fromNode != nil {
			var hangup bool
			if out, hangup = c.hp.fromNode(m); hangup {
				return
			}
		}
		for _, o := range out {
			if c.write(c.client, o) != nil {
				return
			}
		}
	}
}

// colluders are echo peers that share what they are given: a transaction
// given to one is served by all, as two lying nodes run by one party
// would.
type colluders struct {
	net wire.BitcoinNet
	// reject: answer every transaction given with a reject message
	// calling it invalid, and keep it.
	reject bool
	mu     sync.Mutex
	txs    map[chainhash.Hash]*wire.MsgTx
}

// start starts one colluding peer in front of the node at target.
func (cs *colluders) start(t *testing.T, target string) string {
	t.Helper()
	return (&hookProxy{net: cs.net, fromClient: cs.take}).start(t, target)
}

// take answers a client's message from the shared transactions.
func (cs *colluders) take(m wire.Message) ([]wire.Message, bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	switch m := m.(type) {
	case *wire.MsgInv:
		ask := wire.NewMsgGetData()
		for _, iv := range m.InvList {
			if iv.Type == wire.InvTypeTx || iv.Type == wire.InvTypeWitnessTx {
				ask.AddInvVect(wire.NewInvVect(wire.InvTypeWitnessTx, &iv.Hash))
			}
		}
		if len(ask.InvList) > 0 {
			return []wire.Message{ask}, false
		}
	case *wire.MsgTx:
		if cs.reject {
			rej := wire.NewMsgReject(wire.CmdTx, wire.RejectInvalid, "bad-txns-forged")
			rej.Hash = m.TxHash()
			return []wire.Message{rej}, false
		}
		cs.txs[m.TxHash()] = m
		return nil, false
	case *wire.MsgGetData:
		var out []wire.Message
		for _, iv := range m.InvList {
			if tx := cs.txs[iv.Hash]; tx != nil {
				out = append(out, tx)
			}
		}
		if len(out) > 0 && len(out) == len(m.InvList) {
			return out, false
		}
	}
	return nil, true
}

// TestReviewCollusionOverridesReject: two colluding peers (one takes the
// transaction, the other serves it back) against one honest node that
// rejects it as a double spend of a transaction in its mempool. The
// result says the transaction propagated, the honest node's reject is
// only an entry of Failed, and no warning weighs one against the other.
func TestReviewCollusionOverridesReject(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	alice, bob, carol := peertest.NewKey("alice"), peertest.NewKey("bob"), peertest.NewKey("carol")
	fund := node.SpendCoinbase(t, wire.NewTxOut(50_000_000, alice.PkScript()))
	node.Confirm(t, fund)
	in := []peertest.Output{peertest.OutputOf(fund, 0, alice)}
	first := node.Spend(t, in, wire.NewTxOut(50_000_000-peertest.Fee, bob.PkScript())) // in the mempool
	double := peertest.BuildSpend(t, in, wire.NewTxOut(50_000_000-2*peertest.Fee, carol.PkScript()))
	cs := &colluders{net: node.Params.Net, txs: map[chainhash.Hash]*wire.MsgTx{}}
	c := connectTo(t, node, 2*time.Second, cs.start(t, node.P2PAddr), cs.start(t, node.P2PAddr), node.P2PAddr)
	res, err := c.SendTransaction(context.Background(), double)
	if err != nil {
		t.Logf("send failed: %v", err)
		return
	}
	if !inMempool(t, node, first.TxHash()) || inMempool(t, node, double.TxHash()) {
		t.Fatal("the honest node took the double spend")
	}
	var rej *peer.RejectError
	honestErr := res.Failed[node.P2PAddr]
	t.Logf("given %v, accepted %v, seen %v, failed %v, warnings %q", res.Given, res.Accepted, res.Seen, res.Failed, res.Warnings)
	if res.Propagated() && errors.As(honestErr, &rej) && rej.Kind == peer.RejectInvalid &&
		!slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, node.P2PAddr) }) {
		t.Errorf("Propagated() is true and no warning names the honest node that rejected the transaction as %v (%q)", rej.Kind, rej.Reason)
	}
}

// TestReviewGetUtxoSpendOnOnePeer: the spend of alice's output is in a
// block only a liar holds, and the liar hides it (its filter leaves out
// the spent script, which the block cannot prove). GetUtxo may report
// the output unspent only with a warning naming the height it could not
// compare.
func TestReviewGetUtxoSpendOnOnePeer(t *testing.T) {
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
		t.Errorf("output reported unspent up to 106, spent at 106 on the liar's chain, without a warning naming 106: %q", rep.Warnings)
	}
}

// TestReviewUpdateWaitStorm: UpdateWait from several goroutines at once,
// with rewinds, while a following rescan runs and blocks are mined (run
// with -race). Every call returns, the events keep their order, and each
// payment to an added key is reported.
func TestReviewUpdateWaitStorm(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr)
	startService(t, c)
	log := newEventLog()
	r := c.NewRescan(RescanOptions{From: 100, Follow: true, OnEvent: log.add})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	log.waitFor(t, "the tip at 110", tipAt(110))
	keys := make([]*peertest.Key, 6)
	var pays []*wire.MsgTx
	for i := range keys {
		keys[i] = peertest.NewKey("review-storm-" + string(rune('a'+i)))
		pay := node.SpendCoinbase(t, wire.NewTxOut(1_000_000, keys[i].PkScript()))
		node.Confirm(t, pay) // 111..116
		pays = append(pays, pay)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(keys))
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			wctx, wcancel := context.WithTimeout(ctx, 30*time.Second)
			defer wcancel()
			errs <- r.UpdateWait(wctx, []WatchItem{ScriptItem(k.PkScript())}, int32(105+i))
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	log.waitFor(t, "every payment", func(es []Event) bool {
		for _, p := range pays {
			if len(matched(es, p.TxHash())) == 0 {
				return false
			}
		}
		return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventTip && e.Height == 116 })
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	events := slices.Clone(log.events)
	log.mu.Unlock()
	checkOrder(t, events)
	var buf bytes.Buffer
	for _, e := range events {
		if e.Kind != EventConnected {
			buf.WriteString(e.Kind.String()[:1])
		}
	}
	t.Logf("%d events; non-connected kinds in order: %s", len(events), buf.String())
}

// TestReviewFollowLosesRestartedNode: a following rescan on a client
// whose service is not started (as scan --follow runs it) over one node
// that restarts, away for a second. The poll after it went away finds it
// unreachable and drops it for good: nothing redials a dropped peer
// outside the service. The node comes back and mines, and the rescan
// reports nothing and returns nothing: it waits for ever, its only word a
// warning kept for after Run returns.
func TestReviewFollowLosesRestartedNode(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c := connectTo(t, node, 5*time.Second, proxy.Addr)
	log := newEventLog()
	r := c.NewRescan(RescanOptions{From: 100, Follow: true, PollInterval: 100 * time.Millisecond, OnEvent: log.add,
		Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	log.waitFor(t, "the tip at 110", tipAt(110))
	proxy.Pause(t, time.Second)
	node.Generate(t, 1) // 111, once the node is back
	deadline := time.After(15 * time.Second)
	for {
		log.mu.Lock()
		ok := tipAt(111)(log.events)
		log.mu.Unlock()
		if ok {
			return
		}
		select {
		case err := <-done:
			t.Logf("Run returned: %v", err)
			return
		case <-log.signal:
		case <-deadline:
			t.Errorf("15 s after the node came back and mined block 111: no event, Run still waiting; the peer: %+v; the rescan's warnings (unseen until Run returns): %q",
				c.Peers()[0], r.Warnings())
			return
		}
	}
}

// TestReviewTricklerHoldsFilterBatch: a peer that answers every small
// request at once but sends each filter of a getcfilters answer 1.5 ms
// apart, so that a batch of 1,000 takes about the 3 s timeout (just under
// it the peer is never dropped; just over it, it is dropped only once the
// scan has waited the whole timeout). Its latency before the download is
// a few milliseconds, under the 50 ms floor of slow peers, so it takes a
// batch like the fast honest peer, and the scan waits for it: a scan the
// honest peer serves alone in milliseconds takes seconds. The figures are
// logged; the test fails when the scan waits more than a second for it.
func TestReviewTricklerHoldsFilterBatch(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 2000) // two batches of 1,000 filters
	const timeout = 3 * time.Second
	measure := func(peers ...string) (time.Duration, *ScanResult) {
		t.Helper()
		c := connectTo(t, node, timeout, peers...)
		start := time.Now()
		res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}, From: 1, To: 2000})
		if err != nil {
			t.Fatal(err)
		}
		return time.Since(start), res
	}
	alone, _ := measure(node.P2PAddr)
	trickler := peertest.NewFlooder(t, node.P2PAddr, node.Params.Net, peertest.Flood{Kind: peertest.SlowAnswers, Delay: 1500 * time.Microsecond})
	var times []time.Duration
	var last *ScanResult
	for i := 0; i < 2; i++ {
		d, res := measure(node.P2PAddr, trickler.Addr)
		times = append(times, d.Round(time.Millisecond))
		last = res
	}
	var st PeerStatus
	for _, p := range last.Peers {
		if p.Address == trickler.Addr {
			st = p
		}
	}
	t.Logf("scan of 2,000 blocks: %v with the honest peer alone; %v beside the trickler (timeout %v); the trickler: %+v", alone.Round(time.Millisecond), times, timeout, st)
	if slices.Max(times) > alone+time.Second {
		t.Errorf("a trickler that costs itself nothing stretched a %v scan to %v", alone.Round(time.Millisecond), slices.Max(times))
	}
}

// TestReviewForgedRejectDoesNotStopSend: a peer in front of the honest
// node answers every transaction with a forged reject ("invalid") and
// keeps it. Whatever the order the peers are given it, the transaction
// reaches the honest node, the send succeeds, and the forged reject is
// reported as that peer's failure only.
func TestReviewForgedRejectDoesNotStopSend(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	for i := 0; i < 3; i++ {
		tx := node.BuildCoinbaseSpend(t, wire.NewTxOut(2_000_000, peertest.NewKey("alice").P2WPKHScript()))
		cs := &colluders{net: node.Params.Net, reject: true, txs: map[chainhash.Hash]*wire.MsgTx{}}
		rejecter := cs.start(t, node.P2PAddr)
		c := connectTo(t, node, 2*time.Second, rejecter, node.P2PAddr)
		res, err := c.SendTransaction(context.Background(), tx)
		if err != nil {
			t.Fatalf("send: %v", err)
		}
		var rej *peer.RejectError
		// Seen through the rejecter is true: the node behind it holds the
		// transaction. Accepted after being given it would be false.
		if !inMempool(t, node, tx.TxHash()) || slices.Contains(res.Given, rejecter) && slices.Contains(res.Accepted, rejecter) {
			t.Errorf("result %+v; in the honest mempool: %v", res, inMempool(t, node, tx.TxHash()))
		}
		if err, ok := res.Failed[rejecter]; ok && (!errors.As(err, &rej) || rej.Reason != "bad-txns-forged") {
			t.Errorf("the forged reject reported as %v", err)
		}
		t.Logf("given %v, accepted %v, seen %v, failed %v, warnings %q", res.Given, res.Accepted, res.Seen, res.Failed, res.Warnings)
		c.Close()
	}
}

// TestReviewServiceConflictReplayedPerAnnouncement: a started service
// over an honest node and a liar in front of it whose filter of the new
// block 111 leaves out the script its spend reveals (the block cannot
// prove it false; one against one, the service cannot decide). The
// service logs the conflict and tries again at every wake-up: the liar
// then announces unknown block hashes, and each 37-byte announcement
// costs a header round with every peer and the whole dispute again (the
// block downloaded, a filter from each side). The figures are logged.
func TestReviewServiceConflictReplayedPerAnnouncement(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice, bob := peertest.NewKey("alice"), peertest.NewKey("bob")
	fund := node.SpendCoinbase(t, wire.NewTxOut(50_000_000, alice.PkScript()))
	node.Confirm(t, fund) // 111
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, peertest.ForgeFilter(t, node, 112, peertest.OutputsOnly))
	c := connectTo(t, node, 5*time.Second, honest.Addr, liar.Addr)
	startService(t, c)
	time.Sleep(500 * time.Millisecond)
	spend := node.Spend(t, []peertest.Output{peertest.OutputOf(fund, 0, alice)}, wire.NewTxOut(50_000_000-peertest.Fee, bob.PkScript()))
	node.Confirm(t, spend) // 112: the filter the liar forges
	time.Sleep(time.Second)
	blocks := func() int { return count(honest.Commands(), wire.CmdGetData) + count(liar.Commands(), wire.CmdGetData) }
	cfilters := func() int {
		return count(honest.Commands(), wire.CmdGetCFilters) + count(liar.Commands(), wire.CmdGetCFilters)
	}
	b0, f0, h0 := blocks(), cfilters(), count(honest.Commands(), wire.CmdGetHeaders)
	const invs = 60
	announceFakeBlocks(t, liar, invs, 50*time.Millisecond)
	time.Sleep(500 * time.Millisecond)
	db, df, dh := blocks()-b0, cfilters()-f0, count(honest.Commands(), wire.CmdGetHeaders)-h0
	st := peerStatus(c, liar.Addr)
	t.Logf("%d announcements of unknown blocks by the liar: %d getdata (blocks), %d getcfilters, %d getheaders to the honest peer; the liar: %+v",
		invs, db, df, dh, st)
	if db > invs/4 && !st.Banned && st.Reason == "" {
		t.Errorf("each announcement replayed the dispute: %d block requests and %d filter requests for %d announcements, the announcer neither named nor ranked down", db, df, invs)
	}
}

// TestReviewReorgWhileRescanReports: two following rescans on one
// client (as a wallet with two accounts runs them). The first scans
// blocks 111 to 113 in one step; its callback is slow on block 111 (it
// blocks until the test lets it go). Meanwhile the node reorganizes (111
// to 113 replaced by a heavier branch) and the second rescan's poll,
// which needs no lock the first holds, syncs the headers and the chain
// adopts the branch. The rescan then reports the rest of the blocks
// it scanned with the hashes the chain holds now, which it never scanned,
// and the reorganization check, which stops at the first hash that
// matches from the top, never reports block 111 disconnected. The events
// are compared with the node's chain at the end.
func TestReviewReorgWhileRescanReports(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr)
	alice := peertest.NewKey("alice")
	log := newEventLog()
	hold, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	onEvent := func(e Event) {
		log.add(e)
		if e.Kind == EventConnected && e.Height == 111 {
			once.Do(func() {
				close(hold)
				<-release
			})
		}
	}
	// Polling every two seconds: the three blocks mined at once come in
	// one step.
	r := c.NewRescan(RescanOptions{From: 100, Follow: true, PollInterval: 2 * time.Second, Watch: []WatchItem{ScriptItem(alice.PkScript())}, OnEvent: onEvent})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		<-done
	}()
	log.waitFor(t, "the tip at 110", tipAt(110))
	other, stopOther := follow(t, c, 110, peertest.NewKey("bob").PkScript()) // polls every 100 ms
	defer stopOther()
	other.waitFor(t, "the other rescan at 110", tipAt(110))
	pay := node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 111
	node.Generate(t, 2)  // 112, 113: the service wakes once or twice
	select {
	case <-hold:
	case <-time.After(30 * time.Second):
		t.Fatalf("block 111 not reported: %v", log.summary())
	}
	old111, _ := node.RPC().GetBlockHash(111)
	if err := node.RPC().InvalidateBlock(old111); err != nil {
		t.Fatal(err)
	}
	node.Generate(t, 4) // 111'..114', the payment mined again in 111'
	newTip, _ := node.RPC().GetBlockHash(114)
	deadline := time.Now().Add(20 * time.Second)
	for c.Chain().Hash(114) != *newTip {
		if time.Now().After(deadline) {
			t.Fatal("the service did not adopt the heavier branch")
		}
		time.Sleep(20 * time.Millisecond)
	}
	close(release)
	log.waitFor(t, "the tip at 114", tipAt(114))
	time.Sleep(300 * time.Millisecond)
	log.mu.Lock()
	events := slices.Clone(log.events)
	log.mu.Unlock()
	// The blocks the events leave connected, by height.
	connected := map[int32]chainhash.Hash{}
	var problems []string
	for _, e := range events {
		switch e.Kind {
		case EventConnected:
			connected[e.Height] = e.BlockHash
		case EventDisconnected:
			delete(connected, e.Height)
		}
	}
	for h := int32(100); h <= 114; h++ {
		want, err := node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := connected[h]; !ok || got != *want {
			problems = append(problems, fmt.Sprintf("height %d: the events leave %v connected, the chain holds %v", h, got, want))
		}
	}
	var kinds []string
	for _, e := range events {
		if e.Height >= 110 {
			kinds = append(kinds, fmt.Sprintf("%v@%d:%.8s", e.Kind, e.Height, e.BlockHash))
		}
	}
	t.Logf("events from 110: %v", kinds)
	if len(problems) > 0 {
		t.Errorf("after a reorganization during the report of a step:\n%s\nevents from 110: %v", strings.Join(problems, "\n"), kinds)
	}
}

// TestReviewLiarHangsUpOnDispute: a liar hides a payment behind an empty
// filter (which the block proves false), hangs up when asked for that
// filter (which only a dispute does) and passes on none of its node's
// announcements. It is dropped as a peer that disconnected, never
// banned; the started service redials it within a quarter of a second,
// the redial wakes the header sync, the verification of block 111 meets
// the same lie, and the dispute (the block downloaded, the filters asked
// for) repeats for as long as the liar likes. The figures are logged.
func TestReviewLiarHangsUpOnDispute(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice := peertest.NewKey("alice")
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	var target chainhash.Hash
	var targetMu sync.Mutex
	var disputes atomic.Int64
	forge := peertest.Forge(t, node, 111, paysTo(alice.PkScript()), peertest.EmptyFilter)
	liar := (&hookProxy{net: node.Params.Net, fromNode: func(m wire.Message) ([]wire.Message, bool) {
		switch m := m.(type) {
		case *wire.MsgInv:
			return nil, false
		case *wire.MsgCFilter:
			targetMu.Lock()
			hang := m.BlockHash == target
			targetMu.Unlock()
			if hang {
				disputes.Add(1)
				return nil, true
			}
		case *wire.MsgHeaders, *wire.MsgCFHeaders, *wire.MsgCFCheckpt:
		default:
			return []wire.Message{m}, false
		}
		return forge(m)
	}}).start(t, node.P2PAddr)
	c := connectTo(t, node, 5*time.Second, honest.Addr, liar)
	startService(t, c)
	time.Sleep(500 * time.Millisecond)
	pay := node.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	targetMu.Lock()
	target = *node.Confirm(t, pay) // 111
	targetMu.Unlock()
	b0 := count(honest.Commands(), wire.CmdGetData)
	time.Sleep(4 * time.Second)
	blocks := count(honest.Commands(), wire.CmdGetData) - b0
	st := peerStatus(c, liar)
	t.Logf("in 4 s after block 111: %d disputes (the liar hung up on each), %d block downloads from the honest peer; the liar: %+v",
		disputes.Load(), blocks, st)
	if !st.Banned && disputes.Load() > 3 {
		t.Errorf("the liar hid a payment %d times in 4 s, each costing a dispute, and is not banned: %+v", disputes.Load(), st)
	}
}
