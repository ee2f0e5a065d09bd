package client

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// More attacks on the scan's filter feed (see filterFeed): a
// reorganization while fed segments are in flight, lies the feed finds
// after it dropped the filter, lies that look like damage on the way, and
// colluders beside an honest node.

// fedChain is a node whose chain reaches past the second filter
// checkpoint (2000), so that a scan from 0 feeds two segments: alice is
// paid at 102, at 1500 and 4 blocks below the tip, and spends the first
// payment to bob at 1600.
type fedChain struct {
	node  *peertest.Node
	alice *peertest.Key
	tip   int32
}

// newFedChain mines a fedChain up to tip (above 1505).
func newFedChain(t *testing.T, tip int32, args ...string) *fedChain {
	t.Helper()
	r := &fedChain{node: peertest.StartBtcd(t, peertest.WithArgs(append([]string{"--nobanning"}, args...)...)), alice: peertest.NewKey("alice"), tip: tip}
	t.Cleanup(func() { r.node.Stop() })
	pay := func(value int64) {
		r.node.Confirm(t, r.node.SpendCoinbase(t, wire.NewTxOut(value, r.alice.PkScript())))
	}
	r.node.Generate(t, 101)
	first := r.node.SpendCoinbase(t, wire.NewTxOut(10_000_000, r.alice.PkScript()))
	r.node.Confirm(t, first) // 102
	r.node.Generate(t, 1499-102)
	pay(11_000_000) // 1500
	r.node.Generate(t, 1599-1500)
	spend := r.node.Spend(t, []peertest.Output{{OutPoint: wire.OutPoint{Hash: first.TxHash(), Index: 0}, Value: 10_000_000, Key: r.alice}},
		wire.NewTxOut(9_000_000, peertest.NewKey("bob").PkScript()))
	r.node.Confirm(t, spend) // 1600
	r.node.Generate(t, int(tip-5-1600))
	pay(12_000_000) // tip - 4
	r.node.Generate(t, 4)
	if n, err := r.node.RPC().GetBlockCount(); err != nil || int32(n) != tip {
		t.Fatalf("the chain ends at %d (%v), want %d", n, err, tip)
	}
	return r
}

// alicePaid returns the transactions of node's chain, up to height to,
// that pay alice or spend what paid her, with their heights: what a scan
// watching her must find.
func alicePaid(t *testing.T, node *peertest.Node, alice *peertest.Key, to int32) map[chainhash.Hash]int32 {
	t.Helper()
	out := map[chainhash.Hash]int32{}
	paid := map[wire.OutPoint]bool{}
	for h := int32(0); h <= to; h++ {
		hash, err := node.RPC().GetBlockHash(int64(h))
		if err != nil {
			t.Fatal(err)
		}
		b, err := node.RPC().GetBlock(hash)
		if err != nil {
			t.Fatal(err)
		}
		for _, tx := range b.Transactions {
			for _, in := range tx.TxIn {
				if paid[in.PreviousOutPoint] {
					out[tx.TxHash()] = h
				}
			}
			for i, o := range tx.TxOut {
				if bytes.Equal(o.PkScript, alice.PkScript()) {
					out[tx.TxHash()] = h
					paid[wire.OutPoint{Hash: tx.TxHash(), Index: uint32(i)}] = true
				}
			}
		}
	}
	return out
}

// checkFound checks that res found exactly the transactions of want
// (false positives aside), each at its height.
func checkFound(t *testing.T, res *ScanResult, want map[chainhash.Hash]int32) {
	t.Helper()
	got := map[chainhash.Hash]bool{}
	for _, m := range res.Matches {
		if m.FalsePositive {
			continue
		}
		got[m.Txid] = true
		if h, ok := want[m.Txid]; !ok || h != m.Height {
			t.Errorf("match %v at height %d, not a payment to alice at that height of the node's chain", m.Txid, m.Height)
		}
	}
	for id, h := range want {
		if !got[id] {
			t.Errorf("the payment to alice %v at height %d was not found", id, h)
		}
	}
}

// fedReorg is an honest node's proxy that reorganizes the node while it
// holds one of its cfilter answers (the one after the first after), and
// passes every message on unchanged: the node leaves its blocks above
// fork for a branch one block longer that pays alice two blocks above
// the fork.
type fedReorg struct {
	chain *fedChain
	fork  int32
	after int

	mu    sync.Mutex
	seen  int
	fired bool
	err   error
	done  chan struct{}
}

func (r *fedReorg) answer(m wire.Message) ([]wire.Message, bool) {
	if _, ok := m.(*wire.MsgCFilter); !ok {
		return []wire.Message{m}, false
	}
	r.mu.Lock()
	r.seen++
	fire := !r.fired && r.seen > r.after
	r.fired = r.fired || fire
	r.mu.Unlock()
	if fire {
		err := r.reorganize()
		r.mu.Lock()
		r.err = err
		r.mu.Unlock()
		close(r.done)
	}
	return []wire.Message{m}, false
}

// reorganize invalidates the block above the fork and mines the new
// branch.
func (r *fedReorg) reorganize() error {
	node := r.chain.node
	hash, err := node.RPC().GetBlockHash(int64(r.fork + 1))
	if err != nil {
		return err
	}
	if err := node.RPC().InvalidateBlock(hash); err != nil {
		return err
	}
	if _, err := node.GenerateErr(1); err != nil {
		return err
	}
	pay, err := node.SpendCoinbaseErr(wire.NewTxOut(20_000_000, r.chain.alice.PkScript()))
	if err != nil {
		return err
	}
	if _, err := node.ConfirmErr(pay); err != nil {
		return err
	}
	_, err = node.GenerateErr(int(r.chain.tip + 1 - r.fork - 2))
	return err
}

// TestFeedRedReorgDuringFedScan: an honest node reorganizes 1, 6, 110 or
// 1,013 blocks deep (the last three across the checkpoint at 2000 that
// ends a fed segment, the last across 1000 too) while it holds a cfilter
// answer of a scan from height 0 whose two first segments are fed: at
// its first answer, its 501st (with two nodes, each serving a segment at
// once) or its 1,501st (the second segment in flight). The
// client's peers are the node, through its proxy, alone or beside a
// second node that learns the new branch from it, with the client's
// service running or not. The scan must not ban
// an honest node and must end on the new chain, having found every
// payment to alice the node's chain holds up to the result's end (the
// old branch's left out), or fail naming its cause.
func TestFeedRedReorgDuringFedScan(t *testing.T) {
	const tip = 2003
	for _, tt := range []struct {
		fork    int32
		after   int
		nodes   int
		service bool
	}{
		{tip - 1, 0, 1, false},
		{tip - 6, 500, 2, false},
		{tip - 110, 0, 2, false},
		{tip - 1013, 1500, 1, false},
		{tip - 110, 500, 2, true},
	} {
		t.Run(fmt.Sprintf("%d blocks/after %d filters/%d nodes/service %v", tip-tt.fork, tt.after, tt.nodes, tt.service), func(t *testing.T) {
			r := newFedChain(t, tip)
			r2 := &fedReorg{chain: r, fork: tt.fork, after: tt.after, done: make(chan struct{})}
			addrs := []string{peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, r2.answer).Addr}
			if tt.nodes == 2 {
				second := peertest.StartBtcd(t, peertest.WithArgs("--nobanning", "--connect="+r.node.P2PAddr))
				t.Cleanup(func() { second.Stop() })
				waitHeight(t, second, tip)
				addrs = append(addrs, second.P2PAddr)
			}
			c := connectTo(t, r.node, 5*time.Second, addrs...)
			if tt.service {
				startService(t, c)
			}
			start := time.Now()
			res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(r.alice.PkScript())}, From: 0, To: -1})
			took := time.Since(start).Round(time.Millisecond)
			select {
			case <-r2.done:
			default:
				t.Fatalf("the node did not reorganize during the scan (%d cfilter answers passed)", r2.seen)
			}
			if r2.err != nil {
				t.Fatalf("reorganizing: %v", r2.err)
			}
			for _, st := range c.Peers() {
				if st.Banned {
					t.Errorf("an honest node (%s) is banned: %s", st.Address, st.Reason)
				}
			}
			if err != nil {
				// A failure must name its cause.
				t.Logf("the scan failed after %v: %v", took, err)
				if !strings.Contains(err.Error(), "reorganiz") && !strings.Contains(err.Error(), "peer") {
					t.Errorf("the scan failed without naming its cause: %v", err)
				}
				return
			}
			if res.To != tip+1 {
				t.Errorf("the scan ended at %d, the new tip is %d", res.To, tip+1)
			}
			want := alicePaid(t, r.node, r.alice, res.To)
			checkFound(t, res, want)
			t.Logf("scan of 0..%d in %v: %d matches (want %d), %d filters received, %d blocks disconnected, warnings %q",
				res.To, took, len(res.Matches), len(want), res.FiltersReceived, len(res.Disconnected), res.Warnings)
		})
	}
}

// TestFeedRedLieBeyondHeldShareBanned is TestFeedAttackLieThenTruthBanned
// where the feed holds none of the batch's filters (its bound lowered to
// nothing, as a batch of mainnet filters passes its share of 8 MiB): the
// only peer hides alice's payment (height 102, in the fed segment) in the
// fed batch, with its own valid checksum, and serves the true filter when
// asked again. The lie arrived as the liar sent it, so it must be banned
// for it, without being asked again, and the scan fail naming it.
func TestFeedRedLieBeyondHeldShareBanned(t *testing.T) {
	needFixture(t)
	o := &onceWrong{target: blockHashAt(t, fx.height[fx.fundAlice.TxHash()])}
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, o.lie)
	c := connectWith(t, Config{Peers: []string{l.Addr}, Params: fx.node.Params, feedHeld: -1})
	res, err := scan(t, c, "bip157", 0, c.Chain().Height())
	st := peerStatus(c, l.Addr)
	o.mu.Lock()
	served := o.served
	o.mu.Unlock()
	t.Logf("error %v; liar banned %v (%s); it served the filter of height %d %d times", err, st.Banned, st.Reason, fx.height[fx.fundAlice.TxHash()], served)
	if res != nil || err == nil {
		t.Fatalf("the scan of the liar succeeded: the lie dropped from the batch passed for damage on the way")
	}
	checkPeerError(t, err, l.Addr, peer.ErrBadFilter)
	if !st.Banned || !strings.Contains(st.Reason, "as it sent it") {
		t.Errorf("the liar that served an intact false filter is not banned for it: %+v", st)
	}
	if served != 1 {
		t.Errorf("the liar served the filter %d times, want once: the intact lie is proof enough", served)
	}
}

// TestFeedRedStaleSumFatFiltersBounded has the only peer serve filters of
// nearly 256 KiB under the node's checksums (so that each looks damaged
// on the way) for the first 1,001 filters it is asked for in each of two
// scans, of two clients (those of the fed segment 0..1000), and the node's filters after:
// no proof, so it may not be banned, and the scan must find every watched
// transaction or fail naming the damage; but what it makes the client
// download must stay within what the feed holds (feedHeldBound, with room
// for what the sockets buffer), in each scan. Before, the feed
// read every filter of the batch before the segment's check found the
// first one damaged, asked it again, got the true one, and went on with
// the peer as if nothing had happened: every scan downloaded the fat
// batch.
func TestFeedRedStaleSumFatFiltersBounded(t *testing.T) {
	needFixture(t)
	const bound = 4 * feedHeldBound
	fat := fatFilter(t, 96_000)
	const fed = wire.CFCheckptInterval + 1
	liar := peertest.NewStaleSums(t, fx.node.P2PAddr, fat, 0)
	for i := 0; i < 2; i++ {
		// A new client each time: nothing cached.
		c := connect(t, time.Minute, liar.Addr)
		liar.Arm(fed)
		before, replaced := liar.CFilterBytes(), liar.Replaced()
		start := time.Now()
		res, err := scan(t, c, "bip157", 0, c.Chain().Height())
		passed := liar.CFilterBytes() - before
		t.Logf("scan %d: %v, %.1f MiB of cfilter messages, %d of them replaced; error %v; peer: banned %v, %s",
			i+1, time.Since(start).Round(time.Millisecond), float64(passed)/(1<<20), liar.Replaced()-replaced, err,
			peerStatus(c, liar.Addr).Banned, peerStatus(c, liar.Addr).Reason)
		if st := peerStatus(c, liar.Addr); st.Banned {
			t.Errorf("banned without proof: %+v", st)
		}
		switch {
		case err != nil:
			checkPeerError(t, err, liar.Addr, peer.ErrDamaged)
		default:
			checkMatches(t, res, fx.want)
		}
		if passed > bound {
			t.Errorf("scan %d: the damaged-looking filters cost %.1f MiB, bound %.1f MiB", i+1, float64(passed)/(1<<20), float64(bound)/(1<<20))
		}
	}
}

// TestFeedRedColludersLieInFedFilters has two colluders state the true
// checkpoints (so the first segment is fed) and serve empty filters,
// beside an honest peer slow with its first filter: the fed segment
// misses its checkpoint, a colluder whose false filter arrived as it sent
// it is banned, any that lies again is caught, the honest peer is never
// banned, and the scan finds every watched transaction.
func TestFeedRedColludersLieInFedFilters(t *testing.T) {
	needFixture(t)
	l1 := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, emptyFilters)
	l2 := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, emptyFilters)
	honest := slowFirstFilter(t)
	c := scanBesideHonest(t, honest, l1.Addr, l2.Addr)
	banned := 0
	for _, l := range []*peertest.Liar{l1, l2} {
		_, cf := cfRequests(t, l, c)
		st := peerStatus(c, l.Addr)
		t.Logf("colluder %s asked %d getcfilters: %+v", l.Addr, len(cf), st)
		if st.Banned {
			banned++
		} else if len(cf) > 0 {
			t.Errorf("colluder %s served filters and is not banned: %+v", l.Addr, st)
		}
	}
	if banned == 0 {
		t.Errorf("no colluder banned")
	}
}

// TestFeedRedColludersFalseCheckpointSecondSegment has two colluders
// forge, consistently (filters, filter hashes, filter headers and
// checkpoints), a filter in the second segment, beside one honest node:
// the checkpoints at 2000 differ, the first segment is still fed. A
// forgery the block proves false (alice's payment at 1500 left out) bans
// both colluders; one it cannot decide (the script alice's spend at 1600
// spends left out) is a conflict whose block is scanned whole. The scan finds every payment and the honest node is never
// banned.
func TestFeedRedColludersFalseCheckpointSecondSegment(t *testing.T) {
	r := newFedChain(t, 2003)
	want := alicePaid(t, r.node, r.alice, r.tip)
	for _, tt := range []struct {
		name     string
		h        int32
		forge    func(*wire.MsgBlock) []byte
		provable bool
	}{
		{"empty filter for alice's payment", 1500, peertest.EmptyFilter, true},
		{"outputs only for alice's spend", 1600, peertest.OutputsOnly, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := tt.h
			l1 := peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, peertest.ForgeFilter(t, r.node, h, tt.forge))
			l2 := peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, peertest.ForgeFilter(t, r.node, h, tt.forge))
			honest := peertest.NewLiar(t, r.node.P2PAddr, r.node.Params.Net, nil)
			c := connectTo(t, r.node, 0, l1.Addr, l2.Addr, honest.Addr)
			res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(r.alice.PkScript())}, From: 0, To: -1})
			if err != nil {
				t.Fatal(err)
			}
			checkFound(t, res, want)
			checkForgers(t, c, res, honest, []*peertest.Liar{l1, l2}, h, tt.provable)
			var fed bool
			for _, l := range []*peertest.Liar{l1, l2, honest} {
				hs, _ := cfRequests(t, l, c)
				for _, q := range hs {
					fed = fed || q[0] <= wire.CFCheckptInterval
				}
			}
			t.Logf("%d matches, %d conflicts, %d filters; first segment's filter headers asked: %v", len(res.Matches), len(res.Conflicts), res.FiltersReceived, fed)
			if fed {
				t.Errorf("the filter headers of the first segment were asked: it was not fed")
			}
		})
	}
}

// TestFeedRedDamageFirstHidesNoLie has the only peer hide alice's payment
// (height 102, in the fed segment) in the fed batch, with its own valid
// checksum, behind a relay that damages the first filter it passes
// (height 0: an empty filter under the node's checksum); the liar serves
// the true filters when asked again. The damaged filter comes first among
// those off the checkpoint, but the intact lie after it is the liar's
// word: it must be banned for it, and the scan fail naming it. Before,
// only the first filter off the checkpoint was looked at: asked again, it
// came back right, was taken for damage on the way, and the lie behind it
// went unpunished.
func TestFeedRedDamageFirstHidesNoLie(t *testing.T) {
	needFixture(t)
	o := &onceWrong{target: blockHashAt(t, fx.height[fx.fundAlice.TxHash()])}
	l := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, o.lie)
	relay := peertest.NewStaleSums(t, l.Addr, []byte{0}, 1)
	c := connect(t, 0, relay.Addr)
	res, err := scan(t, c, "bip157", 0, c.Chain().Height())
	st := peerStatus(c, relay.Addr)
	t.Logf("%d filters replaced; error %v; banned %v (%s)", relay.Replaced(), err, st.Banned, st.Reason)
	if relay.Replaced() != 1 {
		t.Fatalf("the relay replaced %d filters, want 1", relay.Replaced())
	}
	if res != nil || err == nil {
		t.Fatalf("the scan of the liar succeeded: its lie hid behind a damaged filter")
	}
	checkPeerError(t, err, relay.Addr, peer.ErrBadFilter)
	if !st.Banned || !strings.Contains(st.Reason, "as it sent it") {
		t.Errorf("the liar that served an intact false filter is not banned for it: %+v", st)
	}
}

// slowCheckpoints is an honest peer that holds its cfcheckpt answers for
// d.
func slowCheckpoints(t *testing.T, d time.Duration) *peertest.Liar {
	return peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, func(m wire.Message) ([]wire.Message, bool) {
		if _, ok := m.(*wire.MsgCFCheckpt); ok {
			time.Sleep(d)
		}
		return []wire.Message{m}, false
	})
}

// TestFeedRedColludersFasterThanHonest has two colluders forge,
// consistently, an empty filter for alice's funding (height 102, in the
// fed segment 0..1000) and state the checkpoint it leads to, beside an
// honest peer that holds its checkpoints for 20 s (within the request
// timeout). Being two and fast buys no trust: either the honest peer's
// checkpoint is compared (the colluders banned, every watched
// transaction found), or, if the scan left it out as too slow, the
// result says the filter headers rest on the colluders and were not
// cross-checked with it. The honest peer is never banned. (Measured: it
// is left out after about 7.6 s, the forged segment fed from the
// colluders' checkpoint, the funding missed, and the result says so; held
// 5 s, it is waited for and both colluders are banned.)
func TestFeedRedColludersFasterThanHonest(t *testing.T) {
	needFixture(t)
	h := fx.height[fx.fundAlice.TxHash()]
	l1 := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, h, peertest.EmptyFilter))
	l2 := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.ForgeFilter(t, fx.node, h, peertest.EmptyFilter))
	honest := slowCheckpoints(t, 20*time.Second)
	c := connect(t, 0, l1.Addr, l2.Addr, honest.Addr)
	start := time.Now()
	res, err := scan(t, c, "bip157", 0, c.Chain().Height())
	if err != nil {
		t.Fatal(err)
	}
	if st := peerStatus(c, honest.Addr); st.Banned {
		t.Fatalf("the honest peer was banned: %+v", st)
	}
	banned := 0
	for _, l := range []*peertest.Liar{l1, l2} {
		if peerStatus(c, l.Addr).Banned {
			banned++
		}
	}
	found := hasMatch(res, fx.fundAlice.TxHash())
	t.Logf("%v: %d colluders banned, alice's funding found %v, warnings %q", time.Since(start).Round(time.Millisecond), banned, found, res.Warnings)
	if found && banned == 2 {
		checkMatches(t, res, fx.want)
		return
	}
	warned := false
	for _, w := range res.Warnings {
		warned = warned || strings.Contains(w, honest.Addr) && strings.Contains(w, "not cross-checked")
	}
	if !warned {
		t.Errorf("the result rests on the colluders (alice's funding found %v, %d banned) and does not say it was not cross-checked with %s", found, banned, honest.Addr)
	}
}

// TestFeedRedDamageBeyondHeldShareNotBanned is
// TestFeedAttackDamageOnTheWayNotBanned where the feed holds none of the
// batch's filters (its bound lowered to nothing): the first filter the
// only peer's link passes (height 0, in the fed segment) is replaced
// under the node's checksum, as damage on the way would leave it. Its
// checksum, checked as it is read, ends the feed; the segment is verified
// by its filter headers, its filters downloaded again, nobody is banned
// and the scan finds every watched transaction.
func TestFeedRedDamageBeyondHeldShareNotBanned(t *testing.T) {
	needFixture(t)
	relay := peertest.NewStaleSums(t, fx.node.P2PAddr, []byte{0}, 1)
	log := &lockedWriter{w: &bytes.Buffer{}}
	c := connectWith(t, Config{Peers: []string{relay.Addr}, Params: fx.node.Params, Log: log, feedHeld: -1})
	res, err := scan(t, c, "bip157", 0, c.Chain().Height())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "damaged on the way: the filter for block") {
		t.Errorf("the client's log does not say the fed filter was damaged:\n%s", log)
	}
	if relay.Replaced() != 1 {
		t.Fatalf("the relay replaced %d filters, want 1", relay.Replaced())
	}
	checkMatches(t, res, fx.want)
	if st := peerStatus(c, relay.Addr); st.Banned {
		t.Errorf("the peer behind the damaging link was banned: %+v", st)
	}
	for _, line := range strings.Split(log.String(), "\n") {
		if strings.Contains(line, "damaged on the way") {
			t.Log(line)
		}
	}
}

// TestFeedHeldLimit: a feed holds filters within feedHeldBytes unless
// its client's configuration lowers the bound (Config.feedHeld), each
// feed by its own client's, so that a test lowering it changes no other
// client's feed.
func TestFeedHeldLimit(t *testing.T) {
	for _, tc := range []struct {
		held, want int64
	}{
		{0, feedHeldBytes},
		{-1, 0},
		{1 << 20, 1 << 20},
		{2 * feedHeldBytes, feedHeldBytes},
	} {
		f := (&Client{cfg: Config{feedHeld: tc.held}}).newFilterFeed(nil)
		if f.heldLimit != tc.want {
			t.Errorf("feedHeld %d: the feed holds up to %d bytes, want %d", tc.held, f.heldLimit, tc.want)
		}
	}
	if room := (&Client{cfg: Config{feedHeld: -1}}).newFilterFeed(nil).batchRoom(); room >= 0 {
		t.Errorf("a feed that holds nothing leaves a batch %d bytes", room)
	}
}
