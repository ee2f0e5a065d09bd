package client

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/bip37"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// follow starts a following rescan of c watching scripts from height from,
// and returns its event log and a function that stops it and returns
// Run's error.
func follow(t *testing.T, c *Client, from int32, scripts ...[]byte) (*eventLog, func() error) {
	t.Helper()
	log := newEventLog()
	r := c.NewRescan(RescanOptions{Watch: items(scripts), From: from, Follow: true, PollInterval: 100 * time.Millisecond, OnEvent: log.add})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		err := r.Run(ctx)
		log.end(err)
		done <- err
	}()
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { stop() })
	return log, stop
}

// tipAt reports whether the events include the tip at height h.
func tipAt(h int32) func([]Event) bool {
	return func(es []Event) bool {
		return slices.ContainsFunc(es, func(e Event) bool { return e.Kind == EventTip && e.Height == h })
	}
}

// paysTo returns a Forge chooser picking the blocks that pay script.
func paysTo(script []byte) func(int32, *wire.MsgBlock) bool {
	return func(_ int32, b *wire.MsgBlock) bool {
		for _, tx := range b.Transactions {
			for _, out := range tx.TxOut {
				if string(out.PkScript) == string(script) {
					return true
				}
			}
		}
		return false
	}
}

// TestFollowComparesEveryPeer: two peers in front of the same node; the
// first listed forges the filter of every new block that pays alice. The
// new block's filter is compared with the other peer's before the block
// is reported: the payment is found and the liar banned.
func TestFollowComparesEveryPeer(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	alice := peertest.NewKey("alice")
	liar := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, peertest.Forge(t, node, 111, paysTo(alice.PkScript()), peertest.EmptyFilter))
	honest := peertest.NewLiar(t, node.P2PAddr, node.Params.Net, nil)
	c := connectTo(t, node, 5*time.Second, liar.Addr, honest.Addr)
	log, stop := follow(t, c, 100, alice.PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	pay := node.SpendCoinbase(t, wire.NewTxOut(30_000_000, alice.PkScript()))
	node.Confirm(t, pay) // 111
	log.waitFor(t, "the payment", func(es []Event) bool { return len(matched(es, pay.TxHash())) == 1 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	var st PeerStatus
	for _, p := range c.Peers() {
		if p.Address == liar.Addr {
			st = p
		}
	}
	if !st.Banned || !strings.Contains(st.Reason, "proves it false") {
		t.Errorf("liar: %+v", st)
	}
}

// TestFollowLiarAhead: the liar one block ahead of the honest peer, in a
// following rescan: its lies below the honest tip are caught and every
// payment is reported.
func TestFollowLiarAhead(t *testing.T) {
	needFixture(t)
	hFund, hLate := fx.height[fx.fundAlice.TxHash()], fx.height[fx.late.TxHash()]
	liar, _, _ := aheadLiar(t, hFund, hLate)
	// A short timeout (the default is 30 s) bounds what the rescan may
	// wait for a peer that does not answer.
	c := connect(t, 5*time.Second, liar, honestPeers(t, 1)[0])
	log, stop := follow(t, c, 0, fx.watch...)
	log.waitFor(t, "the honest tip", tipAt(fx.tip))
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	events := log.snapshot()
	checkOrder(t, events)
	for id := range fx.want {
		if len(matched(events, id)) != 1 {
			t.Errorf("%v matched %d times, want once", id, len(matched(events, id)))
		}
	}
	if st := c.Peers()[0]; !st.Banned {
		t.Errorf("liar: %+v", st)
	}
}

// TestFollowRolledBackNode: the one node of a following rescan rolls back
// (invalidateblock), then mines a heavier branch. It is never blamed; the
// rescan waits, then reports the disconnections and the new blocks.
func TestFollowRolledBackNode(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	c := connectTo(t, node, 5*time.Second)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	hash, err := node.RPC().GetBlockHash(105)
	if err != nil {
		t.Fatal(err)
	}
	if err := node.RPC().InvalidateBlock(hash); err != nil {
		t.Fatal(err)
	}
	// Several polls against the rolled-back node.
	time.Sleep(time.Second)
	for _, st := range c.Peers() {
		if st.Banned || st.Reason != "" || st.Tip != 104 {
			t.Fatalf("the rolled-back node: %+v", st)
		}
	}
	node.Generate(t, 10) // 105'..114'
	log.waitFor(t, "the new tip", tipAt(114))
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	events := log.snapshot()
	checkOrder(t, events)
	disc := disconnectedHeights(events)
	if !slices.Equal(disc, []int32{110, 109, 108, 107, 106, 105}) {
		t.Errorf("disconnected %v, want 110 down to 105", disc)
	}
}

// TestScanToZero scans the genesis block alone, and a rescan of a client
// that never synced syncs first.
func TestScanToZero(t *testing.T) {
	needFixture(t)
	res, err := connect(t, 0).ScanBIP157(context.Background(), ScanRequest{Watch: items(fx.watch), To: 0})
	if err != nil || res.BlocksScanned != 1 || res.FiltersReceived != 1 || len(res.Matches) != 0 {
		t.Fatalf("scan to 0: %v, %+v", err, res)
	}
	c, err := Connect(context.Background(), Config{Peers: []string{fx.node.P2PAddr}, Params: fx.node.Params})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var found []chainhash.Hash
	r := c.NewRescan(RescanOptions{Watch: items(fx.watch), To: -1, OnEvent: func(e Event) {
		if e.Kind == EventMatch {
			found = append(found, e.Match.Txid)
		}
	}})
	if err := r.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(found) != len(fx.want) {
		t.Errorf("the rescan of an unsynced client found %d transactions, want %d", len(found), len(fx.want))
	}
}

// matchEverything is a BIP 37 liar: every merkle block it serves marks
// every transaction of its block matched, and it sends them all.
func matchEverything(t *testing.T, node *peertest.Node) peertest.LieFunc {
	return func(m wire.Message) ([]wire.Message, bool) {
		switch m := m.(type) {
		case *wire.MsgMerkleBlock:
			hash := m.Header.BlockHash()
			block, err := node.RPC().GetBlock(&hash)
			if err != nil {
				t.Errorf("block %v: %v", hash, err)
				return nil, true
			}
			var txids []chainhash.Hash
			out := []wire.Message{nil}
			for _, tx := range block.Transactions {
				txids = append(txids, tx.TxHash())
				out = append(out, tx)
			}
			out[0], _ = bip37.NewMerkleBlockFromTxids(block, txids)
			return out, false
		case *wire.MsgTx:
			return nil, false // sent with its merkle block already
		}
		return []wire.Message{m}, false
	}
}

// TestBIP37ReloadsBounded: a watch item whose key hash every coinbase
// holds (the miner's, in a P2WPKH script: the coinbases pay it with
// P2PKH) makes each filter, whatever its tweak, match far beyond its
// rate: at most two fresh filters are loaded, then the node is named in a
// warning; the result is still right. (A node that marks as matched
// transactions its filter does not match forces none: see
// TestBIP37UnmatchedTransactionsDropPeer.)
func TestBIP37ReloadsBounded(t *testing.T) {
	needFixture(t)
	liar := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, nil)
	c := connect(t, 0, liar.Addr)
	minerHash := fx.node.MinerKey.PkScript()[3:23]
	watch := append(items(fx.watch), ScriptItem(append([]byte{0x00, 0x14}, minerHash...)))
	res, err := c.ScanBIP37(context.Background(), ScanRequest{Watch: watch, To: fx.tip}, BIP37Options{FPRate: 0.0001, Flags: wire.BloomUpdateAll})
	if err != nil {
		t.Fatal(err)
	}
	checkMatches(t, res, fx.want)
	if res.FilterReloads != DefaultMaxReloads {
		t.Errorf("%d filter reloads, want %d", res.FilterReloads, DefaultMaxReloads)
	}
	if !hasWarning(res.Warnings, liar.Addr, "forces reloads learns more") {
		t.Errorf("warnings %q do not name the node forcing reloads", res.Warnings)
	}
	loads := 0
	for _, cmd := range liar.Commands() {
		if cmd == wire.CmdFilterLoad {
			loads++
		}
	}
	if loads != 1+DefaultMaxReloads {
		t.Errorf("%d filterload messages, want %d", loads, 1+DefaultMaxReloads)
	}
}

// TestVerifiedHeightsNotAskedAgain: a following rescan over two nodes
// that never connect; each new block is mined on the first, so it rests on
// that node alone when the rescan reports it, and copied to the second
// after. The next verification compares it with both: from then on it is
// verified with several peers, and no later verification asks for its
// filter header again (a height that once rested on one peer used to be
// asked of every peer with every new block, from it to the tip).
func TestVerifiedHeightsNotAskedAgain(t *testing.T) {
	a := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	a.Generate(t, 110)
	b := peertest.CopyChain(t, a, peertest.WithArgs("--nobanning"))
	c := connectTo(t, a, time.Second, a.P2PAddr, b.P2PAddr)
	log, stop := follow(t, c, 100, peertest.NewKey("alice").PkScript())
	log.waitFor(t, "the tip at 110", tipAt(110))
	const last = 115
	for h := int32(111); h <= last; h++ {
		a.Generate(t, 1)
		log.waitFor(t, fmt.Sprintf("the tip at %d", h), tipAt(h))
		b.CopyBlocks(t, a, h)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	c.opMu.Lock()
	defer c.opMu.Unlock()
	// Every height but the last was compared with both nodes by the
	// verification of the block after it.
	if known := c.knownPrefix(111, last-1); len(known) != last-111 {
		t.Errorf("filter headers of 111..%d known as verified with several peers: %d of them; heights resting on one peer %+v, verified to %d",
			last-1, len(known), c.lonely, c.verifiedTo)
	}
}
