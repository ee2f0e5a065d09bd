package client

import (
	"bytes"
	"context"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/btcutil"
	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// Attacks of a review: each test plays a lying peer, a hostile file or a
// hostile network against real btcd nodes and checks that the client
// either finds the truth or says plainly what its answer rests on.

// reviewNodeUpTo starts a node of its own holding src's chain up to
// height only: an honest node that is behind.
func reviewNodeUpTo(t *testing.T, src *peertest.Node, height int32) *peertest.Node {
	t.Helper()
	dst := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	reviewCopyBlocks(t, src, dst, 1, height)
	return dst
}

// reviewCopyBlocks submits src's blocks from..to to dst.
func reviewCopyBlocks(t *testing.T, src, dst *peertest.Node, from, to int32) {
	t.Helper()
	for h := from; h <= to; h++ {
		hash, err := src.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		b, err := src.RPC().GetBlock(hash)
		if err != nil {
			t.Fatal(err)
		}
		if err := dst.RPC().SubmitBlock(btcutil.NewBlock(b), nil); err != nil {
			t.Fatalf("submitting block %d: %v", h, err)
		}
	}
}

// reviewScanDir runs one BIP 157 scan of the fixture's watch list to To
// with a client on dir and peers, closed afterwards.
func reviewScanDir(t *testing.T, dir string, to int32, peers ...string) (*ScanResult, error) {
	t.Helper()
	ctx := context.Background()
	c, err := Connect(ctx, Config{Peers: peers, Params: fx.node.Params, DataDir: dir, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	return c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: to})
}

// hasMatch reports whether res holds the transaction txid.
func hasMatch(res *ScanResult, txid chainhash.Hash) bool {
	return slices.ContainsFunc(res.Matches, func(m Match) bool { return m.Txid == txid })
}

// TestReviewStoredSegmentBypassesPeerBelowCheckpoint: a data directory
// written by a scan that rested on a liar alone holds a lie at height 102
// (alice's payment hidden behind an empty filter). It is then opened with
// the liar and an honest node that is behind, at height 990: below the
// first checkpoint (1000), so only the liar states that checkpoint. The
// honest node holds height 102 and must be compared there (the scan of
// the same two peers without the data directory catches the liar). With
// the data directory, the stored segment 0..1000 is taken because it
// leads to the checkpoint the liar alone stated, the honest node is never
// asked about heights 0..990, and the result still counts it as compared
// and names only 991..1042 as resting on one peer.
func TestReviewStoredSegmentBypassesPeerBelowCheckpoint(t *testing.T) {
	needFixture(t)
	hFund := fx.height[fx.fundAlice.TxHash()]
	liar, top, _ := aheadLiar(t, hFund)
	behind := reviewNodeUpTo(t, fx.node, 990)

	// Without a data directory the two peers are compared at 102.
	clean, err := reviewScanDir(t, "", -1, liar, behind.P2PAddr)
	if err != nil {
		t.Fatal(err)
	}
	if !hasMatch(clean, fx.fundAlice.TxHash()) || !status(t, clean, liar).Banned {
		t.Fatalf("without a data directory: payment found %v, liar %+v", hasMatch(clean, fx.fundAlice.TxHash()), status(t, clean, liar))
	}

	dir := t.TempDir()
	poisoned, err := reviewScanDir(t, dir, -1, liar)
	if err != nil {
		t.Fatal(err)
	}
	if poisoned.To != top || hasMatch(poisoned, fx.fundAlice.TxHash()) {
		t.Fatalf("the liar alone: scanned to %d, payment found %v: it did not lie", poisoned.To, hasMatch(poisoned, fx.fundAlice.TxHash()))
	}
	res, err := reviewScanDir(t, dir, -1, liar, behind.P2PAddr)
	if err != nil {
		// A loud failure would do: the honest node contradicts the store.
		t.Logf("scan with the store failed loudly: %v", err)
		return
	}
	if !hasMatch(res, fx.fundAlice.TxHash()) && !status(t, res, liar).Banned {
		t.Errorf("alice's payment at height %d, which the honest node holds, is missing without a word: liar %+v, honest %+v, one-peer heights %+v, warnings %q",
			hFund, status(t, res, liar), status(t, res, behind.P2PAddr), res.OnePeer, res.Warnings)
	}
}

// TestReviewGetCFilterTrustsPoisonedStore: GetCFilter of a block whose
// filter header a data directory holds takes the stored header without
// comparing it with any peer. A data directory written by a scan that
// rested on a liar alone, opened with two honest peers (both hold the
// block), serves the liar's filter for alice's payment block.
func TestReviewGetCFilterTrustsPoisonedStore(t *testing.T) {
	needFixture(t)
	hFund := fx.height[fx.fundAlice.TxHash()]
	liar, _, _ := aheadLiar(t, hFund)
	dir := t.TempDir()
	if res, err := reviewScanDir(t, dir, -1, liar); err != nil || hasMatch(res, fx.fundAlice.TxHash()) {
		t.Fatalf("the liar alone: %v; it must hide the payment", err)
	}
	ctx := context.Background()
	c, err := Connect(ctx, Config{Peers: honestPeers(t, 2), Params: fx.node.Params, DataDir: dir, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	hash := blockHashAt(t, hFund)
	got, err := c.GetCFilter(ctx, hash)
	if err != nil {
		t.Logf("GetCFilter failed loudly: %v", err)
		return
	}
	want, err := fx.node.RPC().GetCFilter(&hash, wire.GCSFilterRegular)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want.Data) {
		t.Errorf("GetCFilter(block %d) with two honest peers returned the liar's stored filter %x (the true one has %d bytes), no error",
			hFund, got, len(want.Data))
	}
}

// oneAheadChain starts a node with 110 blocks and a copy of it one block
// ahead whose block 111 pays alice, and a liar in front of the copy that
// hides the payment behind an empty filter with coherent headers.
func oneAheadChain(t *testing.T) (node, ahead *peertest.Node, liar *peertest.Liar, pay *wire.MsgTx) {
	t.Helper()
	node = peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	ahead = peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	alice := peertest.NewKey("alice")
	pay = ahead.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	ahead.Confirm(t, pay) // 111
	liar = peertest.NewLiar(t, ahead.P2PAddr, ahead.Params.Net, peertest.Forge(t, ahead, 111, paysTo(alice.PkScript()), peertest.EmptyFilter))
	return node, ahead, liar, pay
}

// TestReviewGetCFilterKeepsOnePeerHeader: GetCFilter of a block only the
// liar holds returns the liar's filter with no sign that nothing was
// compared; once the honest node holds the block too (and the client
// knows it), GetCFilter still returns the liar's filter from the filter
// header kept in memory, although its documentation promises a filter
// compared across every peer that holds the block.
func TestReviewGetCFilterKeepsOnePeerHeader(t *testing.T) {
	node, ahead, liar, _ := oneAheadChain(t)
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, liar.Addr)
	ctx := context.Background()
	hash, err := ahead.RPC().GetBlockHash(111)
	if err != nil {
		t.Fatal(err)
	}
	want, err := ahead.RPC().GetCFilter(hash, wire.GCSFilterRegular)
	if err != nil {
		t.Fatal(err)
	}
	first, err := c.GetCFilter(ctx, *hash)
	if err == nil && !bytes.Equal(first, want.Data) {
		t.Errorf("GetCFilter of the block only the liar holds returned its forged filter %x with no error and no way to tell it rests on one peer", first)
	}
	// The honest node gets the block; the client learns it holds it.
	reviewCopyBlocks(t, ahead, node, 111, 111)
	if _, err := c.SyncHeaders(ctx); err != nil {
		t.Fatal(err)
	}
	for _, st := range c.Peers() {
		if st.Tip != 111 {
			t.Fatalf("peer %s at tip %d, want 111", st.Address, st.Tip)
		}
	}
	again, err := c.GetCFilter(ctx, *hash)
	if err != nil {
		t.Logf("GetCFilter failed loudly once both hold the block: %v", err)
		return
	}
	if !bytes.Equal(again, want.Data) {
		t.Errorf("both peers hold block 111, yet GetCFilter returns the liar's filter %x (the true one has %d bytes): the one-peer filter header was kept and never compared",
			again, len(want.Data))
	}
}

// TestReviewOnePeerUnnamedAboveOtherTips: a scan whose whole range lies
// above every tip but the liar's (two peers given) rests on the liar
// alone. ScanResult.OnePeer is documented to name such heights; it is
// empty, and the warning tells the user to give several peers, which he
// did.
func TestReviewOnePeerUnnamedAboveOtherTips(t *testing.T) {
	node, _, liar, pay := oneAheadChain(t)
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, liar.Addr)
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}, From: 111, To: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.To != 111 || hasMatch(res, pay.TxHash()) {
		t.Fatalf("scanned to %d, payment found %v: the liar did not lie", res.To, hasMatch(res, pay.TxHash()))
	}
	want := OnePeer{From: 111, To: 111, Peer: liar.Addr}
	if !slices.Equal(res.OnePeer, []OnePeer{want}) {
		t.Errorf("ScanResult.OnePeer %+v, want %+v; warnings %q", res.OnePeer, want, res.Warnings)
	}
}

// TestReviewFollowOnePeerEventUnnamed: a following rescan over an honest
// node and a liar in front of a copy of it. Both stand at 110; the liar's
// node alone then mines block 111, which pays alice, and hides the
// payment. After waiting up to the timeout for the honest node, the
// rescan reports block 111 connected; Event.OnePeer, documented to name
// the peer a block rests on when no other peer's chain reached it, is
// empty.
func TestReviewFollowOnePeerEventUnnamed(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	ahead := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	alice := peertest.NewKey("alice")
	liar := peertest.NewLiar(t, ahead.P2PAddr, ahead.Params.Net, peertest.Forge(t, ahead, 111, paysTo(alice.PkScript()), peertest.EmptyFilter))
	c := connectTo(t, node, 2*time.Second, node.P2PAddr, liar.Addr)
	log, stop := follow(t, c, 100, alice.PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	pay := ahead.SpendCoinbase(t, wire.NewTxOut(10_000_000, alice.PkScript()))
	ahead.Confirm(t, pay) // 111, on the liar's node only
	log.waitFor(t, "the tip at 111", tipAt(111))
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	log.mu.Lock()
	events := slices.Clone(log.events)
	log.mu.Unlock()
	i := slices.IndexFunc(events, func(e Event) bool { return e.Kind == EventConnected && e.Height == 111 })
	if i < 0 {
		t.Fatal("block 111 not reported")
	}
	if len(matched(events, pay.TxHash())) != 0 {
		t.Fatal("the payment was found: the liar did not lie")
	}
	if events[i].OnePeer != liar.Addr {
		t.Errorf("block 111, held by the liar alone, reported with OnePeer %q (want %s)", events[i].OnePeer, liar.Addr)
	}
}

// TestReviewLiarAtCheckpointBoundary: a liar and an honest node whose
// tips sit at the first checkpoint (1000) or one block off it, the lie
// an empty filter (which the block proves false) with coherent headers
// and checkpoints. A lie at a height the honest node holds is caught;
// one above it is named as resting on the liar alone; never is a
// height silently taken from the liar.
func TestReviewLiarAtCheckpointBoundary(t *testing.T) {
	needFixture(t)
	nodes := map[int32]*peertest.Node{}
	nodeAt := func(h int32) *peertest.Node {
		if nodes[h] == nil {
			nodes[h] = reviewNodeUpTo(t, fx.node, h)
		}
		return nodes[h]
	}
	for _, tt := range []struct {
		name                string
		honest, liar, lieAt int32
	}{
		{"honest 999, liar 1000, lie at 1000", 999, 1000, 1000},
		{"honest 999, liar 1000, lie at 999", 999, 1000, 999},
		{"honest 1000, liar 1001, lie at 1000", 1000, 1001, 1000},
		{"honest 1000, liar 1001, lie at 1001", 1000, 1001, 1001},
		{"honest 1001, liar 1001, lie at 1001 (checkpoint honest, tail false)", 1001, 1001, 1001},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ln := nodeAt(tt.liar)
			liar := peertest.NewLiar(t, ln.P2PAddr, ln.Params.Net, peertest.ForgeFilter(t, ln, tt.lieAt, peertest.EmptyFilter)).Addr
			honest := peertest.NewLiar(t, nodeAt(tt.honest).P2PAddr, fx.node.Params.Net, nil).Addr
			c := connectTo(t, fx.node, 10*time.Second, liar, honest)
			res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: items(fx.watch), To: -1})
			if err != nil {
				t.Fatal(err)
			}
			st := status(t, res, liar)
			named := slices.ContainsFunc(res.OnePeer, func(o OnePeer) bool { return o.Peer == liar && o.From <= tt.lieAt && tt.lieAt <= o.To })
			switch {
			case tt.lieAt <= tt.honest && !st.Banned:
				t.Errorf("lie at %d, which the honest node holds, not caught: liar %+v, one-peer %+v, warnings %q", tt.lieAt, st, res.OnePeer, res.Warnings)
			case tt.lieAt > tt.honest && !st.Banned && !named:
				t.Errorf("lie at %d above the honest tip neither caught nor named: liar %+v, one-peer %+v, warnings %q", tt.lieAt, st, res.OnePeer, res.Warnings)
			}
			if hs := status(t, res, honest); hs.Banned {
				t.Errorf("honest node banned: %+v", hs)
			}
		})
	}
}

// TestReviewPoisonedCacheEntryNeverReplaced: a data directory written by
// a scan that rested on a liar alone holds the liar's filter of block 102
// in its filter cache. A scan with an honest peer repairs the filter
// headers, downloads the batch holding 102 again and verifies it, but the
// cache keeps the liar's entry (it never replaces an entry), so every
// later scan finds it false and downloads that whole batch again.
func TestReviewPoisonedCacheEntryNeverReplaced(t *testing.T) {
	needFixture(t)
	hFund := fx.height[fx.fundAlice.TxHash()]
	liar, _, _ := aheadLiar(t, hFund)
	dir := t.TempDir()
	if res, err := reviewScanDir(t, dir, fx.tip, liar); err != nil || hasMatch(res, fx.fundAlice.TxHash()) {
		t.Fatalf("the liar alone: %v; it must hide the payment", err)
	}
	honest := honestPeers(t, 1)[0]
	var received []int
	for i := 0; i < 3; i++ {
		res, err := reviewScanDir(t, dir, fx.tip, honest)
		if err != nil {
			t.Fatal(err)
		}
		checkMatches(t, res, fx.want)
		received = append(received, res.FiltersReceived)
	}
	t.Logf("filters downloaded by three scans of the repaired data directory: %v", received)
	if received[2] != 0 {
		t.Errorf("the third scan downloaded %d filters again (scans: %v): the liar's cached filter of block %d is never replaced", received[2], received, hFund)
	}
}

// TestReviewGetBlockOnlyLiarHolds: GetBlock of a block only a liar holds.
// A liar that serves it unchanged gives the true block (it is checked
// against its header); one that drops a transaction from it is banned
// and GetBlock fails naming it.
func TestReviewGetBlockOnlyLiarHolds(t *testing.T) {
	for _, mutate := range []bool{false, true} {
		node, ahead, liar, pay := oneAheadChain(t)
		if mutate {
			liar = peertest.NewLiar(t, ahead.P2PAddr, ahead.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
				if b, ok := m.(*wire.MsgBlock); ok && len(b.Transactions) > 1 {
					b.Transactions = b.Transactions[:len(b.Transactions)-1]
				}
				return []wire.Message{m}, false
			})
		}
		c := connectTo(t, node, 5*time.Second, node.P2PAddr, liar.Addr)
		hash, err := ahead.RPC().GetBlockHash(111)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.GetBlock(context.Background(), *hash)
		switch {
		case !mutate && (err != nil || !slices.ContainsFunc(b.Transactions, func(tx *wire.MsgTx) bool { return tx.TxHash() == pay.TxHash() })):
			t.Errorf("the unchanged block: %v", err)
		case mutate && (err == nil || !strings.Contains(err.Error(), liar.Addr)):
			t.Errorf("the mutated block: %v", err)
		case mutate && !c.Peers()[1].Banned:
			t.Errorf("the liar that mutated the block: %+v", c.Peers()[1])
		}
	}
}

// TestReviewHangingProxy: a SOCKS5 proxy that accepts connections and
// never answers. Connect fails within the timeout, naming the proxy, and
// nothing is dialled around it.
func TestReviewHangingProxy(t *testing.T) {
	needFixture(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	start := time.Now()
	_, err = Connect(context.Background(), Config{Peers: []string{fx.node.P2PAddr}, Params: fx.node.Params, Timeout: 2 * time.Second,
		Proxy: "socks5://" + ln.Addr().String()})
	took := time.Since(start)
	t.Logf("Connect through a silent proxy: %v after %v", err, took.Round(time.Millisecond))
	if err == nil || !strings.Contains(err.Error(), ln.Addr().String()) || took > 10*time.Second {
		t.Errorf("Connect through a silent proxy: %v after %v", err, took)
	}
}

// TestReviewTwoCollidersOutvoteHonest: two peers agree on a false filter
// of block 108 that leaves out the script alice's spend reveals (the
// block cannot prove it false) against one honest peer. The majority
// wins by design: the honest peer is banned and the spend is missing,
// and a warning must say that a majority, not the block, decided.
func TestReviewTwoCollidersOutvoteHonest(t *testing.T) {
	needFixture(t)
	h := fx.height[fx.spendAlice.TxHash()]
	l1 := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, h, peertest.OutputsOnly)).Addr
	l2 := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, h, peertest.OutputsOnly)).Addr
	honest := honestPeers(t, 1)[0]
	res, err := bip157(t, connect(t, 0, l1, l2, honest))
	if err != nil {
		t.Fatal(err)
	}
	hst := status(t, res, honest)
	t.Logf("spend found %v; honest %+v; warnings %q", hasMatch(res, fx.spendAlice.TxHash()), hst, res.Warnings)
	if !hasMatch(res, fx.spendAlice.TxHash()) && !hasWarning(res.Warnings, "decided by a majority", honest) {
		t.Errorf("the spend at %d is missing and no warning says a majority decided against %s: %q", h, honest, res.Warnings)
	}
}

// TestReviewSamePeerTwiceCountsAsCrossChecked: one lying node given twice
// under two spellings of its address (a port with a leading zero,
// "localhost" for 127.0.0.1). The client dedups peers by the string only,
// so it holds two connections to the one liar, compares them with each
// other, counts both as compared, and the payment the liar hides is
// missing with no warning that the result rests on one node.
func TestReviewSamePeerTwiceCountsAsCrossChecked(t *testing.T) {
	needFixture(t)
	hFund := fx.height[fx.fundAlice.TxHash()]
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, hFund, peertest.EmptyFilter)).Addr
	_, port, err := net.SplitHostPort(liar)
	if err != nil {
		t.Fatal(err)
	}
	for _, other := range []string{"127.0.0.1:0" + port, "localhost:" + port} {
		t.Run(other, func(t *testing.T) {
			c := connect(t, 0, liar, other)
			res, err := bip157(t, c)
			if err != nil {
				t.Fatal(err)
			}
			if hasMatch(res, fx.fundAlice.TxHash()) {
				t.Fatal("the payment was found: the liar did not lie")
			}
			if !hasWarning(res.Warnings, "one peer") {
				t.Errorf("one node under two addresses: the payment at %d is missing and the result claims a cross-check (peers %+v, warnings %q)",
					hFund, res.Peers, res.Warnings)
			}
		})
	}
}
