package client

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer/addrbook"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// startService starts c as a service for the test.
func startService(t *testing.T, c *Client) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		c.stopService()
	})
}

// TestServiceRedialsRestartedNode: a node that goes away for a second (its
// address refuses connections, as a restarted node's) is back in use
// within seconds (measured), and a following rescan goes on through it.
func TestServiceRedialsRestartedNode(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	proxy := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c := connectTo(t, node, 5*time.Second, proxy.Addr)
	startService(t, c)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))

	proxy.Pause(t, time.Second)
	restarted := time.Now()
	for !c.Serves(0) || c.Peers()[0].Reason != "" {
		if time.Since(restarted) > 20*time.Second {
			t.Fatalf("the node is not back 20 s after its restart: %+v", c.Peers()[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
	back := time.Since(restarted)
	t.Logf("the node was back in use %v after it listened again (it was away 1 s)", back.Round(10*time.Millisecond))
	if back > 10*time.Second {
		t.Errorf("back after %v, want within 10 s", back)
	}
	node.Generate(t, 1)
	log.waitFor(t, "the block mined after the restart", tipAt(111))
	if err := stop(); err != nil {
		t.Fatal(err)
	}
}

// TestServiceFollowsWithoutPolling: with the service running, a following
// rescan whose own poll interval is an hour learns of a new block from the
// node's announcement.
func TestServiceFollowsWithoutPolling(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	c := connectTo(t, node, 5*time.Second)
	startService(t, c)
	log := newEventLog()
	r := c.NewRescan(RescanOptions{From: 105, Follow: true, PollInterval: time.Hour, OnEvent: log.add})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	log.waitFor(t, "the tip at 110", tipAt(110))
	start := time.Now()
	hash := node.Generate(t, 1)[0]
	log.waitFor(t, "the announced block", func(es []Event) bool {
		return slices.ContainsFunc(es, func(e Event) bool {
			return e.Kind == EventConnected && e.BlockHash == *hash && e.Header.BlockHash() == *hash
		})
	})
	t.Logf("block 111 reported %v after it was mined", time.Since(start).Round(time.Millisecond))
}

// TestQueriesWhileFollowing: BestBlock, IsCurrent, GetCFilter, GetBlock
// and the chain's lookups answer from other goroutines while a following
// rescan and the service run (under -race, without a report), and what
// they answer is right.
func TestQueriesWhileFollowing(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 101)
	alice := peertest.NewKey("alice")
	pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	payBlock := node.Confirm(t, pay) // 102
	node.Generate(t, 8)
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil).Addr)
	startService(t, c)
	log, stop := follow(t, c, 0, alice.PkScript())
	defer stop()

	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errs := make(chan error, 16)
	for i := 0; i < 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				best, err := c.BestBlock(ctx)
				if err != nil {
					if ctx.Err() == nil {
						errs <- err
					}
					return
				}
				if best.Height < 110 || best.Header.BlockHash() != best.Hash {
					errs <- errorf("best block %+v", best)
					return
				}
				c.IsCurrent()
				h, hash := c.Chain().Tip()
				if got, ok := c.Chain().HeightOf(hash); !ok || got != h {
					errs <- errorf("tip %d %v: height %d, %v", h, hash, got, ok)
					return
				}
				data, err := c.GetCFilter(ctx, *payBlock)
				if err != nil {
					if ctx.Err() == nil {
						errs <- err
					}
					return
				}
				key := gcs.BasicKey(payBlock)
				if f, err := gcs.DecodeBasic(data); err != nil || !f.Match(key, alice.PkScript()) {
					errs <- errorf("the filter of block 102 does not match alice's script: %v", err)
					return
				}
			}
		}()
	}
	for i := 0; i < 3; i++ {
		node.Generate(t, 1)
		time.Sleep(100 * time.Millisecond)
	}
	log.waitFor(t, "the tip at 113", tipAt(113))
	b, err := c.GetBlock(ctx, *payBlock)
	if err != nil || b.BlockHash() != *payBlock || !slices.ContainsFunc(b.Transactions, func(tx *wire.MsgTx) bool { return tx.TxHash() == pay.TxHash() }) {
		t.Errorf("GetBlock: %v", err)
	}
	if !c.IsCurrent() {
		t.Error("not current at the tip")
	}
	cancel()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if _, err := c.GetBlock(context.Background(), chainhash.Hash{1}); err == nil {
		t.Error("GetBlock of an unknown hash: no error")
	}
}

// TestGetUtxo: an output found unspent, then spent, and one of a script
// never paid.
func TestGetUtxo(t *testing.T) {
	needFixture(t)
	c := connect(t, 0)
	alice := peertest.NewKey("alice")
	op := wire.OutPoint{Hash: fx.fundAlice.TxHash(), Index: 0}
	rep, err := c.GetUtxo(context.Background(), UtxoRequest{OutPoint: op, Script: alice.PkScript(), From: 100})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Output == nil || rep.Height != fx.height[op.Hash] || rep.SpentBy == nil || rep.SpentBy.TxHash() != fx.spendAlice.TxHash() ||
		rep.SpendHeight != fx.height[fx.spendAlice.TxHash()] || rep.Unspent() {
		t.Errorf("alice's output: %+v", rep)
	}
	carolOut := wire.OutPoint{Hash: fx.late.TxHash(), Index: 0}
	rep, err = c.GetUtxo(context.Background(), UtxoRequest{OutPoint: carolOut, Script: fx.watch[1], From: fx.height[fx.late.TxHash()]})
	if err != nil || !rep.Unspent() || rep.To != fx.tip {
		t.Errorf("carol's late output: %v, %+v", err, rep)
	}
	rep, err = c.GetUtxo(context.Background(), UtxoRequest{OutPoint: wire.OutPoint{Index: 1}, Script: peertest.NewKey("nobody").PkScript(), From: 1000})
	if err != nil || rep.Output != nil || rep.SpentBy != nil {
		t.Errorf("an output never made: %v, %+v", err, rep)
	}
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

// TestClientThroughProxy: a client given a SOCKS5 proxy reaches an onion
// address through it (the name is passed to the proxy unresolved) and
// scans; without a proxy an onion peer is refused before anything is
// dialled, and a refusing proxy is named, never bypassed.
func TestClientThroughProxy(t *testing.T) {
	needFixture(t)
	const onion = "2gzyxa5ihm7nsggfxnu52rck2vv4rvmdlkiu3zzui5du4xyclen53wid.onion:18444"
	proxy := peertest.NewSOCKSProxy(t, peertest.SOCKSConfig{Names: map[string]string{onion: fx.node.P2PAddr}})
	ctx := context.Background()
	timedScan(t, Config{Peers: []string{onion}, Params: fx.node.Params, Proxy: "socks5://" + proxy.Addr})
	if reqs := proxy.Requests(); len(reqs) == 0 || !slices.Contains(reqs, onion) {
		t.Errorf("the proxy saw %q, want the onion name", reqs)
	}
	if _, err := Connect(ctx, Config{Peers: []string{onion}, Params: fx.node.Params}); err == nil || !strings.Contains(err.Error(), "needs a proxy") {
		t.Errorf("an onion peer without a proxy: %v", err)
	}
	refusing := peertest.NewSOCKSProxy(t, peertest.SOCKSConfig{Refuse: peertest.SOCKSConnectionRefused})
	_, err := Connect(ctx, Config{Peers: []string{fx.node.P2PAddr}, Params: fx.node.Params, Proxy: "socks5://" + refusing.Addr})
	if err == nil || !strings.Contains(err.Error(), refusing.Addr) || len(refusing.Requests()) == 0 {
		t.Errorf("a refusing proxy: %v (requests %q)", err, refusing.Requests())
	}
}

// TestRescansShareDownloads: two rescans of the same blocks at once
// download each filter once; the second takes them from memory.
func TestRescansShareDownloads(t *testing.T) {
	needFixture(t)
	proxy := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
	c := connect(t, 0, proxy.Addr)
	var wg sync.WaitGroup
	found := make([]int, 2)
	for i := range found {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := c.NewRescan(RescanOptions{Watch: items(fx.watch), To: -1, OnEvent: func(e Event) {
				if e.Kind == EventMatch {
					found[i]++
				}
			}})
			if err := r.Run(context.Background()); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	// Each filter asked once, for one rescan only.
	_, cfilters := cfRequests(t, proxy, c)
	asked := 0
	for _, r := range cfilters {
		asked += int(r[1]-r[0]) + 1
	}
	if want := int(fx.tip) + 1; asked != want || found[0] != len(fx.want) || found[1] != len(fx.want) {
		t.Errorf("%d filters asked for two rescans of %d blocks (want %d); found %v", asked, fx.tip+1, want, found)
	}
}

// TestBansPersist: a liar banned by a scan stays banned in the next
// client life on the same data directory (never dialled), until Unban; a
// ban by hand holds too.
func TestBansPersist(t *testing.T) {
	needFixture(t)
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, fx.height[fx.fundAlice.TxHash()], peertest.EmptyFilter))
	honest := honestPeers(t, 2)
	dir := t.TempDir()
	ctx := context.Background()
	open := func() *Client {
		t.Helper()
		c, err := Connect(ctx, Config{Peers: []string{liar.Addr, honest[0], honest[1]}, Params: fx.node.Params, DataDir: dir, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	c := open()
	if _, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: -1}); err != nil {
		t.Fatal(err)
	}
	if err := c.BanPeer(honest[1], "banned by hand"); err != nil {
		t.Fatal(err)
	}
	c.Close()

	c = open()
	defer c.Close()
	dialled := 0
	for _, cmd := range liar.Commands() {
		if cmd == wire.CmdVersion {
			dialled++
		}
	}
	if dialled != 1 {
		t.Errorf("the banned liar was dialled %d times in two lives, want once", dialled)
	}
	for _, a := range []string{liar.Addr, honest[1]} {
		if reason, banned := c.IsBanned(a); !banned || reason == "" {
			t.Errorf("%s: banned %v (%q) in the second life", a, banned, reason)
		}
	}
	if got := len(c.Bans()); got != 2 {
		t.Errorf("%d bans listed, want 2: %+v", got, c.Bans())
	}
	res, err := c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: -1})
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	if err := c.Unban(honest[1]); err != nil {
		t.Fatal(err)
	}
	if _, banned := c.IsBanned(honest[1]); banned {
		t.Error("still banned after Unban")
	}
	startService(t, c)
	deadline := time.Now().Add(10 * time.Second)
	for c.Peers()[2].Reason != "" && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if st := c.Peers()[2]; st.Banned || st.Reason != "" {
		t.Errorf("the unbanned peer is not back: %+v", st)
	}
}

// TestServiceDiscoversGossipedPeer: a client given one peer, wanting two,
// learns a second node's address from its peer's gossip (an addrv2), and
// the service dials it; the address is remembered in the data directory.
func TestServiceDiscoversGossipedPeer(t *testing.T) {
	a := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	a.Generate(t, 20)
	b := peertest.CopyChain(t, a, peertest.WithArgs("--nobanning"))
	proxy := peertest.NewLiar(t, a.P2PAddr, a.Params.Net, nil)
	ctx := context.Background()
	dir := t.TempDir()
	c, err := Connect(ctx, Config{Peers: []string{proxy.Addr}, Params: a.Params, DataDir: dir, Timeout: 5 * time.Second, TargetPeers: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	startService(t, c)
	host, port, _ := net.SplitHostPort(b.P2PAddr)
	p, _ := strconv.Atoi(port)
	msg := wire.NewMsgAddrV2()
	msg.AddrList = []*wire.NetAddressV2{wire.NetAddressV2FromBytes(time.Now(), wire.SFNodeNetwork|wire.SFNodeWitness|wire.SFNodeCF, net.ParseIP(host).To4(), uint16(p))}
	if err := proxy.Inject(msg); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		ps := c.Peers()
		if len(ps) == 2 && ps[1].Address == b.P2PAddr && ps[1].Reason == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the gossiped node was not dialled: %+v", ps)
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.Close()
	book, _, err := addrbook.Open(a.Params, filepath.Join(dir, a.Params.Name), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	defer book.Close()
	ks, _ := book.Known()
	if !slices.ContainsFunc(ks, func(k addrbook.Known) bool { return k.Addr == b.P2PAddr && k.Tried }) {
		t.Errorf("the next life's book: %+v", ks)
	}
}
