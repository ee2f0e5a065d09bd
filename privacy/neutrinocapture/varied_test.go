package neutrinocapture

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/btcsuite/btcd/wire"

	"github.com/spvfilter/spvfilter/peer/peertest"
	"github.com/spvfilter/spvfilter/privacy/leak"
	"github.com/spvfilter/spvfilter/privacy/simulate"
)

// variedShape is the size of one varied chain: its wallets, its rounds
// and the wallets' sizes (scripts, drawn log-uniform in [minSize,
// maxSize]).
type variedShape struct {
	wallets, rounds  int
	minSize, maxSize int
	// between is the chance that a payment to a wallet comes from
	// another wallet, when one can pay it; 0 is a third (drawn as
	// rng.IntN(3) == 0, so the default chains stay as they were).
	between float64
	// payers is how many outside payers pay the wallets, each spending
	// its change in its next payment, to whichever wallet; 0 is 6.
	payers int
}

// variedShapeOf is shape with the share of payments between wallets
// that SPVFILTER_NEUTRINO_BETWEEN names (a fraction in (0, 1]), the
// outside payers SPVFILTER_NEUTRINO_PAYERS names (1 to 1000) and the
// wallets SPVFILTER_NEUTRINO_WALLETS names (2 to 16), each as shape has
// it when unset.
func variedShapeOf(t *testing.T, shape variedShape) variedShape {
	t.Helper()
	if env := os.Getenv("SPVFILTER_NEUTRINO_BETWEEN"); env != "" {
		f, err := strconv.ParseFloat(env, 64)
		if err != nil || !(f > 0 && f <= 1) {
			t.Fatalf("SPVFILTER_NEUTRINO_BETWEEN=%q: want a fraction in (0, 1]", env)
		}
		shape.between = f
	}
	if env := os.Getenv("SPVFILTER_NEUTRINO_PAYERS"); env != "" {
		n, err := strconv.Atoi(env)
		if err != nil || n < 1 || n > 1000 {
			t.Fatalf("SPVFILTER_NEUTRINO_PAYERS=%q: want 1 to 1000", env)
		}
		shape.payers = n
	}
	if env := os.Getenv("SPVFILTER_NEUTRINO_WALLETS"); env != "" {
		n, err := strconv.Atoi(env)
		if err != nil || n < 2 || n > 16 {
			t.Fatalf("SPVFILTER_NEUTRINO_WALLETS=%q: want 2 to 16", env)
		}
		shape.wallets = n
	}
	return shape
}

// fromWallet draws whether a payment to a wallet that another wallet can
// make comes from it: with chance between, or a third when between is 0.
func fromWallet(rng *rand.Rand, between float64) bool {
	if between == 0 {
		return rng.IntN(3) == 0
	}
	return rng.Float64() < between
}

// variedShape16 is the shape of every seed's chain: 16 wallets of 5 to
// 100 scripts on 320 rounds, about 12 s a seed.
var variedShape16 = variedShape{wallets: 16, rounds: 320, minSize: 5, maxSize: 100}

// variedDefaultSeed is the default suite's seed, one of the seeds the
// misses were studied on (1 to 4; 101 to 108 were kept apart to judge).
const variedDefaultSeed = 2

// variedSeeds are the seeds SPVFILTER_NEUTRINO_SEEDS names ("A-B" or
// "A,B,..."), and whether they were named: the default suite's seed
// alone when unset.
func variedSeeds(t *testing.T) ([]uint64, bool) {
	t.Helper()
	env := os.Getenv("SPVFILTER_NEUTRINO_SEEDS")
	if env == "" {
		return []uint64{variedDefaultSeed}, false
	}
	seeds, err := simulate.ParseSeeds(env)
	if err != nil {
		t.Fatalf("SPVFILTER_NEUTRINO_SEEDS=%q: %v", env, err)
	}
	return seeds, true
}

// variedWallet is one scripted wallet of a varied chain: its keys, its
// coins and the label it builds.
type variedWallet struct {
	w        *peertest.LabelledWallet
	receive  []*peertest.Key // receive[j] is paid at its payment j, some twice
	change   []*peertest.Key // used in order, one a spend
	paid     int             // receive keys paid so far
	changed  int             // change keys used so far
	coins    []variedCoin
	from, to int32 // the heights its activity spans
}

// variedCoin is an output a wallet holds, spendable from height ready.
type variedCoin struct {
	out   peertest.Output
	ready int32
}

// variedChain mines a chain of seed on node: shape.wallets wallets of
// shape.minSize to shape.maxSize scripts, each born at a random round,
// paid by outside payers (each sending its change to a new address and
// spending it next time) and by the other wallets, on receive keys of
// which about one in five is paid again, and spending coins a few blocks
// or more after it got them (never in the block that paid it) to outside
// payees or to another wallet, with change to a change key of its own.
// Every block also holds noisePer background payments. It returns the
// chain's labelled wallets and the heights each address appears at.
func variedChain(t *testing.T, node *peertest.Node, seed uint64, shape variedShape) *peertest.LabelledChain {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0x6e65757472696e6f))
	tag := fmt.Sprintf("varied %d", seed)
	keys := 0
	fresh := func(what string) *peertest.Key {
		keys++
		return peertest.NewKey(fmt.Sprintf("%s %s %d", tag, what, keys))
	}
	tipNow := func() int32 {
		n, err := node.RPC().GetBlockCount()
		if err != nil {
			t.Fatal(err)
		}
		return int32(n)
	}
	start := tipNow() + 1
	chain := &peertest.LabelledChain{Start: start, Heights: map[string][]int32{}}
	addr := func(k *peertest.Key) string { return k.Address(node.Params).EncodeAddress() }
	seen := func(k *peertest.Key, h int32) {
		a := addr(k)
		if hs := chain.Heights[a]; len(hs) == 0 || hs[len(hs)-1] != h {
			chain.Heights[a] = append(hs, h)
		}
	}
	var ws []*variedWallet
	for i := range shape.wallets {
		size := int(math.Round(math.Exp(math.Log(float64(shape.minSize)) + rng.Float64()*(math.Log(float64(shape.maxSize))-math.Log(float64(shape.minSize))))))
		nrecv := max(2, size*3/5)
		birthRound := rng.IntN(shape.rounds / 3)
		vw := &variedWallet{w: &peertest.LabelledWallet{ID: fmt.Sprintf("v%d-%d", seed, i+1), Birth: start + int32(birthRound)},
			from: start + int32(birthRound), to: start + int32(shape.rounds) - 1}
		for j := range nrecv {
			vw.receive = append(vw.receive, fresh(fmt.Sprintf("wallet %d receive %d", i, j)))
		}
		for j := range size - nrecv {
			vw.change = append(vw.change, fresh(fmt.Sprintf("wallet %d change %d", i, j)))
		}
		// Address reuse: about one receive key in five is paid twice.
		for j := range nrecv {
			if rng.IntN(5) == 0 {
				vw.receive = append(vw.receive, vw.receive[j])
			}
		}
		rng.Shuffle(len(vw.receive[1:]), func(a, b int) { vw.receive[1+a], vw.receive[1+b] = vw.receive[1+b], vw.receive[1+a] })
		ws = append(ws, vw)
	}
	// Outside payers: each funded from a coinbase, then spending its
	// change until it runs low.
	type payer struct {
		coin *peertest.Output
	}
	payers := make([]*payer, cmp.Or(shape.payers, 6))
	for i := range payers {
		payers[i] = &payer{}
	}
	const (
		inflow  = 20 * payeeSats // what an outside payer sends a wallet
		between = 3 * payeeSats  // what a wallet sends another
	)
	for round := range shape.rounds {
		h := start + int32(round)
		var outs []*wire.TxOut
		var noiseKeys []*peertest.Key
		for range noisePer {
			k := fresh("noise")
			noiseKeys = append(noiseKeys, k)
			outs = append(outs, wire.NewTxOut(payeeSats, k.PkScript()))
		}
		txs := []*wire.MsgTx{node.SpendCoinbase(t, outs...)}
		for _, k := range noiseKeys {
			seen(k, h)
		}
		for _, vw := range ws {
			if h < vw.from {
				continue
			}
			life := float64(vw.to - vw.from + 1)
			// Receive: the wallet's payments spread over its life.
			if vw.paid < len(vw.receive) && rng.Float64() < float64(len(vw.receive))/life*1.3 {
				to := vw.receive[vw.paid]
				var tx *wire.MsgTx
				var idx uint32
				if from := pickPayerWallet(rng, ws, vw, h, between); from != nil && fromWallet(rng, shape.between) {
					tx, idx = walletPays(t, node, from, h, to, between, seen)
				} else {
					p := payers[rng.IntN(len(payers))]
					change := fresh("payer change")
					if p.coin == nil || p.coin.Value < 2*inflow {
						tx = node.SpendCoinbase(t, wire.NewTxOut(inflow, to.PkScript()), wire.NewTxOut(20*inflow, change.PkScript()))
					} else {
						tx = node.Spend(t, []peertest.Output{*p.coin}, wire.NewTxOut(inflow, to.PkScript()),
							wire.NewTxOut(p.coin.Value-inflow-peertest.Fee, change.PkScript()))
						seen(p.coin.Key, h)
					}
					o := peertest.OutputOf(tx, 1, change)
					p.coin = &o
					seen(change, h)
					vw.w.PayerChange = append(vw.w.PayerChange, addr(change))
				}
				txs = append(txs, tx)
				vw.coins = append(vw.coins, variedCoin{peertest.OutputOf(tx, idx, to), h + 1 + int32(rng.IntN(6))})
				seen(to, h)
				vw.paid++
			}
			// Spend: to an outside payee, change to a change key.
			if vw.changed < len(vw.change) && rng.Float64() < float64(len(vw.change))/life*1.3 {
				if c := readyCoin(vw, h, payeeSats); c >= 0 {
					payee := fresh("payee")
					tx, _ := walletPaysCoin(t, node, vw, c, h, payee, payeeSats, seen)
					txs = append(txs, tx)
					seen(payee, h)
					vw.w.Payees = append(vw.w.Payees, addr(payee))
				}
			}
		}
		node.Confirm(t, txs...)
	}
	chain.Tip = start + int32(shape.rounds) - 1
	if got := tipNow(); got != chain.Tip {
		t.Fatalf("varied chain: tip %d, want %d", got, chain.Tip)
	}
	for _, vw := range ws {
		for _, k := range slices.Concat(vw.receive[:vw.paid], vw.change[:vw.changed]) {
			if a := addr(k); !slices.Contains(vw.w.Scripts, a) {
				vw.w.Scripts = append(vw.w.Scripts, a)
			}
		}
		chain.Wallets = append(chain.Wallets, vw.w)
	}
	return chain
}

// payeeSats is what a wallet pays an outside payee, in satoshis.
const payeeSats = 1_000_000

// readyCoin is the index of the oldest coin of vw spendable at h and
// worth more than amount and the fee, or -1.
func readyCoin(vw *variedWallet, h int32, amount int64) int {
	for i, c := range vw.coins {
		if c.ready <= h && c.out.Value > amount+2*peertest.Fee {
			return i
		}
	}
	return -1
}

// pickPayerWallet draws another wallet, born by h, with a change key
// left and a coin to pay amount from, or nil.
func pickPayerWallet(rng *rand.Rand, ws []*variedWallet, to *variedWallet, h int32, amount int64) *variedWallet {
	var can []*variedWallet
	for _, w := range ws {
		if w != to && h >= w.from && w.changed < len(w.change) && readyCoin(w, h, amount) >= 0 {
			can = append(can, w)
		}
	}
	if len(can) == 0 {
		return nil
	}
	return can[rng.IntN(len(can))]
}

// walletPays is from paying amount to the key to from its oldest ready
// coin, its change to its next change key; it returns the transaction
// and the index of the payment's output.
func walletPays(t *testing.T, node *peertest.Node, from *variedWallet, h int32, to *peertest.Key, amount int64, seen func(*peertest.Key, int32)) (*wire.MsgTx, uint32) {
	t.Helper()
	return walletPaysCoin(t, node, from, readyCoin(from, h, amount), h, to, amount, seen)
}

// walletPaysCoin is walletPays from the wallet's coin c.
func walletPaysCoin(t *testing.T, node *peertest.Node, from *variedWallet, c int, h int32, to *peertest.Key, amount int64, seen func(*peertest.Key, int32)) (*wire.MsgTx, uint32) {
	t.Helper()
	in := from.coins[c].out
	from.coins = slices.Delete(from.coins, c, c+1)
	change := from.change[from.changed]
	from.changed++
	tx := node.Spend(t, []peertest.Output{in}, wire.NewTxOut(amount, to.PkScript()), wire.NewTxOut(in.Value-amount-peertest.Fee, change.PkScript()))
	from.coins = append(from.coins, variedCoin{peertest.OutputOf(tx, 1, change), h + 1})
	seen(in.Key, h)
	seen(change, h)
	return tx, 0
}

// variedTally is the claims of the varied captures pooled: per bin of
// simulate's calibration and at P >= 0.95, how many and how many right,
// and the sum of what was said.
type variedTally struct {
	bins      []simulate.Bin
	confident simulate.Bin
	wrong     []simulate.Mistake // claims at P >= 0.95 that are wrong
}

// add pools one score's claims of c.
func (v *variedTally) add(c *simulate.ClaimScore) {
	if v.bins == nil {
		v.bins = slices.Clone(c.Calibration)
		for i := range v.bins {
			v.bins[i] = simulate.Bin{PLow: v.bins[i].PLow, PHigh: v.bins[i].PHigh}
		}
		v.confident = simulate.Bin{PLow: c.Confident.PLow, PHigh: c.Confident.PHigh}
	}
	for i, b := range c.Calibration {
		v.bins[i].Pool(b)
	}
	v.confident.Pool(c.Confident)
}

// TestNeutrinoCaptureVaried scores the block-download attack on real
// neutrino v0.16.0 clients of wallets unlike those of
// TestNeutrinoCapture: on each seed's chain (variedChain) 16 wallets of
// 5 to 100 scripts, paid by outside payers and by each other, some
// addresses paid twice, coins spent in later blocks to payees or to
// another wallet, each wallet rescanned from its birth and from a later
// height by neutrino through the capture relay, twice (variedSources):
// each wallet's client from a loopback address of its own, and every
// client from one address. The claims of every seed are pooled per
// source, per bin and at P >= 0.95, and logged as privacy/README.md's
// rows. Held, for the scripts and for the groups under each source: no
// claim at P >= 0.95 measurably below 95% right (the upper end of its
// Wilson interval under 0.95); once 60 or more, a Wilson lower bound of
// 0.93; and no groups' bin over-confident beyond its Wilson interval and
// 0.05. Each seed's capture with distinct addresses must be warned that
// its wallets look like they pay each other (leak.PayEachOther), which
// lowers the scripts other wallets' sessions list too and the leading
// riders of two appearances; under one shared address nearly every
// session is warned of several wallets behind it instead, and each
// seed's capture must be warned that those sessions' wallets look like
// they pay each other or are more than two or three (leak.ManyWallets;
// package leak's sharedPaying, which maps their scripts either way; seed 2's scripts' bins [0.5, 0.8) and [0.8, 0.95) said 0.650
// and 0.891 and were right 14 of 46 and 27 of 63 times before it). The
// scripts' target at P >= 0.95 there is logged as not met when each
// wrong one is in such a session: 99 of 104 on seeds 901 to 916, all
// five wrong ones, and both of 801 to 816's, leading riders of two
// appearances (an outside payer's change) kept at 0.95 or more, which
// package leak's sharedRider now lowers: 143 of 143 and 97 of 97 on
// those seeds, and on 1001 to 1016 and 1101 to 1116, never looked at
// before, from 111 of 115 and 122 of 127 to 109 of 110 (Wilson lower
// bound 0.950) and 122 of 126 (0.921). Seed 1112's capture under one
// address is not warned that its wallets pay each other (14 of 31
// one-sided, under half), so a run of 1101 to 1116 fails there, its
// scripts' bin [0.8, 0.95) over-confident (0.897 said, 18 of 49 right)
// and four of its scripts wrong at P >= 0.95. The lowering was fitted on seeds 101 to 108 and 201 to
// 208; on seeds 301 to 308 and 401 to 412, never looked at before
// judging, with distinct addresses, scripts given P >= 0.95 were right
// 185 of 198 times before it (Wilson lower bound 0.891) and 156 of 162
// after (0.922): still short of 0.93, and the bins [0.5, 0.8) and [0.8,
// 0.95) still over-confident (0.607 said, 0.423 right, n=1500; 0.884 and
// 0.558, n=582). The scripts of a warned capture are then mapped
// through what such scripts were right (package leak's payCalibration,
// fitted on those 36 seeds): on seeds 501 to 516, never looked at
// before, the bins went from 0.600 said, 0.438 right (n=1240) and 0.893,
// 0.524 (n=450) to 0.573, 0.539 (n=736) and 0.917, 0.844 (n=90), within
// their Wilson intervals and 0.05, and scripts given P >= 0.95 from 135
// of 141 right (Wilson lower bound 0.910) to 62 of 65 (0.873), short of
// 0.93. Seed 406's and 504's captures, contested least (0.118 and
// 0.128), were warned once the share that warns went from 15% to 10%;
// 601 to 616's all were at either. The groups of a warned capture
// given 0.5 to 0.95 are raised (package leak's payGroupRaised, fitted on
// seeds 101 to 405): on seeds 701 to 716 their bins [0.5, 0.8) and
// [0.8, 0.95) went from 0.640 said, 0.838 right (n=569) and 0.884,
// 0.934 (n=346) to 0.781, 0.849 (n=139) and 0.894, 0.879 (n=776), those
// given P >= 0.95 247 of 249 right either way. No script of a session
// of a capture warned that its wallets pay each other may be given 0.95
// or more (package leak's capWarned; before it such scripts were right
// 143 of 152 times on seeds 501 to 516, 601 to 616 and 701 to 716). The
// scripts' bins are held under both sources in the default suite too
// (seed 2's fail without either map); a run with seeds named fails on
// the scripts' lower bound too, under one shared address only where a
// wrong one is in a session not warned of several wallets. The default suite runs variedDefaultSeed
// (about 20 s for both sources); SPVFILTER_NEUTRINO_SEEDS=A-B (or
// A,B,...) runs those seeds, about 18 s each, and
// SPVFILTER_NEUTRINO_BETWEEN=F makes a fraction F of the payments to a
// wallet that another can make come from it (a third when unset),
// SPVFILTER_NEUTRINO_PAYERS=N the outside payers N (6) and
// SPVFILTER_NEUTRINO_WALLETS=N the wallets N (16). The contested share
// that warns of wallets that pay each other barely follows F (a tenth:
// 0.24 to 0.53 on seeds 1201 to 1212); with 6 wallets and F a tenth
// (seeds 1401 to 1416) it was 0.08 to 0.39, and in the two captures
// between 0.10 and 0.15 with 5 or more contested (1403, 1405) the
// warning left the scripts' bins under-confident (28 of 38 right at
// 0.547 said, 14 of 14 at 0.912) where without it [0.8, 0.95) was
// over-confident (23 of 34 at 0.878). Where fewer than 5 were contested
// (1412, 1414) the capture is warned once so many are unlikely at the
// rate of package simulate's fetch regimes (package leak's
// looksPaying); on 1501 to 1516 that warned 1509, 1514 and 1515, and
// 1507 (under the share, 6.5% since 1413 to 2011's nine over-confident
// captures of 0.068 to 0.094) is not. Under one address, where the floor of 5
// one-sided scripts left 1409, 1412 to 1414, 1507, 1509, 1514 and 1515
// unmapped, the sessions are mapped once one fetches for other scripts
// than the sessions of four or more other wallets of the address
// (leak.ManyWallets; counted by sessions when this was measured): on
// 1701 to 1716, never looked at before, nine of the 16 captures were not
// mapped before and all are after, the scripts' bins [0.5, 0.8) and
// [0.8, 0.95) going from 0.584 said, 212 of 446 right and 0.906, 139 of
// 225 to 0.618, 212 of 310 and none, those given 0.95 or more from 128
// of 133 to 123 of 123. Such runs fail where a capture with distinct
// addresses is not warned, as captures of 6 wallets can be (1703, 1704,
// 1708, 1709 and 1712 of 1701 to 1716):
//
//	SPVFILTER_NEUTRINO_SEEDS=201-208 go test -run TestNeutrinoCaptureVaried -v
func TestNeutrinoCaptureVaried(t *testing.T) {
	seeds, _ := variedSeeds(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	tallies := map[string]map[string]*variedTally{}
	for _, source := range variedSources {
		tallies[source] = map[string]*variedTally{"scripts": {}, "groups": {}}
	}
	// severalAll[source] is false once a script given P >= 0.95 under
	// source is wrong in a session not warned of several wallets.
	severalAll := map[string]bool{}
	for _, source := range variedSources {
		severalAll[source] = true
	}
	// unwarned[source] counts the sessions under source that no warning
	// keeps below 0.95.
	unwarned := map[string]int{}
	for _, seed := range seeds {
		scores, warned := variedScore(ctx, t, seed, variedShapeOf(t, variedShape16))
		for source, w := range warned {
			unwarned[source] += w.unwarned
			t.Logf("seed %d, %s addresses: %d of %d sessions warned that %s, %d of several wallets behind one address (%d of them that they pay each other, %d of %s)", seed, source, w.paying, w.sessions, leak.PayEachOther, w.several, w.severalPaying, w.severalMany, leak.ManyWallets)
			// Its wallets pay each other: where each wallet's client has
			// an address of its own, that is warned of.
			if source == "distinct" && w.paying == 0 {
				t.Errorf("seed %d, %s addresses: no session warned that %s", seed, source, leak.PayEachOther)
			}
			// Under one address, the sessions warned of several wallets
			// look like wallets that pay each other, or are more wallets
			// than two or three: that is warned of.
			if source == "shared" && w.severalPaying == 0 && w.severalMany == 0 {
				t.Errorf("seed %d, %s addresses: no session warned of several wallets that %s, nor of %s", seed, source, leak.PayEachOther, leak.ManyWallets)
			}
		}
		for source, score := range scores {
			tallies[source]["scripts"].add(score.Candidates)
			tallies[source]["groups"].add(score.CandidateGroups)
			for _, m := range score.Mistakes {
				if m.Probability >= simulate.ConfidentP {
					if m.Kind == "candidate" && !allIn(m.Sessions, warned[source].severalIDs) {
						severalAll[source] = false
					}
					k := map[string]string{"candidate": "scripts", "candidate group": "groups"}[m.Kind]
					if tl := tallies[source][k]; tl != nil {
						tl.wrong = append(tl.wrong, m)
					}
				}
			}
		}
	}
	for _, source := range variedSources {
		var rows strings.Builder
		for _, name := range []string{"scripts", "groups"} {
			tl := tallies[source][name]
			what := fmt.Sprintf("%s, %s addresses, seeds %v", name, source, seeds)
			fmt.Fprintf(&rows, "| fetches: %s, %s addresses |", name, source)
			for i, b := range tl.bins {
				fmt.Fprintf(&rows, " %s |", binCell(b))
				said, high, _ := binSaid(b)
				switch over := b.Count > 0 && said > high+simulate.TargetBinSlack; {
				case over:
					t.Errorf("%s: bin %d says %.3f, right %d of %d (Wilson high %.3f): over-confident", what, i, said, b.Right, b.Count, high)
				}
			}
			cb := tl.confident
			for _, m := range tl.wrong {
				t.Logf("%s wrong at P %.4f: %s in %v of %v (really %s)", what, m.Probability, m.Candidate, m.Sessions, m.Wallets, m.Owner)
			}
			if cb.Count == 0 {
				rows.WriteString(" none |\n")
				if name == "scripts" {
					// Warned sessions keep their scripts below 0.95;
					// the others gave none.
					t.Logf("%s: none given P >= 0.95: the warned sessions keep their scripts below 0.95, the %d others gave none", what, unwarned[source])
				} else {
					t.Errorf("%s: none given P >= 0.95", what)
				}
				continue
			}
			fmt.Fprintf(&rows, " %d of %d (%.3f), %.3f |\n", cb.Right, cb.Count, *cb.FractionRight, *cb.WilsonLow)
			report := t.Errorf
			if name == "scripts" && severalAll[source] && source == "shared" {
				// Every wrong one is in a session warned of several
				// wallets behind one address, which says its scripts are
				// right less often than said (package leak's
				// warnSharedClients).
				report = func(f string, a ...any) { t.Logf("NOT MET, each wrong one warned of several wallets: "+f, a...) }
			}
			if *cb.WilsonHigh < simulate.TargetRight {
				report("%s given P >= 0.95: %d of %d right, measurably below 95%%", what, cb.Right, cb.Count)
			}
			if cb.Count >= 60 && *cb.WilsonLow < simulate.TargetWilsonLow {
				report("%s given P >= 0.95: %d of %d right, Wilson lower bound %.3f < %g", what, cb.Right, cb.Count, *cb.WilsonLow, simulate.TargetWilsonLow)
			}
		}
		t.Logf("seeds %v, %s addresses, pooled:\n%s", seeds, source, rows.String())
	}
}

// allIn reports whether every one of ids is in set.
func allIn(ids []string, set map[string]bool) bool {
	for _, id := range ids {
		if !set[id] {
			return false
		}
	}
	return true
}

// variedSources are the ways the wallets' clients reach the relay: each
// wallet from a loopback address of its own (127.0.0.2, 127.0.0.3, ...;
// its two rescans share it), as wallets behind separate connections do,
// or every wallet from one address, as wallets behind one client
// address do (the attack then warns of several wallets behind it and
// recalibrates for them).
var variedSources = []string{"distinct", "shared"}

// variedSource is the loopback address wallet i dials from under
// source: 127.0.0.(2+i) when distinct, 127.0.0.1 when shared.
func variedSource(source string, i int) net.IP {
	if source == "shared" {
		return net.IPv4(127, 0, 0, 1)
	}
	return net.IPv4(127, 0, 0, byte(2+i))
}

// variedScore builds seed's chain on a btcd of its own and, for each of
// variedSources, runs two neutrino rescans a wallet through a capture
// relay of its own (from its birth, and from a height drawn in its
// life), and scores the attack on that capture against the labels. The
// rescans' heights are the same under every source.
func variedScore(ctx context.Context, t *testing.T, seed uint64, shape variedShape) (map[string]*simulate.Score, map[string]variedWarned) {
	t.Helper()
	began := time.Now()
	node := peertest.StartBtcd(t, peertest.WithMiningKey(peertest.NewKey(fmt.Sprintf("varied %d miner", seed))))
	defer func() {
		if err := node.Stop(); err != nil {
			t.Error(err)
		}
	}()
	node.Generate(t, 150+premine)
	chain := variedChain(t, node, seed, shape)
	tip := chain.Tip
	if len(chain.Wallets) > 250 {
		t.Fatalf("seed %d: %d wallets, more than distinct loopback addresses", seed, len(chain.Wallets))
	}
	rng := rand.New(rand.NewPCG(seed, 1))
	froms := make([][]int32, len(chain.Wallets))
	for i, w := range chain.Wallets {
		froms[i] = []int32{w.Birth, w.Birth + 1 + int32(rng.IntN(int(tip-w.Birth)))}
	}
	index, hashes := indexChain(t, node.RPC(), tip, nil)
	scores := map[string]*simulate.Score{}
	warned := map[string]variedWarned{}
	for _, source := range variedSources {
		byClient := map[string]sessionOf{}
		raw, fetchSessions := throughRelay(ctx, t, node, func(addr string) {
			for i, w := range chain.Wallets {
				watch := walletAddrs(t, node.Params, w)
				for _, from := range froms[i] {
					local := rescanFrom(ctx, t, variedSource(source, i), addr, node.Params, watch, from, tip)
					byClient[local] = sessionOf{w, from}
				}
			}
		})
		labels := fetchLabels(node.Params.Name, tip, chain.Wallets)
		clients := map[string]bool{}
		for _, s := range fetchSessions {
			so, ok := byClient[s.Client]
			if !ok {
				t.Fatalf("seed %d, %s: session %s of client %s, which no wallet's neutrino used", seed, source, s.ID, s.Client)
			}
			host, _, err := net.SplitHostPort(s.Client)
			if err != nil {
				t.Fatalf("seed %d, %s: client %q: %v", seed, source, s.Client, err)
			}
			clients[host] = true
			labels.Fetch.Sessions = append(labels.Fetch.Sessions, sessionLabel(t, s, so, chain.Heights, hashes, tip))
		}
		if len(fetchSessions) != 2*len(chain.Wallets) {
			t.Fatalf("seed %d, %s: %d sessions captured, want %d", seed, source, len(fetchSessions), 2*len(chain.Wallets))
		}
		if want := map[string]int{"distinct": len(chain.Wallets), "shared": 1}[source]; len(clients) != want {
			t.Fatalf("seed %d, %s: the capture saw %d client addresses, want %d", seed, source, len(clients), want)
		}
		reps := analyze(t, fetchSessions, index, 0)
		var w variedWarned
		for _, r := range reps {
			all := strings.Join(r.Warnings, "\n")
			w.sessions++
			if strings.Contains(all, leak.PayEachOther) {
				w.paying++
			}
			if strings.Contains(all, leak.SeveralWallets) {
				w.several++
				if w.severalIDs == nil {
					w.severalIDs = map[string]bool{}
				}
				w.severalIDs[r.Session] = true
				if strings.Contains(all, leak.PayEachOther) {
					w.severalPaying++
				}
				if strings.Contains(all, leak.ManyWallets) {
					w.severalMany++
				}
			}
		}
		// No script of a session of a capture found to look like one
		// whose wallets pay each other is given 0.95 or more (but those
		// warned of several wallets, recalibrated apart). A capture
		// where only such sessions are warned that their wallets pay
		// each other (package leak's sharedPaying) caps no other.
		for _, r := range reps {
			if w.paying == w.severalPaying || w.severalIDs[r.Session] {
				w.unwarned++
				continue
			}
			for _, m := range r.Matched {
				if m.Probability >= simulate.ConfidentP || m.ProbabilityHigh >= simulate.ConfidentP {
					t.Errorf("seed %d, %s addresses: session %s is warned, and its script %s is given %.4f (interval to %.4f), want below %g", seed, source, r.Session, m.Candidate, m.Probability, m.ProbabilityHigh, simulate.ConfidentP)
				}
			}
		}
		warned[source] = w
		doc, score := evaluate(t, node.Params.Name, labels, reps)
		if dir := os.Getenv("SPVFILTER_NEUTRINO_CAPTURE_DIR"); dir != "" {
			writeFiles(t, fmt.Sprintf("%s/varied-%d-%s", dir, seed, source), raw, index, labels, doc)
		}
		t.Logf("seed %d, %s addresses:", seed, source)
		logScore(t, score)
		scores[source] = score
	}
	sizes := []int{}
	for _, w := range chain.Wallets {
		sizes = append(sizes, len(w.Scripts))
	}
	t.Logf("seed %d: %d blocks, wallets of %v scripts, in %v", seed, tip+1, sizes, time.Since(began).Round(time.Second))
	return scores, warned
}

// variedWarned counts a capture's sessions, and those warned that its
// wallets look like they pay each other (leak.PayEachOther) and of
// several wallets behind one address (leak.SeveralWallets), whose ids
// severalIDs holds.
type variedWarned struct {
	sessions, paying, several int
	severalIDs                map[string]bool
	// severalPaying counts the sessions warned of several wallets that
	// their wallets look like they pay each other too, severalMany those
	// warned of more wallets behind the address than two or three
	// (leak.ManyWallets); package leak's sharedPaying maps both.
	severalPaying, severalMany int
	// unwarned counts the sessions not of a capture warned that its
	// wallets pay each other, or warned of several wallets.
	unwarned int
}
