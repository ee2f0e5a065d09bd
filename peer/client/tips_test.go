package client

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/peer/peertest"
)

// hasWarning reports whether one of res's warnings holds every part.
func hasWarning(ws []string, parts ...string) bool {
	return slices.ContainsFunc(ws, func(w string) bool {
		for _, p := range parts {
			if !strings.Contains(w, p) {
				return false
			}
		}
		return true
	})
}

// aheadLiar starts a liar in front of the node one block ahead of the
// fixture's (needAhead), whose own block pays alice, that hides the
// payments at the heights given behind empty filters with a coherent
// filter-header chain (the block's own payment too, if its height is
// given). It returns the liar's address, the extra block's height and its
// payment.
func aheadLiar(t *testing.T, heights ...int32) (string, int32, *wire.MsgTx) {
	t.Helper()
	a := needAhead(t)
	lie := peertest.Forge(t, a.node, slices.Min(heights), func(h int32, _ *wire.MsgBlock) bool { return slices.Contains(heights, h) }, peertest.EmptyFilter)
	return peertest.NewLiar(t, a.node.P2PAddr, a.node.Params.Net, lie).Addr, a.top, a.pay
}

// TestLiarAheadIsCrossChecked: a liar one block ahead of two honest peers
// (the only one whose chain reaches the tip) hides two payments. Every
// height the honest peers hold is compared with them, so both lies are
// caught; the block only the liar holds is not scanned once it is banned,
// and the result says so.
func TestLiarAheadIsCrossChecked(t *testing.T) {
	needFixture(t)
	hFund, hLate := fx.height[fx.fundAlice.TxHash()], fx.height[fx.late.TxHash()]
	liar, top, _ := aheadLiar(t, hFund, hLate)
	for _, liarFirst := range []bool{true, false} {
		honest := honestPeers(t, 2)
		peers := append(slices.Clone(honest), liar)
		if liarFirst {
			peers = append([]string{liar}, honest...)
		}
		c := connect(t, 0, peers...)
		if c.Chain().Height() != top {
			t.Fatalf("chain height %d, want the liar's %d", c.Chain().Height(), top)
		}
		res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: items(fx.watch), To: -1})
		if err != nil {
			t.Fatal(err)
		}
		checkMatches(t, res, fx.want)
		if st := status(t, res, liar); !st.Banned || !strings.Contains(st.Reason, "proves it false") {
			t.Errorf("liar: %+v", st)
		}
		for _, h := range honest {
			if st := status(t, res, h); st.Banned || st.Reason != "" || !st.Compared || st.Tip != fx.tip {
				t.Errorf("honest peer: %+v", st)
			}
		}
		if res.To != fx.tip || !hasWarning(res.Warnings, "held by no connected peer", "scanned to") {
			t.Errorf("scanned to %d (want %d, the honest tip) with warnings %q", res.To, fx.tip, res.Warnings)
		}
	}
}

// TestHeightsOnOnePeerAreNamed: a liar one block ahead that lies only
// about the block it alone holds cannot be caught; the result names the
// height and the peer it rests on.
func TestHeightsOnOnePeerAreNamed(t *testing.T) {
	needFixture(t)
	liar, top, pay := aheadLiar(t, fx.tip+1)
	honest := honestPeers(t, 1)[0]
	c := connect(t, 0, liar, honest)
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: items(fx.watch[:1]), To: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.To != top {
		t.Fatalf("scanned to %d, want %d", res.To, top)
	}
	if slices.ContainsFunc(res.Matches, func(m Match) bool { return m.Txid == pay.TxHash() }) {
		t.Fatal("the hidden payment was found: the liar did not lie")
	}
	want := OnePeer{From: top, To: top, Peer: liar}
	if !slices.Equal(res.OnePeer, []OnePeer{want}) || !slices.Contains(res.Warnings, want.String()) {
		t.Errorf("one-peer heights %+v, warnings %q; want %+v", res.OnePeer, res.Warnings, want)
	}
	for _, a := range []string{liar, honest} {
		if st := status(t, res, a); !st.Compared || st.Banned {
			t.Errorf("%s: %+v", a, st)
		}
	}
	if hasWarning(res.Warnings, "the bip157 result rests on one peer") {
		t.Errorf("warnings %q: two peers were compared", res.Warnings)
	}
}

// TestZeroAnnouncerIsCompared: a peer that announces height 0 in its
// version message but serves the whole chain is measured by what it
// serves: it is compared with the other peer, and counts as used; a lie
// from it is caught like any other.
func TestZeroAnnouncerIsCompared(t *testing.T) {
	needFixture(t)
	hFund := fx.height[fx.fundAlice.TxHash()]
	for _, tt := range []struct {
		name string
		lie  peertest.LieFunc
	}{
		{"honest", nil},
		{"lying", peertest.ForgeFilter(t, fx.node, hFund, peertest.EmptyFilter)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			zero := peertest.NewLiar(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.Announce(0, tt.lie)).Addr
			honest := honestPeers(t, 1)[0]
			res, err := bip157(t, connect(t, 0, zero, honest))
			if err != nil {
				t.Fatal(err)
			}
			checkMatches(t, res, fx.want)
			st := status(t, res, zero)
			if st.Tip != fx.tip || !st.Compared {
				t.Errorf("zero announcer: %+v", st)
			}
			if lying := tt.lie != nil; st.Banned != lying {
				t.Errorf("zero announcer banned %v, lying %v: %+v", st.Banned, lying, st)
			}
			if hasWarning(res.Warnings, "rests on one peer") {
				t.Errorf("warnings %q", res.Warnings)
			}
		})
	}
}

// TestPoisonedDataDirMeetsHonestPeer: a data directory written by a scan
// that rested on the liar one block ahead alone holds its lies (and its
// chain's tip). A later scan with one honest peer finds every payment,
// replaces the stored filter headers from the first lie and says so, and
// names the stored tip no peer holds.
func TestPoisonedDataDirMeetsHonestPeer(t *testing.T) {
	needFixture(t)
	hFund, hLate := fx.height[fx.fundAlice.TxHash()], fx.height[fx.late.TxHash()]
	liar, top, _ := aheadLiar(t, hFund, hLate)
	ctx := context.Background()
	scan := func(dir string, to int32, peers ...string) (*ScanResult, error) {
		t.Helper()
		c, err := Connect(ctx, Config{Peers: peers, Params: fx.node.Params, DataDir: dir, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		return c.ScanBIP157(ctx, ScanRequest{Watch: items(fx.watch), To: to})
	}
	for _, to := range []int32{fx.tip - 1, -1} {
		dir := t.TempDir()
		poisoned, err := scan(dir, -1, liar)
		if err != nil {
			t.Fatal(err)
		}
		if poisoned.To != top || slices.ContainsFunc(poisoned.Matches, func(m Match) bool { return m.Txid == fx.fundAlice.TxHash() }) {
			t.Fatalf("the liar alone: scanned to %d, matches %d: it did not lie", poisoned.To, len(poisoned.Matches))
		}
		res, err := scan(dir, to, honestPeers(t, 1)[0])
		if err != nil {
			t.Fatal(err)
		}
		want := fx.want
		if to >= 0 {
			want = map[chainhash.Hash][]int{}
			for id, items := range fx.want {
				if fx.height[id] <= to {
					want[id] = items
				}
			}
		}
		checkMatches(t, res, want)
		if !hasWarning(res.Warnings, "differ from those of", "from height 102", "verified again") {
			t.Errorf("to %d: warnings %q do not say the stored filter headers were replaced from height %d", to, res.Warnings, hFund)
		}
		if to < 0 && (res.To != fx.tip || !hasWarning(res.Warnings, "held by no connected peer")) {
			t.Errorf("scanned to %d, warnings %q: want %d and the stored tip %d named", res.To, res.Warnings, fx.tip, top)
		}
	}
}

// TestPeerOnAnotherBranch: a peer whose chain leaves the client's for a
// branch with less work is named with its fork and tip, asked only about
// the heights below the fork, and not blamed.
func TestPeerOnAnotherBranch(t *testing.T) {
	node := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	node.Generate(t, 110)
	other := peertest.CopyChain(t, node, peertest.WithArgs("--nobanning"))
	node.Generate(t, 3)               // 111..113: the chain with the most work
	branch := other.Generate(t, 1)[0] // 111': a branch of its own
	c := connectTo(t, node, 5*time.Second, node.P2PAddr, other.P2PAddr)
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}, To: -1})
	if err != nil {
		t.Fatal(err)
	}
	st := status(t, res, other.P2PAddr)
	if st.Banned || st.Branch == nil || *st.Branch != (Branch{Fork: 110, Height: 111, Hash: *branch}) || st.Tip != 110 || !st.Compared {
		t.Fatalf("the peer on a branch: %+v (branch %+v)", st, st.Branch)
	}
	if !hasWarning(res.Warnings, other.P2PAddr, "another branch", "after height 110", "at height 111") {
		t.Errorf("warnings %q do not name the branch", res.Warnings)
	}
	want := OnePeer{From: 111, To: 113, Peer: node.P2PAddr}
	if !slices.Equal(res.OnePeer, []OnePeer{want}) {
		t.Errorf("one-peer heights %+v, want %+v", res.OnePeer, want)
	}
}

// TestScanFollowsDeepFork: two peers whose chains fork 2,500 blocks below
// the tip of the first; the second's branch has more work and takes two
// headers messages to show it. The scan follows it, lists the blocks that
// left the chain, and blames nobody.
func TestScanFollowsDeepFork(t *testing.T) {
	a := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	a.Generate(t, 100)
	b := peertest.CopyChain(t, a, peertest.WithArgs("--nobanning"))
	a.Generate(t, 2500)
	b.Generate(t, 2400)
	c := connectTo(t, a, 10*time.Second, a.P2PAddr, b.P2PAddr) // the chain is a's
	b.Generate(t, 200)                                         // now b's branch has more work
	res, err := c.ScanBIP157(context.Background(), ScanRequest{Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}, To: -1})
	if err != nil {
		t.Fatal(err)
	}
	if res.To != 2700 || len(res.Disconnected) != 2500 || !hasWarning(res.Warnings, "reorganized", "above height 100") {
		t.Errorf("scanned to %d, %d disconnected, warnings %q", res.To, len(res.Disconnected), res.Warnings)
	}
	for _, st := range res.Peers {
		if st.Banned || st.Reason != "" {
			t.Errorf("peer blamed: %+v", st)
		}
	}
	if st := status(t, res, a.P2PAddr); st.Branch == nil || st.Branch.Fork != 100 || st.Branch.Height != 2600 {
		t.Errorf("the peer left behind: %+v (branch %+v)", st, st.Branch)
	}
}

// TestSlowPeerIsRankedDown: a peer that holds every answer for a while is
// still compared (its word counts as any other's) but gets no bulk
// download while a faster peer can serve it; the figures are logged.
func TestSlowPeerIsRankedDown(t *testing.T) {
	needFixture(t)
	const delay = 150 * time.Millisecond
	scan := func(peers ...string) (*ScanResult, time.Duration) {
		t.Helper()
		start := time.Now()
		c := connect(t, 10*time.Second, peers...)
		res, err := bip157(t, c)
		if err != nil {
			t.Fatal(err)
		}
		return res, time.Since(start)
	}
	honest := honestPeers(t, 1)[0]
	_, alone := scan(honest)
	slow := peertest.NewFlooder(t, fx.node.P2PAddr, fx.node.Params.Net, peertest.Flood{Kind: peertest.SlowAnswers, Delay: delay})
	res, both := scan(honest, slow.Addr)
	checkMatches(t, res, fx.want)
	if st := status(t, res, slow.Addr); st.Banned || st.Reason != "" || !st.Compared {
		t.Errorf("the slow peer: %+v", st)
	}
	t.Logf("%d blocks: %v with one fast peer, %v with a peer holding each answer %v beside it (%.2fx)",
		res.BlocksScanned, alone.Round(time.Millisecond), both.Round(time.Millisecond), delay, float64(both)/float64(alone))
}

// TestStoredChainReplaced: a data directory holds a chain that the peers'
// replaces from low down (a branch with more work). The scan lists the
// blocks that left the chain and warns, naming the fork.
func TestStoredChainReplaced(t *testing.T) {
	a := peertest.StartBtcd(t, peertest.WithArgs("--nobanning"))
	a.Generate(t, 10)
	b := peertest.CopyChain(t, a, peertest.WithArgs("--nobanning"))
	a.Generate(t, 200)
	b.Generate(t, 210)
	dir := t.TempDir()
	ctx := context.Background()
	scan := func(addr string) *ScanResult {
		t.Helper()
		c, err := Connect(ctx, Config{Peers: []string{addr}, Params: a.Params, DataDir: dir, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := c.SyncHeaders(ctx); err != nil { // as the CLI does before it scans
			t.Fatal(err)
		}
		res, err := c.ScanBIP157(ctx, ScanRequest{Watch: []WatchItem{ScriptItem(peertest.NewKey("alice").PkScript())}, To: -1})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	scan(a.P2PAddr)
	res := scan(b.P2PAddr)
	if len(res.Disconnected) != 200 || !hasWarning(res.Warnings, "200 block(s) above height 10 left it") || res.To != 220 {
		t.Errorf("%d disconnected, scanned to %d, warnings %q", len(res.Disconnected), res.To, res.Warnings)
	}
}
