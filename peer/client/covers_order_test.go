package client

import (
	"math"
	"slices"
	"testing"

	"github.com/btcsuite/btcd/chaincfg/chainhash"
	"github.com/btcsuite/btcd/wire"
	"github.com/spvfilter/spvfilter/gcs"
	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/model"
)

// orderClients is how many clients TestCoverFetchOrder runs, unless
// SPVFILTER_ORDER_CLIENTS says more.
const orderClients = 3

// maxOrderZ bounds |z| of TestCoverFetchOrder's rank-sum tests: a
// two-sided p of 2*10^-5 each where the order tells nothing, so that
// the two (every session, the sessions that drew covers) fail by chance
// in fewer than 4 runs in 10^5 (at 3.29, p 0.001 each, up to 2 in 10^3:
// 40 runs gave z of standard deviation 0.87 and 0.84, |z| up to 2.93).
// Asking the drawn covers' blocks first gave z 8.18.
const maxOrderZ = 4.26

// blockKind is what a block asked holds: a watched script, a cover's
// and no watched one, or neither.
type blockKind int

const (
	otherBlock blockKind = iota
	walletBlock
	coverBlock
)

// blockKinds labels blocks by what they hold (blockScripts: as a basic
// filter holds scripts), reading each from the node once.
type blockKinds struct {
	t      *testing.T
	node   *peertest.Node
	wallet map[string]bool
	held   map[chainhash.Hash]map[string]bool
}

func newBlockKinds(t *testing.T, f *coversFixture) *blockKinds {
	k := &blockKinds{t: t, node: f.node, wallet: map[string]bool{}, held: map[chainhash.Hash]map[string]bool{}}
	for _, it := range f.watch {
		k.wallet[string(it.Script)] = true
	}
	return k
}

// of is the kind of the block hash, the covers' scripts being covers.
func (k *blockKinds) of(hash chainhash.Hash, covers map[string]bool) blockKind {
	held, ok := k.held[hash]
	if !ok {
		b, err := k.node.RPC().GetBlock(&hash)
		if err != nil {
			k.t.Fatal(err)
		}
		held, _ = blockScripts(b)
		k.held[hash] = held
	}
	kind := otherBlock
	for s := range held {
		switch {
		case k.wallet[s]:
			return walletBlock
		case covers[s]:
			kind = coverBlock
		}
	}
	return kind
}

// walletBlocksAsked counts the blocks asked of relays that hold a
// watched script.
func walletBlocksAsked(t *testing.T, f *coversFixture, relays []*peertest.Liar) int {
	k := newBlockKinds(t, f)
	n := 0
	for _, r := range relays {
		for _, h := range blocksAsked(r) {
			if k.of(h, nil) == walletBlock {
				n++
			}
		}
	}
	return n
}

// rankSum is a Mann-Whitney rank-sum test pooled over streams of
// blocks asked: u counts the pairs, within a stream, of a wallet's block
// asked after a cover's, of n pairs; mean and variance are u's where
// the order within each stream is a uniform shuffle of its blocks.
type rankSum struct {
	u, n, mean, variance float64
}

// add takes in one stream's kinds, in the order asked.
func (r *rankSum) add(stream []blockKind) {
	covers, wallet := 0.0, 0.0
	for _, k := range stream {
		switch k {
		case coverBlock:
			covers++
		case walletBlock:
			r.u += covers
			wallet++
		}
	}
	r.n += wallet * covers
	r.mean += wallet * covers / 2
	r.variance += wallet * covers * (wallet + covers + 1) / 12
}

// z is u standardized: far above 0, covers' blocks are asked before the
// wallet's.
func (r *rankSum) z() float64 {
	if r.variance == 0 {
		return 0
	}
	return (r.u - r.mean) / math.Sqrt(r.variance)
}

// auc is the chance a wallet's block is asked after a cover's.
func (r *rankSum) auc() float64 { return r.u / max(r.n, 1) }

// TestRankSum: the pooled rank-sum test finds covers asked first far
// from chance, and an order alternating the kinds, or a stream of one
// kind, near it.
func TestRankSum(t *testing.T) {
	c, w, o := coverBlock, walletBlock, otherBlock
	for _, tc := range []struct {
		name       string
		streams    [][]blockKind
		zMin, zMax float64
	}{
		{"covers first", [][]blockKind{{o, c, c, c, c, c, c, w, w, w, w, w, w}, {c, c, c, c, c, w, w, w, w, w}}, 3, math.Inf(1)},
		{"wallet first", [][]blockKind{{w, w, w, w, w, w, c, c, c, c, c, c}, {w, w, w, w, w, c, c, c, c, c}}, math.Inf(-1), -3},
		{"alternating", [][]blockKind{{c, w, w, c, c, w, w, c, c, w, w, c}, {w, c, c, w, w, c, c, w}}, -0.5, 0.5},
		{"one kind", [][]blockKind{{w, w, o, w}, {c, o}}, 0, 0},
	} {
		var r rankSum
		for _, s := range tc.streams {
			r.add(s)
		}
		if z := r.z(); z < tc.zMin || z > tc.zMax {
			t.Errorf("%s: z %.2f, want within [%g, %g]", tc.name, z, tc.zMin, tc.zMax)
		}
	}
}

// TestCoverFetchOrder: a peer that reads the order in which the client
// asks for blocks cannot tell the wallet's blocks from the covers'. For
// orderClients clients of their own, covered sessions (target 0.5) run
// from an empty data directory until they meet the target, and one more;
// in each relay's stream of blocks asked by a session that fetched the
// wallet's blocks, the positions of the blocks holding a watched script
// are set against those holding a cover's and none of the wallet's
// (rank-sum, pooled over the streams): |z| stays below maxOrderZ. When
// the blocks of the covers a session drew were fetched before the
// wallet's (to read their groups), the same test gave z far above it.
// SPVFILTER_ORDER_CLIENTS runs more clients.
func TestCoverFetchOrder(t *testing.T) {
	f := needCovers(t)
	clients := clientsFrom("SPVFILTER_ORDER_CLIENTS", orderClients)
	kinds := newBlockKinds(t, f)
	var all, drew rankSum
	streams := 0
	for i := range clients {
		dir := t.TempDir()
		met, after := false, 0
		for session := 1; session <= maxSessionsToTarget && after < 2; session++ {
			relays := relaysTo(t, f, 2)
			var covers map[string]bool
			var k *CoverCost
			var warnings []string
			_, err := coverRun{dir: dir, target: 0.5, after: func(c *Client, res *ScanResult) {
				k, warnings = res.Cover, res.Warnings
				covers = map[string]bool{}
				for _, s := range c.covers.Scripts() {
					covers[string(s)] = true
				}
			}}.scan(t, f, relays)
			if err != nil {
				if !isShort(err) {
					t.Fatal(err)
				}
				continue // no block of the wallet's was asked
			}
			met = met || k.Met
			if met {
				after++
			}
			for _, r := range relays {
				var stream []blockKind
				for _, h := range blocksAsked(r) {
					stream = append(stream, kinds.of(h, covers))
				}
				all.add(stream)
				if k.Drawn > 0 {
					drew.add(stream)
				}
				streams++
			}
			t.Logf("client %d session %d: %s; warnings %q", i, session, k, warnings)
		}
		if !met {
			t.Fatalf("client %d: the target was not met in %d sessions", i, maxSessionsToTarget)
		}
	}
	t.Logf("%d streams: a wallet's block asked after a cover's in %.0f of %.0f pairs (AUC %.3f), z %.2f; in the sessions that drew covers, AUC %.3f, z %.2f",
		streams, all.u, all.n, all.auc(), all.z(), drew.auc(), drew.z())
	if all.n == 0 || drew.n == 0 {
		t.Fatal("no pairs of a wallet's and a cover's blocks to compare")
	}
	for _, r := range []struct {
		name string
		r    rankSum
	}{{"every session", all}, {"the sessions that drew covers", drew}} {
		if z := r.r.z(); math.Abs(z) > maxOrderZ {
			t.Errorf("%s: the order the blocks are asked in tells covers from the wallet's: z %.2f (AUC %.3f), beyond %g", r.name, z, r.r.auc(), maxOrderZ)
		}
	}
}

// TestCoverRidersLikeWallet: the blocks fetched for covers carry as
// many other scripts beside a cover's, in its transactions (riders,
// which a peer reading the blocks sees whether or not the attack's
// groups take them in), as the wallet's blocks beside a watched script.
// For riderClients clients of their own, at the session that meets the
// target, each watched script's and each cover's riders per appearance
// (txMates on the blocks asked); it fails where more than
// maxRidersApart of the covers have a count no watched script of their
// client has, or the AUC pooled over the clients, folded, is above
// maxRiderAUC. On the covers' chain, whose other users transact in
// mainnet's shapes (peertest.MainnetShapes), candidate chains formed of
// every script of a transaction (a payment with change a chain of
// three, where the wallet's is its coin and its change) left 0.68 to
// 0.71 of the covers with a count no watched script has (AUC 0.42 to
// 0.46, three runs of 16 clients); formed as a wallet's (ownerChains:
// the coin spent and the change together, the payee apart), the chains
// kept chosen from a margin of one and a half times the need
// (matchRiders, coverMargin), 0.22 to 0.27, AUC 0.40 to 0.45 in twelve
// runs (the covers' riders per appearance 3.5 against the wallet's
// 3.3: a cover's coin was more often paid by a transaction
// of more outputs than a payer's); 32 clients a run, AUC 0.42 to 0.43
// (four runs), and at a margin of two and a half 0.41 to 0.46 (seven
// runs; intervals of clients drawn with replacement about ±0.02, none
// holding a half). With the draw taking chains of few riders first
// (fewRiders) and the choice's swaps (improveRiders, classedScore), 64
// clients a run: AUC 0.438 to 0.443 (three runs, ±0.015). It logs too
// the share of watched scripts and of covers an input of the blocks
// fetched spends, which a peer reading them sees (logSpent): 0.50
// against 0.59 to 0.62, AUC 0.442 to 0.453.
// SPVFILTER_RIDER_CLIENTS runs more clients:
//
//	SPVFILTER_RIDER_CLIENTS=32 go test ./peer/client -run TestCoverRidersLikeWallet -v
func TestCoverRidersLikeWallet(t *testing.T) {
	f := needCovers(t)
	clients := clientsFrom("SPVFILTER_RIDER_CLIENTS", riderClients)
	blocks := map[chainhash.Hash]*wire.MsgBlock{}
	var wallet, covers []float64
	var perWallet, perCovers, spentWallet, spentCovers [][]float64
	apart, alone := 0, 0
	for i := range clients {
		dir := t.TempDir()
		relays := relaysTo(t, f, 2)
		var w, c, sw, sc []float64
		_, err := coverRun{dir: dir, target: 0.5, after: func(cl *Client, res *ScanResult) {
			if !res.Cover.Met {
				t.Fatalf("client %d: %s", i, res.Cover)
			}
			var scripts [][]byte
			for _, it := range f.watch {
				scripts = append(scripts, it.Script)
			}
			n := len(scripts)
			scripts = append(scripts, cl.covers.Scripts()...)
			riders := ridersOf(t, f, cl, relays, blocks, scripts)
			w, c = riders[:n], riders[n:]
			spent := spentOf(relays, blocks, scripts)
			sw, sc = spent[:n], spent[n:]
		}}.fetching(t, f, relays)
		if err != nil {
			t.Fatal(err)
		}
		w, c = slices.DeleteFunc(w, math.IsNaN), slices.DeleteFunc(c, math.IsNaN)
		for _, x := range c {
			if !slices.ContainsFunc(w, func(y float64) bool { return math.Abs(x-y) < 1e-9 }) {
				apart++
			}
		}
		// Chance: a watched script whose count no other watched script
		// of its client has, as a cover drawn like them would.
		for j, x := range w {
			if !slices.ContainsFunc(slices.Delete(slices.Clone(w), j, j+1), func(y float64) bool { return math.Abs(x-y) < 1e-9 }) {
				alone++
			}
		}
		t.Logf("client %d: riders per appearance: wallet %.2f, covers %.2f: AUC %.3f", i, w, c, aucOf(w, c))
		wallet, covers = append(wallet, w...), append(covers, c...)
		perWallet, perCovers = append(perWallet, w), append(perCovers, c)
		spentWallet, spentCovers = append(spentWallet, sw), append(spentCovers, sc)
	}
	logSpent(t, spentWallet, spentCovers)
	a, lo, hi := pooledAUC(perWallet, perCovers, bootstrapDraws)
	share := float64(apart) / float64(max(len(covers), 1))
	t.Logf("pooled over %d clients (%d watched scripts, %d covers): AUC %.3f [%.3f, %.3f] (95%%, clients drawn with replacement); mean riders per appearance: wallet %.2f, covers %.2f; %d covers (%.2f) with a count no watched script of their client has (by chance, as watched scripts with one no other has: %.2f)",
		clients, len(wallet), len(covers), a, lo, hi, mean(wallet), mean(covers), apart, share, float64(alone)/float64(max(len(wallet), 1)))
	if folded := max(a, 1-a); folded > maxRiderAUC {
		t.Errorf("the riders beside a script tell covers from the wallet's: AUC %.3f, folded above %g", a, maxRiderAUC)
	}
	if share > maxRidersApart {
		t.Errorf("the riders beside a script tell %.2f of the covers from every watched script, above %g", share, maxRidersApart)
	}
}

// riderClients is how many clients TestCoverRidersLikeWallet pools,
// unless SPVFILTER_RIDER_CLIENTS says more.
const riderClients = 16

// maxRiderAUC bounds TestCoverRidersLikeWallet's folded AUC, as
// maxGroupSizeAUC bounds the group sizes'; maxRidersApart the share of
// covers whose count of riders no watched script has: above the 0.22
// to 0.27 of chains formed as a wallet's, below the 0.68 to 0.71 of
// chains of every script of a transaction.
const (
	maxRiderAUC    = 0.7
	maxRidersApart = 0.4
)

// mean is the mean of xs (0 for none).
func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(max(len(xs), 1))
}

// ridersOf returns, for each of scripts, the riders per appearance in
// the blocks the relays were asked for (NaN where it appears in none):
// the other scripts of its transactions there (txMates).
func ridersOf(t *testing.T, f *coversFixture, c *Client, relays []*peertest.Liar, blocks map[chainhash.Hash]*wire.MsgBlock, scripts [][]byte) []float64 {
	heightOf := map[chainhash.Hash]int32{}
	for h := int32(0); h <= c.chain.Height(); h++ {
		heightOf[c.chain.Hash(h)] = h
	}
	cs := &coverScan{log: &scanLog{held: map[chainhash.Hash]*wire.MsgBlock{}}, hashOf: c.chain.Hash}
	held := map[int32]map[string]bool{}
	for _, r := range relays {
		for _, hash := range blocksAsked(r) {
			b, ok := blocks[hash]
			if !ok {
				var err error
				if b, err = f.node.RPC().GetBlock(&hash); err != nil {
					t.Fatal(err)
				}
				blocks[hash] = b
			}
			cs.log.held[hash] = b
			held[heightOf[hash]], _ = blockScripts(b)
		}
	}
	out := make([]float64, len(scripts))
	for i, s := range scripts {
		n, riders := 0, 0
		for h, in := range held {
			if in[string(s)] {
				n++
				riders += len(cs.txMates(h, s))
			}
		}
		out[i] = math.NaN()
		if n > 0 {
			out[i] = float64(riders) / float64(n)
		}
	}
	return out
}

// spentOf returns, for each of scripts, 1 where an input of a block the
// relays were asked for spends it (its signature script or witness
// names it, gcs.SpendCandidates), as a peer reading the blocks it served
// sees it, else 0.
func spentOf(relays []*peertest.Liar, blocks map[chainhash.Hash]*wire.MsgBlock, scripts [][]byte) []float64 {
	spent := map[string]bool{}
	for _, r := range relays {
		for _, hash := range blocksAsked(r) {
			b := blocks[hash]
			if b == nil {
				continue
			}
			for _, tx := range b.Transactions[1:] {
				for _, in := range tx.TxIn {
					_, cands := gcs.SpendCandidates(in)
					for _, s := range cands {
						spent[string(s)] = true
					}
				}
			}
		}
	}
	out := make([]float64, len(scripts))
	for i, s := range scripts {
		if spent[string(s)] {
			out[i] = 1
		}
	}
	return out
}

// logSpent logs the share of watched scripts and of covers an input of
// the blocks fetched spends, with Wilson intervals, and the AUC of
// being spent pooled over clients; it fails where that AUC, folded, is
// above maxRiderAUC.
func logSpent(t *testing.T, wallet, covers [][]float64) {
	t.Helper()
	count := func(xs [][]float64) (k, n int) {
		for _, x := range xs {
			for _, v := range x {
				n++
				if v == 1 {
					k++
				}
			}
		}
		return k, n
	}
	kw, nw := count(wallet)
	kc, nc := count(covers)
	wl, wh := model.Wilson(kw, nw)
	cl, ch := model.Wilson(kc, nc)
	a, lo, hi := pooledAUC(wallet, covers, bootstrapDraws)
	t.Logf("spent in the blocks fetched: %d of %d watched scripts (%.2f [%.2f, %.2f]), %d of %d covers (%.2f [%.2f, %.2f]); AUC %.3f [%.3f, %.3f]",
		kw, nw, float64(kw)/float64(max(nw, 1)), wl, wh, kc, nc, float64(kc)/float64(max(nc, 1)), cl, ch, a, lo, hi)
	if folded := max(a, 1-a); folded > maxRiderAUC {
		t.Errorf("being spent tells covers from the wallet's: AUC %.3f, folded above %g", a, maxRiderAUC)
	}
}
